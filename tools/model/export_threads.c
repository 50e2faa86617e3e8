/*
 * The export by thread (export.h): pcprof report --by-thread prints one
 * line per thread the stacks recorded, --thread keeps one thread's (or one
 * name's) samples, and export_flat turns what is kept into a flat profile
 * for report.c's writers.
 */
#include <stdlib.h>
#include <string.h>

#include "model/export.h"

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

void
export_keep_thread(struct export *x, const char *which)
{
	int any = 0;

	if (!x->nthreads)
		pc_fatal("'%s': no thread recorded for --thread %s (threads are recorded with "
			 "the stacks: PC_STACKS=1, pcprof run --stacks)", x->source, which);
	for (size_t i = 0; i < x->nthreads; i++)
		any |= thread_is(x, &x->threads[i], which);
	if (!any)
		pc_fatal("'%s': no thread of tid or name %s", x->source, which);
	x->total = 0;
	for (size_t g = 0; g < x->ngroups; g++)
		x->groups[g].samples = 0;
	for (size_t i = 0; i < x->nthreads; i++)
		if (!thread_is(x, &x->threads[i], which))
			x->threads[i].samples = 0;
	for (size_t i = 0; i < x->nsamples; i++) {
		struct xp_sample *s = &x->samples[i];

		if (!s->thread || !thread_is(x, &x->threads[s->thread - 1], which))
			s->count = 0;
		x->groups[s->group].samples += s->count;
		x->total += s->count;
	}
}

static int
cmp_thread(const void *a, const void *b)
{
	const struct xp_thread *x = *(const struct xp_thread *const *)a;
	const struct xp_thread *y = *(const struct xp_thread *const *)b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* One thread's row; first: the first row of the JSON array. */
static void
print_thread(const struct export *x, const struct xp_thread *t, enum format format, FILE *out,
	     int first)
{
	const struct xp_group *g = &x->groups[t->group];
	const char *name = t->name ? x->strs[t->name] : "";
	double share = x->total > 0 ? t->samples / x->total : 0;

	if (format == FORMAT_TEXT) {
		fprintf(out, "%10.3f %7.2f%% %10llu %8llu  %-16s  %s\n", t->samples / g->rate,
			100 * share, (unsigned long long)t->tid, (unsigned long long)g->pid,
			text_name(name), text_name(x->strs[g->name]));
	} else if (format == FORMAT_CSV) {
		fprintf(out, "%.6f,%.6f,%.0f,%llu,%llu,", t->samples / g->rate, share, t->samples,
			(unsigned long long)t->tid, (unsigned long long)g->pid);
		csv_string(out, name);
		fputc(',', out);
		csv_string(out, x->strs[g->name]);
		fputc('\n', out);
	} else if (format == FORMAT_JSON) {
		fprintf(out, "%s\n  {\"tid\": %llu, \"name\": ", first ? "" : ",",
			(unsigned long long)t->tid);
		json_string(out, name);
		fprintf(out, ", \"pid\": %llu, \"program\": ", (unsigned long long)g->pid);
		json_string(out, x->strs[g->name]);
		fprintf(out, ", \"cpu_seconds\": %.6f, \"samples\": %.0f, \"share\": %.6f}",
			t->samples / g->rate, t->samples, share);
	}
}

void
export_print_threads(const struct export *x, enum format format, FILE *out,
		     const char *title)
{
	const struct xp_thread **v = malloc((x->nthreads ? x->nthreads : 1) * sizeof(*v));
	double unknown = x->total;

	if (!v)
		pc_fatal("out of memory");
	if (!x->nthreads)
		pc_fatal("'%s': no thread recorded for --by-thread (threads are recorded with "
			 "the stacks: PC_STACKS=1, pcprof run --stacks)", x->source);
	for (size_t i = 0; i < x->nthreads; i++) {
		v[i] = &x->threads[i];
		unknown -= v[i]->samples;
	}
	qsort(v, x->nthreads, sizeof(*v), cmp_thread);
	if (format == FORMAT_TEXT)
		fprintf(out, "Threads of %s: %.0f samples\n\n%10s %8s %10s %8s  %-16s  %s\n",
			text_name(title), x->total, "CPU s", "share", "tid", "pid", "thread",
			"program");
	else if (format == FORMAT_CSV)
		fputs("cpu_seconds,share,samples,tid,pid,thread,program\n", out);
	else if (format == FORMAT_JSON)
		fputs("{\"threads\": [", out);
	for (size_t i = 0; i < x->nthreads; i++)
		if (v[i]->samples > 0)	/* none: left out by --thread */
			print_thread(x, v[i], format, out, i == 0);
	if (format == FORMAT_TEXT && unknown > 0.5)
		fprintf(out, "%10s %7.2f%% %10s %8s  %-16s\n", "", 100 * unknown / x->total, "",
			"", "[no thread recorded]");
	if (format == FORMAT_JSON)
		fprintf(out, "\n], \"total_samples\": %.0f, \"no_thread_samples\": %.0f}\n",
			x->total, unknown > 0 ? unknown : 0);
	free(v);
}

void
export_flat(const struct export *x, struct symtab *st, struct flat *f)
{
	double *per = calloc(x->nfuncs + 1, sizeof(*per));
	uint32_t *objof = calloc(x->nmaps + 1, sizeof(*objof));

	memset(st, 0, sizeof(*st));
	memset(f, 0, sizeof(*f));
	strcpy(st->source, ".symtab");
	st->funcs = calloc(x->nfuncs + 1, sizeof(*st->funcs));
	st->func_obj = calloc(x->nfuncs + 1, sizeof(*st->func_obj));
	st->objnames = calloc(x->nmaps + 2, sizeof(*st->objnames));
	f->rows = calloc(x->nfuncs + 1, sizeof(*f->rows));
	if (!per || !objof || !st->funcs || !st->func_obj || !st->objnames || !f->rows)
		pc_fatal("out of memory");
	/* object 0 is the first group's program; each map an object */
	st->objnames[st->nobjs++] = (char *)"[no object]";
	for (size_t m = 0; m < x->nmaps; m++) {
		const char *path = x->strs[x->maps[m].file], *b = strrchr(path, '/');

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
			f->rows[f->nrows++] = (struct flat_row){ (uint32_t)i, per[i] };
	}
	qsort(f->rows, f->nrows, sizeof(*f->rows), flat_row_cmp);
	f->total = x->total;
	f->rate = x->ngroups ? x->groups[0].rate : 1;
	free(per);
	free(objof);
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
