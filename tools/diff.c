/*
 * pcprof diff: compares the profiles of two builds of a program function by
 * function, by name, and says whether the new build is significantly slower
 * anywhere: the gate of a CI performance-regression job (exit status 1).
 * Each profile argument is one run; the statistics are in docs/ci.md.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "options.h"
#include "stats.h"

#define EXIT_REGRESSION	1

static const char usage_diff[] =
"usage: pcprof diff [OPTIONS] --base EXE GMON|DIR... --new EXE GMON|DIR...\n"
"       pcprof diff [OPTIONS] EXE BASE_GMON NEW_GMON\n"
"\n"
"Compare the profiles of a base and a new build, function by function\n"
"(matched by name), and exit 1 if the new build is significantly slower in\n"
"any function: a CI performance-regression gate. Each GMON is one run of\n"
"the benchmark (a DIR: the profiles of one multi-process run); give several\n"
"runs a side, so that run-to-run variation is measured. Improvements are\n"
"reported and never fail; functions found on one side only are listed as\n"
"appeared or gone. Runs recorded with PC_SCOPE=all are compared as whole\n"
"processes, functions outside the executable named \"name (object)\".\n"
"The statistics are described in docs/ci.md.\n"
"\n"
"Options:\n"
"  --metric M         self (default): each function's own seconds a run;\n"
"                     total: self plus callees (needs call graphs);\n"
"                     program: the whole program's CPU seconds a run\n"
"  --alpha A          significance level over all functions, 0 < A < 1\n"
"                     (default 0.01; Holm's correction across functions)\n"
"  --threshold PCT    smallest change that counts, in percent of the base\n"
"                     seconds (default 5)\n"
"  --min-seconds S    smallest change that counts, in seconds a run\n"
"                     (default 0.01)\n"
"  --format FMT       text (default), json, or markdown (for a pull-request\n"
"                     comment: a verdict line, then the significant changes)\n"
"  --top N            text: rows beyond the significant ones (default 10;\n"
"                     0: all)\n"
"  --absolute         compare seconds as measured: no allowance for runs or\n"
"                     sides on a faster or slower machine (see below)\n"
"  --keep-pieces, --no-demangle, --full-names, --debug-dir DIR   as for report\n"
"\n"
"Seconds are compared at one machine speed: each run is scaled by its\n"
"side's mean program seconds over its own, and the new side by the median\n"
"function's ratio of new to base seconds (a uniform slowdown of every\n"
"function is the machine's; --metric program or --absolute sees it).\n"
"\n"
"Exit status: 0 no significant regression, 1 a significant regression,\n"
"2 bad input or usage.\n";

enum diff_format { DIFF_TEXT, DIFF_JSON, DIFF_MARKDOWN };
enum metric { METRIC_SELF, METRIC_TOTAL, METRIC_PROGRAM };

static const char *const metric_names[] = { "self", "total", "program" };

/* One build: its symbols and, for every run, every function's seconds. */
struct side {
	const char *exe;
	char **args;		/* one run each */
	int nruns;
	struct symtab st;
	uint32_t rate;
	char ***files;		/* per run: the profiles summed into it */
	int *nfiles;
	double *self;		/* nruns x st.nfuncs, seconds */
	double *total;		/* the same for total time, or NULL */
	double *program;	/* per run: every sample, seconds */
};

/*
 * The variance of a function's seconds in one run, a m + k m^2 for a mean
 * of m seconds: a is what one independent observation is worth in seconds
 * (sampling noise, Poisson-like), k the squared relative run-to-run noise.
 * Fitted to all functions at once, three ways (both terms; a alone; k alone
 * with a at its floor), and a function's prior variance is the largest of
 * the three at its m: when the functions' means span a narrow range the
 * two terms cannot be told apart, and whichever extrapolates higher is
 * kept.
 *
 * The prior weighs as much as PRIOR_DF degrees of freedom of a function's
 * own runs (d0). Functions differ in dispersion (a timer that falls in step
 * with a loop, a function the neighbours' caches hurt) in ways a handful of
 * runs cannot show; on real profiles, trusting the fit further let false
 * alarms pass the nominal rate with the tick-limited timer (docs/ci.md).
 */
#define PRIOR_DF	4.0

struct fit {
	double a, k;
};

struct model {
	struct fit fit[3];	/* joint, a alone, k alone */
	double d0;		/* the prior's degrees of freedom */
	double pooled_df;	/* run-to-run degrees of freedom behind the fits */
	double amin_all;	/* the smallest floor of a over the sides */
	int fitted;
};

enum status { ST_SLOWER, ST_FASTER, ST_SAME, ST_SMALL, ST_APPEARED, ST_GONE };

static const char *const status_names[] = {
	"slower", "faster", "unchanged", "unchanged", "appeared", "gone",
};

struct row {
	const char *name;
	double mb, mn;		/* mean seconds a run */
	double vb, vn;		/* variance of a run's seconds, as estimated */
	double t, df, p, padj;
	int tested, family;
	enum status status;
};

struct diff_opts {
	enum metric metric;
	enum diff_format format;
	double alpha, threshold, min_seconds;
	long top;
	int absolute;		/* no allowance for the machine's speed */
};

