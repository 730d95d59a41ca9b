# SPDX-License-Identifier: MIT
# bufwriter - Makefile (the primary build; CMakeLists.txt and meson.build
# build the same sources with the same flags, for projects that embed it)
#
#   make                  libbufwriter.a, libbufwriter.so (gcc; make CC=clang)
#   make deps             install the Debian packages tests and benchmark need
#                         (as root; elsewhere it names them)
#   make test             the tests' packages, then every test flavour (normal, ASan+UBSan,
#                         TSan, valgrind, clang, -O0 gcc/clang, -m32, the single
#                         header, musl, aarch64 and s390x under qemu-user, Windows
#                         x86-64 with MinGW-w64 under wine), the
#                         strict-warning build, seeded bugs, a TSan
#                         stress, fuzz corpus replay, dlclose, the single header
#                         and the reference up to date, licence lines, packaging (Make, CMake,
#                         Meson and pkg-config consumers); ends with one
#                         "N passed, N failed" line per part and in all
#   make test-normal      just the Criterion suite, with what the machine has
#   make fuzz             differential fuzzing for FUZZ_TIME seconds (600)
#   make stress           the full thread stress (and 10,000 short-lived threads)
#   make bench            the benchmark's packages (as root), then the benchmark,
#                         into bench/build/results/ (bench-full: all of it)
#   make bench-record     make bench, then its table and plot copied into the
#                         committed record, bench/results/
#   make check-style      the library's sources: spaces, no trailing blanks, 100 columns
#   make install          the headers, the libraries, bufwriter.pc, the CMake
#                         package (from cmake/*.in) and LICENSE under DESTDIR + PREFIX
#   make single           regenerate single_include/bufwriter.h (check-single: CI)
#   make float-table      regenerate fmt_float_table.h, the powers of ten of
#                         bw_put_dec_f64 (check-float-table: make test)
#   make test-float-full  every float and 100M random doubles against the
#                         printf + strtod oracle (long: not part of make test)
#   make reference        regenerate docs/reference.md (check-reference: CI)
#   make check-spdx       every source, script and build file has its SPDX line
#   make dist             bufwriter-VERSION.tar.gz from git archive HEAD, then
#                         unpacked, built and tested (test-normal) in a temp folder
#   make examples         build examples/ from the single header and the library
#   make test-formats     the Arrow and pickle examples read back by Apache Arrow's
#                         reader (npm: apache-arrow) and Python's pickle (mk/formats.mk)
#   make version          print the version (from bufwriter.h)
#   make uninstall / clean
#
# Variables (command line or environment):
#   CC, CXX         the C and C++ compilers (cc, c++)
#   AR, RANLIB      the archiver and its index (ar, ranlib): a cross or LTO
#                   build passes its own (gcc-ar, llvm-ar, ...)
#   INSTALL         the install program (install)
#   CPPFLAGS        preprocessor flags, e.g. -DBW_DEBUG for a checked library
#   CFLAGS          C flags, e.g. a distribution's hardening flags
#   LDFLAGS         flags for linking libbufwriter.so, e.g. -Wl,-z,relro,-z,now
#                   These three are the user's: the Makefile never sets them,
#                   and appends them after its own flags (the flags the library
#                   needs, -std=c11 -fPIC -fvisibility=hidden -pthread, are
#                   kept in BW_CFLAGS and always given first).
#   OPT             optimisation and debug flags (-O2 -g), before CFLAGS
#   WERROR          -Werror, or nothing (the default; make test sets it)
#   EXTRA_CFLAGS    extra flags for the library and every test build
#   JEMALLOC=1      also build the jemalloc backing allocator hook
#   PREFIX          install prefix (/usr/local)
#   DESTDIR         staging folder prepended to every installed path
#   LIBDIR, INCDIR  where libraries and headers go (PREFIX/lib, PREFIX/include;
#                   multiarch: LIBDIR=/usr/lib/x86_64-linux-gnu)
#   PCDIR, CMAKEDIR where bufwriter.pc and the CMake package go
#                   (LIBDIR/pkgconfig, LIBDIR/cmake/bufwriter)
#   DOCDIR          where LICENSE goes (PREFIX/share/doc/bufwriter)
#   B               the build folder (build)
#   PYTHON          python3, for the generated single header and reference
#   CRITERION_ARGS  arguments of the Criterion test binaries (-j2)
#   FUZZ_TIME, FUZZ_SHORT  seconds of make fuzz (600) and of make test's (20)
#
# Platforms: the shared library is linked with GNU ld / lld flags (-soname)
# everywhere but macOS, which gets -install_name and -compatibility_version
# (chosen by uname -s). Tested: Linux (glibc and musl; x86-64, aarch64, s390x)
# and Windows with MinGW-w64 (README, "Platforms"); the test-* flavours.

