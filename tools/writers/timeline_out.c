/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof report --timeline: the export's timeline as text, for terminals
 * and CI logs. What was kept (all of the run's samples, or a uniform
 * sample of them past PC_TIMELINE_MAX), then each thread's run cut in
 * equal buckets, each with its CPU share of the bucket's time, its
 * off-CPU time, and the function that most samples ended in; then the
 * markers by name (count, total, shortest, mean, longest, the longest's
 * time) and the counters' last values.
 */
#include <stdlib.h>
#include <string.h>

#include "writers/export_out.h"
#include "model/timeline.h"

#define BUCKETS	20

struct bucket {
	double cpu, off;	/* samples */
	uint32_t *leaf;		/* per export func: weight index */
};

static const char *
leaf_name(const struct export *x, const struct tl_group *g, const struct tl_sample *s)
{
	if (s->stack >= g->nstacks || !g->stacks[s->stack].depth)
		return "[no stack recorded]";
	return x->strs[x->funcs[x->locs[g->pool[g->stacks[s->stack].first]].func].name];
}

static double
sec(uint64_t t, uint64_t zero)
{
	return t >= zero ? (double)(t - zero) / 1e9 : 0;
}

/* The most frequent leaf among the samples of thread tid in [a, b). */
static const char *
top_leaf(const struct export *x, const struct timelines *tl, uint32_t group, uint32_t tid,
	 uint64_t a, uint64_t b, double *share)
{
	const char *best = NULL;
	double best_w = 0, all = 0;

	for (size_t gi = 0; gi < tl->n; gi++) {
		const struct tl_group *g = &tl->v[gi];

		for (size_t i = 0; g->group == group && i < g->nsamples; i++) {
			const struct tl_sample *s = &g->samples[i];
			const char *name;
			double w = 0;

			if (s->tid != tid || s->t < a || s->t >= b)
				continue;
			all += s->weight;
			name = leaf_name(x, g, s);
			if (best && !strcmp(best, name))
				continue;
			/* its weight in the bucket (buckets are short: a scan) */
			for (size_t j = i; j < g->nsamples && g->samples[j].t < b; j++)
				if (g->samples[j].tid == tid && !strcmp(leaf_name(x, g, &g->samples[j]),
									name))
					w += g->samples[j].weight;
			if (w > best_w) {
				best_w = w;
				best = name;
			}
		}
	}
	*share = all > 0 ? best_w / all : 0;
	return best;
}

static void
print_thread(const struct export *x, const struct timelines *tl, uint32_t group, uint32_t tid,
	     uint64_t zero, uint64_t end, double interval_s, FILE *out)
{
	double width = (double)(end - zero) / BUCKETS / 1e9;

	for (int k = 0; k < BUCKETS; k++) {
		uint64_t a = zero + (uint64_t)((double)(end - zero) * k / BUCKETS);
		uint64_t b = zero + (uint64_t)((double)(end - zero) * (k + 1) / BUCKETS);
		double cpu = 0, off = 0, share;
		const char *top;

		if (k == BUCKETS - 1)
			b = end + 1;
		for (size_t gi = 0; gi < tl->n; gi++) {
			const struct tl_group *g = &tl->v[gi];

			for (size_t i = 0; g->group == group && i < g->nsamples; i++) {
				const struct tl_sample *s = &g->samples[i];

				if (s->tid != tid || s->t < a || s->t >= b)
					continue;
				*(s->off ? &off : &cpu) += s->weight;
			}
		}
		if (!(cpu > 0) && !(off > 0))
			continue;
		top = top_leaf(x, tl, group, tid, a, b, &share);
		fprintf(out, "  %8.3f-%-8.3f  cpu %3.0f%%", sec(a, zero), sec(b > end ? end : b, zero),
			width > 0 ? 100 * cpu * interval_s / width : 0);
		if (off > 0)
			fprintf(out, "  off-cpu %6.3f s", off * interval_s);
		fprintf(out, "  %s (%.0f%%)\n", top ? text_name(top) : "", 100 * share);
	}
}

struct mark_stat {
	const char *name;
	size_t n;
	double total, min, max, max_at;
	int64_t last;
	int kind;
};

