/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for tools/model/diff_compare.c, pcprof diff's comparison:
 * each function's test against the model, Holm's correction over the
 * family, the robust allowance for the machine's speed, and the edge cases
 * (zero variance, a function on one side only, too few samples to judge
 * the speed, tiny counts). Expected p-values come from closed forms
 * written here (the normal tail through erfc, Student's t for even df),
 * not from stats.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/diff.h"
#include "unit.h"

#define near(got, want, rel)						\
	ck_assert_msg(fabs((double)(got) - (want)) <= (rel) * fmax(fabs((double)(want)), 1e-300), \
		      "%s = %.15g, want %.15g", #got, (double)(got), (double)(want))

/* One build of nfuncs functions named names[], nruns runs of seconds
 * v[run * nfuncs + f] at 1000 Hz; a run's program seconds are its sum. */
static void
side_make(struct side *s, int nruns, size_t nfuncs, const char *const *names,
	  const double *v)
{
	memset(s, 0, sizeof(*s));
	s->nruns = nruns;
	s->rate = 1000;
	s->in.st.nfuncs = nfuncs;
	s->in.st.funcs = (char **)names;	/* never written */
	s->self = malloc(((size_t)nruns * nfuncs + 1) * sizeof(double));
	s->program = calloc((size_t)nruns, sizeof(double));
	ck_assert(s->self && s->program);
	memcpy(s->self, v, (size_t)nruns * nfuncs * sizeof(double));
	for (int r = 0; r < nruns; r++)
		for (size_t f = 0; f < nfuncs; f++)
			s->program[r] += v[(size_t)r * nfuncs + f];
}

static void
side_free(struct side *s)
{
	free(s->self);
	free(s->program);
}

static const struct row *
row_of(const struct result *res, const char *name)
{
	for (size_t i = 0; i < res->nrows; i++)
		if (!strcmp(res->rows[i].name, name))
			return &res->rows[i];
	ck_abort_msg("no row %s", name);
	return NULL;
}

static struct diff_opts
opts(int absolute)
{
	struct diff_opts o = DIFF_OPTS_DEFAULT;

	o.absolute = absolute;
	return o;
}

/* Compare one run a side, the new side's seconds factor times the base's
 * vb[0..nf). */
static void
compare_scaled(struct result *res, struct side *b, struct side *n,
	       const char *const *names, size_t nf, const double *vb, double factor,
	       int absolute)
{
	struct diff_opts o = opts(absolute);
	double vn[8];

	ck_assert(nf <= 8);
	for (size_t i = 0; i < nf; i++)
		vn[i] = factor * vb[i];
	side_make(b, 1, nf, names, vb);
	side_make(n, 1, nf, names, vn);
	diff_compare(res, b, n, &o);
}

static void
compared_free(struct result *res, struct side *b, struct side *n)
{
	free(res->rows);
	side_free(b);
	side_free(n);
}

/*
 * The seconds a function must gain from mb for a test statistic of t with
 * one run a side: the model is then a kernel tick's worth a second (a =
 * 1/250) and no prior df, so t = d / sqrt(a (2 mb + d)), a quadratic in d.
 */
static double
gain_for_t(double mb, double t)
{
	const double a = 1.0 / 250;

	return (t * t * a + sqrt(t * t * t * t * a * a + 8 * t * t * a * mb)) / 2;
}

/* The two-sided normal tail of the statistic of mb -> mn, as above. */
static double
normal_p(double mb, double mn)
{
	return erfc(fabs(mn - mb) / sqrt((mb + mn) / 250.0) / sqrt(2));
}

/*
 * Holm over four functions whose p-values are about .001, .003, .004 and
 * .5 (t = 3.2905, 2.9677, 2.8782, 0.6745): adjusted, 4 x .001 = .004,
 * 3 x .003 = .009, max(.009, 2 x .004 = .008) = .009 (the step-down is
 * monotone), .5. At alpha .01 the second is a regression that Bonferroni
 * (4 x .003 = .012) would miss. Beside them: a function too small for the
 * family (.002 + .004 s under --min-seconds .01), one gone, one new.
 */
START_TEST(test_holm_steps_down_and_stays_monotone)
{
	static const char *const bn[] = { "a", "b", "c", "d", "tiny", "gone" };
	static const char *const nn[] = { "a", "b", "c", "d", "tiny", "new" };
	const double ts[] = { 3.2905, 2.9677, 2.8782, 0.6745 };
	double vb[] = { 1, 1, 1, 1, 0.002, 0.5 }, vn[6];
	struct diff_opts o = opts(1);
	struct side b, n;
	struct result res;
	double p[4];

	for (int i = 0; i < 4; i++)
		vn[i] = 1 + gain_for_t(1, ts[i]);
	vn[4] = 0.004;
	vn[5] = 0.3;
	side_make(&b, 1, 6, bn, vb);
	side_make(&n, 1, 6, nn, vn);
	diff_compare(&res, &b, &n, &o);
	ck_assert_uint_eq(res.nrows, 7);
	ck_assert_uint_eq(res.family, 4);
	for (int i = 0; i < 4; i++) {
		const struct row *w = row_of(&res, bn[i]);

		p[i] = normal_p(1, vn[i]);
		near(w->p, p[i], 1e-9);
		ck_assert(isinf(w->df) && w->family && w->tested);
	}
	near(p[0], 0.001, 1e-3);
	near(p[1], 0.003, 1e-3);
	near(row_of(&res, "a")->padj, 4 * p[0], 1e-9);
	near(row_of(&res, "b")->padj, 3 * p[1], 1e-9);
	near(row_of(&res, "c")->padj, 3 * p[1], 1e-9);
	near(row_of(&res, "d")->padj, 1 * p[3], 1e-9);
	ck_assert_int_eq(row_of(&res, "b")->status, ST_SLOWER);
	ck_assert_int_eq(row_of(&res, "c")->status, ST_SLOWER);
	ck_assert_int_eq(row_of(&res, "d")->status, ST_SAME);
	ck_assert_int_eq(row_of(&res, "tiny")->status, ST_SMALL);
	ck_assert(!row_of(&res, "tiny")->family);
	ck_assert_int_eq(row_of(&res, "gone")->status, ST_GONE);
	ck_assert_int_eq(row_of(&res, "new")->status, ST_APPEARED);
	ck_assert(!row_of(&res, "new")->tested && !row_of(&res, "gone")->tested);
	near(diff_row_size(row_of(&res, "gone")), 0.5, 1e-15);
	near(diff_row_size(row_of(&res, "new")), 0.3, 1e-15);
	ck_assert_int_eq(res.nslow, 3);
	ck_assert_int_eq(res.nfast, 0);
	/* printed order: regressions, the largest first; then the rest */
	ck_assert_str_eq(res.rows[0].name, "a");
	ck_assert_str_eq(res.rows[1].name, "b");
	ck_assert_str_eq(res.rows[2].name, "c");
	ck_assert_str_eq(res.rows[3].name, "d");
	ck_assert_str_eq(res.rows[4].name, "gone");
	ck_assert_str_eq(res.rows[5].name, "new");
	ck_assert_str_eq(res.rows[6].name, "tiny");
	compared_free(&res, &b, &n);
}
END_TEST

/*
 * Every function 30 % slower (a slower machine): the allowance finds 1.3
 * from all five, and after it nothing changed. Without it (--absolute)
 * every one is a regression.
 */
START_TEST(test_all_functions_slower_alike_is_the_machine)
{
	static const char *const names[] = { "f0", "f1", "f2", "f3", "f4" };
	const double vb[] = { 2, 3, 4, 5, 6 };
	struct side b, n;
	struct result res;

	compare_scaled(&res, &b, &n, names, 5, vb, 1.3, 0);
	ck_assert(res.speed_judged);
	ck_assert_uint_eq(res.speed_functions, 5);
	near(res.speed, 1.3, 1e-12);
	ck_assert_int_eq(res.nslow + res.nfast, 0);
	for (size_t i = 0; i < res.nrows; i++)
		ck_assert_int_eq(res.rows[i].status, ST_SAME);
	compared_free(&res, &b, &n);

	compare_scaled(&res, &b, &n, names, 5, vb, 1.3, 1);
	ck_assert(!res.speed_judged && res.speed == 1);
	ck_assert_int_eq(res.nslow, 5);
	compared_free(&res, &b, &n);
}
END_TEST

/*
 * A machine 10 % slower and one function of six truly doubled: the
 * biweight rejects the doubled one (its log ratio, log 2 beyond the rest,
 * is 4.5 standard errors times the 4.685 cut-off away), so the speed is
 * exactly the others' 1.1, not the plain mean's (1.1^5 x 2.2)^(1/6).
 */
START_TEST(test_speed_allowance_ignores_the_function_that_changed)
{
	static const char *const names[] = { "f0", "f1", "f2", "f3", "f4", "f5" };
	const double vb[] = { 1, 1.2, 1.4, 1.6, 1.8, 2 };
	double vn[6];
	struct side b, n;
	struct result res;
	struct diff_opts o = opts(0);

	for (int i = 0; i < 6; i++)
		vn[i] = 1.1 * vb[i] * (i == 2 ? 2 : 1);
	side_make(&b, 1, 6, names, vb);
	side_make(&n, 1, 6, names, vn);
	diff_compare(&res, &b, &n, &o);
	ck_assert(res.speed_judged);
	ck_assert_uint_eq(res.speed_functions, 6);
	near(res.speed, 1.1, 1e-12);
	ck_assert_int_eq(res.nslow, 1);
	ck_assert_int_eq(res.nfast, 0);
	ck_assert_str_eq(res.rows[0].name, "f2");
	ck_assert_int_eq(res.rows[0].status, ST_SLOWER);
	near(res.rows[0].mn, 2.8, 1e-12);	/* at the base's speed */
	compared_free(&res, &b, &n);
}
END_TEST

/* Fewer than three functions of 20 samples a run or more: no telling the
 * machine from the change, so no allowance (speed 1, not judged). The
 * two functions of 10 samples do not count towards the three. */
START_TEST(test_speed_needs_three_functions_of_twenty_samples)
{
	static const char *const names[] = { "big1", "big2", "small1", "small2" };
	const double vb[] = { 2, 3, 0.01, 0.01 };
	struct side b, n;
	struct result res;

	compare_scaled(&res, &b, &n, names, 4, vb, 1.3, 0);
	ck_assert(!res.speed_judged && res.speed == 1);
	ck_assert_uint_eq(res.speed_functions, 2);
	ck_assert_int_eq(row_of(&res, "big1")->status, ST_SLOWER);
	ck_assert_int_eq(row_of(&res, "big2")->status, ST_SLOWER);
	compared_free(&res, &b, &n);
}
END_TEST

/* Student's t, two-sided, for df = 8, by the closed form for even df:
 * P(|T| < t) = sin q (1 + c^2 / 2 + 3 c^4 / 8 + 5 c^6 / 16), q = atan(t /
 * sqrt(8)), c = cos q. */
static double
student8_p(double t)
{
	double q = atan(fabs(t) / sqrt(8)), c2 = cos(q) * cos(q);

	return 1 - sin(q) * (1 + c2 / 2 + 3 * c2 * c2 / 8 + 5 * c2 * c2 * c2 / 16);
}

/*
 * Three runs a side that agree exactly (variance 0): the fits fall to one
 * sample (a = 1/1000, k = 0), the prior's d0 is 4 (of 8 pooled), and the
 * function's own dispersion, 0, is moderated to psi = (4 x 0 + 4) / (4 +
 * 4) = 1/2. f0, 1 -> 1.02 s: t = .02 / sqrt(.5 (.001 + .00102) / 3) on 8
 * df; f1 unchanged: t = 0, p = 1. Holm: 2 x p(f0), then 1.
 */
START_TEST(test_zero_variance_runs_are_moderated_by_the_prior)
{
	static const char *const names[] = { "f0", "f1" };
	const double vb[] = { 1, 2, 1, 2, 1, 2 }, vn[] = { 1.02, 2, 1.02, 2, 1.02, 2 };
	struct side b, n;
	struct result res;
	struct diff_opts o = opts(1);
	const struct row *w;
	double t = 0.02 / sqrt(0.5 * (0.001 + 0.00102) / 3);

	side_make(&b, 3, 2, names, vb);
	side_make(&n, 3, 2, names, vn);
	diff_compare(&res, &b, &n, &o);
	near(res.model.d0, 4, 1e-15);
	w = row_of(&res, "f0");
	near(w->df, 8, 1e-15);
	near(w->t, t, 1e-9);
	near(w->p, student8_p(t), 1e-9);
	near(w->padj, 2 * student8_p(t), 1e-9);
	ck_assert_int_eq(w->status, ST_SAME);
	w = row_of(&res, "f1");
	ck_assert(w->t == 0 && w->p == 1 && w->padj == 1);
	compared_free(&res, &b, &n);
}
END_TEST

/* A function absent from both sides' seconds (0 everywhere) is no row. */
START_TEST(test_functions_without_time_are_no_rows)
{
	static const char *const names[] = { "idle", "busy" };
	const double vb[] = { 0, 1 }, vn[] = { 0, 1 };
	struct side b, n;
	struct result res;
	struct diff_opts o = opts(1);

	side_make(&b, 1, 2, names, vb);
	side_make(&n, 1, 2, names, vn);
	diff_compare(&res, &b, &n, &o);
	ck_assert_uint_eq(res.nrows, 1);
	ck_assert_str_eq(res.rows[0].name, "busy");
	ck_assert(res.rows[0].p == 1 && res.rows[0].status == ST_SAME);
	near(res.prog.mb, 1, 1e-15);
	compared_free(&res, &b, &n);
}
END_TEST

Suite *
diff_compare_suite(void)
{
	Suite *s = suite_create("diff_compare");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_holm_steps_down_and_stays_monotone);
	tcase_add_test(t, test_all_functions_slower_alike_is_the_machine);
	tcase_add_test(t, test_speed_allowance_ignores_the_function_that_changed);
	tcase_add_test(t, test_speed_needs_three_functions_of_twenty_samples);
	tcase_add_test(t, test_zero_variance_runs_are_moderated_by_the_prior);
	tcase_add_test(t, test_functions_without_time_are_no_rows);
	suite_add_tcase(s, t);
	return s;
}
