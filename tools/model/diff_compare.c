/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof diff: the comparison of two loaded sides. Allows for the machine's
 * speed, tests every function matched by name (or the whole program) against
 * the variance model, corrects for their number (Holm) and sorts the rows
 * for printing. Called by diff.c; calls diff_model.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "model/stats.h"
#include "model/diff.h"
#include "symbols/waits.h"

/*
 * The test of one function. Its prior variance on each side comes from the
 * model at that side's mean; its own dispersion, the ratio of its runs'
 * variance to the prior, is pooled over both sides (the same function,
 * measured the same way) and moderated by the prior's d0 degrees of
 * freedom; the variance of the difference is the prior's times it. A
 * wait's prior (mo->floor_only, d0 0) is its floor: its own dispersion,
 * never below 1, on its own runs' degrees of freedom.
 */
static void
test_row(struct row *w, const struct model *mo, const struct side *b,
	 const struct side *n, double d0)
{
	double pb = diff_model_var(mo, w->mb, diff_amin(b, w->name));
	double pn = diff_model_var(mo, w->mn, diff_amin(n, w->name));
	double db = b->nruns - 1, dn = n->nruns - 1, d = db + dn;
	double psi = 1, se2;

	w->df = INFINITY;
	if (d > 0 && !isinf(d0)) {
		double own = (db * w->vb / pb + dn * w->vn / pn) / d;

		psi = mo->floor_only ? fmax(own, 1) :
				       (d * own + d0) / (d + d0);
		w->df = d + d0;
	}
	se2 = psi * (pb / b->nruns + pn / n->nruns);
	w->se = sqrt(se2);
	w->t = se2 > 0 ? (w->mn - w->mb) / sqrt(se2) :
			 (w->mn == w->mb ? 0 : INFINITY);
	w->p = stats_t_two_sided(w->t, w->df);
	w->tested = 1;
}

/*
 * The whole program's seconds have no sampling noise to speak of (they are
 * the CPU time), so only the runs' own variance counts: Welch's test, a
 * side with one run borrowing the other side's relative variance. 0, or
 * -1 after one line where neither side has two runs.
 */
static int
test_program(struct row *w, const struct model *mo, const struct side *b,
	     const struct side *n)
{
	double cvb = w->mb > 0 ? w->vb / (w->mb * w->mb) : 0;
	double cvn = w->mn > 0 ? w->vn / (w->mn * w->mn) : 0;
	double dfb = b->nruns > 1 ? b->nruns - 1 : n->nruns - 1;
	double dfn = n->nruns > 1 ? n->nruns - 1 : b->nruns - 1;
	double vb, vn, se2;

	if (b->nruns < 2 && n->nruns < 2)
		return pc_error("--metric program needs two runs or more on a side: the whole program's time varies only from run to run");
	if (b->nruns < 2)
		w->vb = cvn * w->mb * w->mb;
	if (n->nruns < 2)
		w->vn = cvb * w->mn * w->mn;
	/* floors: the functions' relative run-to-run noise, and a sample */
	vb = fmax(w->vb, mo->fit[FIT_K].k * w->mb * w->mb +
		  1.0 / ((double)b->rate * b->rate)) / b->nruns;
	vn = fmax(w->vn, mo->fit[FIT_K].k * w->mn * w->mn +
		  1.0 / ((double)n->rate * n->rate)) / n->nruns;
	se2 = vb + vn;
	w->se = sqrt(se2);
	w->df = se2 * se2 / (vb * vb / dfb + vn * vn / dfn);
	w->t = (w->mn - w->mb) / sqrt(se2);
	w->p = stats_t_two_sided(w->t, w->df);
	w->tested = 1;
	return 0;
}

/*
 * --metric wall: the whole process's elapsed time a run, a row of its own
 * where both sides' runs were timed (pcprof compare's): one independent
 * sample a run, so Welch's test of the runs' means, each side's variance
 * at least that of a millisecond's clock jitter.
 */