/* The comparison: rows sorted for printing, and the verdict's counts. */
struct result {
	struct row *rows;
	size_t nrows;
	size_t family;		/* rows in Holm's correction */
	int nslow, nfast;	/* significant regressions, improvements */
	struct row prog;	/* the whole program's seconds */
	struct model model;
	double speed;		/* new runs' seconds / base runs', the median
				   function's; 1 when not judged */
	int speed_judged;
};

/* ---------------------------------------------------------- loading */

/* Every run's profiles, checked against the side's executable: with
 * PC_SCOPE=all their manifests add the other objects' functions to the
 * table. */
static void
side_read_runs(struct side *s, const struct symtab_opts *so, struct gmon_profile *prof)
{
	static const uint8_t zero[GMON_BUILDID_SIZE];

	for (int r = 0; r < s->nruns; r++) {
		uint8_t id[GMON_BUILDID_SIZE];

		s->files[r] = select_files(&s->st, &s->args[r], 1, &s->nfiles[r]);
		profiles_load(&prof[r], s->files[r], s->nfiles[r]);
		/* a gate must not compare names read with the wrong symbols */
		if (gmon_profile_is_libpc(&prof[r], id) && memcmp(id, zero, sizeof(id)) &&
		    s->st.build_id_len >= GMON_BUILDID_SIZE &&
		    memcmp(id, s->st.build_id, sizeof(id)))
			pc_fatal("'%s': not a profile of '%s' (another build-id)",
				 s->files[r][0], s->exe);
		whole_load(&s->st, &prof[r], s->files[r], s->nfiles[r], s->exe, so);
	}
	whole_release();
	/* functions of one name in two objects stay apart: "name (object)" */
	for (size_t f = 0; s->st.nobjs && f < s->st.nfuncs; f++) {
		char buf[1024];
		const char *l = func_label(&s->st, (uint32_t)f, buf, sizeof(buf));

		if (l == buf) {
			free(s->st.funcs[f]);
			if (!(s->st.funcs[f] = strdup(buf)))
				pc_fatal("out of memory");
		}
	}
}

/* Run r's total seconds per function, from its call graph, into total. */
static void
side_totals(const struct side *s, int r, const struct gmon_profile *p,
	    const struct flat *f, double *total)
{
	struct callgraph cg;
	uint64_t outside;

	/* the records of samples outside the executable are not arcs */
	if (p->narcs <= gmon_profile_outside(p, &outside))
		pc_fatal("'%s': no call graph in the profile (recorded with PC_CALLGRAPH=0?); --metric total needs one",
			 s->files[r][0]);
	callgraph_build(&cg, &s->st, p, f);
	for (size_t i = 0; i < s->st.nfuncs; i++)
		total[i] = cg.total[i] / s->rate;
	callgraph_release(&cg);
}

static void
side_load(struct side *s, const struct symtab_opts *so, int need_total)
{
	struct gmon_profile *prof = calloc((size_t)s->nruns, sizeof(*prof));
	size_t nf;

	if (!prof)
		pc_fatal("out of memory");
	symbols_load_whole(&s->st, s->exe, so, s->args[0]);
	s->files = calloc((size_t)s->nruns, sizeof(*s->files));
	s->nfiles = calloc((size_t)s->nruns, sizeof(*s->nfiles));
	if (!s->files || !s->nfiles)
		pc_fatal("out of memory");
	side_read_runs(s, so, prof);
	nf = s->st.nfuncs ? s->st.nfuncs : 1;
	s->self = calloc((size_t)s->nruns * nf, sizeof(*s->self));
	s->program = calloc((size_t)s->nruns, sizeof(*s->program));
	if (need_total)
		s->total = calloc((size_t)s->nruns * nf, sizeof(*s->total));
	if (!s->self || !s->program || (need_total && !s->total))
		pc_fatal("out of memory");
	for (int r = 0; r < s->nruns; r++) {
		struct gmon_profile p = prof[r];
		struct flat f;
		double *self = s->self + (size_t)r * nf;

		if (r == 0)
			s->rate = p.hists[0].rate;
		else if (p.hists[0].rate != s->rate)
			pc_fatal("'%s': sampled at %u Hz, '%s' at %u Hz: the runs of one side must share a rate",
				 s->files[r][0], p.hists[0].rate, s->files[0][0], s->rate);
		if (s->rate == 0)
			pc_fatal("'%s': sampling rate 0", s->files[r][0]);
		flat_build(&f, &s->st, &p);
		if (f.total == 0)
			pc_fatal("'%s': the profile holds no samples", s->files[r][0]);
		for (size_t i = 0; i < f.nrows; i++)
			self[f.rows[i].func] = f.rows[i].samples / s->rate;
		s->program[r] = f.total / s->rate;
		if (need_total)
			side_totals(s, r, &p, &f, s->total + (size_t)r * nf);
		flat_release(&f);
		gmon_profile_release(&p);
	}
	free(prof);
}

static void
side_release(struct side *s)
{
	for (int r = 0; r < s->nruns; r++) {
		for (int i = 0; i < s->nfiles[r]; i++)
			free(s->files[r][i]);
		free(s->files[r]);
	}
	free(s->files);
	free(s->nfiles);
	free(s->self);
	free(s->total);
	free(s->program);
	symtab_release(&s->st);
}

/* Mean and unbiased variance of v[0], v[stride], ... (n values). */
static void
mean_var(const double *v, int n, size_t stride, double *mean, double *var)
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

/* ---------------------------------------------------------- the model */

