/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof compare's sequential verdict (sequential.h): the alpha each look
 * spends, the equivalence test (TOST) of every watched function and of
 * the whole program, and the verdict of a look. Called by diff.c; calls
 * stats.c.
 */
#include <math.h>
#include <string.h>

#include "model/sequential.h"
#include "model/stats.h"
#include "symbols/waits.h"

double
seq_spent(double alpha, double t)
{
	t = t < 0 ? 0 : t > 1 ? 1 : t;
	return alpha * log1p((M_E - 1) * t);
}

int
seq_next_look(int n, int nmin, int nmax)
{
	int step = n / SEQ_LOOK_GROWTH;

	if (n < nmin)
		return nmin < nmax ? nmin : nmax;
	return n + (step > 1 ? step : 1) < nmax ? n + (step > 1 ? step : 1) :
						  nmax;
}

double
seq_look_alpha(double alpha, int n, int nmin, int nmax)
{
	int prev = 0;

	if (nmax <= nmin || n >= nmax)
		n = nmax;
	if (nmax <= nmin)
		return alpha;
	/* the look before n's in the schedule (none before the first) */
	for (int k = nmin; k < n; k = seq_next_look(k, nmin, nmax))
		prev = k;
	if (n <= nmin)
		return seq_spent(alpha, (double)nmin / nmax);
	return seq_spent(alpha, (double)n / nmax) -
	       seq_spent(alpha, (double)prev / nmax);
}

/* the grid of the boundary's integration: odd, for Simpson's rule */
#define GS_POINTS	601
/* the most looks of a schedule (every run a side from 1 to 1000) */
#define GS_LOOKS	1001

/* P(Z > z), Z standard normal */
static double
normal_upper(double z)
{
	return 0.5 * erfc(z / M_SQRT2);
}

/* The schedule of seq_look_level, kept for one (alpha, nmin, nmax). */
static struct {
	double alpha;
	int nmin, nmax, nlooks;
	int n[GS_LOOKS];
	double level[GS_LOOKS];
} gs;

/* S's density at the look before (f on the grid u, Simpson's weights w) */
static double gs_u[GS_POINTS], gs_f[GS_POINTS], gs_w[GS_POINTS];

/* The z boundary of a look at t, the look before at tprev, crossed at it
 * and at no look before with chance half: that chance falls as it rises. */
static double
gs_boundary(double t, double tprev, double half)
{
	double sd = sqrt(t - tprev), clo = -10, chi = 40;

	for (int it = 0; it < 100 && chi - clo > 1e-10; it++) {
		double c = (clo + chi) / 2, cross = 0;

		for (int i = 0; i < GS_POINTS; i++)
			cross += gs_w[i] * gs_f[i] *
				 normal_upper((c * sqrt(t) - gs_u[i]) / sd);
		if (cross > half)
			clo = c;
		else
			chi = c;
	}
	return (clo + chi) / 2;
}

/* S's density at the look at t (the first if tprev < 0) below b, on a
 * new grid from -8 sqrt(t) (below it, a chance of 1e-15, left out). */
static void
gs_density(double t, double tprev, double b)
{
	double lo = fmin(-8 * sqrt(t), b - 1), h = (b - lo) / (GS_POINTS - 1);
	double v[GS_POINTS], sd = sqrt(t - fmax(tprev, 0));

	for (int j = 0; j < GS_POINTS; j++) {
		double s = lo + j * h, sum = 0;

		if (tprev < 0) {
			v[j] = exp(-s * s / (2 * t)) / sqrt(2 * M_PI * t);
			continue;
		}
		for (int i = 0; i < GS_POINTS; i++) {
			double z = (s - gs_u[i]) / sd;

			sum += gs_w[i] * gs_f[i] * exp(-z * z / 2);
		}
		v[j] = sum / (sd * sqrt(2 * M_PI));
	}
	for (int j = 0; j < GS_POINTS; j++) {
		gs_u[j] = lo + j * h;
		gs_f[j] = v[j];
		gs_w[j] = h / 3 * (j == 0 || j == GS_POINTS - 1 ? 1 :
				   j % 2			 ? 4 :
							   2);
	}
}

/*
 * The one-sided boundary of each look, of the sum S(t) of a standard
 * Brownian motion at t = n / nmax (Z = S / sqrt(t) the look's z): each
 * crossed first at its look with the chance the look spends of
 * alpha / 2; the level kept is its two-sided one.
 */
static void
gs_schedule(double alpha, int nmin, int nmax)
{
	double tprev = -1;

	gs.alpha = alpha;
	gs.nmin = nmin;
	gs.nmax = nmax;
	gs.nlooks = 0;
	for (int n = nmin; gs.nlooks < GS_LOOKS;
	     n = seq_next_look(n, nmin, nmax)) {
		double t = (double)n / nmax, c;
		double half = seq_look_alpha(alpha, n, nmin, nmax) / 2;

		c = tprev < 0 ? seq_t_upper(half, INFINITY) :
				gs_boundary(t, tprev, half);
		gs.n[gs.nlooks] = n;
		gs.level[gs.nlooks++] = fmin(alpha, 2 * normal_upper(c));
		if (n >= nmax)
			break;
		gs_density(t, tprev, c * sqrt(t));
		tprev = t;
	}
}

