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
#include "model/stats.h"
#include "unit.h"

#define near(got, want, rel) \
	ck_assert_msg(fabs((double)(got) - (want)) <= \
			      (rel)*fmax(fabs((double)(want)), 1e-300), \
		      "%s = %.15g, want %.15g", #got, (double)(got), \
		      (double)(want))

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
	       const char *const *names, size_t nf, const double *vb,
	       double factor, int absolute)
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

	return (t * t * a + sqrt(t * t * t * t * a * a + 8 * t * t * a * mb)) /
	       2;
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
	ck_assert(!row_of(&res, "new")->tested &&
		  !row_of(&res, "gone")->tested);
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
	static const char *const names[] = {
		"f0", "f1", "f2", "f3", "f4", "f5"
	};
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

/*
 * Two functions, one holding most of the time, and runs whose speeds vary
 * by 8 % (every function alike), the new side's 8 % slower on average by
 * chance: too few functions to judge the sides' speeds, so no run is
 * scaled to its side's mean either. Scaled, busy's spread was gone and
 * the sides' speeds were its change (+8 %, "slower"); as measured, the
 * runs' speeds are its spread, and nothing changed.
 */
START_TEST(test_unjudged_speed_leaves_the_runs_as_measured)
{
	static const char *const names[] = { "busy", "small" };
	static const double speed[2][6] = {
		{ 1.00, 1.08, 0.92, 1.04, 0.96, 1.00 },
		{ 1.08, 1.16, 1.00, 1.12, 1.04, 1.08 },
	};
	double v[2][12];
	struct side b, n;
	struct result res;
	struct diff_opts o = opts(0);

	for (int s = 0; s < 2; s++)
		for (int r = 0; r < 6; r++) {
			v[s][2 * r] = 2.0 * speed[s][r];
			v[s][2 * r + 1] = 0.05 * speed[s][r];
		}
	side_make(&b, 6, 2, names, v[0]);
	side_make(&n, 6, 2, names, v[1]);
	diff_compare(&res, &b, &n, &o);
	ck_assert(!res.speed_judged && res.speed == 1);
	ck_assert_uint_eq(res.speed_functions, 2);
	near(row_of(&res, "busy")->mb, 2.0, 1e-12);	/* as measured */
	near(row_of(&res, "busy")->mn, 2.16, 1e-12);
	ck_assert_int_eq(row_of(&res, "busy")->status, ST_SAME);
	ck_assert_int_eq(res.nslow, 0);
	compared_free(&res, &b, &n);
}
END_TEST

/* Fewer than three functions of 20 samples a run or more: no telling the
 * machine from the change, so no allowance (speed 1, not judged). The
 * two functions of 10 samples do not count towards the three. */