/* A function on a side with several runs: its mean, variance and df. */
struct obs {
	double m, v, d, amin;
};

static size_t
collect_obs(const struct side *s, struct obs *o, size_t n)
{
	if (s->nruns < 2)
		return n;
	for (size_t i = 0; i < s->st.nfuncs; i++) {
		double m, v;

		mean_var(s->self + i, s->nruns, s->st.nfuncs ? s->st.nfuncs : 1, &m, &v);
		if (m > 0)
			o[n++] = (struct obs){ m, v, s->nruns - 1, 1.0 / s->rate };
	}
	return n;
}

static double
fit_var(const struct fit *f, double m, double amin)
{
	return (f->a > amin ? f->a : amin) * m + f->k * m * m;
}

/* The prior variance of a run's seconds for a mean of m seconds. */
static double
model_var(const struct model *mo, double m, double amin)
{
	double v = 0;

	for (int i = 0; i < 3; i++)
		v = fmax(v, fit_var(&mo->fit[i], m, amin));
	return v;
}

enum { FIT_JOINT, FIT_A, FIT_K };

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
			if ((kind == FIT_A && j != 0) || (kind == FIT_K && j != 1) ||
			    c[j].a < amin || c[j].k < 0)
				continue;
			if (best < 0 || fit_loss(&c[j], o, n, w) < fit_loss(&c[best], o, n, w))
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

static void
model_fit(struct model *mo, const struct obs *o, size_t n)
{
	double *w = malloc((n ? n : 1) * sizeof(*w));

	if (!w)
		pc_fatal("out of memory");
	mo->pooled_df = 0;
	mo->amin_all = INFINITY;
	for (size_t i = 0; i < n; i++) {
		mo->amin_all = fmin(mo->amin_all, o[i].amin);
		mo->pooled_df += o[i].d;
	}
	for (int kind = FIT_JOINT; kind <= FIT_K; kind++)
		fit_run(&mo->fit[kind], kind, o, n, mo->amin_all, w);
	free(w);
}

/* ---------------------------------------------------------- comparing */

/*
 * The test of one function. Its prior variance on each side comes from the
 * model at that side's mean; its own dispersion, the ratio of its runs'
 * variance to the prior, is pooled over both sides (the same function,
 * measured the same way) and moderated by the prior's d0 degrees of
 * freedom; the variance of the difference is the prior's times it.
 */
static void
test_row(struct row *w, const struct model *mo, const struct side *b,
	 const struct side *n, double d0)
{
	double pb = model_var(mo, w->mb, 1.0 / b->rate);
	double pn = model_var(mo, w->mn, 1.0 / n->rate);
	double db = b->nruns - 1, dn = n->nruns - 1, d = db + dn;
	double psi = 1, se2;

	w->df = INFINITY;
	if (d > 0 && !isinf(d0)) {
		double own = (db * w->vb / pb + dn * w->vn / pn) / d;

		psi = (d * own + d0) / (d + d0);
		w->df = d + d0;
	}
	se2 = psi * (pb / b->nruns + pn / n->nruns);
	w->t = se2 > 0 ? (w->mn - w->mb) / sqrt(se2) : (w->mn == w->mb ? 0 : INFINITY);
	w->p = stats_t_two_sided(w->t, w->df);
	w->tested = 1;
}

/*
 * The whole program's seconds have no sampling noise to speak of (they are
 * the CPU time), so only the runs' own variance counts: Welch's test, a
 * side with one run borrowing the other side's relative variance.
 */
static void
test_program(struct row *w, const struct model *mo, const struct side *b,
	     const struct side *n)
{
	double cvb = w->mb > 0 ? w->vb / (w->mb * w->mb) : 0;
	double cvn = w->mn > 0 ? w->vn / (w->mn * w->mn) : 0;
	double dfb = b->nruns > 1 ? b->nruns - 1 : n->nruns - 1;
	double dfn = n->nruns > 1 ? n->nruns - 1 : b->nruns - 1;
	double vb, vn, se2;

	if (b->nruns < 2 && n->nruns < 2)
		pc_fatal("--metric program needs two runs or more on a side: the whole program's time varies only from run to run");
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
	w->df = se2 * se2 / (vb * vb / dfb + vn * vn / dfn);
	w->t = (w->mn - w->mb) / sqrt(se2);
	w->p = stats_t_two_sided(w->t, w->df);
	w->tested = 1;
}

