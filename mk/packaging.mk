# SPDX-License-Identifier: MIT
# mk/packaging.mk - the single header, the reference, the examples,
#, the packaging tests. Included by the top-level Makefile (uses
# its CC, B, SRCS, HDRS, VERSION, CSTD, WARN_STRICT).
#
#   make single          regenerate single_include/bufwriter.h from bufwriter.h,
#                        pool/ and bufwriter.c (scripts/amalgamate.py)
#   make check-single    fail if the checked-in single header differs from a
#                        fresh generation (CI)
#   make reference       regenerate docs/reference.md, the API reference, from
#                        bufwriter.h's comments (scripts/gen_reference.py)
#   make check-reference fail if docs/reference.md differs from a fresh
#                        generation (make test)
#   make examples        build examples/*.c from the single header and against
#                        the library in $(B) (into $(B)/examples/)
#   make test-packaging  tests/packaging/run.sh: the single header (gcc, clang,
#                        g++, clang++), two translation units, the examples,
#                        _GNU_SOURCE before <stdio.h> (single header, and the
#                        library's sources with their strict set),
#                        bufwriter.hpp (C++17, strict warnings), a staged
#                        install through pkg-config and CMake (find_package,
#                        pkg_check_modules), nm -D, uninstall

PYTHON      ?= python3
SINGLE      := single_include/bufwriter.h
AMALGAMATE   = $(PYTHON) scripts/amalgamate.py -o $(SINGLE) --public bufwriter.h \
               --internal $(filter-out bufwriter.h,$(HDRS)) --sources $(SRCS) \
               --license LICENSE
EXAMPLE_SRCS  = $(wildcard examples/*.c)
EXAMPLE_BINS  = $(EXAMPLE_SRCS:examples/%.c=$(B)/examples/%-single) \
                $(EXAMPLE_SRCS:examples/%.c=$(B)/examples/%-lib)
EX_CFLAGS    = -std=c11 -Wall -Wextra -Wpedantic -Werror -O2

.PHONY: single check-single reference check-reference examples test-packaging

single:
	$(AMALGAMATE)

check-single:
	@$(AMALGAMATE) --check

reference:
	$(PYTHON) scripts/gen_reference.py -o docs/reference.md bufwriter.h

check-reference:
	@$(PYTHON) scripts/gen_reference.py --check -o docs/reference.md bufwriter.h && \
	  echo "check-reference: docs/reference.md is up to date"

examples: $(EXAMPLE_BINS)

# From the single header alone, the way a user who copied it builds.
$(B)/examples/%-single: examples/%.c $(SINGLE)
	@mkdir -p $(dir $@)
	$(CC) $(EX_CFLAGS) -Isingle_include -DBUFWRITER_IMPLEMENTATION $< -pthread -o $@

# Against the library built here (the installed one is tested through
# pkg-config by test-packaging).
$(B)/examples/%-lib: examples/%.c bufwriter.h $(B)/libbufwriter.a
	@mkdir -p $(dir $@)
	$(CC) $(EX_CFLAGS) -I. $< $(B)/libbufwriter.a -pthread -o $@

test-packaging:
	@MAKE="$(MAKE)" LIB_SRCS="$(SRCS)" LIB_WARN="$(CSTD) $(WARN_STRICT)" sh tests/packaging/run.sh