static void
print_markers(const struct timelines *tl, uint64_t zero, FILE *out)
{
	struct mark_stat *v = NULL;
	size_t n = 0;

	for (size_t gi = 0; gi < tl->n; gi++) {
		const struct tl_group *g = &tl->v[gi];

		for (size_t i = 0; i < g->nmarkers; i++) {
			const struct tl_marker *m = &g->markers[i];
			double d = (double)(m->end - m->start) / 1e9;
			size_t k;

			for (k = 0; k < n && (strcmp(v[k].name, m->name) || v[k].kind != m->kind); k++)
				;
			if (k == n) {
				v = pc_realloc(v, (n + 1) * sizeof(*v));
				v[n++] = (struct mark_stat){ m->name, 0, 0, d, d, sec(m->start, zero),
							     0, m->kind };
			}
			v[k].n++;
			v[k].total += d;
			v[k].last = m->value;
			if (d < v[k].min)
				v[k].min = d;
			if (d > v[k].max) {
				v[k].max = d;
				v[k].max_at = sec(m->start, zero);
			}
		}
	}
	if (n)
		fprintf(out, "\nMarkers:\n  %7s %10s %10s %10s %10s %10s  name\n", "count", "total s",
			"min ms", "mean ms", "max ms", "max at s");
	for (size_t k = 0; k < n; k++) {
		if (v[k].kind == TL_COUNTER)
			fprintf(out, "  %7zu %10s %10s %10s %10s %10s  %s (counter, last %lld)\n",
				v[k].n, "", "", "", "", "", text_name(v[k].name),
				(long long)v[k].last);
		else if (v[k].kind == TL_INSTANT)
			fprintf(out, "  %7zu %10s %10s %10s %10s %10.3f  %s (instant)\n", v[k].n, "",
				"", "", "", v[k].max_at, text_name(v[k].name));
		else
			fprintf(out, "  %7zu %10.3f %10.3f %10.3f %10.3f %10.3f  %s\n", v[k].n,
				v[k].total, 1e3 * v[k].min, 1e3 * v[k].total / (double)v[k].n,
				1e3 * v[k].max, v[k].max_at, text_name(v[k].name));
	}
	free(v);
}

int
timeline_recorded(const struct export *x)
{
	if (!x->timeline || !x->timeline->n)
		return pc_error("'%s': no timeline recorded (pcprof run --timeline, "
				"PC_TIMELINE=1)", x->source);
	return 0;
}

int
timeline_print(const struct export *x, FILE *out, const char *title)
{
	const struct timelines *tl = x->timeline;
	uint64_t zero, end, seen = 0, kept = 0, lost = 0;

	if (timeline_recorded(x))
		return -1;
	zero = timelines_zero(tl);
	end = timelines_end(tl);
	for (size_t gi = 0; gi < tl->n; gi++) {
		seen += tl->v[gi].head.seen;
		kept += tl->v[gi].nsamples;
		lost += tl->v[gi].head.marks_lost;
	}
	fprintf(out, "Timeline of %s: %.3f s, %llu samples kept of %llu (%s)", text_name(title),
		sec(end, zero), (unsigned long long)kept, (unsigned long long)seen,
		kept >= seen ? "all" : "a uniform sample of the whole run: PC_TIMELINE_MAX");
	if (lost)
		fprintf(out, ", %llu markers lost", (unsigned long long)lost);
	fputs("\n", out);
	for (size_t t = 0; t < x->nthreads; t++) {
		const struct xp_thread *th = &x->threads[t];
		const struct tl_group *g = NULL;

		for (size_t gi = 0; gi < tl->n; gi++)
			if (tl->v[gi].group == th->group)
				g = &tl->v[gi];
		if (!g)
			continue;
		fprintf(out, "\nthread %llu %s (%s, pid %u):\n", (unsigned long long)th->tid,
			th->name ? text_name(x->strs[th->name]) : "",
			text_name(x->strs[x->groups[th->group].name]), g->head.pid);
		print_thread(x, tl, th->group, (uint32_t)th->tid, zero, end,
			     (double)g->head.interval_ns / 1e9, out);
	}
	print_markers(tl, zero, out);
	return 0;
}
