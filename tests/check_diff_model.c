/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for tools/model/diff_model.c, pcprof diff's variance model:
 * the mean and variance of a function's runs, the fits of a m + k m^2 to
 * every function of both sides, and the prior variance that takes the
 * highest of the three fits. Expected values are worked out here from the
 * data's construction, not by running the model's own formulas.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/diff.h"
#include "unit.h"

#define near(got, want, rel) \
	ck_assert_msg(fabs((double)(got) - (want)) <= \
			      (rel)*fmax(fabs((double)(want)), 1e-300), \
		      "%s = %.15g, want %.15g", #got, (double)(got), \
		      (double)(want))

/* A side of nfuncs functions over nruns runs, self[run * nfuncs + f]
 * from v (NULL: zeros), at rate Hz. */
static void
side_make(struct side *s, int nruns, size_t nfuncs, uint32_t rate,
	  const double *v)
{
	static const char *const names[] = { "f0", "f1", "f2", "f3",
					     "f4", "f5", "f6", "f7" };

	ck_assert(nfuncs <= 8);
	memset(s, 0, sizeof(*s));
	s->nruns = nruns;
	s->rate = rate;
	s->in.st.nfuncs = nfuncs;
	s->in.st.funcs = (char **)names;	/* never written */
	s->self = calloc((size_t)nruns * nfuncs + 1, sizeof(double));
	ck_assert_ptr_nonnull(s->self);
	if (v)
		memcpy(s->self, v, (size_t)nruns * nfuncs * sizeof(double));
}

/* Two runs of a function of mean m whose unbiased variance is var:
 * m -+ sqrt(var / 2), as (x1 - x2)^2 / 2 = var. */
static void
two_runs(double *self, size_t nfuncs, size_t f, double m, double var)
{
	self[f] = m - sqrt(var / 2);
	self[nfuncs + f] = m + sqrt(var / 2);
}

START_TEST(test_mean_var_reads_every_stride_th_value)
{
	/* 1, 2, 3, 4 at stride 2, with noise in between that must not count:
	 * mean 2.5, squares of deviations 2.25 + .25 + .25 + 2.25 = 5 over 3 */
	const double v[] = { 1, 99, 2, -7, 3, 1e9, 4, 0 };
	double m, var;

	diff_mean_var(v, 4, 2, &m, &var);
	near(m, 2.5, 1e-15);
	near(var, 5.0 / 3, 1e-15);
	/* one value: no spread to estimate, 0 rather than 0 / 0 */
	diff_mean_var(v + 2, 1, 1, &m, &var);
	ck_assert(m == 2 && var == 0);
	/* equal values: exactly 0 */
	diff_mean_var((const double[]){ 0.3, 0.3, 0.3 }, 3, 1, &m, &var);
	ck_assert(var == 0);
}
END_TEST

/*
 * Noise-free data on a m + k m^2 (a = 0.002, k = 0.03, a above its floor
 * of one sample at 1000 Hz), functions spread over two decades: the joint
 * fit recovers both, whatever its weights.
 */
START_TEST(test_joint_fit_recovers_noise_free_a_and_k)
{
	const double a = 0.002, k = 0.03, ms[] = { 0.05, 0.2, 1, 3, 5 };
	struct side b, n;
	struct model mo;

	side_make(&b, 2, 5, 1000, NULL);
	side_make(&n, 1, 5, 1000, NULL);	/* one run: no observations */
	for (size_t f = 0; f < 5; f++)
		two_runs(b.self, 5, f, ms[f], a * ms[f] + k * ms[f] * ms[f]);
	diff_model_build(&mo, &b, &n, 0);
	ck_assert(mo.fitted);
	near(mo.fit[FIT_JOINT].a, a, 1e-6);
	near(mo.fit[FIT_JOINT].k, k, 1e-6);
	/* a alone and k alone cannot fit it exactly: they are the compromises */
	ck_assert(mo.fit[FIT_A].k == 0);
	near(mo.fit[FIT_K].a, 0.001, 1e-15);
	/* five functions of one degree of freedom each; d0 is capped at 4 */
	near(mo.pooled_df, 5, 1e-15);
	near(mo.d0, 4, 1e-15);
	near(mo.amin_all, 0.001, 1e-15);
	/* the prior is at least the truth at every mean, and exact where
	 * the joint fit is the highest (by construction it is at least as
	 * high as the others between them at m = 1, so only >= is asked) */
	for (size_t f = 0; f < 5; f++)
		ck_assert(diff_model_var(&mo, ms[f], 0.001) >=
			  (a * ms[f] + k * ms[f] * ms[f]) * (1 - 1e-9));
	free(b.self);
	free(n.self);
}
END_TEST

