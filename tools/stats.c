/*
 * The distributions pcprof diff's tests need: the regularized incomplete
 * beta function and, from it, Student's t. Pure functions of their
 * arguments; tests/check_stats.c checks them against closed forms and
 * table values.
 */
#include <math.h>

#include "stats.h"

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
