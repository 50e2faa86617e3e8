/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof diff: the variance model of a function's seconds a run, fitted to
 * every function of both sides at once (struct model in diff.h). Called by
 * diff_compare.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "model/diff.h"
#include "symbols/waits.h"

/*
 * The prior weighs as much as PRIOR_DF degrees of freedom of a function's
 * own runs (d0). Functions differ in dispersion (a timer that falls in step
 * with a loop, a function the neighbours' caches hurt) in ways a handful of
 * runs cannot show; on real profiles, trusting the fit further let false
 * alarms pass the nominal rate with the tick-limited timer (docs/ci.md).
 */
#define PRIOR_DF	4.0
/*
 * The CPU functions' model is fitted to those with MODEL_SAMPLES samples a
 * run or more (all of them where fewer than six such are observed): in a
 * whole-process run (PC_SCOPE=all) most functions with time are a few
 * samples of ld.so, libc and libpc, whose dispersion set the fit at 3.0e-4
 * s an observation, three times a sample's, and the prior of a function of
 * 546 samples a run at 13 times its own variance (its runs vary by 2.0 %,
 * its Poisson count by 4.4 %). Fitted to the functions of 20 samples or
 * more, a 2 % slowdown of a tenth of the work was caught in 49 % of
 * comparisons at 20 runs a side, not 11 %; 3 %: 61 %, not 39 %; at 10
 * runs 5 %: 54 %, not 18 %; identical builds failed in 0 of 400 at 4, 10
 * and 20 runs a side (bench/threshold_power.py, docs/benchmarks.md). A
 * small function's own runs still weigh against its prior (test_row).
 */
#define MODEL_SAMPLES	20.0

/* Mean and unbiased variance of v[0], v[stride], ... (n values). */
void
diff_mean_var(const double *v, int n, size_t stride, double *mean, double *var)
{
	double m = 0, ss = 0;

	for (int i = 0; i < n; i++)
		m += v[(size_t)i * stride];
	m /= n;
	for (int i = 0; i < n; i++) {
		double d = v[(size_t)i * stride] - m;

		ss += d * d;
	}
	*mean = m;
	*var = n > 1 ? ss / (n - 1) : 0;
}

/* A function on a side with several runs: its mean, variance and df. */
struct obs {
	double m, v, d, amin;
};

static size_t
collect_obs(const struct side *s, struct obs *o, size_t n, int waits,
	    double least)
{
	if (s->nruns < 2)
		return n;
	for (size_t i = 0; i < s->in.st.nfuncs; i++) {
		double m, v;

		/* the CPU functions' model, or the waits' (their run-to-run
		 * spread is not the CPU's); the runqueue's is the machine's
		 * load, weighed by its own runs alone */
		if (wait_name_is(s->in.st.funcs[i]) != waits ||
		    (waits && diff_row_is_load(s->in.st.funcs[i])))
			continue;
		diff_mean_var(s->self + i, s->nruns,
			      s->in.st.nfuncs ? s->in.st.nfuncs : 1, &m, &v);
		if (m > 0 && m * s->rate >= least)
			o[n++] =
				(struct obs){ m, v, s->nruns - 1,
					      diff_amin(s, s->in.st.funcs[i]) };
	}
	return n;
}

static double
fit_var(const struct fit *f, double m, double amin)
{
	return (f->a > amin ? f->a : amin) * m + f->k * m * m;
}

/* The prior variance of a run's seconds for a mean of m seconds. */
double
diff_model_var(const struct model *mo, double m, double amin)
{
	double v = 0;

	for (int i = 0; i < 3; i++)
		v = fmax(v, fit_var(&mo->fit[i], m, amin));
	return v;
}

/* Weighted squared error of a fit, for choosing between candidates. */
static double
fit_loss(const struct fit *f, const struct obs *o, size_t n, const double *w)
{
	double loss = 0;

	for (size_t i = 0; i < n; i++) {
		double e = o[i].v - fit_var(f, o[i].m, o[i].amin);

		loss += w[i] * e * e;
	}
	return loss;
}

