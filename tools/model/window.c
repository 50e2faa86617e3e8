/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A window of a profile (report --from, --to, --marker): the timeline's
 * samples in a span of time, or inside the markers of one name, made the
 * export's samples, so that every format the export writes is of the
 * window alone. The timeline keeps only its samples in the window, and
 * the markers that overlap it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "model/export.h"
#include "model/timeline.h"
#include "model/xtable.h"

/* The first sample of g at or after t. */
static size_t
first_at(const struct tl_group *g, uint64_t t)
{
	size_t lo = 0, hi = g->nsamples;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (g->samples[mid].t < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* keep[i]: sample i of g is inside a marker named name (a thread's: of
 * that thread); how many such markers. */
static size_t
inside_markers(const struct tl_group *g, const char *name, unsigned char *keep)
{
	size_t n = 0;

	for (size_t i = 0; i < g->nmarkers; i++) {
		const struct tl_marker *m = &g->markers[i];

		if (m->kind != TL_INTERVAL || strcmp(m->name, name))
			continue;
		n++;
		for (size_t j = first_at(g, m->start); j < g->nsamples &&
		     g->samples[j].t <= m->end; j++)
			if (!m->tid || g->samples[j].tid == m->tid)
				keep[j] = 1;
	}
	return n;
}

/* Keep g's samples in [lo, hi] (and, with name, inside its markers),
 * its markers that overlap [lo, hi] and its allocation events in it; how
 * many markers named name. */
static size_t
cut_group(struct tl_group *g, uint64_t lo, uint64_t hi, const char *name)
{
	unsigned char *keep = pc_calloc(g->nsamples ? g->nsamples : 1, 1);
	size_t n = 0, named = 0, nm = 0;

	if (name)
		named = inside_markers(g, name, keep);
	else
		memset(keep, 1, g->nsamples);
	g->cpu_samples = 0;
	for (size_t i = 0; i < g->nsamples; i++) {
		const struct tl_sample *s = &g->samples[i];

		if (!keep[i] || s->t < lo || s->t > hi)
			continue;
		if (!s->off)
			g->cpu_samples += s->weight;
		g->samples[n++] = *s;
	}
	g->nsamples = n;
	for (size_t i = 0; i < g->nmarkers; i++) {
		if (g->markers[i].end < lo || g->markers[i].start > hi) {
			free(g->markers[i].name);
			continue;
		}
		g->markers[nm++] = g->markers[i];
	}
	g->nmarkers = nm;
	nm = 0;
	for (size_t i = 0; i < g->nallocs; i++)
		if (g->allocs[i].t >= lo && g->allocs[i].t <= hi)
			g->allocs[nm++] = g->allocs[i];
	g->nallocs = nm;
	free(keep);
	return named;
}

/* 1 + the export's thread tid of group, added where it has none. */
static uint32_t
thread_of(struct export *x, uint32_t group, uint32_t tid)
{
	for (size_t i = 0; i < x->nthreads; i++)
		if (x->threads[i].group == group && x->threads[i].tid == tid)
			return (uint32_t)i + 1;
	x->threads = xtable_grow_array(x->threads, &x->cap_threads,
				       x->nthreads + 1, sizeof(*x->threads));
	x->threads[x->nthreads] = (struct xp_thread){ group, tid, 0, 0, 0 };
	return (uint32_t)++x->nthreads;
}

/* Sample s of g as one of the export's. */
static void
add_sample(struct export *x, const struct tl_group *g,
	   const struct tl_sample *s, uint32_t none)
{
	const uint32_t *locs = &none;
	uint32_t depth = 1, th = thread_of(x, g->group, s->tid);
	struct xp_sample *sm;

	if (s->stack < g->nstacks && g->stacks[s->stack].depth) {
		locs = g->pool + g->stacks[s->stack].first;
		depth = g->stacks[s->stack].depth;
	}
	x->samples = xtable_grow_array(x->samples, &x->cap_samples,
				       x->nsamples + 1, sizeof(*x->samples));
	x->pool = xtable_grow_array(x->pool, &x->cap_pool, x->npool + depth,
				    sizeof(*x->pool));
	sm = &x->samples[x->nsamples++];
	*sm = (struct xp_sample){ x->npool, depth,     g->group, th,  s->off,
				  0,        s->weight, 0,        s->t };
	memcpy(x->pool + x->npool, locs, depth * sizeof(*locs));
	x->npool += depth;
	x->groups[g->group].samples += s->weight;
	x->threads[th - 1].samples += s->weight;
	x->total += s->weight;
	if (s->off) {
		x->threads[th - 1].off += s->weight;
		x->off += s->weight;
	}
}

/* One line where the window r asks for holds no sample of x: a report of
 * nothing is an answer, but one that a mistyped time or name gives too. */
static void
warn_empty(const struct export *x, const struct report_opts *r, uint64_t zero)
{
	char from[64] = "", to[64] = "";

	if (r->window & WINDOW_FROM)
		snprintf(from, sizeof(from), " from %g s", r->from);
	if (r->window & WINDOW_TO)
		snprintf(to, sizeof(to), " to %g s", r->to);
	pc_warn("warning: '%s': no samples%s%s%s%s%s (its timeline: 0 to %.3f s)",
		x->source, r->marker ? " inside the markers '" : "",
		r->marker ? r->marker : "", r->marker ? "'" : "", from, to,
		(double)(timelines_end(x->timeline) - zero) / 1e9);
}

/* How many of t's markers named name have no span to cut (instants and
 * counters); *first, the first one's time. */
static size_t
spanless_named(const struct timelines *t, const char *name, uint64_t *first)
{
	size_t n = 0;

	*first = UINT64_MAX;
	for (size_t i = 0; i < t->n; i++)
		for (size_t j = 0; j < t->v[i].nmarkers; j++) {
			const struct tl_marker *m = &t->v[i].markers[j];

			if (m->kind == TL_INTERVAL || strcmp(m->name, name))
				continue;
			n++;
			*first = m->start < *first ? m->start : *first;
		}
	return n;
}

int
export_keep_window(struct export *x, const struct report_opts *r)
{
	struct timelines *t = x->timeline;
	uint64_t zero, lo, hi = UINT64_MAX;
	size_t named = 0, spanless = 0;
	uint64_t first = 0;
	uint32_t none;

	if (!t || !t->n)
		return pc_error("'%s': no timeline recorded for --from, --to or --marker (pcprof "
				"run --timeline, PC_TIMELINE=1)", x->source);
	if ((r->window & WINDOW_TO) && (r->window & WINDOW_FROM) &&
	    r->to <= r->from)
		return pc_error("--to %g: not after --from %g", r->to, r->from);
	zero = timelines_zero(t);
	lo = zero + (uint64_t)llround(r->from * 1e9);
	if (r->window & WINDOW_TO)
		hi = zero + (uint64_t)llround(r->to * 1e9);
	if (r->marker)
		spanless = spanless_named(t, r->marker, &first);
	for (size_t i = 0; i < t->n; i++)
		named += cut_group(&t->v[i], lo, hi, r->marker);
	if (r->marker && !named && spanless)
		return pc_error(
			"'%s': the marker '%s' has no span (%zu at a single time, the "
			"first at %.6f s): --marker takes markers with a beginning and an "
			"end; give --from and --to around it",
			x->source, r->marker, spanless,
			(double)(first - zero) / 1e9);
	if (r->marker && !named)
		return pc_error("'%s': no marker named '%s' in its timeline",
				x->source, r->marker);
	/* the export's samples, from the timeline's alone */
	x->nsamples = x->npool = x->narcs = 0;
	x->total = x->off = 0;
	x->stacks = 1;
	for (size_t g = 0; g < x->ngroups; g++)
		x->groups[g].samples = 0;
	for (size_t i = 0; i < x->nthreads; i++)
		x->threads[i].samples = x->threads[i].off = 0;
	none = export_no_stack_loc(x);
	for (size_t i = 0; i < t->n; i++)
		for (size_t j = 0; j < t->v[i].nsamples; j++)
			/* the clock's samples: CPU, off-CPU, or both */
			if (t->v[i].samples[j].off ? x->clock != PC_CLOCK_CPU :
			    x->clock != PC_CLOCK_OFF)
				add_sample(x, &t->v[i], &t->v[i].samples[j],
					   none);
	if (r->window && !x->nsamples)
		warn_empty(x, r, zero);
	return 0;
}
