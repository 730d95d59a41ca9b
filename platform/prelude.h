/* SPDX-License-Identifier: MIT */
/* prelude.h - the feature-test macros the platform layer needs, defined
 * before the first libc header. The library's own build gets them in
 * platform/posix.c, its one file that asks libc for more than ISO C. The
 * single header emits this first of all in the BUFWRITER_IMPLEMENTATION
 * file; where a libc header the includer put before it has already hidden
 * those calls, it stops with an #error that says what to do, rather than
 * declaring libc's functions itself (their prototypes and constants differ
 * between C libraries and architectures). */
#ifndef BW_PRELUDE_H
#define BW_PRELUDE_H

#if !defined(_WIN32)
/* POSIX (signal masks, clock_gettime, writev, sendmsg), Linux's mmap
 * extensions and fopencookie: glibc and musl declare them only when
 * _GNU_SOURCE (or a POSIX level) comes before their first header, which
 * then defines _FEATURES_H; a strict -std=c11 build asks for none. The
 * FILE adapter needs the GNU level; without it (BW_NO_FILE_ADAPTER) POSIX
 * is enough. Other C libraries (the BSDs, macOS) show all of it by
 * default and ignore _GNU_SOURCE. */
#  if defined(_FEATURES_H) && defined(__GLIBC__)
#    if !defined(__USE_POSIX199506) || (!defined(__USE_GNU) && !defined(BW_NO_FILE_ADAPTER))
#      define BW__PRELUDE_TOO_LATE 1
#    endif
#  elif defined(_FEATURES_H) && !defined(_GNU_SOURCE)
#    if !defined(BW_NO_FILE_ADAPTER) || \
        !(defined(_XOPEN_SOURCE) || defined(_POSIX_C_SOURCE) || defined(_BSD_SOURCE))
#      define BW__PRELUDE_TOO_LATE 1
#    endif
#  endif
#  ifdef BW__PRELUDE_TOO_LATE
/* The single header then emits no implementation: the #error stands alone
 * instead of heading a page of implicit declarations. */
#    define BW__IMPLEMENTATION_DONE 1
#    error "bufwriter: the implementation needs POSIX and GNU declarations (signal masks, \
clock_gettime, fopencookie) that a libc header included before it has hidden. Put \
'#define BUFWRITER_IMPLEMENTATION' and '#include \"bufwriter.h\"' first in their own .c file, \
or define _GNU_SOURCE before that file's first #include (or build it with -D_GNU_SOURCE)."
#  endif
#  ifndef _GNU_SOURCE
#    define _GNU_SOURCE 1
#  endif
#endif

#endif /* BW_PRELUDE_H */
