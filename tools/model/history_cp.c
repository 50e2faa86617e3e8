/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof history: the change points of one series of per-commit means, by
 * binary segmentation. CP_TTEST (the default): in a segment, the split
 * with the largest Student's t between the means of the commits before
 * and after it (the residual variance pooled, Apache Otava's test, but
 * over the whole segment rather than a window), kept when its p-value
 * times the number of splits tried is under alpha; then the same in each
 * half. Each commit is weighed by its runs' variance (weights()); where a
 * split leaves no scatter (equal values), the least variance of a
 * commit's mean from its own runs stands for it, so that such a series
 * does not make every split significant. CP_EDIVISIVE: E-divisive means
 * (Matteson and James; MongoDB's signal-processing-algorithms), the
 * divergence statistic with a permutation test. bench/history_power.py
 * measures both; docs/ci.md has the figures. Pure functions of their
 * arguments, tested by tests/check_history.c.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/stats.h"
#include "model/history.h"

/* E-divisive's permutations a split: enough that a p-value of alpha can
 * be seen (20 / alpha), within these bounds; they stop once the split
 * cannot be significant */
#define EDIV_PERMUTATIONS_MIN	199
#define EDIV_PERMUTATIONS_MAX	20000

struct segmenter {
	enum cp_method m;
	const double *x, *within;
	double *w;		/* each commit's weight (weights()) */
	double alpha, min_rel;
	struct change *out;
	size_t max, n;
	uint64_t seed;
	double *tmp;		/* E-divisive's permuted segment */
};

/* The weighted mean of x[a..b). */
static double
seg_mean(const struct segmenter *sg, size_t a, size_t b)
{
	double s = 0, w = 0;

	for (size_t i = a; i < b; i++) {
		s += sg->w[i] * sg->x[i];
		w += sg->w[i];
	}
	return s / w;
}

/*
 * The best split of x[a..b) by Student's t, in *at, and its p-value
 * corrected for the b - a - 1 splits tried. Commit i's variance is
 * phi / w[i], phi estimated from the residuals about the two sides'
 * weighted means; sums are kept as the split moves, so a segment costs
 * O(b - a).
 */
static double
ttest_split(const struct segmenter *sg, size_t a, size_t b, size_t *at)
{
	size_t n = b - a;
	double tw = 0, tx = 0, tx2 = 0, lw = 0, lx = 0, lx2 = 0,
	       floor2 = INFINITY, best = -1;
	double df = (double)n - 2;

	/* the floor, for a segment of equal values alone (no scatter to
	 * estimate from): the least variance any commit's runs give its mean.
	 * Under every split, it hid real steps: the runs' variance holds the
	 * machine's changes of speed between them, which the commit's speed
	 * takes out of its mean (beside a CPU hog the least of 24 commits was
	 * 1.2 % of stage_transform's seconds, their scatter 0.7 %: a 3.5 %
	 * step at p 5e-11 read p 0.008 and was not named) */
	for (size_t i = a; i < b; i++) {
		tw += sg->w[i];
		tx += sg->w[i] * sg->x[i];
		tx2 += sg->w[i] * sg->x[i] * sg->x[i];
		floor2 =
			fmin(floor2, sg->within ? sg->within[i] * sg->w[i] : 0);
	}
	for (size_t k = a + 1; k < b; k++) {
		double wi = sg->w[k - 1], xi = sg->x[k - 1], ml, mr, rw, ss, s2,
		       t;

		lw += wi;
		lx += wi * xi;
		lx2 += wi * xi * xi;
		rw = tw - lw;
		ml = lx / lw;
		mr = (tx - lx) / rw;
		ss = (lx2 - lw * ml * ml) + ((tx2 - lx2) - rw * mr * mr);
		s2 = ss > 0 ? ss / df : floor2;
		t = s2 > 0 ? fabs(mr - ml) / sqrt(s2 * (1 / lw + 1 / rw)) :
		    (mr != ml ? INFINITY : 0);
		if (t > best) {
			best = t;
			*at = k;
		}
	}
	return fmin(1, stats_t_two_sided(best, df) * (double)(n - 1));
}

/*
 * Each commit's weight: one over its mean's variance from its runs, that
 * variance moderated halfway to the median of all commits' (from 2 or 3
 * runs a variance alone is too rough to weigh by), scaled to a mean of 1;
 * all 1 where no variance is known. A commit whose runs were disturbed
 * then counts for less.
 */
static void
weights(double *w, const double *within, size_t n, double *tmp)
{
	double med = 0, sum = 0;

	if (within && n) {
		memcpy(tmp, within, n * sizeof(*tmp));
		med = stats_median(tmp, n);
	}
	for (size_t i = 0; i < n; i++) {
		w[i] = med > 0 ? 2 / (within[i] + med) : 1;
		sum += w[i];
	}
	for (size_t i = 0; i < n; i++)
		w[i] *= (double)n / sum;
}

/* A uniform draw below n from the generator's state. */
static size_t
draw(uint64_t *s, size_t n)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (size_t)((*s >> 33) % n);
}

