/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The gmon profile of a wall-clock profile (wallgmon.h): the CPU profile
 * libpc wrote for gprof, plus the stacks' off-CPU time placed as gprof
 * places samples, at an address of the executable's text.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/wallgmon.h"

/* What the off-CPU stacks add: samples at addresses of the text, and
 * arcs, with fractional counts rounded once at the end. */
struct wall_add {
	struct { uint64_t at; double n; } *bins;
	size_t nbins, capbins;
	struct { uint64_t from, self; double n; } *arcs;
	size_t narcs, cap;
	double outside;
};

/* Whether stack word a is an address of the executable's text: libpc
 * writes the executable's frames at their link-time addresses, object
 * index 0 (gmon.h), and 0 for frames elsewhere. */
static int
in_text(uint64_t a)
{
	return a && !(a >> GMON_OBJ_SHIFT);
}

/* The histogram of p that holds a, or -1. */
static long
hist_of(const struct gmon_profile *p, uint64_t a)
{
	size_t lo = 0, hi = p->nhists;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (a < p->hists[mid].low)
			hi = mid;
		else if (a >= p->hists[mid].high)
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -1;
}

static void
bin_add(struct wall_add *w, uint64_t at, double n)
{
	if (w->nbins == w->capbins) {
		w->capbins = w->capbins ? 2 * w->capbins : 256;
		w->bins = pc_realloc(w->bins, w->capbins * sizeof(*w->bins));
	}
	w->bins[w->nbins].at = at;
	w->bins[w->nbins++].n = n;
}

static void
arc_add(struct wall_add *w, uint64_t from, uint64_t self, double n)
{
	if (w->narcs == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 256;
		w->arcs = pc_realloc(w->arcs, w->cap * sizeof(*w->arcs));
	}
	w->arcs[w->narcs].from = from;
	w->arcs[w->narcs].self = self;
	w->arcs[w->narcs++].n = n;
}

/* One off-CPU stack k of weight n (samples) into w. Frame 0 is the wait. */
static void
add_stack(struct wall_add *w, const struct gmon_stack *k, double n)
{
	uint32_t d;

	for (d = 1; d < k->depth && !in_text(k->pcs[d]); d++)
		;
	if (d >= k->depth) {
		w->outside += n;
		return;
	}
	bin_add(w, k->pcs[d], n);
	/* consecutive frames both in the text: caller d + 1 calls d; a pair
	 * seen already in this stack (recursion) counts once */
	for (; d + 1 < k->depth; d++) {
		int seen = 0;

		if (!in_text(k->pcs[d]) || !in_text(k->pcs[d + 1]))
			continue;
		for (uint32_t e = 1; e < d && !seen; e++)
			seen = k->pcs[e] == k->pcs[d] &&
			       k->pcs[e + 1] == k->pcs[d + 1];
		if (!seen)
			arc_add(w, k->pcs[d + 1], k->pcs[d], n);
	}
}

static int
cmp_at(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int
cmp_hist(const void *a, const void *b)
{
	const struct gmon_hist *x = a, *y = b;

	return x->low < y->low ? -1 : x->low > y->low;
}

/* The bin of p at address at, made (a histogram of one bin, of p's bin
 * size and rate) where no histogram covers it: libpc writes only the
 * parts of the text with samples. */
static uint64_t *
bin_at(struct gmon_profile *p, uint64_t at, uint64_t size)
{
	long h = hist_of(p, at);
	struct gmon_hist *nh;

	if (h >= 0) {
		const struct gmon_hist *hh = &p->hists[h];

		return &hh->counts[(at - hh->low) /
				   ((hh->high - hh->low) / hh->nbins)];
	}
	p->hists = pc_realloc(p->hists, (p->nhists + 1) * sizeof(*p->hists));
	nh = &p->hists[p->nhists];
	*nh = p->hists[0];
	nh->low = at - at % size;
	nh->high = nh->low + size;
	nh->nbins = 1;
	nh->counts = pc_realloc(NULL, sizeof(*nh->counts));
	nh->counts[0] = 0;
	p->nhists++;
	/* kept sorted for hist_of: one insertion at a time */
	qsort(p->hists, p->nhists, sizeof(*p->hists), cmp_hist);
	return bin_at(p, at, size);
}

/* w's fractions rounded into p: each count the rounded running sum's
 * step, so that the whole is the rounded whole. */
static void
add_into(struct gmon_profile *p, struct wall_add *w)
{
	const struct gmon_hist *h0 = &p->hists[0];
	uint64_t size = (h0->high - h0->low) / h0->nbins;
	double sum = 0;
	size_t na = p->narcs;

	if (!size)
		size = 2;
	/* by address, so that each bin's rounding is the same every run */
	qsort(w->bins, w->nbins, sizeof(*w->bins), cmp_at);
	for (size_t i = 0; i < w->nbins; i++) {
		uint64_t c =
			(uint64_t)(llround(sum + w->bins[i].n) - llround(sum));

		sum += w->bins[i].n;
		if (c)
			*bin_at(p, w->bins[i].at, size) += c;
	}
	p->arcs = pc_realloc(p->arcs,
			     (p->narcs + w->narcs + 1) * sizeof(*p->arcs));
	sum = 0;
	for (size_t i = 0; i < w->narcs; i++) {
		uint64_t c =
			(uint64_t)(llround(sum + w->arcs[i].n) - llround(sum));

		sum += w->arcs[i].n;
		if (c)
			p->arcs[na++] = (struct gmon_arc){ w->arcs[i].from,
							   w->arcs[i].self, c };
	}
	if (llround(w->outside) > 0)
		p->arcs[na++] =
			(struct gmon_arc){ GMON_OUTSIDE_FROM, GMON_OUTSIDE_SELF,
					   (uint64_t)llround(w->outside) };
	p->narcs = na;
}

int
wallgmon_build(struct gmon_profile *p, const struct pc_inputs *in, int run,
	       const char *stacks_file, enum pc_clock clock)
{
	const struct pc_run *r = &in->runs[run];
	struct wall_add w = { 0 };

	if (profiles_load(p, r->files, r->nfiles))
		return -1;
	if (!p->nhists)
		return pc_error("'%s': no histogram to place wall time in",
				r->files[0]);
	if (clock == PC_CLOCK_OFF) {
		for (size_t h = 0; h < p->nhists; h++)
			memset(p->hists[h].counts, 0,
			       p->hists[h].nbins * sizeof(uint64_t));
		p->narcs = 0;
	}
	for (int i = 0; i < (stacks_file ? 1 : r->nfiles); i++) {
		struct gmon_stacks ss;
		int bad = stacks_load(in, run, i, stacks_file, 1, &ss);

		if (bad < 0)
			return -1;
		if (bad)
			continue;
		if (ss.rate != p->hists[0].rate)
			return pc_error("'%s': stacks sampled at %u Hz, its profile at %u Hz",
					r->files[i], ss.rate, p->hists[0].rate);
		for (size_t j = 0; j < ss.n; j++)
			if (ss.v[j].flags & GMON_STACK_OFFCPU)
				add_stack(&w, &ss.v[j],
					  stack_weight(&ss, &ss.v[j],
						       PC_CLOCK_OFF));
		gmon_stacks_release(&ss);
	}
	add_into(p, &w);
	free(w.bins);
	free(w.arcs);
	return 0;
}
