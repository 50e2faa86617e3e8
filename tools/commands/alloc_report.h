/* SPDX-License-Identifier: BSD-2-Clause */
/* pcprof report of an allocation profile (alloc_report.c). */
#ifndef PC_ALLOC_REPORT_H
#define PC_ALLOC_REPORT_H

#include <stdio.h>

#include "pcprof.h"

/* Whether r asks for an allocation report (--alloc, --metric). */
int alloc_asked(const struct report_opts *r);
/* Whether the allocation profiles beside files[0..n) (those there) can
 * be summed: read, and sampled at one rate. 0, or -1 after one line
 * (before any of the report is written: a run's JSON starts with its
 * processes). */
PC_CHECKED int alloc_check_rates(char *const *files, int n);
/* The report of in's allocation profiles (PROFILE.alloc beside each of
 * its profiles, the processes' summed, or r->stacks) as r asks: the
 * sites' table (--alloc), folded stacks, a file for another tool, or the
 * flat profile and call graph in the metric's unit. 0, or -1 after one
 * line (none there, options it does not take, a profile it cannot read,
 * processes sampled at different rates). */
PC_CHECKED int alloc_report(struct pc_inputs *in, struct report_opts *r,
			    const struct symtab_opts *s, FILE *out);

#endif