static int
cmp_p(const void *x, const void *y)
{
	const struct row *a = *(struct row *const *)x, *b = *(struct row *const *)y;

	if (a->p != b->p)
		return a->p < b->p ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Holm's step-down adjustment over the rows in the family. */
static void
holm(struct row *rows, size_t n)
{
	struct row **v = malloc((n ? n : 1) * sizeof(*v));
	size_t m = 0;
	double run = 0;

	if (!v)
		pc_fatal("out of memory");
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

static int
rank(const struct row *w)
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

static double
row_size(const struct row *w)
{
	if (w->status == ST_APPEARED)
		return w->mn;
	if (w->status == ST_GONE)
		return w->mb;
	return fabs(w->mn - w->mb);
}

static int by_relative;		/* sort changes by ratio, not by seconds */

/*
 * Significant regressions first, then improvements, then the rest, each
 * the largest change first: in seconds, or for total time as a ratio (a
 * caller's total grows by at least its callee's seconds, but by a smaller
 * part of itself, so the function where the time went comes first).
 */
static int
cmp_rows(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	double sa = row_size(a), sb = row_size(b);

	if (rank(a) != rank(b))
		return rank(a) < rank(b) ? -1 : 1;
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
	return strcmp(((const struct name_ix *)x)->name, ((const struct name_ix *)y)->name);
}

/* Functions with time in the metric on either side, matched by name. */
static struct row *
match(const struct side *b, const struct side *n, enum metric metric,
      size_t *nrows)
{
	size_t nb = b->st.nfuncs, nn = n->st.nfuncs, k = 0;
	struct name_ix *ib = malloc((nb ? nb : 1) * sizeof(*ib));
	struct name_ix *in = malloc((nn ? nn : 1) * sizeof(*in));
	struct row *rows = calloc(nb + nn + 1, sizeof(*rows));
	size_t i = 0, j = 0;

	if (!ib || !in || !rows)
		pc_fatal("out of memory");
	for (size_t f = 0; f < nb; f++)
		ib[f] = (struct name_ix){ b->st.funcs[f], (uint32_t)f };
	for (size_t f = 0; f < nn; f++)
		in[f] = (struct name_ix){ n->st.funcs[f], (uint32_t)f };
	qsort(ib, nb, sizeof(*ib), cmp_name_ix);
	qsort(in, nn, sizeof(*in), cmp_name_ix);
	while (i < nb || j < nn) {
		int c = i == nb ? 1 : j == nn ? -1 : strcmp(ib[i].name, in[j].name);
		const double *vb = metric == METRIC_TOTAL ? b->total : b->self;
		const double *vn = metric == METRIC_TOTAL ? n->total : n->self;
		struct row *w = &rows[k];

		memset(w, 0, sizeof(*w));
		w->name = c <= 0 ? ib[i].name : in[j].name;
		if (c <= 0)
			mean_var(vb + ib[i].ix, b->nruns, nb, &w->mb, &w->vb);
		if (c >= 0)
			mean_var(vn + in[j].ix, n->nruns, nn, &w->mn, &w->vn);
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

/* ---------------------------------------------------------- output */

static double
pct(double x)
{
	return 100 * x;
}

static void
print_side_text(FILE *out, const char *label, const struct side *s, double mean)
{
	fprintf(out, "%-5s %s: %d run%s, %.3f s a run at %u Hz\n", label, s->exe,
		s->nruns, s->nruns == 1 ? "" : "s", mean, s->rate);
}

/* "stage_x 20.1% slower (0.452 -> 0.544 s a run, p 3.1e-09)" */
static void
describe(FILE *out, const struct row *w, int md)
{
	const char *q = md ? (strchr(w->name, '`') ? "" : "`") : "";

	fprintf(out, "%s%s%s %.1f%% %s (%.3f -> %.3f s a run, p %.2g)", q, w->name, q,
		pct(fabs(w->mn - w->mb) / w->mb),
		w->status == ST_SLOWER ? "slower" : "faster", w->mb, w->mn, w->padj);
}

static void
verdict(FILE *out, const struct result *res, int md)
{
	int nslow = res->nslow, nfast = res->nfast;

	if (nslow) {
		fputs(md ? "**pcprof diff: regression**: " : "pcprof diff: regression: ", out);
		describe(out, &res->rows[0], md);
		if (nslow > 1)
			fprintf(out, ", and %d more function%s slower", nslow - 1,
				nslow == 2 ? "" : "s");
	} else {
		fputs(md ? "**pcprof diff: no significant regression**" :
		      "pcprof diff: no significant regression", out);
	}
	if (nfast)
		fprintf(out, "%s%d function%s significantly faster",
			nslow ? "; " : ": ", nfast, nfast == 1 ? "" : "s");
	fputc('\n', out);
}

/* "new runs 3.1% slower than base by the median function, allowed for" */
static void
describe_speed(FILE *out, const struct result *res, const struct diff_opts *o)
{
	if (o->metric == METRIC_PROGRAM)
		fputs("measured, no allowance for machine speed", out);
	else if (o->absolute)
		fputs("as measured (--absolute)", out);
	else if (!res->speed_judged)
		fputs("each run at its side's mean speed; sides not compared (fewer "
		      "than 3 functions with 20 samples a run)", out);
	else
		fprintf(out, "new runs %.1f%% %s than base by the median function, "
			"allowed for", pct(fabs(res->speed - 1)),
			res->speed >= 1 ? "slower" : "faster");
}

static void
print_text(FILE *out, const struct result *res, const struct side *b,
	   const struct side *nw, const struct diff_opts *o)
{
	static const char *const mdesc[] = {
		"self seconds", "total seconds (self and callees)",
		"the whole program's CPU seconds",
	};
	const struct row *prog = &res->prog;
	double ntotal = prog->mn / res->speed;	/* at the base's speed */
	size_t shown = 0, rest = 0;

	verdict(out, res, 0);
	print_side_text(out, "base", b, prog->mb);
	print_side_text(out, "new", nw, prog->mn);
	fprintf(out, "compared: %s a run; alpha %g over %zu function%s (Holm); "
		"changes of %g%% and %g s at least\n", mdesc[o->metric], o->alpha,
		res->family, res->family == 1 ? "" : "s", pct(o->threshold),
		o->min_seconds);
	fputs("speed: ", out);
	describe_speed(out, res, o);
	fputs("\n\n", out);
	fprintf(out, "%9s %6s %9s %6s %8s %8s  %-13s %s\n", "base s", "share", "new s",
		"share", "change", "p", "verdict", "function");
	for (size_t i = 0; i < res->nrows; i++) {
		const struct row *w = &res->rows[i];
		int sig = w->status == ST_SLOWER || w->status == ST_FASTER;

		/* appeared or gone below the minimum: noise, counted only */
		if (!sig && ((o->top > 0 && shown >= (size_t)o->top) ||
			     (!w->tested && row_size(w) < o->min_seconds))) {
			rest++;
			continue;
		}
		shown += !sig;
		if (w->status == ST_APPEARED)
			fprintf(out, "%9s %6s %9.3f %5.1f%% %8s %8s  %-13s %s\n", "-", "-",
				w->mn, pct(w->mn / ntotal), "", "", "appeared", w->name);
		else if (w->status == ST_GONE)
			fprintf(out, "%9.3f %5.1f%% %9s %6s %8s %8s  %-13s %s\n", w->mb,
				pct(w->mb / prog->mb), "-", "-", "", "", "gone", w->name);
		else if (w->status == ST_SMALL)
			fprintf(out, "%9.3f %5.1f%% %9.3f %5.1f%% %+7.1f%% %8s  %-13s %s\n",
				w->mb, pct(w->mb / prog->mb), w->mn, pct(w->mn / ntotal),
				pct((w->mn - w->mb) / w->mb), "-", "(small)", w->name);
		else
			fprintf(out, "%9.3f %5.1f%% %9.3f %5.1f%% %+7.1f%% %8.2g  %-13s %s\n",
				w->mb, pct(w->mb / prog->mb), w->mn, pct(w->mn / ntotal),
				pct((w->mn - w->mb) / w->mb), w->padj,
				sig ? status_names[w->status] : "", w->name);
	}
	if (rest)
		fprintf(out, "(%zu more function%s, none significant)\n",
			rest, rest == 1 ? "" : "s");
	if (b->nruns < 2 && nw->nruns < 2)
		fputs("\nOne run a side: only sampling noise is allowed for, not the "
		      "variation between runs;\nrun the benchmark several times a side.\n", out);
}

static void
md_name(FILE *out, const char *s)
{
	int tick = !strchr(s, '`');

	if (tick)
		fputc('`', out);
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', out);
		fputc(*s == '\n' ? ' ' : *s, out);
	}
	if (tick)
		fputc('`', out);
}

static void
print_markdown(FILE *out, const struct result *res, const struct side *b,
	       const struct side *nw, const struct diff_opts *o)
{
	const struct row *rows = res->rows;
	int nsig = res->nslow + res->nfast;

	verdict(out, res, 1);
	fprintf(out, "\n%s time a run, %d base run%s against %d new run%s; alpha %g "
		"(Holm), changes of %g%% and %g s at least; speed: ", metric_names[o->metric],
		b->nruns, b->nruns == 1 ? "" : "s", nw->nruns, nw->nruns == 1 ? "" : "s",
		o->alpha, pct(o->threshold), o->min_seconds);
	describe_speed(out, res, o);
	fputs(".\n\n", out);
	if (nsig) {
		fputs("| function | base s | new s | change | p |\n"
		      "|---|---:|---:|---:|---:|\n", out);
		for (int i = 0; i < nsig; i++) {
			fputs("| ", out);
			md_name(out, rows[i].name);
			fprintf(out, " | %.3f | %.3f | %+.1f%% | %.2g |\n", rows[i].mb,
				rows[i].mn, pct((rows[i].mn - rows[i].mb) / rows[i].mb),
				rows[i].padj);
		}
	} else {
		fputs("No significant change.\n", out);
	}
	for (int pass = 0; pass < 2; pass++) {
		enum status want = pass ? ST_GONE : ST_APPEARED;
		size_t k = 0;

		for (size_t i = 0; i < res->nrows; i++) {
			if (rows[i].status != want || row_size(&rows[i]) < o->min_seconds)
				continue;
			fputs(k++ ? ", " : pass ? "\nGone: " : "\nAppeared: ", out);
			md_name(out, rows[i].name);
			fprintf(out, " (%.3f s)", row_size(&rows[i]));
		}
		if (k)
			fputs(".\n", out);
	}
}

static void
json_side(FILE *out, const char *key, const struct side *s, double mean)
{
	fprintf(out, "\"%s\": {\"executable\": ", key);
	json_string(out, s->exe);
	fprintf(out, ", \"runs\": %d, \"rate_hz\": %u, \"program_seconds\": %.6f, "
		"\"profiles\": [", s->nruns, s->rate, mean);
	for (int r = 0; r < s->nruns; r++) {
		fputs(r ? ", [" : "[", out);
		for (int i = 0; i < s->nfiles[r]; i++) {
			fputs(i ? ", " : "", out);
			json_string(out, s->files[r][i]);
		}
		fputc(']', out);
	}
	fputs("]}", out);
}

static void
json_number(FILE *out, double x)
{
	if (isfinite(x))
		fprintf(out, "%.6g", x);
	else
		fputs("null", out);
}

static void
print_json(FILE *out, const struct result *res, const struct side *b,
	   const struct side *nw, const struct diff_opts *o)
{
	const struct row *prog = &res->prog;
	const struct model *mo = &res->model;
	double ntotal = prog->mn / res->speed;	/* at the base's speed */
	int nslow = res->nslow;

	fprintf(out, "{\"verdict\": \"%s\", \"exit_status\": %d, \"regressions\": %d, "
		"\"improvements\": %d, \"metric\": \"%s\", \"alpha\": %g, "
		"\"threshold\": %g, \"min_seconds\": %g, \"family_size\": %zu, "
		"\"absolute\": %s, \"speed_ratio\": %.6g, \"speed_judged\": %s,\n ",
		nslow ? "regression" : "pass", nslow ? EXIT_REGRESSION : 0, nslow,
		res->nfast, metric_names[o->metric], o->alpha, o->threshold,
		o->min_seconds, res->family, o->absolute ? "true" : "false", res->speed,
		res->speed_judged ? "true" : "false");
	json_side(out, "base", b, prog->mb);
	fputs(",\n ", out);
	json_side(out, "new", nw, prog->mn);
	fprintf(out, ",\n \"model\": {\"fitted\": %s, \"seconds_per_observation\": ",
		mo->fitted ? "true" : "false");
	json_number(out, mo->fit[FIT_A].a);
	fputs(", \"relative_run_noise\": ", out);
	json_number(out, sqrt(mo->fit[FIT_K].k));
	fputs(", \"joint\": {\"seconds_per_observation\": ", out);
	json_number(out, mo->fit[FIT_JOINT].a);
	fputs(", \"relative_run_noise\": ", out);
	json_number(out, sqrt(mo->fit[FIT_JOINT].k));
	fputs("}, \"prior_df\": ", out);
	json_number(out, mo->d0);
	fprintf(out, ", \"pooled_df\": %g},\n \"functions\": [", mo->pooled_df);
	for (size_t i = 0; i < res->nrows; i++) {
		const struct row *w = &res->rows[i];
		int cmp = w->status != ST_APPEARED && w->status != ST_GONE;

		fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", out);
		json_string(out, w->name);
		fprintf(out, ", \"status\": \"%s\", \"significant\": %s, "
			"\"base_seconds\": %.6f, \"base_share\": %.6f, "
			"\"new_seconds\": %.6f, \"new_share\": %.6f, \"change_seconds\": %.6f, "
			"\"change\": ", status_names[w->status],
			w->status <= ST_FASTER ? "true" : "false",
			w->mb, w->mb / prog->mb, w->mn,
			w->mn / ntotal, w->mn - w->mb);
		json_number(out, cmp ? (w->mn - w->mb) / w->mb : NAN);
		fputs(", \"p_value\": ", out);
		json_number(out, cmp ? w->p : NAN);
		fputs(", \"p_adjusted\": ", out);
		json_number(out, cmp && w->family ? w->padj : NAN);
		fputs(", \"t\": ", out);
		json_number(out, cmp ? w->t : NAN);
		fputs(", \"df\": ", out);
		json_number(out, cmp ? w->df : NAN);
		fputc('}', out);
	}
	fprintf(out, "%s]}\n", res->nrows ? "\n " : "");
}

/* ---------------------------------------------------------- options */

enum {
	OPT_BASE = 512, OPT_NEW, OPT_METRIC, OPT_ALPHA, OPT_THRESHOLD,
	OPT_MIN_SECONDS, OPT_DFORMAT, OPT_DTOP, OPT_ABSOLUTE,
};

static double
parse_number(const char *opt, const char *arg, int percent)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(arg, &end);
	if (percent && *end == '%')
		end++;
	if (end == arg || *end || errno || !isfinite(x) || x < 0)
		pc_fatal("%s '%s': not a number%s", opt, arg, percent ? " of percent" : "");
	return percent ? x / 100 : x;
}

static void
add_arg(struct side *s, char *arg)
{
	char **v = realloc(s->args, ((size_t)s->nruns + 1) * sizeof(*v));

	if (!v)
		pc_fatal("out of memory");
	s->args = v;
	s->args[s->nruns++] = arg;
}

static int
usage_error(void)
{
	fputs(usage_diff, stderr);
	return EXIT_BAD_INPUT;
}

/* The index of arg in words (NULL-ended), or exit naming opt and want. */
static int
pick(const char *opt, const char *arg, const char *const *words, const char *want)
{
	for (int i = 0; words[i]; i++)
		if (!strcmp(arg, words[i]))
			return i;
	pc_fatal("--%s '%s': not %s", opt, arg, want);
}

/* Apply one of diff's own value options; 0 when c is not one. */
static int
diff_option(int c, const char *arg, struct diff_opts *o, struct symtab_opts *so)
{
	static const char *const metrics[] = { "self", "total", "program", NULL };
	static const char *const formats[] = { "text", "json", "markdown", NULL };
	char *end;

	switch (c) {
	case OPT_METRIC:	/* enum metric's order */
		o->metric = (enum metric)pick("metric", arg, metrics,
					      "self, total or program");
		return 1;
	case OPT_ALPHA:
		o->alpha = parse_number("--alpha", arg, 0);
		if (o->alpha <= 0 || o->alpha >= 1)
			pc_fatal("--alpha '%s': not between 0 and 1", arg);
		return 1;
	case OPT_THRESHOLD:
		o->threshold = parse_number("--threshold", arg, 1);
		return 1;
	case OPT_MIN_SECONDS:
		o->min_seconds = parse_number("--min-seconds", arg, 0);
		return 1;
	case OPT_DFORMAT:	/* enum diff_format's order */
		o->format = (enum diff_format)pick("format", arg, formats,
						   "text, json or markdown");
		return 1;
	case OPT_DTOP:
		o->top = strtol(arg, &end, 10);
		if (*end || end == arg || o->top < 0)
			pc_fatal("--top '%s': not a count", arg);
		return 1;
	case OPT_ABSOLUTE:
		o->absolute = 1;
		return 1;
	case OPT_KEEP_PIECES:
		so->keep_pieces = 1;
		return 1;
	case OPT_NO_DEMANGLE:
		so->no_demangle = 1;
		return 1;
	case OPT_FULL_NAMES:
		so->full_names = 1;
		return 1;
	case OPT_DEBUG_DIR:
		so->debug_root = arg;
		return 1;
	}
	return 0;
}

/* The sides once every argument is read: loose holds profiles named before
 * --base or --new, which only "EXE BASE NEW" may have. -1 when both sides
 * are complete, or the status to exit with. */
static int
sides_finish(struct side *b, struct side *nw, struct side *loose)
{
	if (!b->exe && !nw->exe && loose->nruns == 3) {
		/* pcprof diff EXE BASE NEW: one build, one run a side */
		b->exe = nw->exe = loose->args[0];
		add_arg(b, loose->args[1]);
		add_arg(nw, loose->args[2]);
	} else if (loose->nruns) {
		pc_warn("'%s': a profile before --base or --new", loose->args[0]);
		free(loose->args);
		return usage_error();
	}
	free(loose->args);
	if (!b->exe || !nw->exe || !b->nruns || !nw->nruns) {
		pc_warn("%s", !b->exe || !nw->exe ? "--base EXE and --new EXE are both needed" :
			"each side needs one profile or more");
		return usage_error();
	}
	return -1;
}

/*
 * Fill the two sides from the command line: --base EXE runs... --new EXE
 * runs..., or EXE BASE NEW. Returns -1 to go on, or an exit status.
 */
static int
parse_args(int argc, char **argv, struct diff_opts *o, struct symtab_opts *so,
	   struct side sides[2])
{
	static const struct option longopts[] = {
		{ "base", required_argument, NULL, OPT_BASE },
		{ "new", required_argument, NULL, OPT_NEW },
		{ "metric", required_argument, NULL, OPT_METRIC },
		{ "alpha", required_argument, NULL, OPT_ALPHA },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "min-seconds", required_argument, NULL, OPT_MIN_SECONDS },
		{ "format", required_argument, NULL, OPT_DFORMAT },
		{ "top", required_argument, NULL, OPT_DTOP },
		{ "absolute", no_argument, NULL, OPT_ABSOLUTE },
		{ "keep-pieces", no_argument, NULL, OPT_KEEP_PIECES },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "full-names", no_argument, NULL, OPT_FULL_NAMES },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 }
	};
	struct side *cur = NULL, loose;
	int c;

	memset(&loose, 0, sizeof(loose));
	/* "-": profiles come back in order as option 1, for the side named last */
	while ((c = getopt_long(argc, argv, "-h", longopts, NULL)) != -1) {
		if (c == 1) {
			add_arg(cur ? cur : &loose, optarg);
		} else if (c == OPT_BASE || c == OPT_NEW) {
			cur = &sides[c == OPT_NEW];
			if (cur->exe)
				pc_fatal("--%s given twice", c == OPT_NEW ? "new" : "base");
			cur->exe = optarg;
		} else if (!diff_option(c, optarg, o, so)) {
			free(loose.args);
			if (c != 'h')
				return usage_error();
			fputs(usage_diff, stdout);
			return 0;
		}
	}
	/* what "--" left, for the side being filled */
	for (; optind < argc; optind++)
		add_arg(cur ? cur : &loose, argv[optind]);
	return sides_finish(&sides[0], &sides[1], &loose);
}

