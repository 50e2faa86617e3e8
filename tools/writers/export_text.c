/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The export in the text formats of two viewers:
 *
 * speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json): one sampled profile per
 * process, or per thread where the stacks recorded threads, each sample a stack
 * of indexes into the shared frames (the root first) weighed in seconds.
 *
 * callgrind's format, as callgrind_annotate and KCachegrind read it: each
 * function's self samples by source line, and its calls with the samples
 * in which each was on the stack (inclusive cost) at the calling line.
 * Stacks give the calls; without them, the call-graph arcs do, at line 0.
 * A sampling profiler counts no calls: every calls= line says 1.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "writers/export_out.h"

/* The function of location l (the one whose symbol holds it). */
static uint32_t
func_at(const struct export *x, uint32_t l)
{
	return x->locs[l].func;
}

/* Whether locations a and b are in one symbol (one function calling
 * itself), not two pieces of it nor code of no symbol. */
static int
same_symbol(const struct export *x, uint32_t a, uint32_t b)
{
	return x->locs[a].sym && x->locs[a].sym == x->locs[b].sym &&
	       x->locs[a].map == x->locs[b].map;
}

size_t
export_sample_frames(const struct export *x, const struct xp_sample *s,
		     uint32_t *fr)
{
	size_t n = 0;

	for (uint32_t d = s->depth, prev = 0; d-- > 0; ) {
		uint32_t l = x->pool[s->first + d], f = func_at(x, l);

		if (!n || fr[n - 1] != f || same_symbol(x, l, prev))
			fr[n++] = f;
		prev = l;
	}
	return n;
}

/* ------------------------------------------------------------- speedscope */

/* A speedscope profile: a process's samples, or where its stacks
 * recorded threads one thread's (thread: 1 + index; 0 the samples of no
 * thread). */
struct track {
	uint32_t group, thread;
	double samples;
};

static int
in_track(const struct xp_sample *s, const struct track *t, int by_thread)
{
	return s->group == t->group && (!by_thread || s->thread == t->thread);
}

static void
speedscope_profile(const struct export *x, FILE *out, const struct track *t,
		   int by_thread)
{
	const struct xp_group *gr = &x->groups[t->group];
	uint32_t *fr = NULL;
	size_t cap = 0;
	int first = 1;
	char name[600];
	int k;

	k = snprintf(name, sizeof(name), "%s", x->strs[gr->name]);
	if (gr->pid && k >= 0 && (size_t)k < sizeof(name))
		k += snprintf(name + k, sizeof(name) - (size_t)k, " (pid %llu)",
			      (unsigned long long)gr->pid);
	if (by_thread && k >= 0 && (size_t)k < sizeof(name)) {
		const struct xp_thread *th =
			t->thread ? &x->threads[t->thread - 1] : NULL;

		if (!th)
			snprintf(name + k, sizeof(name) - (size_t)k, " [no thread recorded]");
		else
			snprintf(name + k, sizeof(name) - (size_t)k,
				 " %s (tid %llu)",
				 th->name ? x->strs[th->name] : "",
				 (unsigned long long)th->tid);
	}
	fputs("{\"type\":\"sampled\",\"name\":", out);
	json_string(out, name);
	fprintf(out, ",\"unit\":\"seconds\",\"startValue\":0,\"endValue\":%.9g,\"samples\":[",
		t->samples / gr->rate);
	for (size_t i = 0; i < x->nsamples; i++) {
		const struct xp_sample *s = &x->samples[i];
		size_t n;

		if (!in_track(s, t, by_thread) || !(s->count > 0))
			continue;
		if (s->depth > cap) {
			cap = s->depth;
			fr = pc_realloc(fr, cap * sizeof(*fr));
		}
		n = export_sample_frames(x, s, fr);
		fputs(first ? "[" : ",[", out);
		for (size_t j = 0; j < n; j++)
			fprintf(out, j ? ",%u" : "%u", fr[j]);
		fputc(']', out);
		first = 0;
	}
	fputs("],\"weights\":[", out);
	first = 1;
	for (size_t i = 0; i < x->nsamples; i++)
		if (in_track(&x->samples[i], t, by_thread) &&
		    x->samples[i].count > 0) {
			fprintf(out, first ? "%.9g" : ",%.9g",
				x->samples[i].count / gr->rate);
			first = 0;
		}
	fputs("]}", out);
	free(fr);
}

