/* SPDX-License-Identifier: MIT */
/* track.h - tell memory checkers which bytes the user may touch.
 *
 * A pool hides use-after-free from the tools that would catch it: a returned
 * block is still mapped and the next rent hands out the same bytes. So blocks
 * held by the pool are marked no-access, and unmarked when rented:
 *   - under AddressSanitizer: poisoned (a touch is reported as
 *     use-after-poison, with the stack);
 *   - under valgrind memcheck, in builds with -DBW_VALGRIND and valgrind's
 *     headers: NOACCESS, and UNDEFINED when rented (DEFINED when the pool
 *     zeroes blocks);
 *   - otherwise: nothing, no cost.
 * The pool code calls only these three macros, never the tools directly. */
#ifndef BW_TRACK_H
#define BW_TRACK_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#  define BW__ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define BW__ASAN 1
#  endif
#endif

#if defined(BW__ASAN)
#  include <sanitizer/asan_interface.h>
#  define BW__TRACK_NOACCESS(p, n)  ASAN_POISON_MEMORY_REGION((p), (n))
#  define BW__TRACK_UNDEFINED(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#  define BW__TRACK_DEFINED(p, n)   ASAN_UNPOISON_MEMORY_REGION((p), (n))
/* A block handed back while it is still poisoned was already returned. */
#  define BW__TRACK_IS_NOACCESS(p)  __asan_address_is_poisoned(p)
#elif defined(BW_VALGRIND) && defined(__has_include)
#  if __has_include(<valgrind/memcheck.h>)
#    include <valgrind/memcheck.h>
#    define BW__TRACK_NOACCESS(p, n)  ((void)VALGRIND_MAKE_MEM_NOACCESS((p), (n)))
#    define BW__TRACK_UNDEFINED(p, n) ((void)VALGRIND_MAKE_MEM_UNDEFINED((p), (n)))
#    define BW__TRACK_DEFINED(p, n)   ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#  endif
#endif

#ifndef BW__TRACK_IS_NOACCESS
#  define BW__TRACK_IS_NOACCESS(p)  ((void)(p), 0)
#endif

#ifndef BW__TRACK_NOACCESS
#  define BW__TRACK_NOACCESS(p, n)  ((void)(p), (void)(n))
#  define BW__TRACK_UNDEFINED(p, n) ((void)(p), (void)(n))
#  define BW__TRACK_DEFINED(p, n)   ((void)(p), (void)(n))
#endif

#endif /* BW_TRACK_H */