static void
test_elapsed(struct row *w, const struct side *b, const struct side *n)
{
	double vb, vn, se2;

	memset(w, 0, sizeof(*w));
	w->name = ELAPSED_ROW;
	diff_mean_var(b->elapsed, b->nruns, 1, &w->mb, &w->vb);
	diff_mean_var(n->elapsed, n->nruns, 1, &w->mn, &w->vn);
	vb = fmax(w->vb, 1e-6) / b->nruns;
	vn = fmax(w->vn, 1e-6) / n->nruns;
	se2 = vb + vn;
	w->se = sqrt(se2);
	w->df = b->nruns > 1 && n->nruns > 1 ?
			se2 * se2 /
				(vb * vb / (b->nruns - 1) +
				 vn * vn / (n->nruns - 1)) :
			INFINITY;
	w->t = (w->mn - w->mb) / w->se;
	w->p = stats_t_two_sided(w->t, w->df);
	w->tested = 1;
}

static int
cmp_p(const void *x, const void *y)
{
	const struct row *a = *(struct row *const *)x,
			 *b = *(struct row *const *)y;

	if (a->p != b->p)
		return a->p < b->p ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Holm's step-down adjustment over the rows in the family. */
void
diff_holm(struct row *rows, size_t n)
{
	struct row **v = pc_malloc((n ? n : 1) * sizeof(*v));
	size_t m = 0;
	double run = 0;

	for (size_t i = 0; i < n; i++)
		if (rows[i].family)
			v[m++] = &rows[i];
	qsort(v, m, sizeof(*v), cmp_p);
	for (size_t j = 0; j < m; j++) {
		double adj = fmin(1, (double)(m - j) * v[j]->p);

		run = fmax(run, adj);
		v[j]->padj = run;
	}
	free(v);
}

int
diff_row_rank(const struct row *w)
{
	switch (w->status) {
	case ST_SLOWER:
		return 0;
	case ST_FASTER:
		return 1;
	case ST_SAME:
		return 2;
	case ST_APPEARED:
	case ST_GONE:
		return 3;
	default:
		return 4;
	}
}

double
diff_row_size(const struct row *w)
{
	if (w->status == ST_APPEARED)
		return w->mn;
	if (w->status == ST_GONE)
		return w->mb;
	return fabs(w->mn - w->mb);
}

/*
 * Significant regressions first, then improvements, then the rest, each
 * the largest change first: in seconds, or for total time as a ratio (a
 * caller's total grows by at least its callee's seconds, but by a smaller
 * part of itself, so the function where the time went comes first). arg
 * points to an int, set for the ratio.
 */
static int
cmp_rows(const void *x, const void *y, void *arg)
{
	const struct row *a = x, *b = y;
	int by_relative = *(const int *)arg;
	double sa = diff_row_size(a), sb = diff_row_size(b);

	if (diff_row_rank(a) != diff_row_rank(b))
		return diff_row_rank(a) < diff_row_rank(b) ? -1 : 1;
	if (by_relative && a->tested && b->tested) {
		sa /= a->mb;
		sb /= b->mb;
	}
	if (sa != sb)
		return sa > sb ? -1 : 1;
	return strcmp(a->name, b->name);
}

struct name_ix {
	const char *name;
	uint32_t ix;
};

static int
cmp_name_ix(const void *x, const void *y)
{
	return strcmp(((const struct name_ix *)x)->name,
		      ((const struct name_ix *)y)->name);
}

/* Functions with time in the metric on either side, matched by name. */
static struct row *
match(const struct side *b, const struct side *n, enum metric metric,
      size_t *nrows)
{
	size_t nb = b->in.st.nfuncs, nn = n->in.st.nfuncs, k = 0;
	struct name_ix *ib = pc_malloc((nb ? nb : 1) * sizeof(*ib));
	struct name_ix *in = pc_malloc((nn ? nn : 1) * sizeof(*in));
	struct row *rows = pc_calloc(nb + nn + 1, sizeof(*rows));
	size_t i = 0, j = 0;

	for (size_t f = 0; f < nb; f++)
		ib[f] = (struct name_ix){ b->in.st.funcs[f], (uint32_t)f };
	for (size_t f = 0; f < nn; f++)
		in[f] = (struct name_ix){ n->in.st.funcs[f], (uint32_t)f };
	qsort(ib, nb, sizeof(*ib), cmp_name_ix);
	qsort(in, nn, sizeof(*in), cmp_name_ix);
	while (i < nb || j < nn) {
		int c = i == nb ? 1 :
			j == nn ? -1 :
				  strcmp(ib[i].name, in[j].name);
		const double *vb = metric == METRIC_TOTAL ? b->total : b->self;
		const double *vn = metric == METRIC_TOTAL ? n->total : n->self;
		struct row *w = &rows[k];

		memset(w, 0, sizeof(*w));
		w->name = c <= 0 ? ib[i].name : in[j].name;
		if (c <= 0)
			diff_mean_var(vb + ib[i].ix, b->nruns, nb, &w->mb,
				      &w->vb);
		if (c >= 0)
			diff_mean_var(vn + in[j].ix, n->nruns, nn, &w->mn,
				      &w->vn);
		i += c <= 0;
		j += c >= 0;
		if (w->mb > 0 || w->mn > 0)
			k++;
	}
	free(ib);
	free(in);
	*nrows = k;
	return rows;
}

/*
 * Scale each run's function seconds by the side's mean program seconds
 * over the run's: the runs of one build do the same work, so a run that
 * took longer as a whole ran on a slower machine (a busy neighbour, a
 * lower clock), and the variation between runs that is left is the
 * functions' own. The program's own seconds are kept as measured.
 */
static void
side_normalize(struct side *s)
{
	size_t nf = s->in.st.nfuncs ? s->in.st.nfuncs : 1;
	double mean = 0;

	/* the CPU's seconds: a wall profile's waits are not the machine's */
	for (int r = 0; r < s->nruns; r++)
		mean += (s->program[r] - (s->waited ? s->waited[r] : 0)) /
			s->nruns;
	for (int r = 0; r < s->nruns; r++) {
		double f =
			mean / (s->program[r] - (s->waited ? s->waited[r] : 0));

		for (size_t i = 0; i < s->in.st.nfuncs; i++) {
			/* a wait's time is not the machine's speed */
			if (wait_name_is(s->in.st.funcs[i]))
				continue;
			s->self[(size_t)r * nf + i] *= f;
			if (s->total)
				s->total[(size_t)r * nf + i] *= f;
		}
	}
}

/* Whether a function can weigh in the machine's speed: 20 samples a run
 * or more on both sides, and CPU time. */
static int
speed_row(const struct row *w, const struct side *b, const struct side *n)
{
	return w->mb * b->rate >= 20 && w->mn * n->rate >= 20 &&
	       !wait_name_is(w->name);
}

/*
 * The functions speed_ratio would weigh. Where they are too few to judge
 * the sides' speeds, no run is scaled to its side's mean speed either:
 * that takes the runs' speeds out of each function's spread but not out
 * of the difference of the sides' means, so that a function holding
 * most of the CPU time read the sides' speeds as its own change, its
 * spread all but gone (the wall gate, a program with one busy function:
 * worker +16.5 %, t 11, in a comparison of one build with itself at
 * load 12; runs in turns differ by their speeds too). As measured, each
 * run's speed is in each function's spread, and in the test.
 */
static size_t
speed_rows(const struct side *b, const struct side *n)
{
	size_t nrows, k = 0;
	struct row *rows = match(b, n, METRIC_SELF, &nrows);

	for (size_t i = 0; i < nrows; i++)
		k += (size_t)speed_row(&rows[i], b, n);
	free(rows);
	return k;
}

/*
 * How much slower the new runs' machine was than the base runs': a robust
 * mean of the log ratios of new to base seconds over the functions with
 * 20 samples a run or more on both sides, each weighted by its precision
 * (its samples, or its runs' spread where that is larger), the functions
 * that did change rejected by the biweight (stats.c). Most functions of a
 * change do not change, so what the rest agree on is the machine; no one
 * function is the reference, so none shows a change of exactly 0. With
 * fewer than least such functions (three; five for a wall profile) there
 * is no telling, and 1 is returned.
 * The new side is then scaled to the base's speed; *nused says how many
 * functions were weighed.
 */
static double
speed_ratio(struct side *b, struct side *n, size_t least, int *judged,
	    size_t *nused)
{
	size_t nrows, k = 0, nf = n->in.st.nfuncs ? n->in.st.nfuncs : 1;
	struct row *rows = match(b, n, METRIC_SELF, &nrows);
	double *lr = pc_malloc((nrows ? nrows : 1) * sizeof(*lr));
	double *se = pc_malloc((nrows ? nrows : 1) * sizeof(*se));
	double rho = 1, mu;

	for (size_t i = 0; i < nrows; i++) {
		const struct row *w = &rows[i];
		double sb, sn;

		/* the machine's speed is the CPU's: a wait's time is not */
		if (!speed_row(w, b, n))
			continue;
		/* the relative variance of a side's mean: its samples', or
		 * its runs' own */
		sb = fmax(1 / (w->mb * b->rate), w->vb / (w->mb * w->mb)) /
		     b->nruns;
		sn = fmax(1 / (w->mn * n->rate), w->vn / (w->mn * w->mn)) /
		     n->nruns;
		lr[k] = log(w->mn / w->mb);
		se[k++] = sqrt(sb + sn);
	}
	*judged = k >= least;
	*nused = k;
	if (*judged && stats_robust_mean(lr, se, k, &mu))
		pc_oom();
	if (*judged) {
		rho = exp(mu);
		for (size_t i = 0; i < (size_t)n->nruns * nf; i++) {
			if (wait_name_is(n->in.st.funcs[i % nf]))
				continue;
			n->self[i] /= rho;
			if (n->total)
				n->total[i] /= rho;
		}
	}
	free(lr);
	free(se);
	free(rows);
	return rho;
}

/* Test every function that both sides ran; each enters Holm's family if
 * it could show a change of min_seconds (chosen on the two sides' sum,
 * which says nearly nothing of their difference under no change). */
static void
test_functions(struct result *res, struct side *b, struct side *n,
	       const struct diff_opts *o)
{
	res->rows = match(b, n, o->metric, &res->nrows);
	for (struct row *w = res->rows; w < res->rows + res->nrows; w++) {
		if (w->mb <= 0 || w->mn <= 0) {
			w->status = w->mb > 0 ? ST_GONE : ST_APPEARED;
			continue;
		}
		const struct model *mo =
			o->metric == METRIC_WALL && wait_name_is(w->name) ?
				&res->wait_model :
				&res->model;

		test_row(w, mo, b, n, mo->d0);
		/* the run queue's time is the machine's load, not the build's:
		 * the docs' "shown but never fails the gate" (a row of it
		 * from work_stage came out +24 % between two runs of one
		 * build, and its open bound kept identical builds undecided) */
		w->family = w->mb + w->mn >= o->min_seconds &&
			    !(o->metric == METRIC_WALL &&
			      diff_row_is_load(w->name));
		res->family += (size_t)w->family;
	}
	/* match() leaves one row free */
	if (o->metric == METRIC_WALL && b->elapsed && n->elapsed &&
	    b->nruns + n->nruns > 2) {
		test_elapsed(&res->rows[res->nrows], b, n);
		res->rows[res->nrows++].family = 1;
		res->family++;
	}
}

/* The verdict of each tested row, after Holm's correction. */
static void
judge(struct result *res, const struct diff_opts *o)
{
	diff_holm(res->rows, res->nrows);
	for (struct row *w = res->rows; w < res->rows + res->nrows; w++) {
		double d = w->mn - w->mb;

		if (!w->tested)
			continue;
		if (!w->family) {
			w->status = ST_SMALL;
			continue;
		}
		w->status = ST_SAME;
		if (w->padj <= o->alpha && fabs(d) >= o->min_seconds &&
		    fabs(d) >= o->threshold * w->mb)
			w->status = d > 0 ? ST_SLOWER : ST_FASTER;
		res->nslow += w->status == ST_SLOWER;
		res->nfast += w->status == ST_FASTER;
	}
}

double
diff_speed_fit(const struct row *rows, size_t n, double least_b, double least_n,
	       size_t *used)
{
	double *p = pc_realloc(NULL, (n ? n : 1) * sizeof(*p)), fit;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct row *w = &rows[i];

		if (w->tested && w->status != ST_SLOWER &&
		    !wait_name_is(w->name) && strcmp(w->name, ELAPSED_ROW) &&
		    w->mb >= least_b && w->mn >= least_n)
			p[k++] = w->p;
	}
	fit = stats_fisher(p, k);
	free(p);
	*used = k;
	return fit;
}

