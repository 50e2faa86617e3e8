/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The call graph's text view (model/callgraph.c builds it): every
 * function by its total time, with its callers and callees. report.c
 * calls it.
 */
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"

static const struct callgraph *sort_cg;

static int
cmp_total(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (sort_cg->total[x] != sort_cg->total[y])
		return sort_cg->total[x] > sort_cg->total[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int
cmp_samples(const void *a, const void *b)
{
	const struct cg_arc *x = *(const struct cg_arc *const *)a;
	const struct cg_arc *y = *(const struct cg_arc *const *)b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return callgraph_cmp_arc(x, y);
}

static void
print_side(FILE *out, const char *label, const struct cg_arc **v, size_t n,
	   int callers, const struct symtab *st, const long *index)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += v[i]->samples;
	qsort(v, n, sizeof(*v), cmp_samples);
	for (size_t i = 0; i < n; i++) {
		uint32_t g = callers ? v[i]->caller : v[i]->callee;
		char buf[1024];

		fprintf(out, "      %-9s %10.0f %6.1f%%  %s [%ld]\n",
			i ? "" : label, v[i]->samples,
			100 * v[i]->samples / sum,
			text_name(func_label(st, g, buf, sizeof(buf))),
			index[g]);
	}
}

void
callgraph_print(FILE *out, const struct callgraph *cg, const struct flat *f,
		const struct symtab *st, long top)
{
	uint32_t *order =
		pc_malloc((st->nfuncs ? st->nfuncs : 1) * sizeof(*order));
	long *index = pc_malloc((st->nfuncs ? st->nfuncs : 1) * sizeof(*index));
	double *self = pc_calloc(st->nfuncs ? st->nfuncs : 1, sizeof(*self));
	const struct cg_arc **side =
		pc_malloc((cg->narcs ? cg->narcs : 1) * sizeof(*side));
	size_t n = 0;

	for (size_t i = 0; i < f->nrows; i++)
		self[f->rows[i].func] = f->rows[i].samples;
	for (size_t i = 0; i < st->nfuncs; i++)
		if (cg->total[i] > 0)
			order[n++] = (uint32_t)i;
	sort_cg = cg;
	qsort(order, n, sizeof(*order), cmp_total);
	for (size_t i = 0; i < st->nfuncs; i++)
		index[i] = 0;
	for (size_t i = 0; i < n; i++)
		index[order[i]] = (long)i + 1;
	fputs("\nCall graph: arc counts are samples in which the caller called the "
	      "callee,\nso they split time as it was spent (they are not call counts).\n",
	      out);
	if (top > 0 && (size_t)top < n)
		n = (size_t)top;
	for (size_t i = 0; i < n; i++) {
		uint32_t g = order[i];
		size_t k = 0;

		char buf[1024];

		fprintf(out, "\n[%zu] %s\n      total %.3f s (%.1f%%), self %.3f s\n",
			i + 1, text_name(func_label(st, g, buf, sizeof(buf))),
			cg->total[g] / f->rate,
			100 * cg->total[g] / f->total, self[g] / f->rate);
		for (size_t a = 0; a < cg->narcs; a++)
			if (cg->arcs[a].callee == g && cg->arcs[a].caller != g)
				side[k++] = &cg->arcs[a];
		print_side(out, "callers", side, k, 1, st, index);
		k = 0;
		for (size_t a = 0; a < cg->narcs; a++)
			if (cg->arcs[a].caller == g && cg->arcs[a].callee != g)
				side[k++] = &cg->arcs[a];
		print_side(out, "callees", side, k, 0, st, index);
	}
	free(order);
	free(index);
	free(self);
	free(side);
}
