/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The allocation sites' table (pcprof report --alloc, alloc_out.c): an
 * allocation profile's export (alloc_all) by site, with the leaks at exit.
 */
#ifndef PC_ALLOC_OUT_H
#define PC_ALLOC_OUT_H

#include <stdio.h>

#include "model/export.h"

/* Print x, of an allocation profile read with alloc_all, as r->format
 * (text or json) asks: the sites by bytes allocated (the first frame of
 * each stack in a named function: the allocator's caller, or above
 * library code such as operator new or strdup), the top r->top of them,
 * and the leaks. */
void alloc_print(FILE *out, const struct export *x,
		 const struct report_opts *r);

#endif
