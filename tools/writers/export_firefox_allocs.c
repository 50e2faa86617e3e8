/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Firefox export's native allocations (export_firefox.c writes the
 * rest): each thread's allocation events from its process's timeline
 * (PC_ALLOC with PC_TIMELINE), as the profiler's "balanced" table, a
 * free the bytes of its allocation, negative, at the same address; the
 * profiler's allocation and retained-memory call trees read it.
 */
#include "writers/export_firefox.h"

/* A column's value of event a (pass: stack, time, weight, address,
 * thread). */
static void
put(struct ff *f, struct ff_thread *t, ff_stack_fn stack,
    const struct tl_group *g, const struct tl_alloc *a, int pass, FILE *out)
{
	if (pass == 0)
		fprintf(out, "%lld", (long long)stack(f, t, g, a->stack, 0));
	else if (pass == 1)
		fprintf(out, "%.6f", ff_ms(f, a->t));
	else if (pass == 2)
		fprintf(out, "%lld", (long long)a->bytes);
	else if (pass == 3)
		fprintf(out, "%llu", (unsigned long long)a->addr);
	else
		fprintf(out, "%u", a->tid);
}

void
ff_write_allocs(struct ff *f, struct ff_thread *t, ff_stack_fn stack,
		FILE *out)
{
	static const char *const key[] = { "stack", "time", "weight",
					   "memoryAddress", "threadId" };
	size_t n = 0;
	int any = 0;

	for (size_t gi = 0; gi < f->tl->n; gi++)
		any |= f->tl->v[gi].group == t->group &&
		       f->tl->v[gi].has_allocs;
	if (!any)
		return;
	fputs(",\"nativeAllocations\":{\"weightType\":\"bytes\"", out);
	for (int pass = 0; pass < 5; pass++) {
		const char *sep = "";

		fprintf(out, ",\"%s\":[", key[pass]);
		for (size_t gi = 0; gi < f->tl->n; gi++) {
			const struct tl_group *g = &f->tl->v[gi];

			for (size_t i = 0;
			     g->group == t->group && i < g->nallocs; i++) {
				if (g->allocs[i].tid != t->tid)
					continue;
				fputs(sep, out);
				sep = ",";
				put(f, t, stack, g, &g->allocs[i], pass,
				    out);
				n += pass == 0;
			}
		}
		fputc(']', out);
	}
	fprintf(out, ",\"length\":%zu}", n);
}
