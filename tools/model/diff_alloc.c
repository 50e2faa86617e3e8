/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof diff and compare --metric alloc|alloc-bytes: each side's runs'
 * allocation profiles summed by function, and the functions of the two
 * sides compared by name (the model is in diff_alloc.h). A function's
 * figure is of the allocations made in it and in what it calls (every
 * function of a stack, once), so that a wrapper such as xmalloc or
 * operator new does not hide who called it; frames outside what was
 * profiled are "[libraries]", and "[program]" is the whole. Each run is
 * loaded with its own symbols, so that a whole process's profile
 * (PC_SCOPE=all) places every frame. Called by commands/diff_alloc.c.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcprof.h"
#include "model/stats.h"
#include "model/diff_alloc.h"
#include "symbols/symtab.h"
#include "model/xtable.h"

#define PROGRAM_ROW	"[program]"

/* One stack's figure in one run, its site named. */
struct entry {
	char *name;
	int run;
	double v, samples;
};

struct entries {
	struct entry *v;
	size_t n, cap;
};

/* The functions on stack k of file i of in's one run, each once, into
 * f[] (room for k->depth): how many; -1 stands for frames outside what was
 * profiled ("[libraries]"). */
static size_t
stack_funcs(const struct pc_inputs *in, int i, const struct gmon_stack *k,
	    long *f)
{
	const struct symtab *st = &in->st;
	size_t n = 0;

	for (uint32_t d = 0; d < k->depth; d++) {
		long s =
			k->pcs[d] ?
				symtab_find(st, inputs_addr(in, i, k->pcs[d])) :
				-1;
		long fn = s < 0 ? -1 : (long)st->syms[s].func;
		size_t j = 0;

		while (j < n && f[j] != fn)
			j++;
		if (j == n)
			f[n++] = fn;
	}
	return n;
}

static void
add_entry(struct entries *e, const char *name, int run, double v,
	  double samples)
{
	e->v = xtable_grow_array(e->v, &e->cap, e->n + 1, sizeof(*e->v));
	e->v[e->n].name = pc_strdup(name);
	e->v[e->n].run = run;
	e->v[e->n].v = v;
	e->v[e->n++].samples = samples;
}

/* The allocation profile beside file i of in's run, its stacks of kind
 * (and of samples) into e as run r's; 0, 1 where there is none, or -1
 * after one line. */
static int
load_file(struct entries *e, struct alloc_side *a, const struct pc_inputs *in,
	  int i, int r, unsigned kind)
{
	const char *gmon = in->runs[0].files[i];
	size_t len = strlen(gmon);
	char *path = pc_realloc(NULL, len + sizeof(GMON_ALLOC_SUFFIX)),
	     buf[1024];
	struct gmon_stacks ss;
	long f[GMON_STACK_MAX_DEPTH];

	memcpy(path, gmon, len);
	memcpy(path + len, GMON_ALLOC_SUFFIX, sizeof(GMON_ALLOC_SUFFIX));
	if (access(path, F_OK) && errno == ENOENT) {
		free(path);
		return 1;
	}
	if (stacks_load(in, 0, i, path, 1, &ss))
		return -1;
	if (a->rate && ss.rate != a->rate)
		return pc_error(
			"'%s': allocations sampled every %u bytes, not %llu as the "
			"side's first run: a side's runs must share PC_ALLOC_RATE",
			path, ss.rate, (unsigned long long)a->rate);
	a->rate = ss.rate;
	for (size_t j = 0; j < ss.n; j++) {
		const struct gmon_stack *k = &ss.v[j];
		unsigned kk = GMON_ALLOC_KIND(k->flags);

		size_t nf;

		if (!(k->flags & GMON_STACK_ALLOC) ||
		    (kk != kind && kk != GMON_ALLOC_SAMPLES) ||
		    k->depth > GMON_STACK_MAX_DEPTH)
			continue;
		nf = stack_funcs(in, i, k, f);
		/* the whole program's figure: a row of its own */
		add_entry(e, PROGRAM_ROW, r, kk == kind ? (double)k->count : 0,
			  kk == GMON_ALLOC_SAMPLES ? (double)k->count : 0);
		for (size_t q = 0; q < nf; q++)
			add_entry(e,
				  f[q] < 0 ? "[libraries]" :
					     func_label(&in->st, (uint32_t)f[q],
							buf, sizeof(buf)),
				  r, kk == kind ? (double)k->count : 0,
				  kk == GMON_ALLOC_SAMPLES ? (double)k->count :
							     0);
	}
	gmon_stacks_release(&ss);
	free(path);
	return 0;
}