START_TEST(test_speed_needs_three_functions_of_twenty_samples)
{
	static const char *const names[] = { "big1", "big2", "small1",
					     "small2" };
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

	return 1 -
	       sin(q) * (1 + c2 / 2 + 3 * c2 * c2 / 8 + 5 * c2 * c2 * c2 / 16);
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
	const double vb[] = { 1, 2, 1, 2, 1, 2 },
		     vn[] = { 1.02, 2, 1.02, 2, 1.02, 2 };
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

/*
 * --metric wall: a wait's floor is the variance of the split of its
 * threads' exact off-CPU time among the waits, m (1 - p) / wall_hz for a
 * share p of the side's off-CPU time (the run queue's rows: of its run-
 * queue time), a microsecond at least; a CPU function's is a sample. A
 * run-queue row that doubles is the machine's load: tested, never in
 * Holm's family, never slower; the nap that grew by 20 % is.
 */
START_TEST(test_wall_floors_and_the_run_queue_rows)
{
	static const char *const names[] = { "work", "[off-cpu: clock_nanosleep] from nap",
					     "[off-cpu: clock_nanosleep] from log",
					     "[off-cpu: runqueue] from work" };
	const double vb[] = { 0.1, 0.30, 0.10, 0.01, 0.1, 0.31, 0.10, 0.01,
			      0.1, 0.30, 0.11, 0.01, 0.1, 0.29, 0.10, 0.01 };
	const double vn[] = { 0.1, 0.36, 0.10, 0.02, 0.1, 0.37, 0.10, 0.02,
			      0.1, 0.36, 0.11, 0.02, 0.1, 0.35, 0.10, 0.02 };
	struct side sd[2];
	struct result res;
	struct diff_opts o = opts(1);
	const double *v[2] = { vb, vn };

	o.metric = METRIC_WALL;
	o.threshold = 0.05;
	for (int s = 0; s < 2; s++) {
		side_make(&sd[s], 4, 4, names, v[s]);
		sd[s].first_wait = 1;
		sd[s].wall_hz = 1000;
		sd[s].waited = calloc(4, sizeof(double));
		sd[s].runq = calloc(4, sizeof(double));
		ck_assert(sd[s].waited && sd[s].runq);
		for (int r = 0; r < 4; r++) {
			sd[s].waited[r] = v[s][4 * r + 1] + v[s][4 * r + 2] +
					  v[s][4 * r + 3];
			sd[s].runq[r] = v[s][4 * r + 3];
		}
	}
	near(diff_amin(&sd[0], "work"), 1e-3, 1e-15);
	near(diff_amin(&sd[0], names[1]), (1 - 1.2 / 1.61) / 1000, 1e-12);
	near(diff_amin(&sd[0], names[2]), (1 - 0.41 / 1.61) / 1000, 1e-12);
	near(diff_amin(&sd[0], names[3]), 1e-6, 1e-12);
	diff_compare(&res, &sd[0], &sd[1], &o);
	ck_assert_int_eq(row_of(&res, names[1])->status, ST_SLOWER);
	ck_assert(row_of(&res, names[3])->tested &&
		  !row_of(&res, names[3])->family);
	ck_assert_int_eq(row_of(&res, names[3])->status, ST_SMALL);
	ck_assert_int_eq(res.nslow, 1);
	for (int s = 0; s < 2; s++) {
		free(sd[s].waited);
		free(sd[s].runq);
	}
	compared_free(&res, &sd[0], &sd[1]);
}
END_TEST

/*
 * --metric wall: a wait's prior is its own floor, never another wait's
 * spread. A nap of 0.30 s a run in every base run, 0.36 s in every new
 * one (runs that agree exactly), beside a pipe read of 1.0 s a run that
 * moves with the load (by 30 % and 22 % of a run): a prior fitted over
 * the waits was the pipe read's (relative variance 0.05, weighing 4 runs)
 * and hid the nap, t 2.2. Its variance is its floor, m (1 - p) / wall_hz
 * (p its share of the side's off-CPU time, 1.5 of 6.5 s and 1.8 of 6.8
 * s), on its own 8 degrees of freedom: t = .06 / sqrt((.30 a_b + .36
 * a_n) / 5), slower after Holm's over 3 rows (work, nap, pipe; the run
 * queue's is no part of the family).
 */
START_TEST(test_wall_wait_prior_is_its_own_floor)
{
	static const char *const names[] = { "work", "[off-cpu: clock_nanosleep] from nap",
					     "[off-cpu: read pipe] from pump",
					     "[off-cpu: runqueue] from work" };
	const double pump[2][5] = { { 0.8, 1.2, 0.6, 1.4, 1.0 },
				    { 1.0, 0.7, 1.3, 0.9, 1.1 } };
	const double nap[2] = { 0.30, 0.36 };
	double v[2][20], a[2], t;
	struct side sd[2];
	struct result res;
	struct diff_opts o = opts(1);
	const struct row *w;

	o.metric = METRIC_WALL;
	for (int s = 0; s < 2; s++) {
		for (int r = 0; r < 5; r++) {
			v[s][4 * r] = 0.1;
			v[s][4 * r + 1] = nap[s];
			v[s][4 * r + 2] = pump[s][r];
			v[s][4 * r + 3] = 0.01;
		}
		side_make(&sd[s], 5, 4, names, v[s]);
		sd[s].first_wait = 1;
		sd[s].wall_hz = 1000;
		sd[s].waited = calloc(5, sizeof(double));
		sd[s].runq = calloc(5, sizeof(double));
		ck_assert(sd[s].waited && sd[s].runq);
		for (int r = 0; r < 5; r++) {
			sd[s].waited[r] = nap[s] + pump[s][r] + 0.01;
			sd[s].runq[r] = 0.01;
		}
		a[s] = (1 - 5 * nap[s] / (5 * nap[s] + 5.0)) / 1000;
		near(diff_amin(&sd[s], names[1]), a[s], 1e-12);
	}
	t = 0.06 / sqrt((0.30 * a[0] + 0.36 * a[1]) / 5);
	diff_compare(&res, &sd[0], &sd[1], &o);
	w = row_of(&res, names[1]);
	ck_assert_msg(w->status == ST_SLOWER, "nap: t %g, p %g after Holm's",
		      w->t, w->padj);
	near(w->df, 8, 1e-15);
	near(w->t, t, 1e-9);
	near(w->p, student8_p(t), 1e-9);
	near(w->padj, 3 * student8_p(t), 1e-9);
	w = row_of(&res, names[2]);
	ck_assert(w->t == 0 && w->df == 8 && w->status == ST_SAME);
	ck_assert_int_eq(res.family, 3);
	ck_assert_int_eq(res.nslow, 1);
	for (int s = 0; s < 2; s++) {
		free(sd[s].waited);
		free(sd[s].runq);
	}
	compared_free(&res, &sd[0], &sd[1]);
}
END_TEST

/* Fisher's combination against its closed forms: for one p-value it is
 * that p; for two, p1 p2 (1 - log(p1 p2)). */
START_TEST(test_fisher_matches_its_closed_forms)
{
	const double one[] = { 0.037 }, two[] = { 0.2, 0.05 },
		     ones[] = { 1, 1, 1 };

	near(stats_fisher(one, 1), 0.037, 1e-12);
	near(stats_fisher(two, 2), 0.01 * (1 - log(0.01)), 1e-12);
	near(stats_fisher(ones, 3), 1, 1e-12);
	near(stats_fisher(NULL, 0), 1, 0);
}
END_TEST

/* Four runs a side of 8 functions, each run's seconds moved by a fixed
 * pattern of +-0.3 % (the runs' own noise), the new side's function f
 * times change[f]. */
static void
compare_runs4(struct result *res, struct side *b, struct side *n,
	      const double *change, const struct diff_opts *o)
{
	static const char *const names[] = { "f0", "f1", "f2", "f3",
					     "f4", "f5", "f6", "f7" };
	double vb[32], vn[32];

	for (int r = 0; r < 4; r++)
		for (int f = 0; f < 8; f++) {
			double noise = 1 + 0.003 * ((r * 7 + f * 3) % 5 - 2);

			vb[r * 8 + f] = (0.5 + 0.1 * f) * noise;
			vn[r * 8 + f] =
				(0.5 + 0.1 * f) * change[f] *
				(1 + 0.003 * ((r * 3 + f * 7 + 1) % 5 - 2));
		}
	side_make(b, 4, 8, names, vb);
	side_make(n, 4, 8, names, vn);
	diff_compare(res, b, n, o);
}

/* One function 12 % slower, the rest as they were: the speed model fits
 * the rest (Fisher's p well above alpha) and f0 is blamed. */
START_TEST(test_speed_fit_holds_for_one_change)
{
	const double change[] = { 1.12, 1, 1, 1, 1, 1, 1, 1 };
	struct diff_opts o = opts(0);
	struct side b, n;
	struct result res;

	compare_runs4(&res, &b, &n, change, &o);
	ck_assert(res.speed_judged && !res.misfit);
	ck_assert_uint_eq(res.fit_functions, 7);
	ck_assert_msg(res.fit_p > 0.05, "fit p %g", res.fit_p);
	ck_assert_int_eq(res.nslow, 1);
	ck_assert_str_eq(res.rows[0].name, "f0");
	ck_assert_int_eq(diff_exit_status(&res, &o), EXIT_REGRESSION);
	compared_free(&res, &b, &n);
}
END_TEST

/* Functions moved every way under one build change (f0 +12 %, f3 +7 %,
 * f1 -9 %, f2 -8 %: the load's doing, not the code's): no one speed
 * fits the functions not found slower, so no function is blamed: the
 * verdict is undecided, with what it would have said kept (f0 the
 * largest), exit 0, or 1 with --undecided fail. */
START_TEST(test_speed_misfit_is_undecided_not_a_blamed_function)
{
	const double change[] = { 1.12, 0.91, 0.92, 1.07, 1, 1, 1, 1 };
	struct diff_opts o = opts(0);
	struct side b, n;
	struct result res;

	compare_runs4(&res, &b, &n, change, &o);
	ck_assert(res.speed_judged);
	ck_assert_msg(res.misfit && res.fit_p < o.alpha, "fit p %g", res.fit_p);
	ck_assert_int_eq(res.nslow, 0);
	ck_assert_int_eq(res.nfast, 0);
	ck_assert_int_ge(res.nblamed, 1);
	ck_assert_int_ge(res.nfaster, 1);
	ck_assert_str_eq(res.blamed.name, "f0");
	for (size_t i = 0; i < res.nrows; i++)
		ck_assert(res.rows[i].status != ST_SLOWER &&
			  res.rows[i].status != ST_FASTER);
	ck_assert_int_eq(diff_exit_status(&res, &o), 0);
	o.undecided_fail = 1;
	ck_assert_int_eq(diff_exit_status(&res, &o), EXIT_REGRESSION);
	compared_free(&res, &b, &n);
}
END_TEST

/*
 * --metric total: f0 a leaf 20 % slower, f1..f3 leaves as they were,
 * "worker" and "main" with no time of their own above them all: their
 * totals carry f0's slowdown (+5 %), far beyond their noise, but they
 * are no evidence against the machine's speed, which was judged on self
 * time: the fit weighs the leaves alone, and f0 is blamed (the fit read
 * worker and main and the verdict was undecided: CI's make check).
 */
START_TEST(test_speed_fit_of_totals_weighs_own_time_only)
{
	static const char *const names[] = { "f0", "f1", "f2", "f3", "worker", "main" };
	const double change[] = { 1.2, 1, 1, 1 };
	double sb[24], sn[24], tb[24], tn[24];
	struct diff_opts o = opts(0);
	struct side b, n;
	struct result res;

	o.metric = METRIC_TOTAL;
	for (int r = 0; r < 4; r++) {
		double allb = 0, alln = 0;

		for (int f = 0; f < 4; f++) {
			double base = (0.5 + 0.1 * f) *
				      (1 + 0.003 * ((r * 7 + f * 3) % 5 - 2));

			sb[r * 6 + f] = tb[r * 6 + f] = base;
			sn[r * 6 + f] = tn[r * 6 + f] = base * change[f] *
				(1 + 0.003 * ((r * 3 + f * 7 + 1) % 5 - 2));
			allb += sb[r * 6 + f];
			alln += sn[r * 6 + f];
		}
		for (int f = 4; f < 6; f++) {
			sb[r * 6 + f] = sn[r * 6 + f] = 0.001;
			tb[r * 6 + f] = allb + 0.001 * (f - 3);
			tn[r * 6 + f] = alln + 0.001 * (f - 3);
		}
	}
	side_make(&b, 4, 6, names, sb);
	side_make(&n, 4, 6, names, sn);
	b.total = tb;
	n.total = tn;
	diff_compare(&res, &b, &n, &o);
	ck_assert(res.speed_judged);
	ck_assert_msg(!res.misfit, "fit p %g over %zu", res.fit_p,
		      res.fit_functions);
	ck_assert_uint_eq(res.fit_functions, 3);
	ck_assert_str_eq(res.rows[0].name, "f0");
	ck_assert_int_eq(res.rows[0].status, ST_SLOWER);
	ck_assert_int_eq(diff_exit_status(&res, &o), EXIT_REGRESSION);
	b.total = n.total = NULL;
	compared_free(&res, &b, &n);
}
END_TEST

/* diff_speed_fit on rows made by hand: the slower row, the wait, the
 * elapsed row, the untested and the too-small one are left out; the rest
 * combined by Fisher's method. */
START_TEST(test_speed_fit_weighs_the_rows_the_speed_was_judged_on)
{
	struct row rows[] = {
		{ .name = "slow",
		  .mb = 1,
		  .mn = 1.2,
		  .p = 1e-9,
		  .tested = 1,
		  .status = ST_SLOWER },
		{ .name = "a",
		  .mb = 1,
		  .mn = 1,
		  .p = 0.2,
		  .tested = 1,
		  .status = ST_SAME },
		{ .name = "b",
		  .mb = 1,
		  .mn = 0.9,
		  .p = 0.001,
		  .tested = 1,
		  .status = ST_FASTER },
		{ .name = "[off-cpu: read] from a",
		  .mb = 1,
		  .mn = 1,
		  .p = 1e-6,
		  .tested = 1 },
		{ .name = ELAPSED_ROW,
		  .mb = 1,
		  .mn = 1.1,
		  .p = 1e-6,
		  .tested = 1 },
		{ .name = "untested", .mb = 1, .mn = 0, .p = 1e-6, .tested = 0 },
		{ .name = "tiny",
		  .mb = 0.001,
		  .mn = 0.001,
		  .p = 1e-6,
		  .tested = 1 },
	};
	const double want[] = { 0.2, 0.001 };
	size_t used;

	near(diff_speed_fit(rows, 7, 0.02, 0.02, &used), stats_fisher(want, 2),
	     1e-12);
	ck_assert_uint_eq(used, 2);
}
END_TEST

/*
 * A marker's window (compare --marker): the marked work and two clock
 * reads, 2 runs a side at 10 kHz, samples as recorded (markers38_itt, 10
 * against 30 ms slow tasks). The clock read of 16 and 59 samples must
 * not lend its relative spread to serve_slow's prior (p 0.075 after
 * Holm's when it did): the tripled function is slower; the same runs
 * against a base of the same counts are not.
 */
START_TEST(test_few_functions_keep_a_small_ones_spread_to_themselves)
{
	static const char *const names[] = { "serve_slow", "vdso", "clock" };
	const double vb[] = { 292, 8, 2, 286, 13, 2 },
		     vn[] = { 876, 16, 6, 832, 59, 11 };
	double sb[6], sn[6];
	struct side b, n;
	struct result res;
	struct diff_opts o = opts(1);

	o.threshold = 0.01;
	o.min_seconds = 7e-5;
	for (int i = 0; i < 6; i++) {
		sb[i] = vb[i] / 10000;
		sn[i] = vn[i] / 10000;
	}
	for (int same = 0; same < 2; same++) {
		side_make(&b, 2, 3, names, sb);
		side_make(&n, 2, 3, names, same ? sb : sn);
		b.rate = n.rate = 10000;
		diff_compare(&res, &b, &n, &o);
		ck_assert_msg(row_of(&res, "serve_slow")->status ==
				      (same ? ST_SAME : ST_SLOWER),
			      "same %d: p %g", same,
			      row_of(&res, "serve_slow")->padj);
		ck_assert(same || row_of(&res, "serve_slow")->padj < 1e-3);
		ck_assert_int_eq(res.nslow, !same);
		compared_free(&res, &b, &n);
	}
}
END_TEST

/* Disturbed runs: those far above the rest (the run queue's 0.13 and
 * 0.15 s against 0.01 s) are marked, a third of the runs at most, the
 * largest first; none of 2 runs, nor below the floor. */
START_TEST(test_outliers_mark_the_disturbed_runs)
{
	const double rq[] = { 0.010, 0.012, 0.009, 0.011, 0.150,
			      0.130, 0.011, 0.010, 0.012 };
	const double four[] = { 0.01, 0.2,  0.01, 0.3, 0.01,
				0.25, 0.01, 0.22, 0.01 };
	const double flat[] = { 0.010, 0.012, 0.009, 0.011, 0.015 };
	int out[9];
	double ref;

	ck_assert_int_eq(diff_outliers(rq, 9, 0.01, out), 2);
	for (int i = 0; i < 9; i++)
		ck_assert_int_eq(out[i], i == 4 || i == 5);
	/* four of nine out: the three largest only */
	ck_assert_int_eq(diff_outliers(four, 9, 0.01, out), 3);
	ck_assert(out[1] == 0 && out[3] && out[5] && out[7]);
	ck_assert_int_eq(diff_outliers(rq, 2, 0.01, out), 0);
	ck_assert_int_eq(diff_outliers(flat, 5, 0.01, out), 0);
	ck_assert(diff_outlier_above(0.15, rq, 4, 0.01, &ref));
	near(ref, 0.0105, 1e-12);
	ck_assert(!diff_outlier_above(0.015, rq, 4, 0.01, &ref));
	/* the floor of the run queue: twice the median at least */
	near(diff_runq_floor(rq, 4, 10), 0.2, 1e-12);
	near(diff_runq_floor(rq, 4, 0.1), 0.0105, 1e-12);
}
END_TEST

Suite *
diff_compare_suite(void)
{
	Suite *s = suite_create("diff_compare");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_holm_steps_down_and_stays_monotone);
	tcase_add_test(t, test_all_functions_slower_alike_is_the_machine);
	tcase_add_test(t,
		       test_speed_allowance_ignores_the_function_that_changed);
	tcase_add_test(t, test_speed_needs_three_functions_of_twenty_samples);
	tcase_add_test(t, test_unjudged_speed_leaves_the_runs_as_measured);
	tcase_add_test(t, test_zero_variance_runs_are_moderated_by_the_prior);
	tcase_add_test(t, test_functions_without_time_are_no_rows);
	tcase_add_test(t, test_fisher_matches_its_closed_forms);
	tcase_add_test(t, test_speed_fit_holds_for_one_change);
	tcase_add_test(t, test_speed_misfit_is_undecided_not_a_blamed_function);
	tcase_add_test(t, test_speed_fit_of_totals_weighs_own_time_only);
	tcase_add_test(t,
		       test_speed_fit_weighs_the_rows_the_speed_was_judged_on);
	tcase_add_test(t, test_outliers_mark_the_disturbed_runs);
	tcase_add_test(
		t, test_few_functions_keep_a_small_ones_spread_to_themselves);
	tcase_add_test(t, test_wall_floors_and_the_run_queue_rows);
	tcase_add_test(t, test_wall_wait_prior_is_its_own_floor);
	suite_add_tcase(s, t);
	return s;
}
