/* SPDX-License-Identifier: BSD-2-Clause */
/* Printing the gate on allocations (diff_alloc_out.c). */
#ifndef PC_DIFF_ALLOC_OUT_H
#define PC_DIFF_ALLOC_OUT_H

#include <stdio.h>

#include "model/diff_alloc.h"

/* res, the comparison of sides b and n, printed to out in o->format
 * (text, markdown or json). Not AS-safe. */
void diff_alloc_print(FILE *out, const struct result *res,
		      const struct alloc_side *b, const struct alloc_side *n,
		      const struct diff_opts *o);

#endif