double
seq_look_level(double alpha, int n, int nmin, int nmax)
{
	int k = 0;

	if (nmax <= nmin)
		return alpha;
	if (gs.alpha != alpha || gs.nmin != nmin || gs.nmax != nmax ||
	    !gs.nlooks)
		gs_schedule(alpha, nmin, nmax);
	/* the look at n, or the last at or before it (the first before it) */
	while (k + 1 < gs.nlooks && gs.n[k + 1] <= n)
		k++;
	return gs.level[k];
}

double
seq_t_upper(double q, double df)
{
	double lo = 0, hi = 1;

	/* the one-sided tail of t is half the two-sided p, falling in t */
	while (stats_t_two_sided(hi, df) / 2 > q && hi < 1e12)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = (lo + hi) / 2;

		if (stats_t_two_sided(mid, df) / 2 > q)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

double
seq_ruled_out(double d, double se, double df, double a)
{
	if (!(se > 0))
		return fabs(d);
	return fabs(d) + seq_t_upper(a, df) * se;
}

/* Row w's bound at level a; whether it rules out margin. */
static int
settled(struct row *w, double margin, double a)
{
	w->bound = seq_ruled_out(w->mn - w->mb, w->se, w->df, a);
	return w->bound < margin;
}

/*
 * The whole program's change at one machine speed, as the gate sees it:
 * the sum of every row's change (a row on one side only counted whole),
 * its variance the sum of the tested rows' (the rows' seconds of a run
 * sum to the run's, so this errs high). Its CPU seconds as measured
 * would hold the machine's speed, which the gate allows for. In
 * res->prog's t, se and df (the fewest of the rows'), the change
 * returned; --metric program and total have no such sum (the program is
 * the one row; callers' totals overlap), and leave it untested.
 */
static double
program_sum(struct result *res, const struct diff_opts *o)
{
	struct row *p = &res->prog;
	double d = 0, v = 0, df = INFINITY;

	p->tested = 0;
	if (o->metric != METRIC_SELF && o->metric != METRIC_WALL)
		return 0;
	for (const struct row *w = res->rows; w < res->rows + res->nrows; w++) {
		/* the elapsed time is no part of the program's seconds, and
		 * the run queue's is the machine's */
		if (!strcmp(w->name, ELAPSED_ROW) || diff_row_is_load(w->name))
			continue;
		d += w->mn - w->mb;
		if (!w->tested)
			continue;
		v += w->se * w->se;
		df = fmin(df, w->df);
	}
	p->se = sqrt(v);
	p->df = df;
	p->t = p->se > 0 ? d / p->se : 0;
	p->bound = fabs(d);
	p->tested = 1;
	return d;
}

enum seq_verdict
seq_judge(struct result *res, const struct diff_opts *o, double a)
{
	int all = 1;
	double dprog;

	res->seq.ruled_out = 0;
	dprog = program_sum(res, o);
	for (struct row *w = res->rows; w < res->rows + res->nrows; w++) {
		if (!w->tested || !w->family || w->mb <= 0)
			continue;
		/* a change smaller than either limit never fails */
		if (!settled(w, fmax(o->threshold * w->mb, o->min_seconds),
			     a) &&
		    w->status != ST_FASTER) {
			all = 0;
			res->seq.ruled_out =
				fmax(res->seq.ruled_out, w->bound / w->mb);
		}
	}
	if (res->prog.tested && res->prog.mb > 0) {
		struct row *p = &res->prog;
		double half = p->se > 0 ? seq_t_upper(a, p->df) * p->se : 0;

		/* settled() reads the change from the means: here it is the
		 * sum; a program significantly faster is decided, as a
		 * function is */
		p->bound = seq_ruled_out(dprog, p->se, p->df, a);
		if (!(p->bound < o->threshold * p->mb) &&
		    !(dprog + half < 0 &&
		      dprog + half < o->threshold * p->mb)) {
			all = 0;
			res->seq.ruled_out =
				fmax(res->seq.ruled_out, p->bound / p->mb);
		}
	}
	res->seq.verdict = res->nslow          ? SEQ_REGRESSED :
			   all && !res->misfit ? SEQ_UNCHANGED :
						 SEQ_UNDECIDED;
	return res->seq.verdict;
}

int
seq_follows(const char *name)
{
	return !strcmp(name, ELAPSED_ROW) || wait_name_on_others(name);
}

int
seq_whole_only(const struct result *res)
{
	if (res->seq.verdict != SEQ_REGRESSED)
		return 0;
	for (const struct row *w = res->rows; w < res->rows + res->nrows; w++)
		if (w->status == ST_SLOWER && !seq_follows(w->name))
			return 0;
	return 1;
}

void
seq_keep_whole(struct result *res, int whole)
{
	res->seq.whole = whole;
	if (whole)
		res->seq.verdict = SEQ_REGRESSED;
}

const char *
seq_verdict_name(enum seq_verdict v)
{
	static const char *const names[] = { "undecided", "regressed", "unchanged" };

	return names[v];
}

int
diff_exit_status(const struct result *res, const struct diff_opts *o)
{
	if (res->nslow || res->seq.whole)
		return EXIT_REGRESSION;
	if (((o->seq_max > 0 && res->seq.verdict == SEQ_UNDECIDED) ||
	     res->misfit) &&
	    o->undecided_fail)
		return EXIT_REGRESSION;
	return 0;
}