/*
 * A function blamed only where one machine speed fits the rest: under
 * load, functions slow by different amounts (their caches, their
 * memory), the speed allowance is then no one's, and the gate blamed a
 * function perf found unchanged, with two others "significantly
 * faster". Where the functions the speed was judged on, but the ones
 * found slower, move beyond their noise (Fisher's test at alpha), the
 * verdict is undecided, and why is said.
 */
static int
cmp_row_name(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->name,
		      ((const struct row *)b)->name);
}

/*
 * The rows the fit may weigh: with --metric total, those whose time is
 * their own (self 90 % of total or more, both sides), as the speed was
 * judged on self time: a caller's total holds the slower function's
 * time, and worker's and main's +8 % of a 20 % slower leaf made the
 * speed "not fit" and the verdict undecided (CI, 1 make check in 10).
 */
static struct row *
fit_rows(const struct result *res, const struct side *b, const struct side *n,
	 const struct diff_opts *o, size_t *k)
{
	size_t ns;
	struct row *own, *v;

	*k = res->nrows;
	if (o->metric != METRIC_TOTAL)
		return res->rows;
	own = match(b, n, METRIC_SELF, &ns);
	v = pc_malloc((res->nrows ? res->nrows : 1) * sizeof(*v));
	*k = 0;
	for (size_t i = 0; i < res->nrows; i++) {
		const struct row *w = &res->rows[i];
		const struct row *s =
			bsearch(w, own, ns, sizeof(*own), cmp_row_name);

		if (s && s->mb >= 0.9 * w->mb && s->mn >= 0.9 * w->mn)
			v[(*k)++] = *w;
	}
	free(own);
	return v;
}

