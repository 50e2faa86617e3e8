/* Distributions for pcprof diff (stats.c). */
#ifndef PC_STATS_H
#define PC_STATS_H

/* The regularized incomplete beta function I_x(a, b), for a, b > 0; 0 at
 * x <= 0 and 1 at x >= 1. */
double stats_ibeta(double a, double b, double x);

/*
 * The two-sided p-value of t under Student's t with df degrees of freedom
 * (any real df > 0); df = INFINITY (or above 1e7) is the normal
 * distribution. 1 for a NaN t.
 */
double stats_t_two_sided(double t, double df);

#endif
