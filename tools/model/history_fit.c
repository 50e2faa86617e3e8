/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof history's analysis of a whole file: one series a function (and
 * the program's), each commit's seconds at one machine speed, and the
 * change points of every series (history_cp.c). A commit's speed is the
 * median of its functions' seconds against their levels; a function's
 * level is its median over the commits, and, once its change points are
 * found, over the commits between them, so that a function that changed
 * moves no other function's seconds at its commit (history_analyse).
 * A change at a series' last commit stands on that commit's runs alone:
 * where they were disturbed (their speed or their wall time standing out
 * from the other commits', as diff_disturbed.c judges a run), it is held
 * back, unconfirmed. Pure functions of the records, tested by
 * tests/check_history.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/diff.h"
#include "model/history.h"
#include "model/stats.h"

/* the analyses at most: the first finds the change points at levels
 * over the whole series, each next at levels between the last ones',
 * until those stay where they were */
#define HISTORY_PASSES	3

/* Series s's arrays, for its cap values. */
static void
series_alloc(struct hist_series *s, size_t cap)
{
	size_t n = cap ? cap : 1;

	s->idx = pc_realloc(NULL, n * sizeof(*s->idx));
	s->x = pc_realloc(NULL, n * sizeof(*s->x));
	s->within = pc_realloc(NULL, n * sizeof(*s->within));
	s->raw = pc_realloc(NULL, n * sizeof(*s->raw));
	s->raw_within = pc_realloc(NULL, n * sizeof(*s->raw_within));
}

/* Record i's value v onto series s. */
static void
series_add(struct hist_series *s, size_t i, const struct hist_value *v,
	   int runs)
{
	s->idx[s->n] = i;
	s->raw[s->n] = v->mean;
	s->raw_within[s->n++] = v->var / runs;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
cmp_series(const void *a, const void *b)
{
	return strcmp(((const struct hist_series *)a)->name,
		      ((const struct hist_series *)b)->name);
}

/*
 * Every series of h: the program's, then each function's by name, each
 * sized to the records that have it, filled in one pass over the records
 * (a file of many names costs its size, not names times records).
 */
static void
series_make(struct hist_result *res)
{
	const struct history *h = res->h;
	size_t nnames = 0, k = 0;
	const char **names;

	for (size_t i = 0; i < h->n; i++)
		nnames += h->recs[i].nfuncs;
	names = pc_realloc(NULL, (nnames + 1) * sizeof(*names));
	for (size_t i = 0; i < h->n; i++)
		for (size_t f = 0; f < h->recs[i].nfuncs; f++)
			names[k++] = h->recs[i].funcs[f].name;
	if (nnames > 1)
		qsort(names, nnames, sizeof(*names), cmp_str);
	res->s = pc_realloc(NULL, (nnames + 2) * sizeof(*res->s));
	memset(res->s, 0, (nnames + 2) * sizeof(*res->s));
	res->s[res->ns++] = (struct hist_series){ .name = "cpu", .program = 1 };
	res->s[res->ns++] =
		(struct hist_series){ .name = "wall", .program = 1 };
	series_alloc(&res->s[0], h->n);
	series_alloc(&res->s[1], h->n);
	for (size_t i = 0, run = 1; i < nnames; i++, run++)
		if (i + 1 == nnames || strcmp(names[i], names[i + 1])) {
			res->s[res->ns].name = names[i];
			series_alloc(&res->s[res->ns++], run);
			run = 0;
		}
	free(names);
	for (size_t i = 0; i < h->n; i++) {
		const struct hist_record *r = &h->recs[i];

		series_add(&res->s[0], i, &r->cpu, r->runs);
		if (r->wall.mean >= 0)
			series_add(&res->s[1], i, &r->wall, r->runs);
		for (size_t f = 0; f < r->nfuncs; f++) {
			struct hist_series key = { .name = r->funcs[f].name },
					   *s;

			s = bsearch(&key, res->s + 2, res->ns - 2, sizeof(key),
				    cmp_series);
			series_add(s, i, &r->funcs[f], r->runs);
		}
	}
}

/*
 * lr[j] = log of s's j-th seconds over its level there: the median of its
 * seconds between the change points around j (of the last pass; none:
 * the whole series). tmp holds s->n values.
 */
static void
series_levels(const struct hist_series *s, double *lr, double *tmp)
{
	for (size_t k = 0, a = 0; k <= s->nch; k++) {
		size_t b = k < s->nch ? s->ch[k].at : s->n;
		double ref;

		if (b <= a)
			continue;
		memcpy(tmp, s->raw + a, (b - a) * sizeof(*tmp));
		ref = stats_median(tmp, b - a);
		for (size_t j = a; j < b; j++) {
			double r = ref > 0 ? s->raw[j] / ref : 0;

			lr[j] = r > 0 ? log(r) : NAN;
		}
		a = b;
	}
}

/*
 * Every series at one machine speed: each commit's seconds divided by its
 * speed, the median of its functions' log seconds over their levels (with
 * three functions or more; else 1), so that a commit measured on a faster
 * or busier machine moves no function, nor the program (whose seconds
 * then change only as far as some functions' do: a slowdown of every
 * function alike is the machine's, as pcprof diff takes it). diff's robust
 * mean (stats_robust_mean) weighs each function by its runs' standard
 * error, but a commit's runs vary with the machine's speed, which is the
 * point here. A function's level is its median between its change points
 * of the last pass: at the first, over all the commits, a function that
 * changed stands at one end of every commit's sort on one side of its
 * change, and the median of four functions then moved the three others
 * the other way there by some 0.4 of a commit's noise (stage_parse -1.1 %
 * at p 5e-4 where stage_transform was 3 % slower, tests/e2e/
 * test_history.py); at its own levels it stands anywhere in the sort.
 */
static void
series_speed(struct hist_result *res)
{
	const struct history *h = res->h;
	size_t *off = pc_realloc(NULL, (h->n + 1) * sizeof(*off)), *fill,
	       total = 0;
	double *speed = pc_realloc(NULL, (h->n + 1) * sizeof(*speed)), *lr,
	       *tmp, *one;

	/* each commit's functions' log ratios, in a slice of lr of its own */
	fill = pc_realloc(NULL, (h->n + 1) * sizeof(*fill));
	for (size_t c = 0; c < h->n; c++) {
		off[c] = total;
		fill[c] = 0;
		total += h->recs[c].nfuncs;
	}
	lr = pc_realloc(NULL, (total + 1) * sizeof(*lr));
	tmp = pc_realloc(NULL, (h->n + 1) * sizeof(*tmp));
	one = pc_realloc(NULL, (h->n + 1) * sizeof(*one));
	for (size_t i = 2; i < res->ns; i++) {
		const struct hist_series *s = &res->s[i];

		series_levels(s, one, tmp);
		for (size_t j = 0; j < s->n; j++)
			if (!isnan(one[j]))
				lr[off[s->idx[j]] + fill[s->idx[j]]++] = one[j];
	}
	for (size_t c = 0; c < h->n; c++) {
		speed[c] = fill[c] >= 3 ?
				   exp(stats_median(lr + off[c], fill[c])) :
				   1;
		res->speed[c] = speed[c];
		res->why[c] = -1;
	}
	for (size_t i = 0; i < res->ns; i++)
		for (size_t j = 0; j < res->s[i].n; j++) {
			double v = speed[res->s[i].idx[j]];

			res->s[i].x[j] = res->s[i].raw[j] / v;
			res->s[i].within[j] = res->s[i].raw_within[j] / (v * v);
		}
	free(off);
	free(fill);
	free(speed);
	free(lr);
	free(tmp);
	free(one);
}

/*
 * What series s's commits weigh in its change points (cp_find's within):
 * at one machine speed, each the least variance any commit's runs give
 * its mean. The runs' variances are mostly the machine's changes of speed
 * between them, which the commit's speed has taken out of its mean: one
 * of 3 runs is too rough to weigh by, and its weights made the t-test's
 * p-values too small (another stage named in 4.5 % of histories at alpha
 * 0.01, tests/check_history.c).
 */
static const double *
series_weighs(const struct hist_series *s, int absolute, double *tmp)
{
	double least = INFINITY;

	if (absolute)
		return s->within;
	for (size_t j = 0; j < s->n; j++)
		least = fmin(least, s->within[j]);
	for (size_t j = 0; j < s->n; j++)
		tmp[j] = least;
	return tmp;
}

/* The commits that record_disturbed needs besides the one judged: with
 * fewer, their spread is no measure */
#define HIST_DIST_OTHERS	4

/*
 * Whether record c's runs were disturbed, judged against the other
 * commits' as diff_disturbed.c judges a run against its side's: its
 * machine speed standing out slower (by DIST_SPEED_SHARE and DIST_MADS
 * robust standard deviations), or its wall seconds over its CPU seconds
 * (the run queue's, and its waits') standing out above theirs by
 * diff_runq_floor's floor. A record carries no run-queue seconds of its
 * own, so a wait that grew at c reads the same. Judged once a pass.
 */
static int
record_disturbed(struct hist_result *res, size_t c)
{
	const struct history *h = res->h;
	const struct hist_record *r = &h->recs[c];
	double *v = pc_realloc(NULL, (h->n + 1) * sizeof(*v)), *wall, ref;
	size_t m = 0;

	if (res->why[c] >= 0)
		goto out;
	res->why[c] = HIST_CALM;
	wall = pc_realloc(NULL, (h->n + 1) * sizeof(*wall));
	for (size_t i = 0; i < h->n; i++)
		if (i != c)
			v[m++] = log(res->speed[i]);
	if (m >= HIST_DIST_OTHERS &&
	    diff_outlier_above(log(res->speed[c]), v, (int)m,
			       log1p(DIST_SPEED_SHARE), &ref))
		res->why[c] = HIST_SLOWER;
	m = 0;
	for (size_t i = 0; i < h->n; i++)
		if (i != c && h->recs[i].wall.mean >= 0) {
			wall[m] = h->recs[i].wall.mean;
			v[m++] = h->recs[i].wall.mean - h->recs[i].cpu.mean;
		}
	if (res->why[c] == HIST_CALM && r->wall.mean >= 0 &&
	    m >= HIST_DIST_OTHERS &&
	    diff_outlier_above(r->wall.mean - r->cpu.mean, v, (int)m,
			       diff_runq_floor(v, (int)m,
					       stats_median(wall, m)),
			       &ref))
		res->why[c] = HIST_RUNQUEUE;
	free(wall);
out:
	free(v);
	return res->why[c];
}

/*
 * Series s's change at its last commit held back (s->held) where that
 * commit's runs were disturbed: the level after it is that commit's runs
 * alone, and a machine that slowed them moves a function's seconds at one
 * speed as much as a change of the code would (its functions are not
 * slowed alike). The next commit recorded confirms it or not. ch[0..nch)
 * are s's; the count left.
 */
static size_t
series_hold_last(struct hist_result *res, struct hist_series *s,
		 struct change *ch, size_t nch)
{
	s->nheld = 0;
	if (nch && ch[nch - 1].at + 1 == s->n &&
	    record_disturbed(res, s->idx[s->n - 1]) != HIST_CALM) {
		s->held = ch[--nch];
		s->nheld = 1;
	}
	return nch;
}

/*
 * The change points of every series, at alpha over all of them
 * (Bonferroni: each series at alpha over their number), in place of the
 * last pass's; 1 where some series' are not where they were.
 */
static int
series_changes(struct hist_result *res, int absolute, enum cp_method m)
{
	size_t tested = 0;
	int moved = 0;

	double *tmp = pc_realloc(NULL, (res->h->n + 1) * sizeof(*tmp));

	for (size_t i = 0; i < res->ns; i++)
		tested += res->s[i].n >= 3;
	res->nchanges = res->nheld = 0;
	for (size_t i = 0; i < res->ns; i++) {
		struct hist_series *s = &res->s[i];
		struct change *ch;
		size_t nch;

		if (s->n < 3)
			continue;
		ch = pc_realloc(NULL, s->n * sizeof(*ch));
		nch = cp_find(m, s->x, series_weighs(s, absolute, tmp), s->n,
			      res->alpha / (double)tested, res->threshold, ch,
			      s->n);
		nch = series_hold_last(res, s, ch, nch);
		res->nheld += (size_t)s->nheld;
		moved |= nch != s->nch;
		for (size_t k = 0; k < nch && k < s->nch; k++)
			moved |= ch[k].at != s->ch[k].at;
		free(s->ch);
		s->ch = ch;
		s->nch = nch;
		res->nchanges += nch;
	}
	free(tmp);
	return moved;
}

void
history_analyse(struct hist_result *res, int absolute, enum cp_method m)
{
	series_make(res);
	res->speed = pc_realloc(NULL, (res->h->n + 1) * sizeof(*res->speed));
	res->why = pc_realloc(NULL, res->h->n + 1);
	/* absolute: the speeds judge the commits' runs, and move nothing */
	series_speed(res);
	if (absolute) {
		for (size_t i = 0; i < res->ns; i++) {
			struct hist_series *s = &res->s[i];

			memcpy(s->x, s->raw, s->n * sizeof(*s->x));
			memcpy(s->within, s->raw_within,
			       s->n * sizeof(*s->within));
		}
		series_changes(res, 1, m);
		return;
	}
	for (int pass = 0; pass < HISTORY_PASSES; pass++) {
		if (pass)
			series_speed(res);
		if (!series_changes(res, 0, m))
			break;
	}
}

void
history_result_release(struct hist_result *res)
{
	for (size_t i = 0; i < res->ns; i++) {
		free(res->s[i].idx);
		free(res->s[i].x);
		free(res->s[i].within);
		free(res->s[i].raw);
		free(res->s[i].raw_within);
		free(res->s[i].ch);
	}
	free(res->s);
	free(res->speed);
	free(res->why);
}