/* ---------------------------------------------------------- speed */

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
	size_t nf = s->st.nfuncs ? s->st.nfuncs : 1;
	double mean = 0;

	for (int r = 0; r < s->nruns; r++)
		mean += s->program[r] / s->nruns;
	for (int r = 0; r < s->nruns; r++) {
		double f = mean / s->program[r];

		for (size_t i = 0; i < s->st.nfuncs; i++) {
			s->self[(size_t)r * nf + i] *= f;
			if (s->total)
				s->total[(size_t)r * nf + i] *= f;
		}
	}
}

static int
cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/*
 * How much slower the new runs' machine was than the base runs': the
 * median, over the functions with 20 samples a run or more on both sides,
 * of their seconds' ratio. Most functions of a change do not change, so
 * the median is the machine; with fewer than three such functions there is
 * no telling, and 1 is returned. The new side is then scaled to the base's
 * speed.
 */
static double
speed_ratio(struct side *b, struct side *n, int *judged)
{
	size_t nrows, k = 0, nf = n->st.nfuncs ? n->st.nfuncs : 1;
	struct row *rows = match(b, n, METRIC_SELF, &nrows);
	double *ratio = malloc((nrows ? nrows : 1) * sizeof(*ratio)), rho = 1;

	if (!ratio)
		pc_fatal("out of memory");
	for (size_t i = 0; i < nrows; i++)
		if (rows[i].mb * b->rate >= 20 && rows[i].mn * n->rate >= 20)
			ratio[k++] = rows[i].mn / rows[i].mb;
	*judged = k >= 3;
	if (*judged) {
		qsort(ratio, k, sizeof(*ratio), cmp_double);
		rho = k % 2 ? ratio[k / 2] : (ratio[k / 2 - 1] + ratio[k / 2]) / 2;
		for (size_t i = 0; i < (size_t)n->nruns * nf; i++) {
			n->self[i] /= rho;
			if (n->total)
				n->total[i] /= rho;
		}
	}
	free(ratio);
	free(rows);
	return rho;
}