/* The profiles: each process's, or each of its threads' where known;
 * those with no samples left out (but a file has one). */
static struct track *
tracks(const struct export *x, size_t *n)
{
	struct track *t = pc_realloc(NULL, (x->ngroups * 2 + x->nthreads + 1) *
						   sizeof(*t));
	size_t k = 0;

	for (uint32_t g = 0; g < x->ngroups; g++) {
		size_t from = k;

		for (size_t i = 0; i < x->nthreads; i++)
			if (x->threads[i].group == g)
				t[k++] =
					(struct track){ g, (uint32_t)i + 1, 0 };
		t[k++] = (struct track){ g, 0, 0 };
		for (size_t i = 0; i < x->nsamples; i++)
			for (size_t j = from; j < k; j++)
				if (x->samples[i].group == g &&
				    (k - from == 1 ||
				     x->samples[i].thread == t[j].thread))
					t[j].samples += x->samples[i].count;
	}
	*n = 0;
	for (size_t j = 0; j < k; j++)
		if (t[j].samples > 0)
			t[(*n)++] = t[j];
	if (!*n && k)
		t[(*n)++] = t[0];
	return t;
}

int
export_speedscope(const struct export *x, FILE *out, const char *title)
{
	size_t n, active = 0;
	struct track *t;
	int by_thread = x->nthreads > 0;

	/* a timeline: each thread's samples at their times */
	if (x->timeline)
		return export_speedscope_timeline(x, out, title);
	t = tracks(x, &n);
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"exporter\":\"pcprof\",\"name\":", out);
	json_string(out, title);
	/* the busiest is shown first */
	for (size_t j = 0; j < n; j++)
		if (t[j].samples > t[active].samples)
			active = j;
	fprintf(out, ",\"activeProfileIndex\":%zu", active);
	export_speedscope_frames(x, out);
	for (size_t j = 0; j < n; j++) {
		if (j)
			fputc(',', out);
		speedscope_profile(x, out, &t[j], by_thread);
	}
	fputs("]}\n", out);
	free(t);
	return ferror(out) ? -1 : 0;
}

/* -------------------------------------------------------------- callgrind */

struct cost {			/* self: callee is UINT32_MAX */
	uint32_t func, file;	/* where the cost is: function, source file */
	int line;
	uint32_t callee;
	double samples;
};

struct costs {
	struct cost *v;
	size_t n, cap;
};

static void
cost_add(struct costs *c, uint32_t func, uint32_t file, int line,
	 uint32_t callee, double samples)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 1024;
		c->v = pc_realloc(c->v, c->cap * sizeof(*c->v));
	}
	c->v[c->n++] = (struct cost){ func, file, line, callee, samples };
}

