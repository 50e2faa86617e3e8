/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The export by thread (export.h): --thread keeps one thread's (or one
 * name's) samples, and export_flat turns what is kept into a flat profile
 * for report.c's writers (export_out.c prints --by-thread's lines).
 */
#include <stdlib.h>
#include <string.h>

#include "model/export.h"
#include "symbols/waits.h"

/* Whether thread t is the one which names: a tid, or a name. */
static int
thread_is(const struct export *x, const struct xp_thread *t, const char *which)
{
	char *end;
	unsigned long long tid = strtoull(which, &end, 10);

	if (!*end && end != which)
		return t->tid == tid;
	return t->name && !strcmp(x->strs[t->name], which);
}

int
export_keep_thread(struct export *x, const char *which)
{
	int any = 0;

	if (!x->nthreads)
		return pc_error(
			"'%s': no thread recorded for --thread %s (threads are recorded "
			"with the stacks: PC_STACKS=1, pcprof run --stacks)",
			x->source, which);
	for (size_t i = 0; i < x->nthreads; i++)
		any |= thread_is(x, &x->threads[i], which);
	if (!any)
		return pc_error("'%s': no thread of tid or name %s", x->source,
				which);
	x->total = 0;
	x->off = 0;
	for (size_t g = 0; g < x->ngroups; g++)
		x->groups[g].samples = 0;
	for (size_t i = 0; i < x->nthreads; i++)
		if (!thread_is(x, &x->threads[i], which))
			x->threads[i].samples = x->threads[i].off = 0;
	for (size_t i = 0; i < x->nsamples; i++) {
		struct xp_sample *s = &x->samples[i];

		if (!s->thread ||
		    !thread_is(x, &x->threads[s->thread - 1], which))
			s->count = 0;
		x->groups[s->group].samples += s->count;
		x->total += s->count;
		if (s->off)
			x->off += s->count;
	}
	return 0;
}

void
export_flat(const struct export *x, struct symtab *st, struct flat *f)
{
	double *per = pc_calloc(x->nfuncs + 1, sizeof(*per));
	uint32_t *objof = pc_calloc(x->nmaps + 1, sizeof(*objof));

	memset(st, 0, sizeof(*st));
	memset(f, 0, sizeof(*f));
	strcpy(st->source, ".symtab");
	st->funcs = pc_calloc(x->nfuncs + 1, sizeof(*st->funcs));
	st->func_obj = pc_calloc(x->nfuncs + 1, sizeof(*st->func_obj));
	st->objnames = pc_calloc(x->nmaps + 2, sizeof(*st->objnames));
	f->rows = pc_calloc(x->nfuncs + 1, sizeof(*f->rows));
	/* object 0 is the first group's program; each map an object */
	st->objnames[st->nobjs++] = (char *)"[no object]";
	for (size_t m = 0; m < x->nmaps; m++) {
		const char *path = x->strs[x->maps[m].file],
			   *b = strrchr(path, '/');

		objof[m + 1] = (uint32_t)st->nobjs;
		st->objnames[st->nobjs++] = (char *)(b && b[1] ? b + 1 : path);
	}
	for (size_t i = 0; i < x->nsamples; i++) {
		const struct xp_sample *s = &x->samples[i];

		if (s->depth)
			per[x->locs[x->pool[s->first]].func] += s->count;
	}
	st->nfuncs = x->nfuncs;
	for (size_t i = 0; i < x->nfuncs; i++) {
		st->funcs[i] = x->strs[x->funcs[i].name];
		st->func_obj[i] = objof[x->funcs[i].map];
		if (per[i] > 0)
			f->rows[f->nrows++] =
				(struct flat_row){ (uint32_t)i, per[i] };
	}
	qsort(f->rows, f->nrows, sizeof(*f->rows), flat_row_cmp);
	f->total = x->total;
	f->off = x->off;
	f->rate = x->ngroups ? x->groups[0].rate : 1;
	free(per);
	free(objof);
}

void
export_wait_children(const struct export *x, struct wait_child **v, size_t *n,
		     size_t *cap)
{
	for (size_t i = 0; i < x->nsamples; i++) {
		const struct xp_sample *s = &x->samples[i];

		if (s->wait_pid && s->depth)
			wait_children_add(
				v, n, cap,
				x->strs[x->funcs[x->locs[x->pool[s->first]].func]
						.name],
				s->wait_pid,
				s->count / x->groups[s->group].rate);
	}
	wait_children_sort(*v, *n);
}

