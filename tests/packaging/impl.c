/* SPDX-License-Identifier: MIT */
/* impl.c - the one translation unit that holds the single header's
 * implementation. It includes the header twice on purpose: the second
 * include must add nothing (include guard + implementation guard). */
#define BUFWRITER_IMPLEMENTATION
#include "bufwriter.h"
#include "bufwriter.h"
