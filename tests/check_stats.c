/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for tools/model/stats.c, the distributions behind pcprof diff's
 * tests: the incomplete beta function against its closed forms and its
 * symmetry, and Student's t against closed forms (1 and 2 degrees of
 * freedom), printed tables (4) and the normal distribution.
 */
#include <math.h>

#include "model/stats.h"
#include "unit.h"

#define near(got, want, rel) \
	ck_assert_msg(fabs((got) - (want)) <= (rel)*fmax(fabs(want), 1e-300), \
		      "%s = %.15g, want %.15g", #got, (double)(got), \
		      (double)(want))

START_TEST(test_ibeta_closed_forms)
{
	/* I_x(1, 1) = x */
	near(stats_ibeta(1, 1, 0.1), 0.1, 1e-12);
	near(stats_ibeta(1, 1, 0.77), 0.77, 1e-12);
	/* I_x(1/2, 1/2) = (2 / pi) asin(sqrt(x)) */
	near(stats_ibeta(0.5, 0.5, 0.3), 2 / M_PI * asin(sqrt(0.3)), 1e-10);
	/* I_x(a, 1) = x^a, I_x(1, b) = 1 - (1 - x)^b */
	near(stats_ibeta(2.5, 1, 0.3), pow(0.3, 2.5), 1e-10);
	near(stats_ibeta(1, 3.5, 0.2), 1 - pow(0.8, 3.5), 1e-10);
	/* integer a, b: a binomial tail, sum_{j=2}^{4} C(4,j) .4^j .6^(4-j) */
	near(stats_ibeta(2, 3, 0.4), 0.5248, 1e-10);
	/* I_x(0.5, 10) for a small x: the series side of the fraction */
	ck_assert(stats_ibeta(0.5, 10, 0.01) > 0.3 &&
		  stats_ibeta(0.5, 10, 0.01) < 0.4);
}
END_TEST

START_TEST(test_ibeta_symmetry_and_ends)
{
	static const double v[][3] = {
		{ 10, 0.5, 0.9 }, { 30, 40, 0.45 }, { 2.25, 0.5, 0.999 },
		{ 0.5, 10, 0.01 }, { 3, 7, 0.5 },
	};

	/* I_x(a, b) = 1 - I_{1-x}(b, a) */
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		near(stats_ibeta(v[i][0], v[i][1], v[i][2]),
		     1 - stats_ibeta(v[i][1], v[i][0], 1 - v[i][2]), 1e-9);
	ck_assert(stats_ibeta(2, 3, 0) == 0);
	ck_assert(stats_ibeta(2, 3, -1) == 0);
	ck_assert(stats_ibeta(2, 3, 1) == 1);
	ck_assert(stats_ibeta(2, 3, 2) == 1);
	/* increasing in x */
	for (double x = 0.05; x < 1; x += 0.05)
		ck_assert(stats_ibeta(4, 6, x) > stats_ibeta(4, 6, x - 0.05));
}
END_TEST

/*
 * I_x(a, b) by its power series, independent of stats.c's continued
 * fraction: x^a (1-x)^b / (a B(a, b)) times 1 + sum of terms, on the side
 * of x below the mean.
 */
static double
series_ibeta(double a, double b, double x)
{
	double front, term = 1, total = 1;

	if (x > a / (a + b))
		return 1 - series_ibeta(b, a, 1 - x);
	front = exp(a * log(x) + b * log1p(-x) - lgamma(a) - lgamma(b) +
		    lgamma(a + b)) / a;
	for (int n = 0; fabs(term) > 1e-17 * total && n < 100000; n++) {
		term *= x * (a + b + n) / (a + n + 1);
		total += term;
	}
	return front * total;
}