/* Pure sampling noise, var = a m with a = 0.01: a alone finds it, k 0. */
START_TEST(test_poisson_noise_is_a_alone)
{
	const double ms[] = { 0.1, 0.4, 2 };
	struct side b, n;
	struct model mo;

	side_make(&b, 2, 3, 1000, NULL);
	side_make(&n, 2, 3, 1000, NULL);
	for (size_t f = 0; f < 3; f++) {
		two_runs(b.self, 3, f, ms[f], 0.01 * ms[f]);
		two_runs(n.self, 3, f, ms[f] * 1.5, 0.01 * ms[f] * 1.5);
	}
	diff_model_build(&mo, &b, &n, 0);
	near(mo.fit[FIT_A].a, 0.01, 1e-9);
	ck_assert(mo.fit[FIT_A].k == 0);
	near(mo.fit[FIT_JOINT].a, 0.01, 1e-6);
	ck_assert(mo.fit[FIT_JOINT].k < 1e-9);
	near(mo.pooled_df, 6, 1e-15);
	free(b.self);
	free(n.self);
}
END_TEST

/*
 * The prior is the highest of the three fits at m, each a floored at
 * amin. By hand, fits (0.01, 0), (0.02, 0), (0.001, 0.5):
 *   m = 0.1:  0.001, 0.002, 0.0001 + 0.005 = 0.0051  -> 0.0051
 *   m = 0.01: 0.0001, 0.0002, 0.00001 + 0.00005     -> 0.0002
 *   m = 0.1, amin 0.05: 0.005, 0.005, 0.005 + 0.005 -> 0.01
 */
START_TEST(test_prior_is_the_highest_fit_with_a_floored)
{
	struct model mo;

	memset(&mo, 0, sizeof(mo));
	mo.fit[FIT_JOINT] = (struct fit){ 0.01, 0 };
	mo.fit[FIT_A] = (struct fit){ 0.02, 0 };
	mo.fit[FIT_K] = (struct fit){ 0.001, 0.5 };
	near(diff_model_var(&mo, 0.1, 0.0001), 0.0051, 1e-12);
	near(diff_model_var(&mo, 0.01, 0.0001), 0.0002, 1e-12);
	near(diff_model_var(&mo, 0.1, 0.05), 0.01, 1e-12);
	ck_assert(diff_model_var(&mo, 0, 0.05) == 0);
}
END_TEST

/* One run a side: no spread to fit, a kernel tick's worth (1/250 s) or
 * one sample at the slower side's rate, whichever is more; no prior df. */
START_TEST(test_one_run_a_side_is_sampling_noise_alone)
{
	struct side b, n;
	struct model mo;

	side_make(&b, 1, 2, 1000, (const double[]){ 1, 2 });
	side_make(&n, 1, 2, 1000, (const double[]){ 1, 3 });
	diff_model_build(&mo, &b, &n, 0);
	ck_assert(!mo.fitted && isinf(mo.d0));
	for (int i = 0; i < 3; i++)
		ck_assert(mo.fit[i].a == 1.0 / 250 && mo.fit[i].k == 0);
	n.rate = 100;
	diff_model_build(&mo, &b, &n, 0);
	for (int i = 0; i < 3; i++)
		near(mo.fit[i].a, 0.01, 1e-15);
	free(b.self);
	free(n.self);
}
END_TEST

