/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The call graph: gmon arcs mapped to functions and summed, and each
 * function's total time (self plus callees); writers/callgraph_out.c
 * prints it. Arc counts from libpc are samples
 * in which the edge was on the stack, so the splits follow time.
 */
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"

int
callgraph_cmp_arc(const void *a, const void *b)
{
	const struct cg_arc *x = a, *y = b;

	if (x->caller != y->caller)
		return x->caller < y->caller ? -1 : 1;
	return x->callee < y->callee ? -1 : x->callee > y->callee;
}

void
callgraph_build(struct callgraph *cg, const struct symtab *st,
		const struct gmon_profile *p, const struct flat *f)
{
	size_t n = 0;

	memset(cg, 0, sizeof(*cg));
	cg->arcs = pc_malloc((p->narcs ? p->narcs : 1) * sizeof(*cg->arcs));
	cg->total = pc_calloc(st->nfuncs ? st->nfuncs : 1, sizeof(*cg->total));
	for (size_t i = 0; i < p->narcs; i++) {
		long a = symtab_find(st, p->arcs[i].from_pc);
		long b = symtab_find(st, p->arcs[i].self_pc);

		if (gmon_arc_is_outside(p, &p->arcs[i]))
			continue;	/* samples, not an arc */
		if (a < 0 || b < 0) {
			cg->unresolved += (double)p->arcs[i].count;
			continue;
		}
		cg->arcs[n].caller = st->syms[a].func;
		cg->arcs[n].callee = st->syms[b].func;
		cg->arcs[n].samples = (double)p->arcs[i].count;
		n++;
	}
	/* sum arcs between the same two functions (call sites, pieces) */
	qsort(cg->arcs, n, sizeof(*cg->arcs), callgraph_cmp_arc);
	cg->narcs = 0;
	for (size_t i = 0; i < n; i++) {
		if (cg->narcs &&
		    !callgraph_cmp_arc(&cg->arcs[cg->narcs - 1], &cg->arcs[i]))
			cg->arcs[cg->narcs - 1].samples += cg->arcs[i].samples;
		else
			cg->arcs[cg->narcs++] = cg->arcs[i];
	}
	/*
	 * A function is on the stack, not at its top, in exactly the samples
	 * counted on the arcs to its callees: each sample counts each edge
	 * once, and below one frame of a function there is one callee. Self
	 * calls (recursion, a piece folded into its function) add nothing.
	 * Mutual recursion can count a sample twice, so totals are capped.
	 */
	for (size_t i = 0; i < f->nrows; i++)
		cg->total[f->rows[i].func] = f->rows[i].samples;
	for (size_t i = 0; i < cg->narcs; i++)
		if (cg->arcs[i].caller != cg->arcs[i].callee)
			cg->total[cg->arcs[i].caller] += cg->arcs[i].samples;
	for (size_t i = 0; i < st->nfuncs; i++)
		if (cg->total[i] > f->total)
			cg->total[i] = f->total;
}

void
callgraph_release(struct callgraph *cg)
{
	free(cg->arcs);
	free(cg->total);
	memset(cg, 0, sizeof(*cg));
}
