/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for tools/model/sequential.c, pcprof compare's sequential
 * gate: the alpha each look spends (Pocock-type Lan-DeMets spending, the
 * looks' shares summing to alpha), the looks' levels (their boundary
 * crossed with that chance, by a Monte Carlo here), Student's t
 * quantile, the equivalence test's bound (TOST) and the verdict of a
 * look from its rows, with the exit status it gives. Expected values
 * come from closed forms written here (the spending function, Student's
 * t with 2 df, the normal's 97.5 % point), not from stats.c.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "model/sequential.h"
#include "unit.h"

#define near(got, want, rel) \
	ck_assert_msg(fabs((double)(got) - (want)) <= \
			      (rel)*fmax(fabs((double)(want)), 1e-300), \
		      "%s = %.15g, want %.15g", #got, (double)(got), \
		      (double)(want))

START_TEST(test_spending_is_pocock_type_and_sums_to_alpha)
{
	double sum = 0, prev = INFINITY;

	near(seq_spent(0.01, 0), 0, 1e-15);
	near(seq_spent(0.01, 1), 0.01, 1e-12);
	near(seq_spent(0.01, 0.5), 0.01 * log(1 + (exp(1) - 1) / 2), 1e-12);
	/* looks at 3..20 runs a side: the first takes what is spent by 3/20 */
	near(seq_look_alpha(0.01, 3, 3, 20),
	     0.01 * log(1 + (exp(1) - 1) * 0.15), 1e-12);
	for (int n = 3; n <= 20; n++) {
		double a = seq_look_alpha(0.01, n, 3, 20);

		ck_assert(a > 0);
		/* after the first, each look spends less than the one before */
		if (n > 4)
			ck_assert(a < prev);
		prev = a;
		sum += a;
	}
	near(sum, 0.01, 1e-12);
	/* up to 1000 runs a side: every pair to 20, then a tenth more each
	 * time; the looks still spend alpha, no more */
	sum = 0;
	int looks = 0, k;

	for (k = 3; ; k = seq_next_look(k, 3, 1000)) {
		sum += seq_look_alpha(0.01, k, 3, 1000);
		looks++;
		if (k == 1000)
			break;
	}
	ck_assert_int_eq(seq_next_look(0, 3, 1000), 3);
	ck_assert_int_eq(seq_next_look(19, 3, 1000), 20);
	ck_assert_int_eq(seq_next_look(20, 3, 1000), 22);
	ck_assert_int_eq(seq_next_look(990, 3, 1000), 1000);
	ck_assert_msg(looks > 50 && looks < 70, "%d looks", looks);
	near(sum, 0.01, 1e-12);
	near(seq_look_alpha(0.01, 22, 3, 1000),
	     seq_spent(0.01, 0.022) - seq_spent(0.01, 0.020), 1e-12);
	/* one look (--runs N): all of alpha; past the last: the last's */
	near(seq_look_alpha(0.01, 6, 6, 6), 0.01, 1e-15);
	near(seq_look_alpha(0.05, 40, 3, 20), seq_look_alpha(0.05, 20, 3, 20),
	     1e-15);
}
END_TEST

START_TEST(test_t_quantile_and_the_tost_bound)
{
	double q = 0.001, c = 1 - 2 * q;

	near(seq_t_upper(0.025, INFINITY), 1.959963984540054, 1e-9);
	/* Student's t, 2 df: P(T > t) = 1/2 - t / (2 sqrt(t^2 + 2)) */
	near(seq_t_upper(q, 2), c * sqrt(2 / (1 - c * c)), 1e-8);
	near(seq_ruled_out(-0.3, 0.1, INFINITY, 0.025),
	     0.3 + 0.1959963984540054, 1e-9);
	near(seq_ruled_out(0.2, 0, 10, 0.01), 0.2, 1e-15);
}
END_TEST

/* A row as diff_compare leaves it, tested and in Holm's family. */
static struct row
row(const char *name, double mb, double mn, double se, enum status st)
{
	struct row w;

	memset(&w, 0, sizeof(w));
	w.name = name;
	w.mb = mb;
	w.mn = mn;
	w.se = se;
	w.df = INFINITY;
	w.tested = w.family = 1;
	w.status = st;
	return w;
}

static struct diff_opts
seq_opts(void)
{
	struct diff_opts o = DIFF_OPTS_DEFAULT;

	o.threshold = 0.05;
	o.min_seconds = 0.001;
	o.seq_min = 3;
	o.seq_max = 20;
	return o;
}

START_TEST(test_verdict_of_a_look)
{
	struct diff_opts o = seq_opts();
	struct row rows[3];
	struct result res;
	const double a = 0.025, z = 1.959963984540054;

	memset(&res, 0, sizeof(res));
	res.rows = rows;
	res.nrows = 3;
	res.prog.mb = 1.0;
	/* 5 % of 0.5 s is 0.025 s: |d| + z se = 0.001 + 0.0098 rules it out;
	 * the small one's margin is min_seconds, 0.001 > 5 % of 0.01 s */
	rows[0] = row("big", 0.5, 0.501, 0.005, ST_SAME);
	rows[1] = row("other", 0.49, 0.49, 0.005, ST_SAME);
	rows[2] = row("small", 0.01, 0.01, 0.0004, ST_SAME);
	ck_assert_int_eq(seq_judge(&res, &o, a), SEQ_UNCHANGED);
	near(rows[0].bound, 0.001 + z * 0.005, 1e-9);
	/* the program: the rows' changes summed, their variances too */
	near(res.prog.bound,
	     0.001 + z * sqrt(2 * 0.005 * 0.005 + 0.0004 * 0.0004), 1e-9);
	ck_assert_int_eq(diff_exit_status(&res, &o), 0);

	/* the small one too noisy to rule out 0.001 s: undecided, and the
	 * smallest change it rules out said, in its base seconds */
	rows[2].se = 0.001;
	ck_assert_int_eq(seq_judge(&res, &o, a), SEQ_UNDECIDED);
	near(res.seq.ruled_out, z * 0.001 / 0.01, 1e-9);
	ck_assert_int_eq(diff_exit_status(&res, &o), 0);
	o.undecided_fail = 1;
	ck_assert_int_eq(diff_exit_status(&res, &o), EXIT_REGRESSION);

	/* out of the family (too small to fail): not watched */
	rows[2].family = 0;
	ck_assert_int_eq(seq_judge(&res, &o, a), SEQ_UNCHANGED);

	/* significantly faster: decided, whatever its bound */
	rows[1] = row("other", 0.49, 0.30, 0.01, ST_FASTER);
	ck_assert_int_eq(seq_judge(&res, &o, a), SEQ_UNCHANGED);
	/* and the program, 0.189 s faster, too */
	near(res.prog.bound,
	     0.189 + z * sqrt(0.005 * 0.005 + 0.01 * 0.01 + 1e-6), 1e-9);
	/* a program neither ruled out nor significantly faster is open */
	rows[1] = row("other", 0.49, 0.44, 0.03, ST_SAME);
	ck_assert_int_eq(seq_judge(&res, &o, a), SEQ_UNDECIDED);
	near(res.seq.ruled_out,
	     fmax((0.05 + z * 0.03) / 0.49,
		  (0.049 + z * sqrt(0.005 * 0.005 + 0.0009 + 1e-6)) / 1.0),
	     1e-9);
	o.metric = METRIC_TOTAL;	/* no whole-program sum of totals */
	rows[1].status = ST_FASTER;
	ck_assert_int_eq(seq_judge(&res, &o, a), SEQ_UNCHANGED);

	/* a regression at the look decides, undecided rows or not */
	res.nslow = 1;
	rows[0] = row("big", 0.5, 0.6, 0.05, ST_SLOWER);
	ck_assert_int_eq(seq_judge(&res, &o, a), SEQ_REGRESSED);
	ck_assert_str_eq(seq_verdict_name(SEQ_REGRESSED), "regressed");
	ck_assert_int_eq(diff_exit_status(&res, &o), EXIT_REGRESSION);
}
END_TEST

/*
 * The chance that any look's z crosses its level's one-sided boundary
 * when nothing changed, the looks' z those of one sum of standard normal
 * runs (as a look's t is, at many degrees of freedom), at looks from 3 to
 * nmax runs a side with levels level(alpha, n, 3, nmax): a Monte Carlo of
 * reps draws (xorshift64*, Box and Muller), seeded, so the same each time.
 */
/* xorshift64*'s multiplier */
#define MIX	2685821657736338717ULL

static double
false_crossing(double (*level)(double, int, int, int), int nmax, long reps)
{
	double zb[64];
	int looks[64], nl = 0;
	uint64_t x = 88172645463325252ULL;
	long hits = 0;

	for (int n = 3; ; n = seq_next_look(n, 3, nmax)) {
		zb[nl] = seq_t_upper(level(0.01, n, 3, nmax) / 2, INFINITY);
		looks[nl++] = n;
		if (n >= nmax)
			break;
	}
	for (long r = 0; r < reps; r++) {
		double sum = 0;
		int made = 0, hit = 0;

		for (int k = 0; k < nl; k++) {
			for (; made < looks[k]; made++) {
				double u1, u2;

				x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
				u1 = ((x * MIX) >> 11) * 0x1p-53 + 0x1p-54;
				x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
				u2 = ((x * MIX) >> 11) * 0x1p-53;
				sum += sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
			}
			hit |= sum / sqrt(looks[k]) > zb[k];
		}
		hits += hit;
	}
	return (double)hits / reps;
}

/*
 * Issue 36: the wall gate at 10 s a side (9 runs) caught a wait 20 %
 * longer in 3 of 20 comparisons sequentially and 17 of 20 fixed. The
 * looks' levels were the spending function's increments, which sum to
 * alpha by the union bound: the looks overlap (the look at 9 runs holds
 * the one at 8's), so their false alarms did too, and the looks spent
 * 0.0065 of alpha 0.01 (one side: 0.0033 of 0.005), the last look at
 * 0.00073. Each look's level is now the nominal level of the
 * group-sequential boundary that spends what the look spends, its
 * overlap with the looks before counted: the false alarms over all
 * the looks are alpha, not less, and the last look is at 0.0022.
 */
START_TEST(test_levels_spend_all_of_alpha_over_overlapping_looks)
{
	long reps = 100000;
	/* the rate's standard error at 0.005 */
	double se = sqrt(0.005 * 0.995 / reps);

	for (int nmax = 9; nmax <= 20; nmax += 11) {
		double rate = false_crossing(seq_look_level, nmax, reps);
		double before = false_crossing(seq_look_alpha, nmax, reps);

		ck_assert_msg(rate > 0.005 - 4 * se && rate < 0.005 + 4 * se,
			      "looks 3..%d: false crossings %.5f of 0.005 (the "
			      "increments alone: %.5f)", nmax, rate, before);
		ck_assert_msg(before < 0.005 - 4 * se, "%.5f", before);
	}
	/* the first look's level is what it spends; each later one's more */
	near(seq_look_level(0.01, 3, 3, 9), seq_look_alpha(0.01, 3, 3, 9),
	     1e-9);
	for (int n = 4; n <= 9; n++)
		ck_assert(seq_look_level(0.01, n, 3, 9) >
			  2 * seq_look_alpha(0.01, n, 3, 9));
	/* one look: all of alpha; past the last, and between looks */
	near(seq_look_level(0.01, 6, 6, 6), 0.01, 1e-15);
	near(seq_look_level(0.01, 40, 3, 20), seq_look_level(0.01, 20, 3, 20),
	     1e-15);
	near(seq_look_level(0.01, 23, 3, 1000),
	     seq_look_level(0.01, 22, 3, 1000), 1e-15);
	ck_assert(seq_look_level(0.01, 1000, 3, 1000) > 0.001 &&
		  seq_look_level(0.01, 1000, 3, 1000) < 0.01);
}
END_TEST

/*
 * Issue 36: a look regressed by [elapsed] or a wait for another thread
 * alone (filler's pipe read, which waits for the thread that changed)
 * names no cause, and the gate looks on; a function or a wait of its own
 * (a sleep) names one. The verdict stays regressed at the later looks,
 * and exits 1 even where no row of the last look is slower.
 */
START_TEST(test_rows_that_follow_a_change_elsewhere_name_no_cause)
{
	struct diff_opts o = seq_opts();
	struct row rows[3];
	struct result res;

	ck_assert(seq_follows(ELAPSED_ROW));
	ck_assert(seq_follows("[off-cpu: read pipe] from filler"));
	ck_assert(seq_follows("[off-cpu: futex] from worker"));
	ck_assert(seq_follows("[off-cpu: epoll_wait]"));
	ck_assert(seq_follows("[off-cpu: write socket] from send_all"));
	ck_assert(!seq_follows("[off-cpu: clock_nanosleep] from sleeper"));
	ck_assert(!seq_follows("[off-cpu: read file] from load"));
	ck_assert(!seq_follows("[off-cpu: futexx]"));
	ck_assert(!seq_follows("[off-cpu: read pipes]"));
	ck_assert(!seq_follows("parse_pipe"));
	ck_assert(!seq_follows("futex"));

	memset(&res, 0, sizeof(res));
	res.rows = rows;
	res.nrows = 3;
	rows[0] = row(ELAPSED_ROW, 0.84, 0.90, 0.01, ST_SLOWER);
	rows[1] = row("[off-cpu: read pipe] from filler", 0.3, 0.33, 0.005,
		      ST_SLOWER);
	rows[2] = row("[off-cpu: clock_nanosleep] from sleeper", 0.3, 0.33,
		      0.01, ST_SAME);
	res.nslow = 2;
	res.seq.verdict = SEQ_REGRESSED;
	ck_assert(seq_whole_only(&res));
	rows[2].status = ST_SLOWER;
	ck_assert(!seq_whole_only(&res));
	/* not regressed: nothing to look on for */
	rows[2].status = ST_SAME;
	res.seq.verdict = SEQ_UNDECIDED;
	ck_assert(!seq_whole_only(&res));

	/* a later look with no row slower: regressed since the look at 9 */
	for (int i = 0; i < 3; i++)
		rows[i].status = ST_SAME;
	res.nslow = 0;
	seq_keep_whole(&res, 9);
	ck_assert_int_eq(res.seq.verdict, SEQ_REGRESSED);
	ck_assert_int_eq(res.seq.whole, 9);
	ck_assert_int_eq(diff_exit_status(&res, &o), EXIT_REGRESSION);
	/* none decided: the look's own verdict stands */
	res.seq.verdict = SEQ_UNDECIDED;
	seq_keep_whole(&res, 0);
	ck_assert_int_eq(res.seq.verdict, SEQ_UNDECIDED);
	ck_assert_int_eq(diff_exit_status(&res, &o), 0);
}
END_TEST

Suite *
sequential_suite(void)
{
	Suite *s = suite_create("sequential");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_spending_is_pocock_type_and_sums_to_alpha);
	tcase_add_test(t, test_t_quantile_and_the_tost_bound);
	tcase_add_test(t, test_verdict_of_a_look);
	tcase_add_test(t,
		       test_levels_spend_all_of_alpha_over_overlapping_looks);
	tcase_add_test(t,
		       test_rows_that_follow_a_change_elsewhere_name_no_cause);
	suite_add_tcase(s, t);
	return s;
}
