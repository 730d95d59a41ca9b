# bufwriter - Makefile
#
#   make                  libbufwriter.a, libbufwriter.so (gcc; make CC=clang)
#   make test             install test deps (as root), then the Criterion suite:
#                         normal, ASan+UBSan, TSan (thread tests), valgrind,
#                         clang, -O0, -m32, -Wconversion, fuzz corpus replay
#   make fuzz             differential fuzzing for FUZZ_TIME seconds (600)
#   make stress           the full thread stress (and 10,000 short-lived threads)
#   make bench            install bench deps (as root), run the benchmark
#   make install          PREFIX=/usr/local DESTDIR= (headers, libs, bufwriter.pc)
#   make single           regenerate single_include/bufwriter.h (check-single: CI)
#   make examples         build examples/ from the single header and the library
#   make uninstall / clean
#   make JEMALLOC=1       also build the jemalloc backing allocator hook
#
# Variables: CC, CXX, OPT (default -O2 -g), PREFIX, DESTDIR, LIBDIR.

CC       ?= cc
CXX      ?= c++
OPT      ?= -O2 -g
PREFIX   ?= /usr/local
LIBDIR   ?= $(PREFIX)/lib
INCDIR   ?= $(PREFIX)/include
PCDIR    ?= $(LIBDIR)/pkgconfig
JEMALLOC ?= 0

VERSION  := $(shell sed -n 's/^\#define BW_VERSION_STRING "\(.*\)"/\1/p' bufwriter.h)
# The soname's version: the major number, and before 1.0 major.minor too
# (every 0.x release may break the ABI: 0.2 is libbufwriter.so.0.2).
VMAJOR   := $(word 1,$(subst ., ,$(VERSION)))
VMINOR   := $(word 2,$(subst ., ,$(VERSION)))
SOMAJOR  := $(if $(filter 0,$(VMAJOR)),$(VMAJOR).$(VMINOR),$(VMAJOR))

WARN     := -Wall -Wextra -Wpedantic -Werror
CSTD     := -std=c11
CFLAGS_LIB = $(CSTD) $(WARN) $(OPT) -fPIC -fvisibility=hidden -pthread $(JE_CFLAGS) $(EXTRA_CFLAGS)
LDLIBS_LIB = -pthread $(JE_LIBS)

ifeq ($(JEMALLOC),1)
JE_CFLAGS := -DBW_HAVE_JEMALLOC
JE_LIBS   := -ljemalloc
endif

SRCS     := bufwriter.c io.c pool/pool.c pool/tcache.c pool/large.c pool/alloc.c pool/check.c
HDRS     := bufwriter.h writer_internal.h pool/pool_internal.h pool/track.h
B        := build
OBJS     := $(SRCS:%.c=$(B)/%.o)

