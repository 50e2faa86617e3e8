/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The lines a whole run's report opens with (runview_out.c): one per
 * process, its timer, and the CPU time no sample saw. Called by
 * runview.c before the functions' rows (report.c). None is AS-safe.
 */
#ifndef PC_RUNVIEW_OUT_H
#define PC_RUNVIEW_OUT_H

#include <stdio.h>

#include "inputs/runview.h"

/* As text: "Run in WHERE: ...", then a table of the processes. */
void runview_print_text(FILE *out, const struct runview *v, const char *where,
			double total);
/* As the opening of the JSON object, up to its "profile" key. */
void runview_print_json(FILE *out, const struct runview *v, double total);

#endif