static int
cmp_cost(const void *a, const void *b)
{
	const struct cost *x = a, *y = b;

	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if (x->callee != y->callee)	/* self (UINT32_MAX) last */
		return x->callee < y->callee ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

/* Sum the costs of the same place. */
static void
costs_merge(struct costs *c, size_t from)
{
	size_t n = from;

	qsort(c->v + from, c->n - from, sizeof(*c->v), cmp_cost);
	for (size_t i = from; i < c->n; i++) {
		if (n > from && !cmp_cost(&c->v[n - 1], &c->v[i]))
			c->v[n - 1].samples += c->v[i].samples;
		else
			c->v[n++] = c->v[i];
	}
	c->n = n;
}

/* Each sample's self cost at its leaf and, once a sample, each call on
 * its stack (a function calling itself is not a call here). */
static void
gather(const struct export *x, struct costs *c)
{
	for (size_t i = 0; i < x->nsamples; i++) {
		const struct xp_sample *s = &x->samples[i];
		const uint32_t *l = x->pool + s->first;
		size_t from;

		if (!s->depth)
			continue;
		cost_add(c, func_at(x, l[0]), x->locs[l[0]].file,
			 x->locs[l[0]].line, UINT32_MAX, s->count);
		from = c->n;
		for (uint32_t d = 1; d < s->depth; d++) {
			uint32_t caller = func_at(x, l[d]),
				 callee = func_at(x, l[d - 1]);

			if (caller != callee)
				cost_add(c, caller, x->locs[l[d]].file,
					 x->locs[l[d]].line, callee, 1);
		}
		/* once a sample: the calls of this stack merged, then weighed */
		costs_merge(c, from);
		for (size_t k = from; k < c->n; k++)
			c->v[k].samples = s->count;
	}
	for (size_t i = 0; i < x->narcs; i++)
		cost_add(c, x->arcs[i].caller, x->funcs[x->arcs[i].caller].file,
			 0, x->arcs[i].callee, x->arcs[i].samples);
	costs_merge(c, 0);
}

/* Callgrind's name compression: "(id) name" the first time, "(id)" after. */
static void
name(FILE *out, const char *key, const struct export *x, uint32_t s,
     unsigned char *seen)
{
	const char *str = s ? x->strs[s] : "???";

	if (seen[s])
		fprintf(out, "%s=(%u)\n", key, s + 1);
	else
		fprintf(out, "%s=(%u) %s\n", key, s + 1, text_name(str));
	seen[s] = 1;
}

static uint32_t
map_file(const struct export *x, uint32_t func)
{
	uint32_t m = x->funcs[func].map;

	return m ? x->maps[m - 1].file : 0;
}

int
export_callgrind(const struct export *x, FILE *out, const char *title)
{
	unsigned char *obs = pc_calloc(x->nstrs, 1),
		      *files = pc_calloc(x->nstrs, 1),
		      *fns = pc_calloc(x->nstrs, 1);
	struct costs c = { 0 };
	uint32_t cur = UINT32_MAX, curfile = 0;
	double self = 0;

	gather(x, &c);
	fprintf(out,
		"# callgrind format\nversion: 1\ncreator: pcprof\ncmd: %s\n"
		"positions: line\nevents: Samples\nsummary: %.0f\n\n",
		text_name(title), x->total);
	for (size_t i = 0; i < c.n; i++) {
		const struct cost *k = &c.v[i];
		long long v = llround(k->samples);

		/* self costs in whole samples that add up to the summary: the
		 * rounding of fractions (a bin two functions share) is carried */
		if (k->callee == UINT32_MAX) {
			v = llround(self + k->samples) - llround(self);
			self += k->samples;
		}

		if (k->func != cur) {
			cur = k->func;
			curfile = x->funcs[cur].file;
			fputc('\n', out);
			name(out, "ob", x, map_file(x, cur), obs);
			name(out, "fl", x, curfile, files);
			name(out, "fn", x, x->funcs[cur].name, fns);
		}
		if (k->callee == UINT32_MAX) {
			if (k->file != curfile) {
				name(out, "fi", x, k->file, files);
				curfile = k->file;
			}
			fprintf(out, "%d %lld\n", k->line, v);
			continue;
		}
		if (k->file != curfile) {
			name(out, "fi", x, k->file, files);
			curfile = k->file;
		}
		name(out, "cob", x, map_file(x, k->callee), obs);
		name(out, "cfi", x, x->funcs[k->callee].file, files);
		name(out, "cfn", x, x->funcs[k->callee].name, fns);
		fprintf(out, "calls=1 %d\n%d %lld\n", x->funcs[k->callee].line,
			k->line, v);
	}
	free(c.v);
	free(obs);
	free(files);
	free(fns);
	return ferror(out) ? -1 : 0;
}
