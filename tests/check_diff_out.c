/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof diff's and compare's verdicts as printed (diff_out.c,
 * diff_alloc_out.c): fixed comparisons of two sides of three runs, made
 * by hand as diff_compare and diff_alloc_compare leave them (so that a
 * change of the model does not move these files), in text, JSON and
 * markdown, compared with golden files in tests/golden/ (UPDATE_GOLDEN=1
 * build/tests/unit writes them afresh). check_diff_compare.c tests the
 * comparison itself.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/diff.h"
#include "model/diff_alloc.h"
#include "writers/diff_alloc_out.h"
#include "writers/diff_out.h"
#include "check_fixture.h"
#include "unit.h"

#define NRUNS	3

/*
 * The comparison, as diff_compare leaves it (the rows sorted for
 * printing), made by hand so that only the writer is under test: work
 * 30 % slower, fib the same, memcpy 25 % faster, tiny too small for the
 * family, a|<new> (a name markdown must escape) appeared, gone gone.
 */
static const struct row rows[] = {
	{ "work", 1.0, 1.3, 1e-4, 1.2e-4, 15.2, 8, 3.5e-7, 1.4e-6, 0.0198, 0, 1,
	  1, ST_SLOWER },
	{ "memcpy", 0.4, 0.3, 2e-5, 1e-5, -8.1, 8, 4e-5, 1.2e-4, 0.0123, 0, 1,
	  1, ST_FASTER },
	{ "fib", 0.8, 0.8, 6e-5, 6e-5, -0.01, 8, 0.99, 1, 0.0063, 0, 1, 1,
	  ST_SAME },
	{ "main", 0.1, 0.1, 4e-6, 4e-6, 0.2, 8, 0.84, 1, 0.0016, 0, 1, 1,
	  ST_SAME },
	{ "tiny", 0.004, 0.005, 1e-6, 1e-6, 1.2, 8, 0.26, 0.26, 0.0008, 0, 1, 0,
	  ST_SMALL },
	{ "a|<new>", 0, 0.06, 0, 1e-6, 0, 0, 1, 1, 0, 0, 0, 0, ST_APPEARED },
	{ "gone", 0.05, 0, 1e-6, 0, 0, 0, 1, 1, 0, 0, 0, 0, ST_GONE },
};

static void
result_of(struct result *res, int undecided)
{
	static struct row v[sizeof(rows) / sizeof(rows[0])];

	memcpy(v, rows, sizeof(rows));
	memset(res, 0, sizeof(*res));
	res->rows = v;
	res->nrows = sizeof(rows) / sizeof(rows[0]);
	res->family = 4;
	res->nslow = 1;
	res->nfast = 1;
	res->prog = (struct row){ "[program]", 2.354, 2.565, 2e-4,     2e-4,
				  10.5,        8,     6e-6,  6e-6,     0.02,
				  0.01,        1,     1,     ST_SLOWER };
	res->model.fit[FIT_JOINT] = (struct fit){ 0.001, 1e-4 };
	res->model.fit[FIT_A] = (struct fit){ 0.0012, 0 };
	res->model.fit[FIT_K] = (struct fit){ 0.001, 2e-4 };
	res->model.d0 = 4;
	res->model.pooled_df = 20;
	res->model.amin_all = 0.001;
	res->model.fitted = 1;
	res->speed = 0.98;
	res->speed_judged = 1;
	res->speed_functions = 4;
	res->fit_p = 0.61;
	res->fit_functions = 3;
	if (undecided) {
		/* the speed misfit: no row significant, work would be blamed */
		res->fit_p = 0.0012;
		res->misfit = 1;
		res->blamed = v[0];
		res->nblamed = 1;
		res->nfaster = 1;
		res->nslow = res->nfast = 0;
		v[0].status = v[1].status = ST_SAME;
	}
}

static char paths[2][NRUNS][20] = {
	{ "base/1/gmon.out", "base/2/gmon.out", "base/3/gmon.out" },
	{ "new/1/gmon.out", "new/2/gmon.out", "new/3/gmon.out" },
};
static char *files[2][NRUNS];

/* What the writer reads of a side: its executable, runs and rate. */
static void
side_of(struct side *s, int which)
{
	memset(s, 0, sizeof(*s));
	s->exe = which ? "new/demo" : "base/demo";
	s->nruns = NRUNS;
	s->rate = 1000;
	s->in.runs = calloc(NRUNS, sizeof(*s->in.runs));
	ck_assert_ptr_nonnull(s->in.runs);
	for (int r = 0; r < NRUNS; r++) {
		files[which][r] = paths[which][r];
		s->in.runs[r].files = &files[which][r];
		s->in.runs[r].nfiles = 1;
	}
	s->in.nruns = NRUNS;
}

/* The comparison under o printed as each of the three formats, into
 * golden files PREFIX.txt, .json and .markdown. */
static void
diff_golden(struct diff_opts *o, int undecided, const char *prefix)
{
	static const char *const ext[] = { "txt", "json", "markdown" };
	struct side s[2];
	struct result res;

	side_of(&s[0], 0);
	side_of(&s[1], 1);
	result_of(&res, undecided);
	for (int f = DIFF_TEXT; f <= DIFF_MARKDOWN; f++) {
		char name[64];
		FILE *out = golden_open();

		o->format = (enum diff_format)f;
		diff_print(out, &res, &s[0], &s[1], o);
		snprintf(name, sizeof(name), "%s.%s", prefix, ext[f]);
		golden_check(out, name);
	}
	free(s[0].in.runs);
	free(s[1].in.runs);
}

