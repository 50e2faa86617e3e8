/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The distributions pcprof diff's tests need: the regularized incomplete
 * beta function and, from it, Student's t; and the robust mean its
 * allowance for machine speed is. Pure functions of their arguments;
 * tests/check_stats.c checks them against closed forms and table values.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/stats.h"

/* Continued fraction of the incomplete beta function (modified Lentz). */
static double
beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 1000; m++) {
		double m2 = 2.0 * m, num, del;

		num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		d = 1 + num * d;
		c = 1 + num / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		h *= d * c;
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + num * d;
		c = 1 + num / c;
		d = 1 / (fabs(d) < tiny ? tiny : d);
		c = fabs(c) < tiny ? tiny : c;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-15)
			break;
	}
	return h;
}

/* The regularized incomplete beta function I_x(a, b), a, b > 0. */
double
stats_ibeta(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) +
		    b * log1p(-x));
	/* the fraction converges fast on the side of the mean */
	if (x < (a + 1) / (a + b + 2))
		return front * beta_cf(a, b, x) / a;
	return 1 - front * beta_cf(b, a, 1 - x) / b;
}

/*
 * Two-sided p-value of t under Student's t with df degrees of freedom
 * (any real df > 0); df = INFINITY is the normal distribution.
 */
double
stats_t_two_sided(double t, double df)
{
	if (isnan(t))
		return 1;
	if (isinf(df) || df > 1e7)
		return erfc(fabs(t) / sqrt(2));
	if (isinf(t))
		return 0;
	return stats_ibeta(df / 2, 0.5, df / (df + t * t));
}

static int
cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

double
stats_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * Tukey's biweight, with c = 4.685 (95 % efficiency at the normal), on
 * residuals in units of each value's standard error, from the median (of
 * the values, not weighted: a value that holds most of the precision must
 * not be the start), reweighted to a fixed point. With ROBUST_SCALE_MIN
 * values or more the residuals are also divided by one robust scale, the
 * median absolute residual over 0.6745, never below 1, so that values
 * that all disagree by more than their errors still weigh; with fewer,
 * that scale would be set by the very values to be rejected (of 4, one
 * 5 standard errors out kept a fifth of its weight), and it is 1.
 */
#define ROBUST_SCALE_MIN	8
int
stats_robust_mean(const double *x, const double *se, size_t n, double *mean)
{
	const double c = 4.685;
	double *u = malloc((n ? n : 1) * sizeof(*u));
	double mu, s;

	if (!u)
		return -1;
	if (n == 0) {
		free(u);
		return -1;
	}
	memcpy(u, x, n * sizeof(*u));
	mu = stats_median(u, n);
	for (size_t i = 0; i < n; i++)
		u[i] = fabs(x[i] - mu) / se[i];
	s = n >= ROBUST_SCALE_MIN ? fmax(1, stats_median(u, n) / 0.6745) : 1;
	for (int it = 0; it < 100; it++) {
		double sw = 0, swx = 0, next;

		for (size_t i = 0; i < n; i++) {
			double r = (x[i] - mu) / (s * se[i] * c);
			double w = fabs(r) < 1 ? (1 - r * r) * (1 - r * r) /
							 (se[i] * se[i]) :
						 0;

			sw += w;
			swx += w * x[i];
		}
		if (!(sw > 0))
			break;	/* every value rejected: the median stands */
		next = swx / sw;
		if (fabs(next - mu) <= 1e-12 * (1 + fabs(mu))) {
			mu = next;
			break;
		}
		mu = next;
	}
	free(u);
	*mean = mu;
	return 0;
}

double
stats_fisher(const double *p, size_t n)
{
	double x = 0, top = -INFINITY, sum = 0;

	if (!n)
		return 1;
	for (size_t i = 0; i < n; i++)
		x -= log(fmax(p[i], 1e-300));
	/* chi-square of 2n df above 2x: e^-x sum_{j<n} x^j / j!, in logs */
	for (size_t j = 0; j < n; j++)
		top = fmax(top, -x + (double)j * log(fmax(x, 1e-300)) -
					lgamma((double)j + 1));
	for (size_t j = 0; j < n; j++)
		sum += exp(-x + (double)j * log(fmax(x, 1e-300)) -
			   lgamma((double)j + 1) - top);
	return fmin(1, exp(top) * sum);
}
