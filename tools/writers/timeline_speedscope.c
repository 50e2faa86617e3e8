/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * speedscope's export where the timeline was recorded (PC_TIMELINE=1):
 * one "evented" profile a thread, its frames opened and closed at the
 * samples' real times, so that speedscope's Time Order view is a true
 * timeline. A sample, timed when its thread's CPU period ended, covers
 * its weight's time before that (off-CPU: the time waited), from the end
 * of the thread's previous sample at the earliest; where the next begins
 * later, every frame closes in between, and the gap stays empty. Frames
 * are the export's functions, as in the sampled export (export_text.c).
 */
#include <stdlib.h>
#include <string.h>

#include "writers/export_out.h"
#include "model/timeline.h"

struct evented {
	FILE *out;
	uint32_t *open;		/* the frames open, the root first */
	size_t nopen, cap;
	int first;
};

static void
event(struct evented *e, char type, uint32_t frame, double at)
{
	fprintf(e->out, "%s{\"type\":\"%c\",\"frame\":%u,\"at\":%.9f}",
		e->first ? "" : ",", type, frame, at);
	e->first = 0;
}

/* Close the open frames down to depth keep, the deepest first. */
static void
close_to(struct evented *e, size_t keep, double at)
{
	while (e->nopen > keep)
		event(e, 'C', e->open[--e->nopen], at);
}

/* The functions of a sample's stack, the root first, a run of one
 * function once; how many. */
static size_t
frames_of(const struct export *x, const struct tl_group *g,
	  const struct tl_sample *s, uint32_t **fr, size_t *cap)
{
	const struct tl_stack *k;
	size_t n = 0;

	if (s->stack >= g->nstacks || !g->stacks[s->stack].depth)
		return 0;
	k = &g->stacks[s->stack];
	if (k->depth > *cap) {
		*cap = k->depth;
		*fr = pc_realloc(*fr, *cap * sizeof(**fr));
	}
	for (uint32_t d = k->depth; d-- > 0; ) {
		uint32_t f = x->locs[g->pool[k->first + d]].func;

		if (!n || (*fr)[n - 1] != f)
			(*fr)[n++] = f;
	}
	return n;
}

static void
thread_profile(const struct export *x, const struct tl_group *g, uint32_t tid,
	       uint64_t zero, uint64_t end, FILE *out)
{
	struct evented e = { out, NULL, 0, 0, 1 };
	double interval = (double)g->head.interval_ns / 1e9, prev = 0;
	uint32_t *fr = NULL;
	size_t cap = 0;
	const char *name = "";
	char label[160];

	for (size_t i = 0; i < x->nthreads; i++)
		if (x->threads[i].group == g->group &&
		    x->threads[i].tid == tid && x->threads[i].name)
			name = x->strs[x->threads[i].name];
	snprintf(label, sizeof(label), "%s (tid %u, pid %u)", name, tid,
		 g->head.pid);
	fputs("{\"type\":\"evented\",\"name\":", out);
	json_string(out, label);
	fprintf(out, ",\"unit\":\"seconds\",\"startValue\":0,\"endValue\":%.9f,\"events\":[",
		(double)(end - zero) / 1e9);
	for (size_t i = 0; i < g->nsamples; i++) {
		const struct tl_sample *s = &g->samples[i];
		double t = (double)(s->t - zero) / 1e9,
		       start = t - s->weight * interval;
		size_t n, same = 0;

		/* (a negative weight: time moved to another stack) */
		if (s->tid != tid || s->t < zero || !(s->weight > 0))
			continue;
		n = frames_of(x, g, s, &fr, &cap);
		if (start < prev)
			start = prev;
		if (start > prev)
			close_to(&e, 0, prev);
		while (same < n && same < e.nopen && e.open[same] == fr[same])
			same++;
		close_to(&e, same, start);
		if (n > e.cap) {
			e.cap = n;
			e.open = pc_realloc(e.open, e.cap * sizeof(*e.open));
		}
		for (; e.nopen < n; e.nopen++) {
			e.open[e.nopen] = fr[e.nopen];
			event(&e, 'O', fr[e.nopen], start);
		}
		prev = t;
	}
	close_to(&e, 0, prev);
	fputs("]}", out);
	free(e.open);
	free(fr);
}

int
export_speedscope_timeline(const struct export *x, FILE *out, const char *title)
{
	const struct timelines *tl = x->timeline;
	uint64_t zero = timelines_zero(tl), end = timelines_end(tl);
	int first = 1;

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"exporter\":\"pcprof\",\"name\":", out);
	json_string(out, title);
	fputs(",\"activeProfileIndex\":0", out);
	export_speedscope_frames(x, out);
	/* each thread of each process, the main thread first */
	for (size_t gi = 0; gi < tl->n; gi++) {
		const struct tl_group *g = &tl->v[gi];
		uint32_t *tids =
			pc_realloc(NULL, (g->nsamples + 1) * sizeof(*tids));
		size_t n = 0;

		tids[n++] = g->head.pid;
		for (size_t i = 0; i < g->nsamples; i++) {
			size_t k = 0;

			while (k < n && tids[k] != g->samples[i].tid)
				k++;
			if (k == n)
				tids[n++] = g->samples[i].tid;
		}
		for (size_t k = 0; k < n; k++) {
			fputs(first ? "" : ",", out);
			first = 0;
			thread_profile(x, g, tids[k], zero, end, out);
		}
		free(tids);
	}
	fputs("]}\n", out);
	return ferror(out) ? -1 : 0;
}