TEST_SRCS := $(wildcard tests/test_*.c)
TEST_HDRS := $(wildcard tests/*.h)

.PHONY: all test test-normal test-asan test-tsan test-valgrind test-clang test-matrix \
        test-seeded test-fuzz fuzz stress test-stress-tsan \
        bench bench-full deps-test deps-bench install uninstall clean

all: $(B)/libbufwriter.a $(B)/libbufwriter.so

$(B)/%.o: %.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_LIB) -c $< -o $@

$(B)/libbufwriter.a: $(OBJS)
	rm -f $@
	ar rcs $@ $^

# -z nodelete: dlclose never unloads the library, since a thread that used
# a pool runs the library's cache cleanup when it exits, whenever that is.
$(B)/libbufwriter.so: $(OBJS)
	$(CC) -shared -Wl,-soname,libbufwriter.so.$(SOMAJOR) -Wl,-z,nodelete \
	  -o $(B)/libbufwriter.so.$(VERSION) $^ $(LDLIBS_LIB)
	ln -sf libbufwriter.so.$(VERSION) $(B)/libbufwriter.so.$(SOMAJOR)
	ln -sf libbufwriter.so.$(VERSION) $@

# Written on every make (only replaced when its text changes), so an install
# with another PREFIX never ships a stale one.
$(B)/bufwriter.pc: FORCE
	@mkdir -p $(B)
	@printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCDIR)' '' \
	  'Name: bufwriter' 'Description: growable, pooled buffer writer for C' \
	  'Version: $(VERSION)' 'Cflags: -I$${includedir}$(if $(JE_CFLAGS), $(JE_CFLAGS))' \
	  'Libs: -L$${libdir} -lbufwriter' 'Libs.private: -pthread$(if $(JE_LIBS), $(JE_LIBS))' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

FORCE:

# ---------------------------------------------------------------- tests --
# One Criterion binary per flavour, built from the library sources directly
# (so each flavour compiles the library with its own sanitizer flags).
TEST_CFLAGS = $(CSTD) $(WARN) -pthread -I. $(EXTRA_CFLAGS)
TEST_LIBS   = -lcriterion -pthread

$(B)/test-normal: $(SRCS) $(HDRS) $(TEST_SRCS) $(TEST_HDRS) tests/test_cpp.cpp
	@mkdir -p $(B)
	$(CXX) -std=c++11 -Wall -Wextra -Werror -I. -O2 -c tests/test_cpp.cpp -o $(B)/test_cpp.o
	$(CC) $(TEST_CFLAGS) $(OPT) -o $@ $(SRCS) $(TEST_SRCS) $(B)/test_cpp.o $(TEST_LIBS) -lstdc++

$(B)/test-asan: $(SRCS) $(HDRS) $(TEST_SRCS) $(TEST_HDRS)
	@mkdir -p $(B)
	$(CC) $(TEST_CFLAGS) -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
	  -fno-omit-frame-pointer -o $@ $(SRCS) $(TEST_SRCS) $(TEST_LIBS)

# Criterion cannot start under TSan (its issue #274), and valgrind does not
# follow the children it re-executes; these two builds compile the same test
# sources over tests/mini_criterion.h (plain fork per test, no exec).
MINI_CFLAGS = $(CSTD) -Wall -Wextra -Werror -Wno-format-zero-length -pthread -I. -DBW_MINI_CRITERION
TSAN_TESTS := tests/test_threads.c tests/test_pool.c
$(B)/test-tsan: $(SRCS) $(HDRS) $(TSAN_TESTS) $(TEST_HDRS) tests/mini_main.c
	@mkdir -p $(B)
	$(CC) $(MINI_CFLAGS) -O1 -g -fsanitize=thread -o $@ $(SRCS) $(TSAN_TESTS) tests/mini_main.c

$(B)/test-mini: $(SRCS) $(HDRS) $(TEST_SRCS) $(TEST_HDRS) tests/mini_main.c
	@mkdir -p $(B)
	$(CC) $(MINI_CFLAGS) -O1 -g -DBW_VALGRIND -o $@ $(SRCS) $(TEST_SRCS) tests/mini_main.c

# Criterion forks a child per test; -j2 runs two at a time. The ASan run
# uses -j1: Criterion's parallel runner itself sometimes leaks 48 bytes in
# the parent (a calloc in libcriterion only), which LeakSanitizer reports.
CRITERION_ARGS ?= -j2

test: deps-test
	$(MAKE) test-normal test-asan test-tsan test-stress-tsan test-valgrind test-clang test-matrix \
	  test-seeded test-fuzz \
	  check-single test-packaging

test-normal: $(B)/test-normal
	$(B)/test-normal $(CRITERION_ARGS)

test-asan: $(B)/test-asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  $(B)/test-asan -j1

test-tsan: $(B)/test-tsan
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 $(B)/test-tsan

# Any leak, invalid access or use of a block held by the pool (marked
# no-access through valgrind client requests, -DBW_VALGRIND) fails the test.
test-valgrind: $(B)/test-mini
	valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
	  --show-leak-kinds=definite,indirect --error-exitcode=99 $(B)/test-mini

# The library and the suite build warning-free with clang too, and pass.
test-clang:
	$(MAKE) --no-print-directory B=build/clang CC=clang CXX=clang++ all test-normal

# Build matrix: -O0 with gcc and clang; a 32-bit build (-m32, where size
# arithmetic wraps sooner; over the shim, as Debian has no 32-bit Criterion);
# the library clean under -Wconversion -Wsign-conversion.
$(B)/test-m32: $(SRCS) $(HDRS) $(TEST_SRCS) $(TEST_HDRS) tests/mini_main.c
	@mkdir -p $(B)
	$(CC) -m32 $(MINI_CFLAGS) -Wno-psabi -O2 -g -o $@ $(SRCS) $(TEST_SRCS) tests/mini_main.c

test-matrix: $(B)/test-m32
	$(B)/test-m32 | tail -1
	$(MAKE) --no-print-directory B=build/O0 OPT=-O0 test-normal
	$(MAKE) --no-print-directory B=build/clang-O0 CC=clang CXX=clang++ OPT=-O0 test-normal
	for f in $(SRCS); do $(CC) $(CSTD) $(WARN) -Wconversion -Wsign-conversion -fsyntax-only $$f || exit 1; done

# Seeded bugs (write after return, read past the end, double return) under
# ASan, pooled and in bypass mode: each must be caught and named.
test-seeded:
	sh tests/seeded/run.sh $(CC) $(B)/seeded $(SRCS)

# Stress: make stress runs the full one (50 rounds of max(2 x cores, 32)
# threads, then 10,000 short-lived threads under valgrind); make test runs a
# short one under TSan.
$(B)/stress: $(SRCS) $(HDRS) tests/stress.c
	@mkdir -p $(B)
	$(CC) $(CSTD) $(WARN) -O2 -g -pthread -I. -o $@ tests/stress.c $(SRCS)

$(B)/stress-tsan: $(SRCS) $(HDRS) tests/stress.c
	@mkdir -p $(B)
	$(CC) $(CSTD) $(WARN) -O1 -g -pthread -I. -fsanitize=thread -o $@ tests/stress.c $(SRCS)

stress: $(B)/stress
	$(B)/stress
	valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
	  --error-exitcode=99 $(B)/stress --short-lived 10000

test-stress-tsan: $(B)/stress-tsan
	TSAN_OPTIONS=halt_on_error=1 $(B)/stress-tsan 2 8 2000

# ----------------------------------------------------------------- fuzz --
# Differential fuzzing (libFuzzer, clang). make test replays the committed
# corpus and every past crash reproducer, then fuzzes FUZZ_SHORT seconds;
# make fuzz runs FUZZ_TIME seconds and saves crashes in tests/fuzz/crashes/.
FUZZ_TIME  ?= 600
FUZZ_SHORT ?= 20
FUZZ_CFLAGS = $(CSTD) -g -O1 -I. -Wall -Wextra -Werror -pthread \
              -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
$(B)/fuzz_ops: $(SRCS) $(HDRS) tests/fuzz/fuzz_ops.c
	@mkdir -p $(B)
	clang $(FUZZ_CFLAGS) -o $@ tests/fuzz/fuzz_ops.c $(SRCS)

test-fuzz: $(B)/fuzz_ops
	$(B)/fuzz_ops -runs=0 tests/fuzz/corpus tests/fuzz/crashes
	rm -rf $(B)/fuzz-corpus && mkdir -p $(B)/fuzz-corpus
	$(B)/fuzz_ops -max_total_time=$(FUZZ_SHORT) -max_len=4096 -artifact_prefix=$(B)/ \
	  -print_final_stats=1 $(B)/fuzz-corpus tests/fuzz/corpus 2>&1 | tail -12

fuzz: $(B)/fuzz_ops
	mkdir -p $(B)/fuzz-corpus
	$(B)/fuzz_ops -max_total_time=$(FUZZ_TIME) -max_len=4096 -artifact_prefix=tests/fuzz/crashes/ \
	  -print_final_stats=1 $(B)/fuzz-corpus tests/fuzz/corpus

# ---------------------------------------------------------------- bench --
bench: deps-bench
	$(MAKE) -C bench run

bench-full: deps-bench
	$(MAKE) -C bench run-full

deps-test:
	@sh scripts/deps.sh test

deps-bench:
	@sh scripts/deps.sh bench

# -------------------------------------------------------------- install --
install: all $(B)/bufwriter.pc
	install -d $(DESTDIR)$(INCDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PCDIR)
	install -m 644 bufwriter.h $(DESTDIR)$(INCDIR)/bufwriter.h
	install -m 644 $(B)/libbufwriter.a $(DESTDIR)$(LIBDIR)/libbufwriter.a
	install -m 755 $(B)/libbufwriter.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libbufwriter.so.$(VERSION)
	ln -sf libbufwriter.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libbufwriter.so.$(SOMAJOR)
	ln -sf libbufwriter.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libbufwriter.so
	install -m 644 $(B)/bufwriter.pc $(DESTDIR)$(PCDIR)/bufwriter.pc

uninstall:
	rm -f $(DESTDIR)$(INCDIR)/bufwriter.h $(DESTDIR)$(LIBDIR)/libbufwriter.a \
	  $(DESTDIR)$(LIBDIR)/libbufwriter.so $(DESTDIR)$(LIBDIR)/libbufwriter.so.$(SOMAJOR) \
	  $(DESTDIR)$(LIBDIR)/libbufwriter.so.$(VERSION) $(DESTDIR)$(PCDIR)/bufwriter.pc

clean:
	rm -rf build bench/build

# The single header, the examples, the packaging tests.
include mk/packaging.mk
