# bufwriter - Makefile
#
#   make                  libbufwriter.a, libbufwriter.so (gcc; make CC=clang)
#   make deps             install the Debian packages tests and benchmark need
#                         (as root; elsewhere it names them)
#   make test             make deps, then every test flavour (normal, ASan+UBSan,
#                         TSan, valgrind, clang, -O0 gcc/clang, -m32, the single
#                         header), the strict-warning build, seeded bugs, a TSan
#                         stress, fuzz corpus replay, dlclose, packaging
#   make test-normal      just the Criterion suite, with what the machine has
#   make fuzz             differential fuzzing for FUZZ_TIME seconds (600)
#   make stress           the full thread stress (and 10,000 short-lived threads)
#   make bench            make deps, then the benchmark (bench-full: all of it)
#   make format-check     report files that differ from .clang-format
#   make install          PREFIX=/usr/local DESTDIR= (bufwriter.h, bufwriter.hpp,
#                         the libraries, bufwriter.pc, the CMake package in
#                         CMAKEDIR, default LIBDIR/cmake/bufwriter)
#   make single           regenerate single_include/bufwriter.h (check-single: CI)
#   make examples         build examples/ from the single header and the library
#   make uninstall / clean
#   make JEMALLOC=1       also build the jemalloc backing allocator hook
#
# Variables: CC, CXX, OPT (default -O2 -g), PREFIX, DESTDIR, LIBDIR, CMAKEDIR.

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

# The library's warning set (mpack's strict set); -Werror only where we test
# (make test and CI set WERROR=-Werror), so a user's newer compiler with a
# new warning still builds the library.
WARN_STRICT := -Wall -Wextra -Wpedantic -Wshadow -Wcast-qual -Wundef -Wstrict-prototypes \
               -Wmissing-prototypes -Wconversion -Wsign-conversion
WERROR   ?=
CSTD     := -std=c11
CFLAGS_LIB = $(CSTD) $(WARN_STRICT) $(WERROR) $(OPT) -fPIC -fvisibility=hidden -pthread \
             $(JE_CFLAGS) $(EXTRA_CFLAGS)
LDLIBS_LIB = -pthread $(JE_LIBS)

ifeq ($(JEMALLOC),1)
JE_CFLAGS := -DBW_HAVE_JEMALLOC
JE_LIBS   := -ljemalloc
endif

SRCS     := bufwriter.c io.c pool/pool.c pool/tcache.c pool/large.c pool/alloc.c pool/check.c
HDRS     := bufwriter.h writer_internal.h pool/pool_internal.h pool/track.h
B        := build
OBJS     := $(SRCS:%.c=$(B)/%.o)

