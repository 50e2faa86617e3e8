/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof report --alloc: who allocates, how much, and what is still held
 * at exit, from an allocation profile (PC_ALLOC). Each stack's site is its
 * first frame in a named function (the allocator's caller, or the first
 * frame of the program's above library code such as operator new or
 * strdup). The figures are the estimates the profile holds, exact when it
 * was recorded at PC_ALLOC_RATE=1; each site's samples give its error.
 * Called by commands/alloc_report.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "writers/alloc_out.h"

struct site {
	uint32_t func;		/* the site's function */
	uint32_t sample; /* a sample of it with the most in use: its stack */
	double v[GMON_ALLOC_KINDS];
	double leak_best;
};

static int
cmp_bytes(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	if (x->v[GMON_ALLOC_BYTES] != y->v[GMON_ALLOC_BYTES])
		return x->v[GMON_ALLOC_BYTES] > y->v[GMON_ALLOC_BYTES] ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

static int
cmp_inuse(const void *a, const void *b)
{
	const struct site *x = a, *y = b;

	if (x->v[GMON_INUSE_BYTES] != y->v[GMON_INUSE_BYTES])
		return x->v[GMON_INUSE_BYTES] > y->v[GMON_INUSE_BYTES] ? -1 : 1;
	return cmp_bytes(a, b);
}

static const char *
func_name(const struct export *x, uint32_t loc)
{
	return x->strs[x->funcs[x->locs[loc].func].name];
}

/* The site of sample s: its first location in a named function, else
 * its leaf. */
static uint32_t
site_of(const struct export *x, const struct xp_sample *s)
{
	for (uint32_t d = 0; d < s->depth; d++) {
		uint32_t loc = x->pool[s->first + d];

		if (func_name(x, loc)[0] != '[')
			return x->locs[loc].func;
	}
	return s->depth ? x->locs[x->pool[s->first]].func : 0;
}

/* The export's samples summed by site into a new array; how many in *n,
 * and the totals of each kind in tot. */
static struct site *
sites_of(const struct export *x, size_t *n, double tot[GMON_ALLOC_KINDS])
{
	struct site *v = pc_calloc(x->nfuncs + 1, sizeof(*v));
	uint32_t *at =
		pc_calloc(x->nfuncs + 1, sizeof(*at)); /* 1 + index in v */

	*n = 0;
	memset(tot, 0, GMON_ALLOC_KINDS * sizeof(*tot));
	for (size_t i = 0; i < x->nsamples; i++) {
		const struct xp_sample *s = &x->samples[i];
		uint32_t f = site_of(x, s);
		struct site *e;

		if (s->kind >= GMON_ALLOC_KINDS || !(s->count > 0))
			continue;
		if (!at[f]) {
			v[*n].func = f;
			v[*n].sample = (uint32_t)i;
			at[f] = (uint32_t)++*n;
		}
		e = &v[at[f] - 1];
		e->v[s->kind] += s->count;
		tot[s->kind] += s->count;
		if (s->kind == GMON_INUSE_BYTES && s->count > e->leak_best) {
			e->leak_best = s->count;
			e->sample = (uint32_t)i;
		}
	}
	free(at);
	return v;
}

/* A site's relative error at about two standard errors, from its
 * samples: 0 when exact. */
static double
error_of(const struct export *x, double samples)
{
	if (x->alloc_rate <= 1 || !(samples > 0))
		return 0;
	return 2 / sqrt(samples);
}

/* The stack of sample i below its site, as "called from A <- B <- C". */
static void
print_callers(FILE *out, const struct export *x, uint32_t i)
{
	const struct xp_sample *s = &x->samples[i];
	uint32_t site = site_of(x, s), shown = 0;
	int past = 0;

	fputs("          at", out);
	for (uint32_t d = 0; d < s->depth && shown < 6; d++) {
		uint32_t loc = x->pool[s->first + d];
		const char *name = func_name(x, loc);

		if (!past) {
			past = x->locs[loc].func == site;
			if (!past)
				continue;
		}
		fprintf(out, "%s %s", shown ? " <-" : "", text_name(name));
		shown++;
	}
	fputc('\n', out);
}

static void
print_text(FILE *out, const struct export *x, const struct site *v, size_t n,
	   const double tot[GMON_ALLOC_KINDS], long top)
{
	size_t shown = top > 0 && (size_t)top < n ? (size_t)top : n, leaks = 0;
	char whose[64] = "";

	/* a run's processes of the program, summed (alloc_report.c) */
	if (x->alloc_files > 1)
		snprintf(whose, sizeof(whose),
			 ", its %d processes summed (--process PID: one)",
			 x->alloc_files);
	fprintf(out,
		"Allocations of %s%s: %.0f bytes in %.0f allocations; %.0f bytes in %.0f "
		"blocks in use at exit\n",
		x->ngroups ? text_name(x->strs[x->groups[0].name]) : "", whose,
		tot[GMON_ALLOC_BYTES], tot[GMON_ALLOC_OBJECTS],
		tot[GMON_INUSE_BYTES], tot[GMON_INUSE_OBJECTS]);
	if (x->alloc_rate > 1)
		fprintf(out,
			"(estimated from %.0f samples, one every %llu bytes on average)\n",
			tot[GMON_ALLOC_SAMPLES],
			(unsigned long long)x->alloc_rate);
	else
		fputs("(every allocation recorded: exact)\n", out);
	fprintf(out, "\n%14s %7s %11s %14s %9s %8s %7s  %s\n", "alloc bytes", "share",
		"allocs", "in-use bytes", "in use", "samples", "+-", "site");
	for (size_t i = 0; i < shown; i++)
		fprintf(out,
			"%14.0f %6.2f%% %11.0f %14.0f %9.0f %8.0f %6.1f%%  %s\n",
			v[i].v[GMON_ALLOC_BYTES],
			tot[GMON_ALLOC_BYTES] > 0 ?
				100 * v[i].v[GMON_ALLOC_BYTES] /
					tot[GMON_ALLOC_BYTES] :
				0,
			v[i].v[GMON_ALLOC_OBJECTS], v[i].v[GMON_INUSE_BYTES],
			v[i].v[GMON_INUSE_OBJECTS], v[i].v[GMON_ALLOC_SAMPLES],
			100 * error_of(x, v[i].v[GMON_ALLOC_SAMPLES]),
			text_name(x->strs[x->funcs[v[i].func].name]));
	if (shown < n)
		fprintf(out,
			"%14s %7s %11s %14s %9s %8s %7s  (%zu more sites)\n",
			"", "", "", "", "", "", "", n - shown);
	for (size_t i = 0; i < n; i++)
		leaks += v[i].v[GMON_INUSE_BYTES] > 0;
	fprintf(out,
		"\nLeaks at exit: %.0f bytes in %.0f blocks at %zu site%s (what was not "
		"freed when the profile was written; blocks still reachable from globals are "
		"not told apart)\n",
		tot[GMON_INUSE_BYTES], tot[GMON_INUSE_OBJECTS], leaks,
		leaks == 1 ? "" : "s");
}

static void
print_leaks(FILE *out, const struct export *x, struct site *v, size_t n,
	    long top)
{
	qsort(v, n, sizeof(*v), cmp_inuse);
	for (size_t i = 0; i < n && (top <= 0 || (long)i < top); i++) {
		if (!(v[i].v[GMON_INUSE_BYTES] > 0))
			break;
		fprintf(out, "%14.0f bytes in %.0f blocks at %s\n",
			v[i].v[GMON_INUSE_BYTES], v[i].v[GMON_INUSE_OBJECTS],
			text_name(x->strs[x->funcs[v[i].func].name]));
		print_callers(out, x, v[i].sample);
	}
}

static void
print_json(FILE *out, const struct export *x, const struct site *v, size_t n,
	   const double tot[GMON_ALLOC_KINDS])
{
	static const char *const keys[GMON_ALLOC_KINDS] = {
		"alloc_objects", "alloc_space", "inuse_objects", "inuse_space",
		"alloc_samples", "inuse_samples" };

	fprintf(out,
		"{\"rate_bytes\": %llu, \"exact\": %s, "
		"\"leaks_told_from_reachable\": false, "
		"\"processes_summed\": %d",
		(unsigned long long)x->alloc_rate,
		x->alloc_rate <= 1 ? "true" : "false",
		x->alloc_files > 1 ? x->alloc_files : 1);
	for (int k = 0; k < GMON_ALLOC_KINDS; k++)
		fprintf(out, ", \"%s\": %.0f", keys[k], tot[k]);
	fputs(", \"sites\": [", out);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", out);
		json_string(out, x->strs[x->funcs[v[i].func].name]);
		for (int k = 0; k < GMON_ALLOC_KINDS; k++)
			fprintf(out, ", \"%s\": %.0f", keys[k], v[i].v[k]);
		fprintf(out, ", \"error\": %.6f}",
			error_of(x, v[i].v[GMON_ALLOC_SAMPLES]));
	}
	fputs("\n]}\n", out);
}

void
alloc_print(FILE *out, const struct export *x, const struct report_opts *r)
{
	double tot[GMON_ALLOC_KINDS];
	size_t n;
	struct site *v = sites_of(x, &n, tot);

	qsort(v, n, sizeof(*v), cmp_bytes);
	if (r->format == FORMAT_JSON) {
		print_json(out, x, v, n, tot);
	} else {
		print_text(out, x, v, n, tot, r->top);
		print_leaks(out, x, v, n, r->top);
	}
	free(v);
}