/* The variance model, from every function's self time on either side. */
static void
model_build(struct model *mo, const struct side *b, const struct side *n)
{
	struct obs *obs = malloc((b->st.nfuncs + n->st.nfuncs + 1) * sizeof(*obs));
	size_t nobs = 0;

	if (!obs)
		pc_fatal("out of memory");
	memset(mo, 0, sizeof(*mo));
	nobs = collect_obs(b, obs, nobs);
	nobs = collect_obs(n, obs, nobs);
	if (nobs) {
		model_fit(mo, obs, nobs);
		mo->d0 = fmin(PRIOR_DF, mo->pooled_df);
		mo->fitted = 1;
	} else {
		/*
		 * One run a side: sampling noise alone, each observation worth
		 * a 250 Hz kernel tick (CPU-time timers fire at most once a
		 * tick; a signal then carries several samples).
		 */
		double a = fmax(1.0 / 250, fmax(1.0 / b->rate, 1.0 / n->rate));

		for (int i = 0; i < 3; i++)
			mo->fit[i] = (struct fit){ a, 0 };
		mo->d0 = INFINITY;
	}
	free(obs);
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
		test_row(w, &res->model, b, n, res->model.d0);
		w->family = w->mb + w->mn >= o->min_seconds;
		res->family += (size_t)w->family;
	}
}