/*
 * Fit a and k by iteratively reweighted least squares: a sample variance
 * with d degrees of freedom has variance 2 var^2 / d, so each function is
 * weighted by d / var^2 of the current fit. a is never below one sample's
 * worth (1/rate): fewer than one independent observation per sample would
 * claim more precision than sampling gives, even where the timer's
 * regularity makes the counts steadier than Poisson.
 */
static void
fit_run(struct fit *f, int kind, const struct obs *o, size_t n, double amin,
	double *w)
{
	f->a = amin;
	f->k = 0;
	for (int it = 0; it < 100 && n; it++) {
		double s22 = 0, s23 = 0, s24 = 0, y2 = 0, y3 = 0, det;
		struct fit c[3] = { *f, *f, *f };
		int best = -1;

		for (size_t i = 0; i < n; i++) {
			double var = fit_var(f, o[i].m, o[i].amin), m = o[i].m;

			w[i] = o[i].d / (var * var);
			s22 += w[i] * m * m;
			s23 += w[i] * m * m * m;
			s24 += w[i] * m * m * m * m;
			y2 += w[i] * o[i].v * m;
			y3 += w[i] * o[i].v * m * m;
		}
		/* a alone, k alone, then both if the system is well posed */
		c[0].k = 0;
		c[0].a = fmax(amin, y2 / s22);
		c[1].a = amin;
		c[1].k = fmax(0, (y3 - amin * s23) / s24);
		det = s22 * s24 - s23 * s23;
		c[2].a = -1;
		if (kind == FIT_JOINT && det > 1e-9 * s22 * s24) {
			c[2].a = (y2 * s24 - y3 * s23) / det;
			c[2].k = (s22 * y3 - s23 * y2) / det;
		}
		for (int j = 0; j < 3; j++) {
			if ((kind == FIT_A && j != 0) ||
			    (kind == FIT_K && j != 1) || c[j].a < amin ||
			    c[j].k < 0)
				continue;
			if (best < 0 || fit_loss(&c[j], o, n, w) <
						fit_loss(&c[best], o, n, w))
				best = j;
		}
		if (fabs(c[best].a - f->a) <= 1e-10 * f->a &&
		    fabs(c[best].k - f->k) <= 1e-10 * f->k + 1e-300) {
			*f = c[best];
			break;
		}
		*f = c[best];
	}
}

/* The observations' pooled degrees of freedom and smallest floor, and an
 * array of n doubles for the fit. */
static double *
model_pool(struct model *mo, const struct obs *o, size_t n)
{
	double *w = pc_malloc((n ? n : 1) * sizeof(*w));

	mo->pooled_df = 0;
	mo->amin_all = INFINITY;
	for (size_t i = 0; i < n; i++) {
		mo->amin_all = fmin(mo->amin_all, o[i].amin);
		mo->pooled_df += o[i].d;
	}
	return w;
}

static void
model_fit(struct model *mo, const struct obs *o, size_t n)
{
	double *w = model_pool(mo, o, n);

	for (int kind = FIT_JOINT; kind <= FIT_K; kind++)
		fit_run(&mo->fit[kind], kind, o, n, mo->amin_all, w);
	free(w);
}

/* A wait row's relative variance and its weight (its seconds). */
struct rel {
	double r, w;
};

static int
by_rel(const void *a, const void *b)
{
	double x = ((const struct rel *)a)->r, y = ((const struct rel *)b)->r;

	return (x > y) - (x < y);
}

/*
 * The seconds-weighted median of the rows' relative variance beyond a
 * sample's (v - amin m) / m^2, over the rows of a hundredth of the largest
 * row's seconds or more: the smallest (a wait in some runs and not
 * others, a clock read at a marker's edge) move by their whole size.
 */