CC       ?= cc
CXX      ?= c++
AR       ?= ar
RANLIB   ?= ranlib
INSTALL  ?= install
OPT      ?= -O2 -g
CPPFLAGS ?=
CFLAGS   ?=
LDFLAGS  ?=
PREFIX   ?= /usr/local
LIBDIR   ?= $(PREFIX)/lib
INCDIR   ?= $(PREFIX)/include
PCDIR    ?= $(LIBDIR)/pkgconfig
DOCDIR   ?= $(PREFIX)/share/doc/bufwriter
JEMALLOC ?= 0

# The version's one place is bufwriter.h (BW_VERSION_MAJOR/MINOR/PATCH and
# BW_VERSION_STRING); the soname, bufwriter.pc and the CMake package follow
# it, CMakeLists.txt reads it from there too, and meson.build's copy is
# checked against it by the packaging test.
VERSION  := $(shell sed -n 's/^\#define BW_VERSION_STRING "\(.*\)"/\1/p' bufwriter.h)
# The soname's version: the major number, and before 1.0 major.minor too
# (every 0.x release may break the ABI: 0.4 is libbufwriter.so.0.4).
VMAJOR   := $(word 1,$(subst ., ,$(VERSION)))
VMINOR   := $(word 2,$(subst ., ,$(VERSION)))
SOMAJOR  := $(if $(filter 0,$(VMAJOR)),$(VMAJOR).$(VMINOR),$(VMAJOR))

# The library's warning set (mpack's strict set); -Werror only where we test
# (make test and CI set WERROR=-Werror), so a user's newer compiler with a
# new warning still builds the library.
WARN_STRICT := -Wall -Wextra -Wpedantic -Wshadow -Wcast-qual -Wundef -Wstrict-prototypes \
               -Wmissing-prototypes -Wconversion -Wsign-conversion
WERROR   ?=
CSTD     := -std=c11
# What the library needs, whatever the user adds: C11, position-independent
# (the .a too, so it links into shared objects), only BW_API symbols exported.
BW_CFLAGS  = $(CSTD) -fPIC -fvisibility=hidden -pthread
CFLAGS_LIB = $(BW_CFLAGS) $(WARN_STRICT) $(WERROR) $(OPT) $(JE_CFLAGS) $(EXTRA_CFLAGS) \
             $(CPPFLAGS) $(CFLAGS)
LDLIBS_LIB = -pthread $(JE_LIBS)

# The shared library's file names and link flags, per platform. ELF (Linux,
# the BSDs): libbufwriter.so.VERSION, soname libbufwriter.so.SOMAJOR;
# -z nodelete: dlclose never unloads the library, since a thread that used
# a pool runs the library's cache cleanup when it exits, whenever that is.
# macOS: libbufwriter.VERSION.dylib, install name LIBDIR/libbufwriter.SOMAJOR.dylib.
UNAME_S  := $(shell uname -s 2>/dev/null)
ifeq ($(UNAME_S),Darwin)
SO_DEV    := libbufwriter.dylib
SO_ABI    := libbufwriter.$(SOMAJOR).dylib
SO_REAL   := libbufwriter.$(VERSION).dylib
SO_LDFLAGS = -dynamiclib -Wl,-install_name,$(LIBDIR)/$(SO_ABI) \
             -Wl,-compatibility_version,$(SOMAJOR) -Wl,-current_version,$(VERSION)
else
SO_DEV    := libbufwriter.so
SO_ABI    := libbufwriter.so.$(SOMAJOR)
SO_REAL   := libbufwriter.so.$(VERSION)
SO_LDFLAGS = -shared -Wl,-soname,$(SO_ABI) -Wl,-z,nodelete
endif

ifeq ($(JEMALLOC),1)
JE_CFLAGS := -DBW_HAVE_JEMALLOC
JE_LIBS   := -ljemalloc
endif

SRCS     := bufwriter.c mode_block.c mode_contig.c mode_seg.c seg_pieces.c seg_check.c mode_stream.c mode_fixed.c io.c fmt_int.c fmt_float.c platform/posix.c platform/windows.c pool/pool.c pool/tcache.c pool/fork.c pool/large.c pool/growth.c pool/alloc.c pool/check.c
HDRS     := bufwriter.h writer_internal.h seg_internal.h fmt_float_table.h platform/platform.h platform/prelude.h pool/pool_internal.h pool/pool_writer.h pool/track.h
B        := build
OBJS     := $(SRCS:%.c=$(B)/%.o)

