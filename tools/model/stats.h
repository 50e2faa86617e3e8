/* SPDX-License-Identifier: BSD-2-Clause */
/* Distributions for pcprof diff (stats.c). */
#ifndef PC_STATS_H
#define PC_STATS_H

#include <stddef.h>

/* The regularized incomplete beta function I_x(a, b), for a, b > 0; 0 at
 * x <= 0 and 1 at x >= 1. */
double stats_ibeta(double a, double b, double x);

/*
 * The two-sided p-value of t under Student's t with df degrees of freedom
 * (any real df > 0); df = INFINITY (or above 1e7) is the normal
 * distribution. 1 for a NaN t.
 */
double stats_t_two_sided(double t, double df);

/* The median of v[0..n), n >= 1, which it sorts in place. */
double stats_median(double *v, size_t n);

/*
 * A robust weighted mean of x[0..n), each value with its standard error
 * se[i] > 0: Tukey's biweight M-estimate of location, started at the
 * median, so that a few values far from the rest (functions that did
 * change) weigh nothing and no single value is the answer; the residuals
 * are scaled by their spread only among 8 values or more. 0, or -1 for
 * n = 0 or no memory.
 */
int stats_robust_mean(const double *x, const double *se, size_t n,
		      double *mean);

/*
 * Fisher's combination of n independent p-values p[0..n): the
 * probability that chi-square with 2n degrees of freedom exceeds
 * -2 sum(log p), the p-value of "every one of them is null"; 1 for n = 0.
 * A p of 0 counts as 1e-300.
 */
double stats_fisher(const double *p, size_t n);

#endif