/* Run r of s, loaded with its own symbols, into e; 0, or -1 after one
 * line. */
static int
load_run(struct entries *e, struct alloc_side *a, const struct side *s, int r,
	 unsigned kind, const struct symtab_opts *so)
{
	struct pc_inputs in;
	int found = 0, k;

	if (inputs_open(&in, s->exe, &s->args[r], 1, so, INPUTS_EACH_RUN) ||
	    inputs_load(&in, so, INPUTS_STRICT))
		return -1;
	for (int i = 0; i < in.runs[0].nfiles; i++) {
		if ((k = load_file(e, a, &in, i, r, kind)) < 0)
			return -1;
		found += k == 0;
	}
	if (!found)
		return pc_error(
			"'%s': no allocation profile (PROFILE.alloc): record with "
			"PC_ALLOC=1 (pcprof compare --metric alloc sets it)",
			s->args[r]);
	inputs_close(&in);
	return 0;
}

static int
cmp_entry(const void *x, const void *y)
{
	const struct entry *a = x, *b = y;
	int c = strcmp(a->name, b->name);

	return c ? c : a->run - b->run;
}

/*
 * The mean a run and the variance of one run's figure from per-run
 * figures v[] and samples smp[] (n runs): the sampling variance, v^2 / s
 * a run at a sampling rate (0 at rate 1), or the runs' own where larger.
 */
static void
mean_var(const double *v, const double *smp, int n, int exact, double *mean,
	 double *var)
{
	double m = 0, sv = 0, rv = 0;

	for (int r = 0; r < n; r++)
		m += v[r] / n;
	for (int r = 0; r < n; r++) {
		if (!exact && smp[r] > 0)
			sv += v[r] * v[r] / smp[r] / n;
		if (n > 1)
			rv += (v[r] - m) * (v[r] - m) / (n - 1);
	}
	*mean = m;
	*var = fmax(sv, rv);
}

/* The sorted entries summed by site into a's sites. */
static void
sum_sites(struct alloc_side *a, struct entries *e)
{
	int n = a->nruns;
	double *v = pc_realloc(NULL, 2 * (size_t)n * sizeof(*v)), *smp = v + n;

	a->sites = pc_realloc(NULL, (e->n ? e->n : 1) * sizeof(*a->sites));
	for (size_t i = 0, j; i < e->n; i = j) {
		struct alloc_site *t = &a->sites[a->nsites];

		memset(v, 0, 2 * (size_t)n * sizeof(*v));
		for (j = i; j < e->n && !strcmp(e->v[j].name, e->v[i].name);
		     j++) {
			v[e->v[j].run] += e->v[j].v;
			smp[e->v[j].run] += e->v[j].samples;
		}
		mean_var(v, smp, n, a->rate <= 1, &t->mean, &t->var);
		if (!(t->mean > 0))
			continue;
		t->name = e->v[i].name;
		e->v[i].name = NULL;
		a->nsites++;
		if (!strcmp(t->name, PROGRAM_ROW)) {
			a->program = t->mean;
			a->program_var = t->var;
		}
	}
	free(v);
}

int
diff_alloc_load(struct alloc_side *a, const struct side *s, enum metric metric,
		const struct symtab_opts *so)
{
	unsigned kind =
		metric == METRIC_ALLOC ? GMON_ALLOC_OBJECTS : GMON_ALLOC_BYTES;
	struct entries e = { NULL, 0, 0 };

	memset(a, 0, sizeof(*a));
	a->nruns = s->nruns;
	for (int r = 0; r < s->nruns; r++)
		if (load_run(&e, a, s, r, kind, so))
			return -1;
	qsort(e.v, e.n, sizeof(*e.v), cmp_entry);
	sum_sites(a, &e);
	for (size_t i = 0; i < e.n; i++)
		free(e.v[i].name);
	free(e.v);
	return 0;
}

void
diff_alloc_release(struct alloc_side *a)
{
	for (size_t i = 0; i < a->nsites; i++)
		free(a->sites[i].name);
	free(a->sites);
	memset(a, 0, sizeof(*a));
}

/* The test of one row (both means and variances set): z, or Welch's t
 * where a side's variance is its runs' own. */