void
export_flat_release(struct symtab *st, struct flat *f)
{
	free(st->funcs);
	free(st->func_obj);
	free(st->objnames);
	free(f->rows);
	memset(st, 0, sizeof(*st));
	memset(f, 0, sizeof(*f));
}

static int
cmp_arc(const void *a, const void *b)
{
	const struct cg_arc *x = a, *y = b;

	if (x->caller != y->caller)
		return x->caller < y->caller ? -1 : 1;
	return x->callee < y->callee ? -1 : x->callee > y->callee;
}

/* Sort arcs[0..n) and sum those of one caller and callee; how many. With
 * once, each counts once (the pairs of one stack). */
static size_t
arcs_merge(struct cg_arc *arcs, size_t n, int once)
{
	size_t k = 0;

	qsort(arcs, n, sizeof(*arcs), cmp_arc);
	for (size_t i = 0; i < n; i++) {
		if (k && !cmp_arc(&arcs[k - 1], &arcs[i])) {
			if (!once)
				arcs[k - 1].samples += arcs[i].samples;
			continue;
		}
		arcs[k++] = arcs[i];
	}
	return k;
}

void
export_callgraph(const struct export *x, struct callgraph *cg)
{
	size_t cap = 256, n = 0, scap = 64;
	struct cg_arc *one = pc_malloc(scap * sizeof(*one));
	uint32_t *seen = pc_calloc(x->nfuncs + 1, sizeof(*seen));

	memset(cg, 0, sizeof(*cg));
	cg->arcs = pc_malloc(cap * sizeof(*cg->arcs));
	cg->total = pc_calloc(x->nfuncs + 1, sizeof(*cg->total));
	for (size_t i = 0; i < x->nsamples; i++) {
		const struct xp_sample *s = &x->samples[i];
		size_t k = 0;

		if (!(s->count > 0))
			continue;
		for (uint32_t d = 0; d < s->depth; d++) {
			uint32_t f = x->locs[x->pool[s->first + d]].func;

			/* a function once a stack, however deep it recurses */
			if (seen[f] != i + 1) {
				seen[f] = (uint32_t)i + 1;
				cg->total[f] += s->count;
			}
			if (d + 1 < s->depth) {
				uint32_t caller =
					x->locs[x->pool[s->first + d + 1]].func;

				if (caller == f)
					continue;
				if (k == scap)
					one = pc_realloc(one,
							 (scap *= 2) *
								 sizeof(*one));
				one[k++] =
					(struct cg_arc){ caller, f, s->count };
			}
		}
		k = arcs_merge(one, k, 1);
		if (n + k > cap) {
			while (n + k > cap)
				cap *= 2;
			cg->arcs =
				pc_realloc(cg->arcs, cap * sizeof(*cg->arcs));
		}
		memcpy(cg->arcs + n, one, k * sizeof(*one));
		n += k;
	}
	cg->narcs = arcs_merge(cg->arcs, n, 0);
	free(one);
	free(seen);
}

static int
cmp_wait(const void *a, const void *b)
{
	const struct thread_wait *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

static int
cmp_wait_key(const void *a, const void *b)
{
	const struct thread_wait *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

struct thread_wait *
export_thread_waits(const struct export *x, size_t *n)
{
	struct thread_wait *w = pc_malloc((x->nsamples + 1) * sizeof(*w));
	size_t k = 0;

	for (size_t i = 0; i < x->nsamples; i++) {
		const struct xp_sample *s = &x->samples[i];

		if (s->off && s->thread && s->depth && s->count > 0)
			w[k++] = (struct thread_wait){ s->thread,
				x->locs[x->pool[s->first]].func, s->count };
	}
	qsort(w, k, sizeof(*w), cmp_wait_key);
	*n = 0;
	for (size_t i = 0; i < k; i++)
		if (*n && !cmp_wait_key(&w[*n - 1], &w[i]))
			w[*n - 1].samples += w[i].samples;
		else
			w[(*n)++] = w[i];
	qsort(w, *n, sizeof(*w), cmp_wait);
	return w;
}