/*
 * E-divisive's statistic of the best split of y[0..n) (alpha 1): the
 * scaled energy distance between the two sides, largest at *at. The sums
 * move with the split, so this is O(n^2).
 */
static double
ediv_best(const double *y, size_t n, size_t *at)
{
	double within_l = 0, within_r = 0, between = 0, best = -INFINITY;

	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			within_r += fabs(y[i] - y[j]);
	/* split k: y[0..k) against y[k..n); move y[k-1] from right to left */
	for (size_t k = 1; k < n; k++) {
		double to_left = 0, to_right = 0, l = (double)k,
		       r = (double)(n - k), q;

		for (size_t i = 0; i < k - 1; i++)
			to_left += fabs(y[i] - y[k - 1]);
		for (size_t j = k; j < n; j++)
			to_right += fabs(y[j] - y[k - 1]);
		within_l += to_left;
		within_r -= to_right;
		between += to_right - to_left;
		if (k < 2 || n - k < 2)
			continue;
		q = l * r / (l + r) *
		    (2 * between / (l * r) - within_l / (l * (l - 1) / 2) -
		     within_r / (r * (r - 1) / 2));
		if (q > best) {
			best = q;
			*at = k;
		}
	}
	return best;
}

/* E-divisive's best split of x[a..b) and its permutation p-value. */
static double
ediv_split(struct segmenter *sg, size_t a, size_t b, size_t *at)
{
	size_t n = b - a, ge = 0, dummy;
	double q, want = fmin(fmax(20 / sg->alpha, EDIV_PERMUTATIONS_MIN),
			      EDIV_PERMUTATIONS_MAX);
	int perms = (int)want, p;

	if (n < 4)
		return 1;
	*at = a;
	q = ediv_best(sg->x + a, n, at);
	*at += a;
	memcpy(sg->tmp, sg->x + a, n * sizeof(*sg->tmp));
	for (p = 0; p < perms && (double)(ge + 1) / (perms + 1) < sg->alpha;
	     p++) {
		for (size_t i = n - 1; i > 0; i--) {
			size_t j = draw(&sg->seed, i + 1);
			double t = sg->tmp[i];

			sg->tmp[i] = sg->tmp[j];
			sg->tmp[j] = t;
		}
		ge += ediv_best(sg->tmp, n, &dummy) >= q;
	}
	/* stopped early: at least this, which is not significant */
	return p < perms ? (double)(ge + 1) / (p + 1) :
			   (double)(ge + 1) / (perms + 1);
}

static void
segment(struct segmenter *sg, size_t a, size_t b)
{
	size_t at = a;
	double p, before, after;

	if (b - a < 3 || sg->n == sg->max)
		return;
	p = sg->m == CP_EDIVISIVE ? ediv_split(sg, a, b, &at) :
				    ttest_split(sg, a, b, &at);
	if (p >= sg->alpha || at <= a || at >= b)
		return;
	before = seg_mean(sg, a, at);
	after = seg_mean(sg, at, b);
	segment(sg, a, at);
	if (sg->n < sg->max &&
	    fabs(after - before) >= sg->min_rel * fabs(before))
		sg->out[sg->n++] = (struct change){ at, before, after, p };
	segment(sg, at, b);
}

size_t
cp_find(enum cp_method m, const double *x, const double *within, size_t n,
	double alpha, double min_rel, struct change *out, size_t max)
{
	struct segmenter sg = { m, x, within, NULL, alpha, min_rel, out, max, 0,
				0x9e3779b97f4a7c15ULL, NULL };

	sg.tmp = malloc((n ? n : 1) * sizeof(*sg.tmp));
	sg.w = malloc((n ? n : 1) * sizeof(*sg.w));
	if (!sg.tmp || !sg.w) {
		free(sg.tmp);
		free(sg.w);
		return 0;
	}
	/* E-divisive's statistic has no weights: all 1 */
	weights(sg.w, m == CP_TTEST ? within : NULL, n, sg.tmp);
	segment(&sg, 0, n);
	/* each change's levels: the means between its neighbours */
	for (size_t i = 0; i < sg.n; i++) {
		size_t a = i ? out[i - 1].at : 0,
		       b = i + 1 < sg.n ? out[i + 1].at : n;

		out[i].before = seg_mean(&sg, a, out[i].at);
		out[i].after = seg_mean(&sg, out[i].at, b);
	}
	free(sg.tmp);
	free(sg.w);
	return sg.n;
}
