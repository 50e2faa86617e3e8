/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Which writer prints an export (export.h), as report asks: the threads'
 * lines (--by-thread), a file for another tool (--format pprof, speedscope,
 * callgrind), or the flat profile of what is kept (report.c's writers).
 * Called by the commands (cmd_report.c, runview.c); the model calls none.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "writers/export_out.h"

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
export_print(const struct export *x, enum format format, FILE *out, const char *title)
{
	int r;

	if (format == FORMAT_PPROF && isatty(fileno(out)))
		pc_fatal("--format pprof: a gzipped protobuf file, not for a terminal: name "
			 "the file with -o FILE");
	if (format == FORMAT_PPROF)
		r = export_pprof(x, out);
	else if (format == FORMAT_SPEEDSCOPE)
		r = export_speedscope(x, out, title);
	else
		r = export_callgrind(x, out, title);
	if (r && errno == ENOMEM)
		pc_fatal("out of memory");
	/* a write error is the caller's to tell, from ferror(out) */
}

void
export_finish(struct export *x, const struct report_opts *r, FILE *out, const char *title)
{
	if (r->thread)
		export_keep_thread(x, r->thread);
	if (r->by_thread) {
		export_print_threads(x, FORMAT_IS_EXPORT(r->format) ? FORMAT_TEXT : r->format,
				     out, title);
	} else if (FORMAT_IS_EXPORT(r->format)) {
		export_print(x, r->format, out, title);
	} else {
		struct symtab st;
		struct flat f;
		struct report_opts ro = *r;

		export_flat(x, &st, &f);
		ro.exe = title;
		report_print(out, &f, &st, NULL, &ro);
		export_flat_release(&st, &f);
	}
}
