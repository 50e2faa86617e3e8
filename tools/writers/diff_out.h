/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Printing a comparison (diff_out.c): the command chooses the writer here,
 * so that the diff model never calls one.
 */
#ifndef PC_DIFF_OUT_H
#define PC_DIFF_OUT_H

#include <stdio.h>

#include "model/diff.h"

/* res printed to out in o->format (text, markdown or json). Not AS-safe. */
void diff_print(FILE *out, const struct result *res, const struct side *b,
		const struct side *nw, const struct diff_opts *o);

/* A name in a markdown table's cell: escaped as text (no line break
 * left), in a code span unless it holds a backtick, its | escaped. */
void md_name(FILE *out, const char *name);

#endif