TEST_SRCS := $(sort $(wildcard tests/test_*.c))
TEST_HDRS := $(wildcard tests/*.h)

.PHONY: all test test-strict float-table check-float-table test-float-full check-copies test-seeded test-fuzz test-dlclose fuzz stress test-stress-tsan \
        check-style bench bench-full bench-record deps test-deps install uninstall clean \
        $(addprefix test-,$(TEST_FLAVOURS))

all: $(B)/libbufwriter.a $(B)/$(SO_DEV)

version:
	@echo $(VERSION)

# The flags are part of what an object depends on: make CFLAGS=... after a
# plain make rebuilds.
$(B)/%.o: %.c $(HDRS) Makefile $(B)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_LIB) -c $< -o $@

$(B)/flags: FORCE
	@mkdir -p $(B)
	@t=$@.$$$$.tmp; echo '$(CC) $(CFLAGS_LIB) | $(LDFLAGS)' > $$t; \
	  if cmp -s $$t $@; then rm -f $$t; else mv $$t $@; fi

$(B)/libbufwriter.a: $(OBJS)
	rm -f $@
	$(AR) rc $@ $^
	$(RANLIB) $@

$(B)/$(SO_DEV): $(OBJS)
	$(CC) $(BW_CFLAGS) $(OPT) $(CFLAGS) $(SO_LDFLAGS) $(LDFLAGS) -o $(B)/$(SO_REAL) $(OBJS) $(LDLIBS_LIB)
	ln -sf $(SO_REAL) $(B)/$(SO_ABI)
	ln -sf $(SO_REAL) $@

FORCE:

# ---------------------------------------------------------------- tests --
# The Criterion suite in several flavours, each built from the library
# sources directly (so each compiles the library with its own flags). One
# table: name, compiler, harness (criterion, or mini: tests/mini_criterion.h,
# a fork-per-test shim for where Criterion cannot run: TSan, its issue #274;
# valgrind, which does not follow Criterion's re-executed children; -m32,
# musl and the cross builds, for which Debian ships no Criterion), then the
# flags. The single flavour builds the whole suite against
# single_include/bufwriter.h; musl builds it with musl-gcc (musl-tools).
# aarch64 and s390x (big-endian) are cross builds with clang --target over
# Debian's libc6-dev-*-cross sysroots and binutils-*-linux-gnu (not the
# gcc-*-linux-gnu cross compilers, which remove gcc-multilib), run under
# qemu-user; -DBW_TEST_EMULATED skips the two tests emulation cannot run
# (qemu's guest heap ignores RLIMIT_AS; 2 GiB of printf padding outlasts
# the timeout). mingw: Windows x86-64, MinGW-w64 (its winpthreads variant,
# for the tests' threads; the library itself uses Win32 locks), linked
# statically and run under wine64 in a prefix of its own ($(B)/wine, made
# at the first run); the test files in TESTS_mingw.
#
MINGW_CC      ?= x86_64-w64-mingw32-gcc-posix
WINE          ?= /usr/lib/wine/wine64
#                 compiler harness   flags
T_normal      := $(CC)     criterion -O2 -g
T_asan        := $(CC)     criterion -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
T_tsan        := $(CC)     mini      -O1 -g -fsanitize=thread
T_valgrind    := $(CC)     mini      -O1 -g -DBW_VALGRIND
T_clang       := clang     criterion -O2 -g
T_gcc-O0      := $(CC)     criterion -O0 -g
T_clang-O0    := clang     criterion -O0 -g
T_m32         := $(CC)     mini      -m32 -O2 -g -Wno-psabi
T_single      := $(CC)     criterion -O2 -g
T_musl        := musl-gcc  mini      -O2 -g
T_aarch64     := clang     mini      --target=aarch64-linux-gnu -O2 -g -DBW_TEST_EMULATED
T_s390x       := clang     mini      --target=s390x-linux-gnu -O2 -g -DBW_TEST_EMULATED
T_mingw       := $(MINGW_CC) mini    -O2 -g -static
T_debug       := $(CC)     criterion -O1 -g -DBW_DEBUG
TEST_FLAVOURS := normal asan tsan valgrind clang gcc-O0 clang-O0 m32 single musl aarch64 s390x mingw \
                 debug

# How each runs. Criterion forks a child per test; -j2 runs two at a time.
# ASan runs -j1: Criterion's parallel runner itself sometimes leaks 48 bytes
# in the parent (a calloc in libcriterion), which LeakSanitizer reports.
# valgrind: any leak, invalid access or use of a block the pool holds
# (NOACCESS through client requests, -DBW_VALGRIND) fails.
CRITERION_ARGS ?= -j2
R_normal   = $< $(CRITERION_ARGS)
R_asan     = ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 $< -j1
R_tsan     = TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 $<
R_valgrind = valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
             --show-leak-kinds=definite,indirect --error-exitcode=99 $<
R_clang    = $< $(CRITERION_ARGS)
R_gcc-O0   = $< $(CRITERION_ARGS)
R_clang-O0 = $< $(CRITERION_ARGS)
R_m32      = $(B)/t-m32; rc=$$?; [ $$rc != 126 ] || { rc=0; \
             echo "m32: built; this kernel cannot run 32-bit programs, so not run"; }; exit $$rc

R_single   = $< $(CRITERION_ARGS)
R_musl     = $<
R_aarch64  = qemu-aarch64 -L /usr/aarch64-linux-gnu $<
R_s390x    = qemu-s390x -L /usr/s390x-linux-gnu $<
R_debug    = $< $(CRITERION_ARGS)
R_mingw    = WINEPREFIX=$(abspath $(B))/wine WINEDEBUG=-all $(WINE) $<.exe

# What each builds: TSan the thread tests only; normal and asan add the C++
# unit (tests/test_cpp.cpp: bufwriter.hpp, C++17), asan with its sanitizers.
# MinGW: the test files that need no POSIX beyond pipes (fork, signals,
# sockets, fcntl, mmap, setrlimit: the others) and run under wine.
TESTS_mingw  := $(addprefix tests/test_,$(addsuffix .c,bounds cursor encoding errors failinj \
                first_use growth jump positions printf readout recorded_error room segmented \
                steady threads writing))
TESTS_tsan   := $(addprefix tests/test_,$(addsuffix .c,bounds threads pool pool_fork pool_threads \
                defaults decay))
# BW_DEBUG (a checked pool, and bw__seg_check after every segmented
# operation): the test files that reach segmented storage in every state
# (test_readout.c's hand-off tests expect an unchecked pool).
TESTS_debug  := $(addprefix tests/test_,$(addsuffix .c,segmented refs positions model))
# The one test harness (tests/harness.h), linked into every flavour.
TEST_HARNESS := tests/harness.c tests/harness_pool.c
TEST_WARN     = $(CSTD) -Wall -Wextra -Werror -pthread $(EXTRA_CFLAGS)
flavour_cc    = $(word 1,$(T_$(1)))
flavour_mini  = $(filter mini,$(word 2,$(T_$(1))))
flavour_tests = $(or $(TESTS_$(1)),$(TEST_SRCS))
flavour_cxx   = $(filter normal asan,$(1))
flavour_lib   = $(if $(filter single,$(1)),tests/single_impl.c,$(SRCS))
flavour_inc   = $(if $(filter single,$(1)),-Isingle_include -Itests,-I.)

define FLAVOUR
$(B)/t-$(1): $(SRCS) $(HDRS) $(SINGLE) $(TEST_SRCS) $(TEST_HDRS) $(TEST_HARNESS) tests/mini_main.c \
             tests/test_cpp.cpp bufwriter.hpp tests/single_impl.c Makefile
	@mkdir -p $(B)
	$(if $(call flavour_cxx,$(1)),$(CXX) -std=c++17 -Wall -Wextra -Werror -I. $(wordlist 3,99,$(T_$(1))) \
	  -c tests/test_cpp.cpp -o $(B)/test_cpp-$(1).o)
	$(call flavour_cc,$(1)) $(TEST_WARN) $(if $(call flavour_mini,$(1)),-Wno-format-zero-length -DBW_MINI_CRITERION) \
	  $(call flavour_inc,$(1)) $(wordlist 3,99,$(T_$(1))) -o $$@ $(call flavour_lib,$(1)) \
	  $(call flavour_tests,$(1)) $(TEST_HARNESS) $(if $(call flavour_mini,$(1)),tests/mini_main.c,-lcriterion) -lm \
	  $(if $(call flavour_cxx,$(1)),$(B)/test_cpp-$(1).o -lstdc++)
ifneq ($(1),m32)
test-$(1): $(B)/t-$(1)
	$$(R_$(1))
endif
endef
$(foreach f,$(TEST_FLAVOURS),$(eval $(call FLAVOUR,$(f))))

# -m32 needs gcc-multilib, which scripts/deps.sh leaves out where it would
# remove a cross compiler: then the flavour is not built, and says so.
test-m32:
	@if ! echo 'int main(void) { return 0; }' | $(CC) -m32 -x c - -o /dev/null 2>/dev/null; then \
	  echo "m32: not built: $(CC) -m32 cannot link (no gcc-multilib)"; exit 0; fi; \
	  $(MAKE) --no-print-directory $(B)/t-m32 && { $(R_m32); }

# make test: the set-up (as root: the tests' packages only), the library
# (all, TEST_JOBS compiles at a time), then every other part, TEST_JOBS at
# a time (the cores + 1), longest first. Each part runs in its own make, its output kept in
# $(B)/test-logs/PART.log and its exit status in PART.rc; a part that fails
# does not stop the others: its log's tail is shown when it ends. It closes
# with one line per part and the total as a plain "N passed, N failed" line
# (scripts/test_summary.sh), and fails if any part failed.
# make test-normal alone runs what this machine has, with no set-up.
TEST_PARTS := all test-strict $(addprefix test-,$(TEST_FLAVOURS)) test-stress-tsan test-seeded \
              test-fuzz test-dlclose check-single check-reference check-float-table check-spdx check-copies \
              check-style test-packaging test-formats
# The order the parts start in: the longest first (measured on 2 cores), so
# that the short ones fill in around them.
TEST_LONGEST := test-packaging test-asan test-valgrind test-tsan test-aarch64 test-s390x test-musl \
                test-mingw test-single test-normal
TEST_ORDER   := $(TEST_LONGEST) $(filter-out all $(TEST_LONGEST),$(TEST_PARTS))
# One more than the cores: parts that sleep (decay tests), wait on wine or
# link leave a core idle otherwise.
TEST_JOBS    ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) + 1 )))
TEST_LOGS    := $(B)/test-logs
test: test-deps
	@rm -rf $(TEST_LOGS) && mkdir -p $(TEST_LOGS)
	@echo "== make test: $(words $(TEST_PARTS)) parts, $(TEST_JOBS) at a time; logs in $(TEST_LOGS)/"
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) $(TEST_LOGS)/all.rc
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) $(TEST_ORDER:%=$(TEST_LOGS)/%.rc)
	@sh scripts/test_summary.sh $(TEST_LOGS) $(TEST_PARTS)

# One part: its own make, its output to its log; always succeeds, so that
# every part runs (the .rc file says how it went).
$(TEST_LOGS)/%.rc:
	@s=$$(date +%s); $(MAKE) --no-print-directory WERROR=-Werror $* > $(TEST_LOGS)/$*.log 2>&1; \
	  rc=$$?; t=$$(( $$(date +%s) - s )); echo $$t > $(TEST_LOGS)/$*.time; \
	  times > $(TEST_LOGS)/$*.times; awk 'function s(x) { sub(/s$$/, "", x); split(x, a, "m"); \
	    return a[1] * 60 + a[2] } NR == 2 { printf "%.0f\n", s($$1) + s($$2) }' \
	    $(TEST_LOGS)/$*.times > $(TEST_LOGS)/$*.cpu; rm -f $(TEST_LOGS)/$*.times; \
	  c=$$(cat $(TEST_LOGS)/$*.cpu); \
	  if [ $$rc = 0 ]; then echo "== $*: ok ($$t s, $$c s CPU)"; \
	  else msg=$$(echo "== $*: FAILED, exit $$rc ($$t s, $$c s CPU); the end of $(TEST_LOGS)/$*.log:"; \
	    tail -n 25 $(TEST_LOGS)/$*.log | cut -c1-160 | sed 's/^/   | /'); printf '%s\n' "$$msg"; fi; \
	  echo $$rc > $@

test-deps:
	@sh scripts/deps.sh test

# fmt_float.c's powers of ten are generated by a script and checked in: the
# check fails when the table is not what the script makes.
float-table:
	$(PYTHON) scripts/gen_float_table.py -o fmt_float_table.h

check-float-table:
	@$(PYTHON) scripts/gen_float_table.py --check -o fmt_float_table.h && \
	  echo "check-float-table: fmt_float_table.h is what scripts/gen_float_table.py makes"

# Every float and 100M random doubles against the suite's oracle (printf's
# digits and strtod): measured at 0.4-1.2M floats and 0.1M doubles a second
# on one core of a loaded machine, so one to three hours; not part of make
# test, which checks 1M of each (tests/test_float_text.c). FLOAT_FULL_ARGS:
# the number of doubles, then of floats, their stride and first bit pattern
# (e.g. "0 16777216 1 0x3f000000": every float in [0.5, 2)).
FLOAT_FULL_ARGS ?=
$(B)/float_full: $(SRCS) $(HDRS) tests/float_full.c tests/float_oracle.h
	@mkdir -p $(B)
	$(CC) $(TEST_WARN) -O2 -g -I. -o $@ tests/float_full.c $(SRCS) -lm

test-float-full: $(B)/float_full
	$(B)/float_full $(FLOAT_FULL_ARGS)

# The library under the strict warning set with -Werror: gcc, clang, MinGW.
test-strict:
	for cc in $(CC) clang $(MINGW_CC); do for f in $(SRCS); do \
	  $$cc $(CSTD) $(WARN_STRICT) -Werror -fsyntax-only $$f || exit 1; done; done

# No bulk copy compiled as a byte loop: rep movsb (what gcc makes of memcpy
# in a function it optimises for size) copies a byte per cycle on CPUs
# without ERMS. The release library must have none, and the room functions,
# which copy every held byte when a writer grows, no rep movs at all.
check-copies: $(B)/libbufwriter.a
	@objdump -d $< | awk '/>:$$/ { f = $$0 } /rep movsb/ || (/rep movs/ && f ~ /bw__room/) \
	  { print "string copy in " f ": " $$0; bad = 1 } END { exit bad }' && \
	  echo "check-copies: no rep movsb, no rep movs in a room function"

# Seeded bugs (write after return, read past the end, double return) under
# ASan, pooled and in bypass mode: each must be caught and named; and
# correct programs under every mix of instrumented program and library.
test-seeded:
	sh tests/seeded/run.sh $(CC) $(B)/seeded $(SRCS)

# dlopen, use a pool on a thread, dlclose, let the thread exit: the shared
# library, and plugins that embed the single header or libbufwriter.a.
test-dlclose: $(B)/libbufwriter.so $(B)/libbufwriter.a single_include/bufwriter.h
	sh tests/dl/run.sh $(CC) $(B)

# Stress: make stress runs the full one (50 rounds of max(2 x cores, 32)
# threads, then 10,000 short-lived threads under valgrind); make test runs a
# short one under TSan.
$(B)/stress: $(SRCS) $(HDRS) tests/stress.c
	@mkdir -p $(B)
	$(CC) $(TEST_WARN) -O2 -g -I. -o $@ tests/stress.c $(SRCS)

$(B)/stress-tsan: $(SRCS) $(HDRS) tests/stress.c
	@mkdir -p $(B)
	$(CC) $(TEST_WARN) -O1 -g -I. -fsanitize=thread -o $@ tests/stress.c $(SRCS)

stress: $(B)/stress
	$(B)/stress
	valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
	  --error-exitcode=99 $(B)/stress --short-lived 10000

test-stress-tsan: $(B)/stress-tsan
	TSAN_OPTIONS=halt_on_error=1 $(B)/stress-tsan 2 8 2000

# The layout rules a tool can check in the library's sources (the rest of
# the house style is in CONTRIBUTING.md): 4-space indents, no tab, no
# trailing blank, at most 100 columns.
STYLE_FILES := $(SRCS) $(HDRS) bufwriter.hpp
check-style:
	@awk 'length > 100 { print FILENAME ":" FNR ": longer than 100 columns"; bad = 1 } \
	  /\t/ { print FILENAME ":" FNR ": a tab"; bad = 1 } \
	  / $$/ { print FILENAME ":" FNR ": a trailing blank"; bad = 1 } END { exit bad }' \
	  $(STYLE_FILES) && echo "check-style: $(words $(STYLE_FILES)) files, none over 100 columns, no tab, no trailing blank"

# ----------------------------------------------------------------- fuzz --
# Differential fuzzing (libFuzzer, clang). make test replays the committed
# corpus and every past crash reproducer, then fuzzes FUZZ_SHORT seconds;
# make fuzz runs FUZZ_TIME seconds and saves crashes in tests/fuzz/crashes/.
# libFuzzer's leak check after each input is off (-detect_leaks=0): a
# pool's thread cache outlives the input that created it, so libFuzzer
# would rerun most inputs under a full leak scan (the replay took 5x as
# long). Leaks are still caught: every input ends by checking that the
# pool's backing allocator balances to zero, and LeakSanitizer's own check
# at exit (ASan's default) fails the replay on any block left unreachable.
FUZZ_TIME  ?= 600
FUZZ_SHORT ?= 20
# BW_SEG_CHECK: bw__seg_check after every segmented operation (mode_seg.c),
# without the rest of BW_DEBUG (a checked pool takes other paths).
FUZZ_CFLAGS = $(CSTD) -g -O1 -I. -Wall -Wextra -Werror -pthread -DBW_SEG_CHECK \
              -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
$(B)/fuzz_ops: $(SRCS) $(HDRS) tests/fuzz/fuzz_ops.c $(wildcard tests/fuzz/*.h)
	@mkdir -p $(B)
	clang $(FUZZ_CFLAGS) -o $@ tests/fuzz/fuzz_ops.c $(SRCS)

test-fuzz: $(B)/fuzz_ops
	$(B)/fuzz_ops -runs=0 -detect_leaks=0 tests/fuzz/corpus tests/fuzz/crashes
	rm -rf $(B)/fuzz-corpus && mkdir -p $(B)/fuzz-corpus
	$(B)/fuzz_ops -max_total_time=$(FUZZ_SHORT) -max_len=4096 -detect_leaks=0 -artifact_prefix=$(B)/ \
	  -print_final_stats=1 $(B)/fuzz-corpus tests/fuzz/corpus 2>&1 | tail -12

fuzz: $(B)/fuzz_ops
	mkdir -p $(B)/fuzz-corpus
	$(B)/fuzz_ops -max_total_time=$(FUZZ_TIME) -max_len=4096 -detect_leaks=0 -artifact_prefix=tests/fuzz/crashes/ \
	  -print_final_stats=1 $(B)/fuzz-corpus tests/fuzz/corpus

# ---------------------------------------------------------------- bench --
# The benchmark installs only its own packages, and writes bench/build/results/;
# bench-record also updates the committed record (bench/results/).
bench:
	@sh scripts/deps.sh bench
	$(MAKE) -C bench run

bench-full:
	@sh scripts/deps.sh bench
	$(MAKE) -C bench run-full

bench-record:
	@sh scripts/deps.sh bench
	$(MAKE) -C bench record

# The Debian packages the tests and the benchmark need: installed as root,
# else one message naming them (make test installs the tests', make bench
# the benchmark's).
deps:
	@sh scripts/deps.sh all

# -------------------------------------------------------------- install --
# bufwriter.pc and the CMake package (bufwriterConfig.cmake: imported targets
# bufwriter::bufwriter, the shared library, and bufwriter::bufwriter_static,
# both with the include folder and Threads::Threads; bufwriterConfigVersion.cmake:
# compatible within one minor version before 1.0, as the soname) are filled in
# from the templates in cmake/, which CMakeLists.txt fills in the same way.
# Relocatable when CMAKEDIR, LIBDIR and INCDIR are under PREFIX: the paths
# are relative to ${prefix} in the .pc, and the CMake config finds the
# prefix from its own folder; else absolute.
CMAKEDIR ?= $(LIBDIR)/cmake/bufwriter

install: all $(B)/bufwriter.pc $(B)/bufwriterConfig.cmake $(B)/bufwriterConfigVersion.cmake
	$(INSTALL) -d $(DESTDIR)$(INCDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PCDIR) $(DESTDIR)$(CMAKEDIR) \
	  $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 644 bufwriter.h $(DESTDIR)$(INCDIR)/bufwriter.h
	$(INSTALL) -m 644 bufwriter.hpp $(DESTDIR)$(INCDIR)/bufwriter.hpp
	$(INSTALL) -m 644 $(B)/libbufwriter.a $(DESTDIR)$(LIBDIR)/libbufwriter.a
	$(INSTALL) -m 755 $(B)/$(SO_REAL) $(DESTDIR)$(LIBDIR)/$(SO_REAL)
	ln -sf $(SO_REAL) $(DESTDIR)$(LIBDIR)/$(SO_ABI)
	ln -sf $(SO_REAL) $(DESTDIR)$(LIBDIR)/$(SO_DEV)
	$(INSTALL) -m 644 $(B)/bufwriter.pc $(DESTDIR)$(PCDIR)/bufwriter.pc
	$(INSTALL) -m 644 $(B)/bufwriterConfig.cmake $(B)/bufwriterConfigVersion.cmake $(DESTDIR)$(CMAKEDIR)
	$(INSTALL) -m 644 LICENSE $(DESTDIR)$(DOCDIR)/LICENSE

uninstall:
	rm -f $(DESTDIR)$(INCDIR)/bufwriter.h $(DESTDIR)$(INCDIR)/bufwriter.hpp \
	  $(DESTDIR)$(LIBDIR)/libbufwriter.a \
	  $(DESTDIR)$(LIBDIR)/$(SO_DEV) $(DESTDIR)$(LIBDIR)/$(SO_ABI) \
	  $(DESTDIR)$(LIBDIR)/$(SO_REAL) $(DESTDIR)$(PCDIR)/bufwriter.pc \
	  $(DESTDIR)$(CMAKEDIR)/bufwriterConfig.cmake $(DESTDIR)$(CMAKEDIR)/bufwriterConfigVersion.cmake \
	  $(DESTDIR)$(DOCDIR)/LICENSE
	rmdir $(DESTDIR)$(CMAKEDIR) $(DESTDIR)$(DOCDIR) 2>/dev/null || true

# The templates' @BW_...@ fields.
CM_RELOC  = $(and $(filter $(PREFIX)/%,$(CMAKEDIR)),$(filter $(PREFIX)/%,$(LIBDIR)),$(filter $(PREFIX)/%,$(INCDIR)))
PC_RELOC  = $(and $(filter $(PREFIX)/%,$(LIBDIR)),$(filter $(PREFIX)/%,$(INCDIR)))
CM_EMPTY :=
CM_UP     = $(subst $(CM_EMPTY) ,/,$(patsubst %,..,$(subst /, ,$(CMAKEDIR:$(PREFIX)/%=%))))
# The library's pointer size (32/64-bit check in the version file).
CM_PTR    = $(or $(shell echo __SIZEOF_POINTER__ | $(CC) $(CFLAGS_LIB) -E -P -x c - 2>/dev/null),8)
# Compatibility as the soname: within major.minor before 1.0, else major.
CM_MINOR  = $(filter 0,$(VMAJOR))
CM_VNEXT  = $(if $(CM_MINOR),$(VMAJOR).$(shell expr $(VMINOR) + 1),$(shell expr $(VMAJOR) + 1))
TEMPLATE_FIELDS = \
  VERSION=$(VERSION) VMAJOR=$(VMAJOR) VMINOR=$(VMINOR) ABI=$(SOMAJOR) VNEXT=$(CM_VNEXT) \
  MINOR_TOO=$(if $(CM_MINOR),TRUE,FALSE) PTR=$(CM_PTR) \
  RELOCATABLE=$(if $(CM_RELOC),TRUE,FALSE) CMAKE_UP=$(CM_UP) CMAKEDIR=$(CMAKEDIR) \
  PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) INCDIR=$(INCDIR) \
  LIBDIR_REL=$(LIBDIR:$(PREFIX)/%=%) INCDIR_REL=$(INCDIR:$(PREFIX)/%=%) \
  PC_LIBDIR=$(if $(PC_RELOC),$${prefix}/$(LIBDIR:$(PREFIX)/%=%),$(LIBDIR)) \
  PC_INCDIR=$(if $(PC_RELOC),$${prefix}/$(INCDIR:$(PREFIX)/%=%),$(INCDIR)) \
  DEFINES=$(JE_CFLAGS:-D%=%) PC_CFLAGS=$(if $(JE_CFLAGS),@$(JE_CFLAGS)) \
  PC_LIBS_PRIVATE=$(if $(JE_LIBS),@$(JE_LIBS)) STATIC_LIBS=$(if $(JE_LIBS),;jemalloc) \
  SO_REAL=$(SO_REAL) SO_ABI=$(SO_ABI) STATIC=libbufwriter.a
# Written on every make and replaced only when the text changes, so an
# install with another PREFIX never ships a stale one. (A leading @ in a
# field stands for a space.)
$(B)/bufwriter.pc $(B)/bufwriterConfig.cmake $(B)/bufwriterConfigVersion.cmake: $(B)/%: cmake/%.in FORCE
	@mkdir -p $(@D)
	@sed $(foreach f,$(TEMPLATE_FIELDS),-e 's|@BW_$(firstword $(subst =, ,$(f)))@|$(subst @, ,$(patsubst $(firstword $(subst =, ,$(f)))=%,%,$(f)))|g') \
	  $< > $@.tmp
	@if grep -n '@BW_[A-Z_]*@' $@.tmp; then echo "$@: unfilled fields"; exit 1; fi
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

clean:
	rm -rf build bench/build

# The single header, the examples, the packaging tests; the format
# examples against their readers.
include mk/packaging.mk
include mk/formats.mk