TEST_SRCS := $(sort $(wildcard tests/test_*.c))
TEST_HDRS := $(wildcard tests/*.h)

.PHONY: all test test-strict check-copies test-seeded test-fuzz test-dlclose fuzz stress test-stress-tsan \
        format-check bench bench-full deps install uninstall clean \
        $(addprefix test-,$(TEST_FLAVOURS))

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
# The Criterion suite in several flavours, each built from the library
# sources directly (so each compiles the library with its own flags). One
# table: name, compiler, harness (criterion, or mini: tests/mini_criterion.h,
# a fork-per-test shim for where Criterion cannot run: TSan, its issue #274;
# valgrind, which does not follow Criterion's re-executed children; -m32,
# which Debian's Criterion does not ship), then the flags. The single
# flavour builds the whole suite against single_include/bufwriter.h.
#
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
TEST_FLAVOURS := normal asan tsan valgrind clang gcc-O0 clang-O0 m32 single

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
R_m32      = $<; rc=$$?; [ $$rc != 126 ] || { rc=0; \
             echo "m32: built; this kernel cannot run 32-bit programs, so not run"; }; exit $$rc
R_single   = $< $(CRITERION_ARGS)

# What each builds: TSan the thread tests only; normal adds a C++ unit.
TESTS_tsan   := tests/test_threads.c tests/test_pool.c tests/test_defaults.c tests/test_pool_defects.c
TEST_WARN     = $(CSTD) -Wall -Wextra -Werror -pthread $(EXTRA_CFLAGS)
flavour_cc    = $(word 1,$(T_$(1)))
flavour_mini  = $(filter mini,$(word 2,$(T_$(1))))
flavour_tests = $(or $(TESTS_$(1)),$(TEST_SRCS))
flavour_lib   = $(if $(filter single,$(1)),tests/single_impl.c,$(SRCS))
flavour_inc   = $(if $(filter single,$(1)),-Isingle_include -Itests,-I.)

define FLAVOUR
$(B)/t-$(1): $(SRCS) $(HDRS) $(SINGLE) $(TEST_SRCS) $(TEST_HDRS) tests/mini_main.c \
             tests/test_cpp.cpp tests/single_impl.c Makefile
	@mkdir -p $(B)
	$(if $(filter normal,$(1)),$(CXX) -std=c++11 -Wall -Wextra -Werror -I. -O2 -c tests/test_cpp.cpp -o $(B)/test_cpp.o)
	$(call flavour_cc,$(1)) $(TEST_WARN) $(if $(call flavour_mini,$(1)),-Wno-format-zero-length -DBW_MINI_CRITERION) \
	  $(call flavour_inc,$(1)) $(wordlist 3,99,$(T_$(1))) -o $$@ $(call flavour_lib,$(1)) \
	  $(call flavour_tests,$(1)) $(if $(call flavour_mini,$(1)),tests/mini_main.c,-lcriterion) \
	  $(if $(filter normal,$(1)),$(B)/test_cpp.o -lstdc++)
test-$(1): $(B)/t-$(1)
	$$(R_$(1))
endef
$(foreach f,$(TEST_FLAVOURS),$(eval $(call FLAVOUR,$(f))))

# make test: the set-up (as root), then every flavour and every other check.
# make test-normal alone runs what this machine has, with no set-up.
test: deps
	$(MAKE) --no-print-directory WERROR=-Werror all test-strict \
	  $(addprefix test-,$(TEST_FLAVOURS)) test-stress-tsan test-seeded test-fuzz test-dlclose \
	  check-single check-copies test-packaging

# The library under the strict warning set with -Werror, gcc and clang.
test-strict:
	for cc in $(CC) clang; do for f in $(SRCS); do \
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

# Formatting: .clang-format describes the house style; this reports files
# that differ from it (it does not rewrite them).
format-check:
	@clang-format --dry-run $(SRCS) $(HDRS) 2>&1 | grep -c 'warning:' | \
	  xargs -I{} echo "{} lines differ from .clang-format (clang-format -i FILE to apply)"

# ----------------------------------------------------------------- fuzz --
# Differential fuzzing (libFuzzer, clang). make test replays the committed
# corpus and every past crash reproducer, then fuzzes FUZZ_SHORT seconds;
# make fuzz runs FUZZ_TIME seconds and saves crashes in tests/fuzz/crashes/.
# Fresh fuzzing runs without LeakSanitizer (-detect_leaks=0): a pool's thread
# cache outlives the input that created it, so libFuzzer would rerun a third
# of all inputs under a full leak scan (4x slower). Leaks are still caught:
# every input ends by checking that the pool's backing allocator balances to
# zero, and the corpus replay runs with LeakSanitizer on.
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
	$(B)/fuzz_ops -max_total_time=$(FUZZ_SHORT) -max_len=4096 -detect_leaks=0 -artifact_prefix=$(B)/ \
	  -print_final_stats=1 $(B)/fuzz-corpus tests/fuzz/corpus 2>&1 | tail -12

fuzz: $(B)/fuzz_ops
	mkdir -p $(B)/fuzz-corpus
	$(B)/fuzz_ops -max_total_time=$(FUZZ_TIME) -max_len=4096 -detect_leaks=0 -artifact_prefix=tests/fuzz/crashes/ \
	  -print_final_stats=1 $(B)/fuzz-corpus tests/fuzz/corpus

# ---------------------------------------------------------------- bench --
bench: deps
	$(MAKE) -C bench run

bench-full: deps
	$(MAKE) -C bench run-full

# The Debian packages the tests and the benchmark need: installed as root,
# else one message naming them.
deps:
	@sh scripts/deps.sh all

# -------------------------------------------------------------- install --
# Also a CMake package in $(CMAKEDIR): bufwriterConfig.cmake (imported targets
# bufwriter::bufwriter, the .so, and bufwriter::bufwriter_static, the .a;
# both with the include folder and Threads::Threads) and
# bufwriterConfigVersion.cmake (compatible within one minor version before
# 1.0, as the soname: every 0.x release may break the ABI). Written like
# bufwriter.pc, by hand: the library's build needs no CMake.
CMAKEDIR ?= $(LIBDIR)/cmake/bufwriter

install: all $(B)/bufwriter.pc $(B)/bufwriterConfig.cmake $(B)/bufwriterConfigVersion.cmake
	install -d $(DESTDIR)$(INCDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PCDIR) $(DESTDIR)$(CMAKEDIR)
	install -m 644 bufwriter.h $(DESTDIR)$(INCDIR)/bufwriter.h
	install -m 644 bufwriter.hpp $(DESTDIR)$(INCDIR)/bufwriter.hpp
	install -m 644 $(B)/libbufwriter.a $(DESTDIR)$(LIBDIR)/libbufwriter.a
	install -m 755 $(B)/libbufwriter.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libbufwriter.so.$(VERSION)
	ln -sf libbufwriter.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libbufwriter.so.$(SOMAJOR)
	ln -sf libbufwriter.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libbufwriter.so
	install -m 644 $(B)/bufwriter.pc $(DESTDIR)$(PCDIR)/bufwriter.pc
	install -m 644 $(B)/bufwriterConfig.cmake $(B)/bufwriterConfigVersion.cmake $(DESTDIR)$(CMAKEDIR)

uninstall:
	rm -f $(DESTDIR)$(INCDIR)/bufwriter.h $(DESTDIR)$(INCDIR)/bufwriter.hpp \
	  $(DESTDIR)$(LIBDIR)/libbufwriter.a \
	  $(DESTDIR)$(LIBDIR)/libbufwriter.so $(DESTDIR)$(LIBDIR)/libbufwriter.so.$(SOMAJOR) \
	  $(DESTDIR)$(LIBDIR)/libbufwriter.so.$(VERSION) $(DESTDIR)$(PCDIR)/bufwriter.pc \
	  $(DESTDIR)$(CMAKEDIR)/bufwriterConfig.cmake $(DESTDIR)$(CMAKEDIR)/bufwriterConfigVersion.cmake
	rmdir $(DESTDIR)$(CMAKEDIR) 2>/dev/null || true

# The CMake files, written on every make and replaced only when their text
# changes, as bufwriter.pc. Relocatable when CMAKEDIR, LIBDIR and INCDIR are
# under PREFIX: the config finds the prefix from its own folder
# (CMAKE_CURRENT_LIST_DIR), so a staged or moved tree works; else absolute.
CM_RELOC  = $(and $(filter $(PREFIX)/%,$(CMAKEDIR)),$(filter $(PREFIX)/%,$(LIBDIR)),$(filter $(PREFIX)/%,$(INCDIR)))
CM_EMPTY :=
CM_UP     = $(subst $(CM_EMPTY) ,/,$(patsubst %,..,$(subst /, ,$(CMAKEDIR:$(PREFIX)/%=%))))
CM_LIB    = $(if $(CM_RELOC),$${_bw_prefix}/$(LIBDIR:$(PREFIX)/%=%),$(LIBDIR))
CM_INC    = $(if $(CM_RELOC),$${_bw_prefix}/$(INCDIR:$(PREFIX)/%=%),$(INCDIR))
# The library's pointer size (32/64-bit check in the version file).
CM_PTR    = $(shell echo __SIZEOF_POINTER__ | $(CC) $(CFLAGS_LIB) -E -P -x c - 2>/dev/null)
# Compatibility as the soname: within major.minor before 1.0, else major.
CM_MINOR  = $(filter 0,$(VMAJOR))
CM_ABI    = $(if $(CM_MINOR),$(VMAJOR).$(VMINOR),$(VMAJOR))
CM_VNEXT  = $(if $(CM_MINOR),$(VMAJOR).$(shell expr $(VMINOR) + 1),$(shell expr $(VMAJOR) + 1))

define CM_PREFIX
# The prefix, from where this file is (the tree may have moved), unless it
# was reached through a link across prefixes (/lib -> /usr/lib).
get_filename_component(_bw_prefix "$${CMAKE_CURRENT_LIST_DIR}/$(CM_UP)" ABSOLUTE)
get_filename_component(_bw_here "$${CMAKE_CURRENT_LIST_DIR}" REALPATH)
get_filename_component(_bw_orig "$(CMAKEDIR)" REALPATH)
if(_bw_here STREQUAL _bw_orig)
  set(_bw_prefix "$(PREFIX)")
endif()
endef

define CM_CONFIG
# bufwriterConfig.cmake - bufwriter $(VERSION), written by its Makefile.
#   find_package(bufwriter $(VMAJOR).$(VMINOR) REQUIRED)
#   target_link_libraries(app PRIVATE bufwriter::bufwriter)         # .so
#   target_link_libraries(app PRIVATE bufwriter::bufwriter_static)  # .a
# Both give bufwriter.h and bufwriter.hpp, and link Threads::Threads.
include(CMakeFindDependencyMacro)
find_dependency(Threads)
$(if $(CM_RELOC),$(CM_PREFIX))
foreach(_bw_f "$(CM_INC)/bufwriter.h" "$(CM_LIB)/libbufwriter.so.$(VERSION)")
  if(NOT EXISTS "$${_bw_f}")
    set(bufwriter_FOUND FALSE)
    set(bufwriter_NOT_FOUND_MESSAGE "$${_bw_f} is missing")
    return()
  endif()
endforeach()
if(NOT TARGET bufwriter::bufwriter)
  add_library(bufwriter::bufwriter SHARED IMPORTED)
  set_target_properties(bufwriter::bufwriter PROPERTIES
    IMPORTED_LOCATION "$(CM_LIB)/libbufwriter.so.$(VERSION)"
    IMPORTED_SONAME "libbufwriter.so.$(SOMAJOR)"
    INTERFACE_INCLUDE_DIRECTORIES "$(CM_INC)"$(if $(JE_CFLAGS),
    INTERFACE_COMPILE_DEFINITIONS "BW_HAVE_JEMALLOC")
    INTERFACE_LINK_LIBRARIES "Threads::Threads")
endif()
if(NOT TARGET bufwriter::bufwriter_static AND EXISTS "$(CM_LIB)/libbufwriter.a")
  add_library(bufwriter::bufwriter_static STATIC IMPORTED)
  set_target_properties(bufwriter::bufwriter_static PROPERTIES
    IMPORTED_LOCATION "$(CM_LIB)/libbufwriter.a"
    IMPORTED_LINK_INTERFACE_LANGUAGES "C"
    INTERFACE_INCLUDE_DIRECTORIES "$(CM_INC)"$(if $(JE_CFLAGS),
    INTERFACE_COMPILE_DEFINITIONS "BW_HAVE_JEMALLOC")
    INTERFACE_LINK_LIBRARIES "Threads::Threads$(if $(JE_LIBS),;jemalloc)")
endif()
unset(_bw_f)
unset(_bw_here)
unset(_bw_orig)
unset(_bw_prefix)
endef

define CM_VERSION
# bufwriterConfigVersion.cmake - bufwriter $(VERSION), written by its Makefile.
# Satisfies find_package(bufwriter V) for V from $(CM_ABI) up to $(VERSION), and a
# version range within $(CM_ABI) (an excluded upper end may be $(CM_VNEXT)):
# another $(if $(CM_MINOR),minor version before 1.0,major version) is another ABI.
set(PACKAGE_VERSION "$(VERSION)")
set(PACKAGE_VERSION_COMPATIBLE FALSE)
if(PACKAGE_FIND_VERSION_RANGE)
  if(PACKAGE_FIND_VERSION_MIN_MAJOR EQUAL $(VMAJOR)$(if $(CM_MINOR), AND PACKAGE_FIND_VERSION_MIN_MINOR EQUAL $(VMINOR))
     AND PACKAGE_VERSION VERSION_GREATER_EQUAL PACKAGE_FIND_VERSION_MIN)
    if(PACKAGE_FIND_VERSION_RANGE_MAX STREQUAL "INCLUDE")
      if(PACKAGE_FIND_VERSION_MAX_MAJOR EQUAL $(VMAJOR)$(if $(CM_MINOR), AND PACKAGE_FIND_VERSION_MAX_MINOR EQUAL $(VMINOR))
         AND PACKAGE_VERSION VERSION_LESS_EQUAL PACKAGE_FIND_VERSION_MAX)
        set(PACKAGE_VERSION_COMPATIBLE TRUE)
      endif()
    elseif(PACKAGE_VERSION VERSION_LESS PACKAGE_FIND_VERSION_MAX
           AND PACKAGE_FIND_VERSION_MAX VERSION_LESS_EQUAL $(CM_VNEXT))
      set(PACKAGE_VERSION_COMPATIBLE TRUE)
    endif()
  endif()
elseif(PACKAGE_FIND_VERSION_MAJOR EQUAL $(VMAJOR)$(if $(CM_MINOR), AND PACKAGE_FIND_VERSION_MINOR EQUAL $(VMINOR))
       AND PACKAGE_VERSION VERSION_GREATER_EQUAL PACKAGE_FIND_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
endif()
if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
  set(PACKAGE_VERSION_EXACT TRUE)
endif()$(if $(CM_PTR),
# Built with $(CM_PTR)-byte pointers: not for a project of another size.
if(NOT "$${CMAKE_SIZEOF_VOID_P}" STREQUAL "" AND NOT CMAKE_SIZEOF_VOID_P EQUAL $(CM_PTR))
  set(PACKAGE_VERSION "$${PACKAGE_VERSION} ($(CM_PTR)-byte pointers)")
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
endif())
endef

$(B)/bufwriterConfig.cmake: FORCE
	$(shell mkdir -p $(@D))$(file >$@.tmp,$(CM_CONFIG))
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(B)/bufwriterConfigVersion.cmake: FORCE
	$(shell mkdir -p $(@D))$(file >$@.tmp,$(CM_VERSION))
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

clean:
	rm -rf build bench/build

# The single header, the examples, the packaging tests.
include mk/packaging.mk
