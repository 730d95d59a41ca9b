# SPDX-License-Identifier: MIT
# mk/packaging.mk - the single header, the reference, the release tarball,
# the examples, the packaging tests. Included by the top-level Makefile (uses
# its CC, B, SRCS, HDRS, VERSION, CSTD, WARN_STRICT).
#
#   make single          regenerate single_include/bufwriter.h from bufwriter.h,
#                        pool/ and the writer's sources (scripts/amalgamate.py)
#   make check-single    fail if the checked-in single header differs from a
#                        fresh generation (CI)
#   make reference       regenerate docs/reference.md, the API reference, from
#                        bufwriter.h's comments (scripts/gen_reference.py)
#   make check-reference fail if docs/reference.md differs from a fresh
#                        generation (make test)
#   make check-spdx      fail if a source, header, script or build file lacks
#                        an SPDX-License-Identifier line at its top (make test)
#   make dist            bufwriter-VERSION.tar.gz: git archive of HEAD (the
#                        single header and the reference are committed, so
#                        inside), then unpacked in a temporary folder where
#                        check-single, check-reference, the libraries and
#                        test-normal must pass
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
               --prelude platform/prelude.h \
               --internal $(filter-out bufwriter.h platform/prelude.h,$(HDRS)) --sources $(SRCS) \
               --license LICENSE
EXAMPLE_SRCS  = $(wildcard examples/*.c)
EXAMPLE_BINS  = $(EXAMPLE_SRCS:examples/%.c=$(B)/examples/%-single) \
                $(EXAMPLE_SRCS:examples/%.c=$(B)/examples/%-lib)
EX_CFLAGS    = -std=c11 -Wall -Wextra -Wpedantic -Werror -O2

.PHONY: single check-single reference check-reference check-spdx dist examples test-packaging

single:
	$(AMALGAMATE)

check-single:
	@$(AMALGAMATE) --check

reference:
	$(PYTHON) scripts/gen_reference.py -o docs/reference.md bufwriter.h

check-reference:
	@$(PYTHON) scripts/gen_reference.py --check -o docs/reference.md bufwriter.h && \
	  echo "check-reference: docs/reference.md is up to date"

# The licence line in the first two lines (after a #! line) of every file
# of the kinds the project has, outside build folders.
check-spdx:
	@bad=$$(find . \( -name build -o -name .git -o -name results \) -prune -o -type f \
	  \( -name '*.[ch]' -o -name '*.[ch]pp' -o -name '*.py' -o -name '*.sh' -o -name '*.mk' \
	     -o -name '*.in' -o -name Makefile -o -name CMakeLists.txt -o -name meson.build \
	     -o -name meson_options.txt -o -path ./.ci/run \) -print | sort | \
	  while read -r f; do head -2 "$$f" | grep -q 'SPDX-License-Identifier: MIT' || echo "$$f"; done); \
	  if [ -n "$$bad" ]; then echo "check-spdx: no SPDX-License-Identifier line at the top of:"; \
	    echo "$$bad"; exit 1; fi; echo "check-spdx: every source, script and build file has its licence line"

# From HEAD, not the work tree: a release is a commit. The tarball is
# reproducible (git archive stamps the commit's time; gzip -n no name/time).
DIST := bufwriter-$(VERSION)
dist:
	@git diff --quiet HEAD -- || echo "dist: note: uncommitted changes are not in the tarball (git archive HEAD)"
	git archive --format=tar --prefix=$(DIST)/ HEAD | gzip -9n > $(DIST).tar.gz
	@tar -tzf $(DIST).tar.gz | grep -qx '$(DIST)/$(SINGLE)' && \
	  tar -tzf $(DIST).tar.gz | grep -qx '$(DIST)/docs/reference.md' || \
	  { echo "dist: the single header or the reference is missing"; exit 1; }
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  tar -xzf $(DIST).tar.gz -C "$$tmp"; \
	  echo "dist: unpacked in $$tmp; check-single, check-reference, all, test-normal:"; \
	  $(MAKE) -C "$$tmp/$(DIST)" --no-print-directory check-single check-reference; \
	  $(MAKE) -C "$$tmp/$(DIST)" --no-print-directory -j2 all; \
	  $(MAKE) -C "$$tmp/$(DIST)" --no-print-directory test-normal; \
	  echo "dist: $(DIST).tar.gz builds and passes test-normal when unpacked"

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

# The staged install is made from $(B), which make all has built with
# these flags (make test's first part), rather than from a build of its own.
test-packaging: all
	@MAKE="$(MAKE)" LIB_SRCS="$(SRCS)" LIB_WARN="$(CSTD) $(WARN_STRICT)" LIB_BUILD="$(abspath $(B))" \
	  sh tests/packaging/run.sh
