# SPDX-License-Identifier: MIT
# mk/formats.mk - the two examples that write real formats, checked by those
# formats' own readers (tests/readers/run.sh): examples/arrow_stream.c by
# Apache Arrow's JavaScript reader (apache-arrow, from the npm registry,
# installed into $(B)/readers by the first run), examples/pickle_stream.c
# by Python's pickle. Included by the top-level Makefile (uses its CC, B,
# SRCS, HDRS, SINGLE).
#
#   make test-formats    each example built against the library, from the
#                        single header, and with the library's sources under
#                        ASan+UBSan; every build on every shape (part of make test)

FORMAT_EXAMPLES := arrow_stream pickle_stream
FORMAT_ASAN     := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
                   -fno-omit-frame-pointer
FORMAT_BINS     := $(foreach e,$(FORMAT_EXAMPLES),$(B)/examples/$(e)-lib $(B)/examples/$(e)-single \
                   $(B)/examples/$(e)-asan)

.PHONY: test-formats

# The example with the library's sources, all under the sanitizers: the
# library compiled once for both examples ($(B)/formats-asan/).
FORMAT_CFLAGS   := -std=c11 -Wall -Wextra -Wpedantic -Werror $(FORMAT_ASAN) -I. -pthread
FORMAT_ASAN_OBJS = $(SRCS:%.c=$(B)/formats-asan/%.o)
$(B)/formats-asan/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(FORMAT_CFLAGS) -c $< -o $@

$(B)/examples/%-asan: examples/%.c $(FORMAT_ASAN_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(FORMAT_CFLAGS) $< $(FORMAT_ASAN_OBJS) -o $@

test-formats: $(FORMAT_BINS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  sh tests/readers/run.sh $(B)/readers $(B)/examples lib single asan
