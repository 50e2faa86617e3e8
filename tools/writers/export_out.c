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

#include "symbols/waits.h"
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

#define TOP_WAITS	3

/* Thread th's top waits (of w[0..n), export_thread_waits') onto out as format:
 * text, an indented line; json, a "waits" array; csv, one field. */
static void
print_waits(const struct export *x, uint32_t th, const struct thread_wait *w,
	    size_t n, enum format format, double rate, FILE *out)
{
	size_t shown = 0;

	if (format == FORMAT_JSON)
		fputs(", \"waits\": [", out);
	for (size_t i = 0; i < n && shown < TOP_WAITS; i++) {
		const char *name;

		if (w[i].thread != th)
			continue;
		name = x->strs[x->funcs[w[i].func].name];
		if (format == FORMAT_TEXT) {
			fprintf(out, "%s%s %.3f s",
				shown ? ", " : "           ", text_name(name),
				w[i].samples / rate);
		} else if (format == FORMAT_JSON) {
			fputs(shown ? ", {\"name\": " : "{\"name\": ", out);
			json_string(out, name);
			fprintf(out, ", \"seconds\": %.6f}",
				w[i].samples / rate);
		} else if (format == FORMAT_CSV) {
			char buf[512];

			/* one field: "NAME=SECONDS;..." */
			snprintf(buf, sizeof(buf), "%s=%.6f", name,
				 w[i].samples / rate);
			if (shown)
				fputc(' ', out);
			csv_string(out, buf);
		}
		shown++;
	}
	if (format == FORMAT_JSON)
		fputc(']', out);
	else if (format == FORMAT_TEXT && shown)
		fputc('\n', out);
}

/* One thread's row; first: the first row of the JSON array. A wall
 * view's row has the thread's wall, CPU and off-CPU seconds and its top
 * waits (w[0..nw)). */
static void
print_thread(const struct export *x, const struct xp_thread *t,
	     enum format format, FILE *out, int first,
	     const struct thread_wait *w, size_t nw)
{
	const struct xp_group *g = &x->groups[t->group];
	const char *name = t->name ? x->strs[t->name] : "";
	double share = x->total > 0 ? t->samples / x->total : 0;
	int wall = x->clock == PC_CLOCK_WALL;
	double sec = t->samples / g->rate, off = t->off / g->rate,
	       cpu = sec - off;
	uint32_t th = (uint32_t)(t - x->threads) + 1;

	if (format == FORMAT_TEXT) {
		if (wall)
			fprintf(out, "%10.3f %10.3f %10.3f ", sec, cpu, off);
		else
			fprintf(out, "%10.3f ", sec);
		fprintf(out, "%7.2f%% %10llu %8llu  %-16s  %s\n", 100 * share,
			(unsigned long long)t->tid, (unsigned long long)g->pid,
			text_name(name), text_name(x->strs[g->name]));
		if (x->clock != PC_CLOCK_CPU)
			print_waits(x, th, w, nw, format, g->rate, out);
	} else if (format == FORMAT_CSV) {
		if (wall)
			fprintf(out, "%.6f,%.6f,%.6f,", sec, cpu, off);
		else
			fprintf(out, "%.6f,", sec);
		fprintf(out, "%.6f,%.0f,%llu,%llu,", share, t->samples,
			(unsigned long long)t->tid, (unsigned long long)g->pid);
		csv_string(out, name);
		fputc(',', out);
		csv_string(out, x->strs[g->name]);
		if (x->clock != PC_CLOCK_CPU) {
			fputc(',', out);
			print_waits(x, th, w, nw, format, g->rate, out);
		}
		fputc('\n', out);
	} else if (format == FORMAT_JSON) {
		fprintf(out, "%s\n  {\"tid\": %llu, \"name\": ", first ? "" : ",",
			(unsigned long long)t->tid);
		json_string(out, name);
		fprintf(out, ", \"pid\": %llu, \"program\": ",
			(unsigned long long)g->pid);
		json_string(out, x->strs[g->name]);
		if (x->clock == PC_CLOCK_CPU)
			fprintf(out, ", \"cpu_seconds\": %.6f", sec);
		else
			fprintf(out,
				", \"wall_seconds\": %.6f, \"cpu_seconds\": %.6f, "
				"\"off_cpu_seconds\": %.6f",
				wall ? sec : off, wall ? cpu : 0, off);
		fprintf(out, ", \"samples\": %.0f, \"share\": %.6f", t->samples,
			share);
		if (x->clock != PC_CLOCK_CPU)
			print_waits(x, th, w, nw, format, g->rate, out);
		fputc('}', out);
	}
}