/* The verdict of each tested row, after Holm's correction. */
static void
judge(struct result *res, const struct diff_opts *o)
{
	holm(res->rows, res->nrows);
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

static void
compare(struct result *res, struct side *b, struct side *n,
	const struct diff_opts *o)
{
	memset(res, 0, sizeof(*res));
	res->speed = 1;
	if (!o->absolute && o->metric != METRIC_PROGRAM) {
		side_normalize(b);
		side_normalize(n);
		res->speed = speed_ratio(b, n, &res->speed_judged);
	}
	model_build(&res->model, b, n);
	mean_var(b->program, b->nruns, 1, &res->prog.mb, &res->prog.vb);
	mean_var(n->program, n->nruns, 1, &res->prog.mn, &res->prog.vn);
	res->prog.name = "[program]";
	if (o->metric == METRIC_PROGRAM) {
		res->rows = malloc(sizeof(*res->rows));
		if (!res->rows)
			pc_fatal("out of memory");
		res->rows[0] = res->prog;
		res->nrows = 1;
		test_program(&res->rows[0], &res->model, b, n);
		res->rows[0].family = 1;
		res->family = 1;
	} else {
		test_functions(res, b, n, o);
	}
	judge(res, o);
	by_relative = o->metric == METRIC_TOTAL;
	qsort(res->rows, res->nrows, sizeof(*res->rows), cmp_rows);
}

int
cmd_diff(int argc, char **argv)
{
	struct diff_opts o = { METRIC_SELF, DIFF_TEXT, 0.01, 0.05, 0.01, 10, 0 };
	struct symtab_opts so = { 0, 0, NULL, 0 };
	struct side sides[2];
	struct result res;
	size_t tested = 0;
	int r;

	memset(sides, 0, sizeof(sides));
	if ((r = parse_args(argc, argv, &o, &so, sides)) >= 0) {
		free(sides[0].args);
		free(sides[1].args);
		return r;
	}
	side_load(&sides[0], &so, o.metric == METRIC_TOTAL);
	side_load(&sides[1], &so, o.metric == METRIC_TOTAL);
	if (!sides[0].st.nobjs != !sides[1].st.nobjs)
		pc_warn("note: only the %s side was recorded with PC_SCOPE=all: its shared "
			"libraries' time has nothing to be compared with",
			sides[0].st.nobjs ? "base" : "new");
	compare(&res, &sides[0], &sides[1], &o);
	for (size_t i = 0; i < res.nrows; i++)
		tested += (size_t)res.rows[i].tested;
	if (!tested)
		pc_fatal("'%s' and '%s': no function has samples on both sides; not builds of one program?",
			 sides[0].exe, sides[1].exe);
	switch (o.format) {
	case DIFF_TEXT:
		print_text(stdout, &res, &sides[0], &sides[1], &o);
		break;
	case DIFF_JSON:
		print_json(stdout, &res, &sides[0], &sides[1], &o);
		break;
	case DIFF_MARKDOWN:
		print_markdown(stdout, &res, &sides[0], &sides[1], &o);
		break;
	}
	if (fflush(stdout) || ferror(stdout))
		pc_fatal("standard output: %s", strerror(errno));
	free(res.rows);
	for (int s = 0; s < 2; s++) {
		side_release(&sides[s]);
		free(sides[s].args);
	}
	return res.nslow ? EXIT_REGRESSION : 0;
}
