/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof diff and compare --metric alloc|alloc-bytes: the gate on
 * allocations (PC_ALLOC). diff_alloc.c loads each side's allocation
 * profiles and compares them site by site; writers/diff_alloc_out.c
 * prints the result; commands/diff_alloc.c runs the two. None of it is
 * AS-safe.
 *
 * The model: a site's figure in one run is an estimate from the samples
 * of its allocations. At PC_ALLOC_RATE=1 every allocation is recorded and
 * the figure is exact: its sampling variance is 0, and one run a side
 * decides. At a sampling rate, a site's allocations are sampled as a
 * Poisson process over its bytes, and its estimate's variance is about
 * x^2 / s for an estimate x from s samples (1 / sqrt(s) relative; less
 * for blocks larger than the rate, which are sampled nearly always). With
 * two runs a side or more, the runs' own variance is used where it is
 * larger. A function's figure is of its allocations and its callees'. It
 * regressed where its growth is significant at alpha (Holm's correction
 * over the functions), at least --threshold of its base figure (default
 * 0.5 %) and at least a hundred-thousandth of the base program's figure.
 */
#ifndef PC_DIFF_ALLOC_H
#define PC_DIFF_ALLOC_H

#include "model/diff.h"

/* the smallest change that counts, of the site's base figure, unless
 * --threshold; and of the base program's */
#define ALLOC_THRESHOLD		0.005
#define ALLOC_MIN_SHARE		1e-5

/* Whether metric is of allocations. */
#define METRIC_IS_ALLOC(m)	((m) == METRIC_ALLOC || (m) == METRIC_ALLOC_BYTES)

/* One side's allocation figures: each site's mean a run and the variance
 * of a run's figure (struct row's mb/vb or mn/vn). */
struct alloc_side {
	struct alloc_site *sites;	/* sorted by name */
	size_t nsites;
	int nruns;
	uint64_t rate;		/* PC_ALLOC_RATE of the runs (1: exact) */
	double program, program_var;	/* every site's figure together */
};

struct alloc_site {
	char *name;
	double mean, var;
};

/* diff_alloc.c: load side s's runs' allocation profiles (PROFILE.alloc
 * beside each profile of each run) into a in the unit of metric; 0, or -1
 * after one line where a run has none. */
PC_CHECKED int diff_alloc_load(struct alloc_side *a, const struct side *s,
			       enum metric metric,
			       const struct symtab_opts *so);
void diff_alloc_release(struct alloc_side *a);
/* diff_alloc.c: compare the sides into res (rows malloc'ed, sorted for
 * printing: regressions first, the largest change first); the whole
 * program's figures in res->prog. */
void diff_alloc_compare(struct result *res, const struct alloc_side *b,
			const struct alloc_side *n, const struct diff_opts *o);
/* commands/diff_alloc.c: diff_gate's gate for these metrics: both sides
 * (exe and args set) loaded, compared and printed on standard output;
 * the exit status, 0 or EXIT_REGRESSION (bad input exits 2). */
int diff_alloc_gate(struct side sides[2], const struct diff_opts *o,
		    const struct symtab_opts *so);

#endif