static void
speed_fit(struct result *res, const struct side *b, const struct side *n,
	  const struct diff_opts *o)
{
	struct row *rows;
	size_t k;

	res->fit_p = 1;
	if (!res->speed_judged || !res->nslow)
		return;
	rows = fit_rows(res, b, n, o, &k);
	res->fit_p = diff_speed_fit(rows, k, 20.0 / b->rate, 20.0 / n->rate,
				    &res->fit_functions);
	if (rows != res->rows)
		free(rows);
	if (res->fit_functions < 2 || !(res->fit_p < o->alpha))
		return;
	res->misfit = 1;
	res->nblamed = res->nslow;
	res->nfaster = res->nfast;
	for (struct row *w = res->rows; w < res->rows + res->nrows; w++) {
		if (w->status == ST_SLOWER &&
		    (!res->blamed.name ||
		     diff_row_size(w) > diff_row_size(&res->blamed)))
			res->blamed = *w;
		if (w->status == ST_SLOWER || w->status == ST_FASTER)
			w->status = ST_SAME;
	}
	res->nslow = res->nfast = 0;
}

/* The comparison of b and n, both loaded, into res. */
int
diff_compare(struct result *res, struct side *b, struct side *n,
	     const struct diff_opts *o)
{
	int by_relative;	/* sort changes by ratio, not by seconds */
	size_t least;

	memset(res, 0, sizeof(*res));
	res->speed = 1;
	/* a wall profile's CPU functions include the system calls'
	 * wrappers, whose CPU grows with the waits (clock_nanosleep's +69 %
	 * and __read's +51 % when a sleep doubled): with three functions,
	 * two such outvoted the one that did the work, and the doubled sleep
	 * read as a machine 64 % slower */
	least = o->metric == METRIC_WALL ? 5 : 3;
	if (!o->absolute && o->metric != METRIC_PROGRAM &&
	    (res->speed_functions = speed_rows(b, n)) >= least) {
		side_normalize(b);
		side_normalize(n);
		res->speed = speed_ratio(b, n, least, &res->speed_judged,
					 &res->speed_functions);
	}
	diff_model_build(&res->model, b, n, 0);
	if (o->metric == METRIC_WALL)
		diff_model_build(&res->wait_model, b, n, 1);
	diff_mean_var(b->program, b->nruns, 1, &res->prog.mb, &res->prog.vb);
	diff_mean_var(n->program, n->nruns, 1, &res->prog.mn, &res->prog.vn);
	res->prog.name = "[program]";
	if (o->metric == METRIC_PROGRAM) {
		res->rows = pc_malloc(sizeof(*res->rows));
		res->rows[0] = res->prog;
		res->nrows = 1;
		if (test_program(&res->rows[0], &res->model, b, n))
			return -1;
		res->rows[0].family = 1;
		res->family = 1;
	} else {
		test_functions(res, b, n, o);
	}
	judge(res, o);
	speed_fit(res, b, n, o);
	by_relative = o->metric == METRIC_TOTAL;
	qsort_r(res->rows, res->nrows, sizeof(*res->rows), cmp_rows,
		&by_relative);
	return 0;
}
