/* SPDX-License-Identifier: MIT */
/* single_impl.c - the implementation unit of the single-header test
 * flavour: the suite built against single_include/bufwriter.h, the way a
 * user who copied it builds. */
#define BUFWRITER_IMPLEMENTATION
#include "bufwriter.h"