static void
test_row(struct row *w, const struct alloc_side *b, const struct alloc_side *n)
{
	double vb = w->vb / b->nruns, vn = w->vn / n->nruns, se2 = vb + vn;

	w->se = sqrt(se2);
	w->df = b->nruns > 1 && n->nruns > 1 && se2 > 0 ?
			se2 * se2 /
				(vb * vb / (b->nruns - 1) +
				 vn * vn / (n->nruns - 1)) :
			INFINITY;
	if (!(w->df > 0))
		w->df = INFINITY;
	w->t = se2 > 0 ? (w->mn - w->mb) / w->se : w->mn == w->mb ? 0 :
	       w->mn > w->mb ? INFINITY : -INFINITY;
	w->p = isinf(w->t) ? 0 : stats_t_two_sided(w->t, w->df);
	w->tested = 1;
}

/* The sites of either side matched by name into rows (one more free). */
static struct row *
match(const struct alloc_side *b, const struct alloc_side *n, size_t *nrows)
{
	struct row *rows =
		pc_realloc(NULL, (b->nsites + n->nsites + 1) * sizeof(*rows));
	size_t i = 0, j = 0, k = 0;

	while (i < b->nsites || j < n->nsites) {
		int c = i == b->nsites ? 1 : j == n->nsites ? -1 :
			strcmp(b->sites[i].name, n->sites[j].name);
		struct row *w = &rows[k++];

		memset(w, 0, sizeof(*w));
		w->name = c <= 0 ? b->sites[i].name : n->sites[j].name;
		if (c <= 0) {
			w->mb = b->sites[i].mean;
			w->vb = b->sites[i++].var;
		}
		if (c >= 0) {
			w->mn = n->sites[j].mean;
			w->vn = n->sites[j++].var;
		}
	}
	*nrows = k;
	return rows;
}

/* Significant growth first, then fewer, then the rest, each the largest
 * change first as a part of the base figure: a caller's figure grows by
 * at least its callee's, but by a smaller part of itself, so the function
 * whose allocations grew comes first. */
static int
cmp_rows(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	double sa = diff_row_size(a), sb = diff_row_size(b);

	if (diff_row_rank(a) != diff_row_rank(b))
		return diff_row_rank(a) < diff_row_rank(b) ? -1 : 1;
	if (a->tested && b->tested) {
		sa /= a->mb;
		sb /= b->mb;
	}
	if (sa != sb)
		return sa > sb ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* A tested row's verdict: significant, and at least the threshold of
 * its base figure and the floor. */
static void
judge(struct result *res, struct row *w, double floor,
      const struct diff_opts *o)
{
	double d = w->mn - w->mb;

	if (!w->family) {
		w->status = ST_SMALL;
		return;
	}
	w->status = ST_SAME;
	if (w->padj <= o->alpha && fabs(d) >= floor &&
	    fabs(d) >= o->threshold * w->mb)
		w->status = d > 0 ? ST_SLOWER : ST_FASTER;
	res->nslow += w->status == ST_SLOWER;
	res->nfast += w->status == ST_FASTER;
}

void
diff_alloc_compare(struct result *res, const struct alloc_side *b,
		   const struct alloc_side *n, const struct diff_opts *o)
{
	double floor = fmax(1, ALLOC_MIN_SHARE * b->program);

	memset(res, 0, sizeof(*res));
	res->speed = 1;
	res->rows = match(b, n, &res->nrows);
	for (struct row *w = res->rows; w < res->rows + res->nrows; w++) {
		int program = !strcmp(w->name, PROGRAM_ROW);

		if (w->mb <= 0 || w->mn <= 0) {
			w->status = w->mb > 0 ? ST_GONE : ST_APPEARED;
			continue;
		}
		test_row(w, b, n);
		/* the whole program is in the family: growth spread over
		 * functions, or in a function new in this build */
		w->family = program || w->mb + w->mn >= floor;
		res->family += (size_t)w->family;
	}
	diff_holm(res->rows, res->nrows);
	for (struct row *w = res->rows; w < res->rows + res->nrows; w++) {
		if (w->tested)
			judge(res, w, floor, o);
		if (!strcmp(w->name, PROGRAM_ROW))
			res->prog = *w;
	}
	qsort(res->rows, res->nrows, sizeof(*res->rows), cmp_rows);
}