/* The table's head for the clock: text's columns, csv's fields. */
static void
print_threads_head(const struct export *x, enum format format, FILE *out,
		   const char *title)
{
	int wall = x->clock == PC_CLOCK_WALL;
	double rate = x->ngroups ? x->groups[0].rate : 1;

	if (format == FORMAT_TEXT && x->clock == PC_CLOCK_CPU)
		fprintf(out,
			"Threads of %s: %.0f samples\n\n%10s %8s %10s %8s  %-16s  %s\n",
			text_name(title), x->total, "CPU s", "share", "tid",
			"pid", "thread", "program");
	else if (format == FORMAT_TEXT)
		fprintf(out,
			"Threads of %s: %.3f s of %s time (%.3f s on CPU, %.3f s off "
			"CPU)\n\n%s%8s %10s %8s  %-16s  %s\n",
			text_name(title), x->total / rate,
			wall ? "wall" : "off-CPU", (x->total - x->off) / rate,
			x->off / rate,
			wall ? "    wall s      CPU s  off-CPU s " :
			       " off-CPU s ",
			"share", "tid", "pid", "thread",
			"program (then the top waits)");
	else if (format == FORMAT_CSV)
		fprintf(out, "%sshare,samples,tid,pid,thread,program%s\n",
			x->clock == PC_CLOCK_CPU ? "cpu_seconds," :
			wall ? "wall_seconds,cpu_seconds,off_cpu_seconds," : "off_cpu_seconds,",
			x->clock == PC_CLOCK_CPU ? "" : ",top_waits");
	else if (format == FORMAT_JSON)
		fprintf(out, "{\"clock\": \"%s\", \"threads\": [",
			clock_word(x->clock));
}

int
export_print_threads(const struct export *x, enum format format, FILE *out,
		     const char *title)
{
	const struct xp_thread **v =
		pc_malloc((x->nthreads ? x->nthreads : 1) * sizeof(*v));
	double unknown = x->total;
	struct thread_wait *w;
	size_t nw;

	if (!x->nthreads) {
		free(v);
		return pc_error(
			"'%s': no thread recorded for --by-thread (threads are recorded "
			"with the stacks: PC_STACKS=1, pcprof run --stacks)",
			x->source);
	}
	for (size_t i = 0; i < x->nthreads; i++) {
		v[i] = &x->threads[i];
		unknown -= v[i]->samples;
	}
	qsort(v, x->nthreads, sizeof(*v), cmp_thread);
	w = export_thread_waits(x, &nw);
	print_threads_head(x, format, out, title);
	for (size_t i = 0; i < x->nthreads; i++)
		if (v[i]->samples > 0)	/* none: left out by --thread */
			print_thread(x, v[i], format, out, i == 0, w, nw);
	if (format == FORMAT_TEXT && unknown > 0.5)
		fprintf(out, "%*s %7.2f%% %10s %8s  %-16s\n",
			x->clock == PC_CLOCK_WALL ? 32 : 10, "",
			100 * unknown / x->total, "", "",
			"[no thread recorded]");
	if (format == FORMAT_JSON)
		fprintf(out, "\n], \"total_samples\": %.0f, \"no_thread_samples\": %.0f}\n",
			x->total, unknown > 0 ? unknown : 0);
	free(w);
	free(v);
	return 0;
}

int
export_print(const struct export *x, enum format format, FILE *out,
	     const char *title)
{
	int r;

	if (format == FORMAT_PPROF && isatty(fileno(out)))
		return pc_error("--format pprof: a gzipped protobuf file, not for a terminal: "
				"name the file with -o FILE");
	if (format == FORMAT_FIREFOX && timeline_recorded(x))
		return -1;
	if (format == FORMAT_PPROF)
		r = export_pprof(x, out);
	else if (format == FORMAT_SPEEDSCOPE)
		r = export_speedscope(x, out, title);
	else if (format == FORMAT_FIREFOX)
		r = export_firefox(x, out, title);
	else
		r = export_callgrind(x, out, title);
	if (r && errno == ENOMEM)
		pc_oom();
	/* a write error is the caller's to tell, from ferror(out) */
	return 0;
}

int
export_finish(struct export *x, const struct report_opts *r, FILE *out,
	      const char *title)
{
	if (r->window && export_keep_window(x, r))
		return -1;
	if (r->thread && export_keep_thread(x, r->thread))
		return -1;
	if (r->timeline) {
		return timeline_print(x, out, title);
	} else if (r->by_thread) {
		return export_print_threads(
			x,
			FORMAT_IS_EXPORT(r->format) ? FORMAT_TEXT : r->format,
			out, title);
	} else if (FORMAT_IS_EXPORT(r->format)) {
		return export_print(x, r->format, out, title);
	} else if (r->format == FORMAT_FOLDED) {
		struct folded_set fs;

		export_folded(x, &fs);
		folded_print(out, &fs);
		folded_release(&fs);
	} else {
		struct symtab st;
		struct callgraph cg;
		struct flat f;
		struct report_opts ro = *r;
		/* a wall view's functions have total time from the stacks; a
		 * CPU one's report stays as it always was */
		int graph = x->clock != PC_CLOCK_CPU;
		struct wait_child *kids = NULL;
		size_t nkids = 0, cap = 0;

		export_flat(x, &st, &f);
		export_wait_children(x, &kids, &nkids, &cap);
		ro.children = kids;
		ro.nchildren = nkids;
		if (graph)
			export_callgraph(x, &cg);
		ro.exe = title;
		ro.clock = x->clock;
		report_print(out, &f, &st, graph ? &cg : NULL, &ro);
		if (graph)
			callgraph_release(&cg);
		export_flat_release(&st, &f);
		wait_children_free(kids, nkids);
	}
	return 0;
}