/* Runs that agree exactly: variance 0 everywhere; the fits fall to the
 * floor (one sample, 1/rate), never to 0 or NaN, so a test still has a
 * standard error. */
START_TEST(test_zero_variance_falls_to_one_sample)
{
	struct side b, n;
	struct model mo;

	side_make(&b, 3, 2, 500, (const double[]){ 1, 2, 1, 2, 1, 2 });
	side_make(&n, 3, 2, 500, (const double[]){ 1, 2, 1, 2, 1, 2 });
	diff_model_build(&mo, &b, &n, 0);
	ck_assert(mo.fitted);
	for (int i = 0; i < 3; i++) {
		near(mo.fit[i].a, 1.0 / 500, 1e-15);
		ck_assert(mo.fit[i].k == 0);
	}
	near(mo.pooled_df, 8, 1e-15);
	near(diff_model_var(&mo, 2, 1.0 / 500), 2.0 / 500, 1e-15);
	free(b.self);
	free(n.self);
}
END_TEST

/*
 * One function (m = 1, var = 0.01 at 1000 Hz): a and k cannot be told
 * apart. a alone: 0.01; k alone, a at 0.001: (0.01 - 0.001) / 1 = 0.009;
 * the joint system is singular and takes a candidate, both exact at m = 1.
 * Away from m = 1 the prior keeps the higher extrapolation: at m = 2,
 * 0.02 by a, 0.002 + 0.036 = 0.038 by k.
 */
START_TEST(test_one_function_keeps_the_higher_extrapolation)
{
	struct side b, n;
	struct model mo;

	side_make(&b, 2, 1, 1000, NULL);
	side_make(&n, 1, 1, 1000, (const double[]){ 1 });
	two_runs(b.self, 1, 0, 1, 0.01);
	diff_model_build(&mo, &b, &n, 0);
	near(mo.fit[FIT_A].a, 0.01, 1e-9);
	near(mo.fit[FIT_K].k, 0.009, 1e-9);
	near(mo.fit[FIT_JOINT].a * 1 + mo.fit[FIT_JOINT].k * 1, 0.01, 1e-9);
	near(diff_model_var(&mo, 1, 0.001), 0.01, 1e-9);
	near(diff_model_var(&mo, 2, 0.001), 0.038, 1e-9);
	near(mo.d0, 1, 1e-15);	/* one degree of freedom behind it */
	free(b.self);
	free(n.self);
}
END_TEST

/* Functions with no time on a side are not observations of it. */
START_TEST(test_absent_functions_are_not_observed)
{
	struct side b, n;
	struct model mo;

	side_make(&b, 2, 3, 1000, NULL);
	side_make(&n, 2, 3, 1000, NULL);
	two_runs(b.self, 3, 1, 0.5, 0.005);
	diff_model_build(&mo, &b, &n, 0);
	near(mo.pooled_df, 1, 1e-15);
	near(mo.fit[FIT_A].a, 0.01, 1e-9);
	free(b.self);
	free(n.self);
}
END_TEST

Suite *
diff_model_suite(void)
{
	Suite *s = suite_create("diff_model");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_mean_var_reads_every_stride_th_value);
	tcase_add_test(t, test_joint_fit_recovers_noise_free_a_and_k);
	tcase_add_test(t, test_poisson_noise_is_a_alone);
	tcase_add_test(t, test_prior_is_the_highest_fit_with_a_floored);
	tcase_add_test(t, test_one_run_a_side_is_sampling_noise_alone);
	tcase_add_test(t, test_zero_variance_falls_to_one_sample);
	tcase_add_test(t, test_one_function_keeps_the_higher_extrapolation);
	tcase_add_test(t, test_absent_functions_are_not_observed);
	suite_add_tcase(s, t);
	return s;
}