/*
 * pcprof diff: the verdict, the sides, the speed allowed for, the rows
 * with their verdicts; --top 2 and the rest; --absolute; and the
 * undecided verdict of a speed that does not fit, naming what it would
 * have blamed.
 */
START_TEST(test_diff_of_two_fixed_sides)
{
	struct diff_opts o = DIFF_OPTS_DEFAULT;

	diff_golden(&o, 0, "diff");
	diff_golden(&o, 1, "diff-undecided");
	o.top = 2;
	diff_golden(&o, 0, "diff-top2");
	o.top = 10;
	o.absolute = 1;
	diff_golden(&o, 0, "diff-absolute");
}
END_TEST

/* pcprof compare's verdict: the experiment (runs, wall and CPU seconds,
 * the timer and why, a run made again as disturbed) printed with it. */
START_TEST(test_compare_prints_its_experiment)
{
	struct disturbed again = { "base/2", 0, DIST_RUNQUEUE, 0.4, 0.01, 1 };
	struct experiment e = {
		.runs = 3,
		.repeated = { 1, 0 },
		.again = &again,
		.nagain = 1,
		.budget = 20,
		.wall = { 2.5, 2.9 },
		.wall_sq = { 18.76, 25.24 },
		.cpu = { 2.45, 2.81 },
		.cpu_warmup = 2.5,
		.elapsed = 19.2,
		.timer = "posix",
		.timer_note = "task-clock refused",
		.hz = 1000,
		.dir = "runs",
		.cmd = { "./base/demo 30", "./new/demo 30" },
	};
	struct diff_opts o = DIFF_OPTS_DEFAULT;

	o.exp = &e;
	o.who = "pcprof compare";
	diff_golden(&o, 0, "compare");
}
END_TEST

/* --metric alloc-bytes's comparison, as diff_alloc_compare leaves it:
 * grow<T> doubled, the whole program with it, parse|x the same, tmp gone;
 * exact (every allocation recorded: p 0), or sampled, where the doubling
 * is not significant. */
static void
alloc_result_of(struct result *res, struct row *v, int sampled)
{
	static const struct row exact[] = {
		{ "grow<T>", 1048576, 2097152, 0, 0, INFINITY, 0, 0, 0, 0, 0, 1,
		  1, ST_SLOWER },
		{ "[program]", 1118208, 2162688, 0, 0, INFINITY, 0, 0, 0, 0, 0,
		  1, 1, ST_SLOWER },
		{ "parse|x", 65536, 65536, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1,
		  ST_SAME },
		{ "tmp", 4096, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, ST_GONE },
	};

	memcpy(v, exact, sizeof(exact));
	memset(res, 0, sizeof(*res));
	res->rows = v;
	res->nrows = 4;
	res->family = 3;
	res->nslow = 2;
	if (sampled) {
		v[0] = (struct row){ "grow<T>", 1048576, 2097152, 1.7e10,
				     6.9e10,    3.6,     2,       0.07,
				     0.21,      293000,  0,       1,
				     1,         ST_SAME };
		v[1] = (struct row){ "[program]", 1118208, 2162688, 1.9e10,
				     7.3e10,      3.4,     2,       0.08,
				     0.21,        303000,  0,       1,
				     1,           ST_SAME };
		res->nslow = 0;
	}
	res->prog = v[1];
}

/*
 * The allocation gate's verdict printed: exact at rate 1 (a regression),
 * then sampled at 4096 bytes (no significant growth); each format.
 */
START_TEST(test_diff_of_allocations)
{
	static const char *const ext[] = { "txt", "json", "markdown" };

	for (int sampled = 0; sampled < 2; sampled++) {
		struct diff_opts o = DIFF_OPTS_DEFAULT;
		struct alloc_side a[2];
		struct result res;
		struct row v[4];

		o.metric = METRIC_ALLOC_BYTES;
		o.threshold = ALLOC_THRESHOLD;
		memset(a, 0, sizeof(a));
		for (int i = 0; i < 2; i++) {
			a[i].nruns = 2;
			a[i].rate = sampled ? 4096 : 1;
		}
		a[0].program = 1118208;
		a[1].program = 2162688;
		alloc_result_of(&res, v, sampled);
		for (int f = DIFF_TEXT; f <= DIFF_MARKDOWN; f++) {
			char name[64];
			FILE *out = golden_open();

			o.format = (enum diff_format)f;
			diff_alloc_print(out, &res, &a[0], &a[1], &o);
			snprintf(name, sizeof(name), "diff-alloc%s.%s",
				 sampled ? "-sampled" : "", ext[f]);
			golden_check(out, name);
		}
	}
}
END_TEST

Suite *
diff_out_suite(void)
{
	Suite *s = suite_create("diff_out");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_diff_of_two_fixed_sides);
	tcase_add_test(t, test_compare_prints_its_experiment);
	tcase_add_test(t, test_diff_of_allocations);
	suite_add_tcase(s, t);
	return s;
}