static double
rel_var_median(const struct obs *o, size_t n)
{
	struct rel *r = pc_malloc((n ? n : 1) * sizeof(*r));
	double k = 0, top = 0, sum = 0, acc = 0;
	size_t nr = 0;

	for (size_t i = 0; i < n; i++)
		top = fmax(top, o[i].m);
	for (size_t i = 0; i < n; i++)
		if (o[i].m >= top / 100) {
			r[nr].r = fmax(0, o[i].v - o[i].amin * o[i].m) /
				  (o[i].m * o[i].m);
			r[nr].w = o[i].m;
			sum += r[nr++].w;
		}
	qsort(r, nr, sizeof(*r), by_rel);
	for (size_t i = 0; i < nr; i++) {
		k = r[i].r;
		if ((acc += r[i].w) >= sum / 2)
			break;
	}
	free(r);
	return k;
}

/*
 * The waits' model: their seconds are exact (libpc counts each thread's
 * time off the CPU from schedstat), and how much they move from run to
 * run is each wait's own (a sleep's hardly, a pipe read's with the
 * threads around it, the run queue's with the machine's load). No fit
 * over the rows is theirs: a least squares fit was the noisiest rows' (a
 * few disturbed runs made it 2.27 relative), and the seconds-weighted
 * median of their relative variances, weighing as much as PRIOR_DF runs,
 * was a pipe read's that waits on the load: a sleep 20 % longer, 9 runs
 * a side, was caught in 11 of 20 comparisons, 0 of 20 by the sequential
 * gate, where the test that knows its noise caught 20 (docs/ci.md). A
 * wait's prior is instead its own floor, the variance of the sampler's
 * split (diff_amin), and a floor only (floor_only): the row's variance is
 * its own runs', never below the floor, on their own degrees of freedom.
 * That is Student's test with a variance raised where the runs happen to
 * agree, no less safe than it, so no prior pulls a wait's variance
 * toward another's.
 */
static void
model_fit_waits(struct model *mo, const struct obs *o, size_t n)
{
	free(model_pool(mo, o, n));
	for (int kind = FIT_JOINT; kind <= FIT_K; kind++)
		mo->fit[kind] = (struct fit){ 0, 0 };
	mo->floor_only = 1;
}

/* The variance model, from every function's self time on either side. */
void
diff_model_build(struct model *mo, const struct side *b, const struct side *n,
		 int waits)
{
	struct obs *obs = pc_malloc((b->in.st.nfuncs + n->in.st.nfuncs + 1) *
				    sizeof(*obs));
	size_t nobs = 0;
	double kcap = INFINITY;

	memset(mo, 0, sizeof(*mo));
	nobs = collect_obs(b, obs, nobs, waits, waits ? 0 : MODEL_SAMPLES);
	nobs = collect_obs(n, obs, nobs, waits, waits ? 0 : MODEL_SAMPLES);
	if (nobs < 6 && !waits) {
		/* the large functions' relative variance, before the rest */
		kcap = nobs ? rel_var_median(obs, nobs) : INFINITY;
		nobs = collect_obs(b, obs, 0, 0, 0);
		nobs = collect_obs(n, obs, nobs, 0, 0);
	}
	if (nobs) {
		if (waits)
			model_fit_waits(mo, obs, nobs);
		else
			model_fit(mo, obs, nobs);
		for (int kind = FIT_JOINT; kind <= FIT_K; kind++)
			mo->fit[kind].k = fmin(mo->fit[kind].k, kcap);
		mo->d0 = mo->floor_only ? 0 : fmin(PRIOR_DF, mo->pooled_df);
		mo->fitted = 1;
	} else {
		/*
		 * One run a side: sampling noise alone, each observation worth
		 * a 250 Hz kernel tick (CPU-time timers fire at most once a
		 * tick; a signal then carries several samples).
		 */
		double a = fmax(1.0 / 250, fmax(1.0 / b->rate, 1.0 / n->rate));

		if (waits)	/* a wait: the wall clock's rounds */
			a = fmax(diff_amin(b, RUNQUEUE_ROW),
				 diff_amin(n, RUNQUEUE_ROW));

		for (int i = 0; i < 3; i++)
			mo->fit[i] = (struct fit){ a, 0 };
		mo->d0 = INFINITY;
	}
	free(obs);
}