START_TEST(test_ibeta_matches_the_power_series)
{
	static const double v[][3] = {
		{ 0.5, 0.5, 0.3 }, { 2, 3, 0.4 }, { 10, 0.5, 0.9 },
		{ 0.5, 10, 0.01 }, { 30, 40, 0.45 }, { 2.25, 0.5, 0.999 },
		{ 2, 0.5, 0.6 }, { 15, 0.5, 0.98 },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		near(stats_ibeta(v[i][0], v[i][1], v[i][2]),
		     series_ibeta(v[i][0], v[i][1], v[i][2]), 1e-9);
}
END_TEST

START_TEST(test_t_closed_forms)
{
	/* df 1, the Cauchy distribution: p = 1 - (2 / pi) atan|t| */
	near(stats_t_two_sided(1.0, 1), 0.5, 1e-10);
	near(stats_t_two_sided(63.65674116, 1),
	     1 - 2 / M_PI * atan(63.65674116), 1e-9);
	/* df 2: p = 1 - |t| / sqrt(t^2 + 2) */
	near(stats_t_two_sided(3.3, 2), 1 - 3.3 / sqrt(3.3 * 3.3 + 2), 1e-10);
	near(stats_t_two_sided(-3.3, 2), 1 - 3.3 / sqrt(3.3 * 3.3 + 2), 1e-10);
}
END_TEST

START_TEST(test_t_tables_and_normal)
{
	/* Student's t tables: the 0.05 and 0.01 two-sided points at df 4 */
	near(stats_t_two_sided(2.776445105, 4), 0.05, 1e-8);
	near(stats_t_two_sided(4.604094871, 4), 0.01, 1e-8);
	near(stats_t_two_sided(63.65674116, 1), 0.01, 1e-8);
	/* the normal distribution, for infinite and very large df */
	near(stats_t_two_sided(2.575829304, INFINITY), 0.01, 1e-8);
	near(stats_t_two_sided(2.0, 1e9), erfc(2.0 / sqrt(2)), 1e-12);
	/* a larger df has thinner tails */
	ck_assert(stats_t_two_sided(2.0, 30) < stats_t_two_sided(2.0, 5));
	ck_assert(stats_t_two_sided(2.0, 1e9) < stats_t_two_sided(2.0, 30));
}
END_TEST

START_TEST(test_t_edges)
{
	ck_assert(stats_t_two_sided(0.0, 3) == 1);
	ck_assert(stats_t_two_sided(NAN, 3) == 1);
	ck_assert(stats_t_two_sided(INFINITY, 3) == 0);
	ck_assert(stats_t_two_sided(-INFINITY, 3) == 0);
	/* far in the tail: tiny, but not zero or negative */
	ck_assert(stats_t_two_sided(40.0, 30) > 0);
	ck_assert(stats_t_two_sided(40.0, 30) < 1e-20);
	/* non-integer df */
	ck_assert(stats_t_two_sided(1.0, 2.5) > stats_t_two_sided(1.0, 3) &&
		  stats_t_two_sided(1.0, 2.5) < stats_t_two_sided(1.0, 2));
}
END_TEST

/* The machine-speed allowance of pcprof diff: a robust mean that rejects
 * the values far from the rest, weighs the precise ones more, pins none,
 * and moves with the values. */
START_TEST(test_robust_mean)
{
	const double one[5] = { 0.01, 0.01, 0.01, 0.01, 0.01 };
	const double out[5] = { 0, 0.002, -0.002, 0.001, 0.3 };
	const double pin[4] = { 0.01, -0.005, 0.002, 0.2 };
	const double three[3] = { 0.002, 0, 0.01 },
		     se3[3] = { 0.001, 0.01, 0.01 };
	/* pcprof diff's case that the median-scaled version got wrong: three
	 * unchanged functions and one 16 % slower, 5 standard errors out */
	const double four[4] = { 0, 0.03, -0.02, 0.15 },
		     se4[4] = { 0.04, 0.04, 0.04, 0.029 };
	double many[12], se12[12];
	double x[5], m, shifted;

	/* one value far out weighs nothing: the mean of the rest */
	ck_assert_int_eq(stats_robust_mean(out, one, 5, &m), 0);
	ck_assert(fabs(m - 0.00025) < 1e-5);
	/* no value is the answer, as the median would be */
	ck_assert_int_eq(stats_robust_mean(pin, one, 4, &m), 0);
	for (int i = 0; i < 4; i++)
		ck_assert(fabs(m - pin[i]) > 1e-4);
	ck_assert(fabs(m - (0.01 - 0.005 + 0.002) / 3) < 2e-4);
	/* equivariant: every value moved by c moves the mean by c */
	for (int i = 0; i < 5; i++)
		x[i] = out[i] + 0.7;
	ck_assert_int_eq(stats_robust_mean(x, one, 5, &shifted), 0);
	ck_assert_int_eq(stats_robust_mean(out, one, 5, &m), 0);
	near(shifted - m, 0.7, 1e-9);
	/* the precise value weighs most */
	ck_assert_int_eq(stats_robust_mean(three, se3, 3, &m), 0);
	ck_assert(fabs(m - 0.002) < 2e-4);
	/* a changed value among few is rejected, not weighed in part */
	ck_assert_int_eq(stats_robust_mean(four, se4, 4, &m), 0);
	ck_assert(fabs(m - 0.01 / 3) < 0.002);
	/* among many, values all 6 of their errors apart still count (their
	 * mean, 0.0115), where one scale of 1 would reject them all and
	 * leave the median (0.0065) */
	for (int i = 0; i < 12; i++) {
		many[i] = i % 2 ? 0.06 + 0.003 * i : -0.06 + 0.001 * i;
		se12[i] = 0.01;
	}
	ck_assert_int_eq(stats_robust_mean(many, se12, 12, &m), 0);
	ck_assert(fabs(m - 0.0115) < 0.002);
	/* one value is itself; none is no mean */
	ck_assert_int_eq(stats_robust_mean(out + 4, one, 1, &m), 0);
	near(m, 0.3, 1e-12);
	ck_assert_int_eq(stats_robust_mean(out, one, 0, &m), -1);
}
END_TEST

Suite *
stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *t = tcase_create("distributions");

	tcase_add_test(t, test_ibeta_closed_forms);
	tcase_add_test(t, test_ibeta_symmetry_and_ends);
	tcase_add_test(t, test_ibeta_matches_the_power_series);
	tcase_add_test(t, test_t_closed_forms);
	tcase_add_test(t, test_t_tables_and_normal);
	tcase_add_test(t, test_t_edges);
	tcase_add_test(t, test_robust_mean);
	suite_add_tcase(s, t);
	return s;
}
