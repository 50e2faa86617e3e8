/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof report: the flat profile of an executable from one or more gmon
 * files, as text for people, JSON for scripts, or CSV for spreadsheets.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pcprof.h"
#include "symbols/waits.h"

/* A row of the report: a function, the samples in no symbol, or (with
 * --by-object) an object. */
struct line {
	const char *name;
	double samples;
	const char *object;	/* NULL for one executable */
	size_t functions;	/* --by-object: functions with samples */
};

#define OUTSIDE "[outside the executable]"

static const char *
object_of(const struct symtab *st, uint32_t func)
{
	return st->nobjs ? st->objnames[st->func_obj[func]] : NULL;
}

static size_t
lines_of(const struct flat *f, const struct symtab *st, struct line *l)
{
	const char *main_obj = st->nobjs ? st->objnames[0] : NULL;
	size_t n = 0;
	int unknown_done = f->unknown <= 0;

	int outside_done = f->outside <= 0;

	for (size_t i = 0; i < f->nrows; i++) {
		if (!outside_done && f->outside > f->rows[i].samples) {
			l[n++] = (struct line){ OUTSIDE, f->outside, main_obj, 0 };
			outside_done = 1;
		}
		if (!unknown_done && f->unknown > f->rows[i].samples) {
			l[n++] = (struct line){ "[unknown]", f->unknown, main_obj, 0 };
			unknown_done = 1;
		}
		l[n++] = (struct line){ st->funcs[f->rows[i].func], f->rows[i].samples,
					object_of(st, f->rows[i].func), 0 };
	}
	if (!outside_done)
		l[n++] = (struct line){ OUTSIDE, f->outside, main_obj, 0 };
	if (!unknown_done)
		l[n++] = (struct line){ "[unknown]", f->unknown, main_obj, 0 };
	return n;
}

static int
cmp_lines(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * --by-object: the flat profile summed per object, most first; without a
 * manifest, the executable (exe) is the one object. Time outside the
 * executable, recorded without detail, is a row of its own.
 */
static size_t
object_lines(const struct flat *f, const struct symtab *st, const char *exe, struct line *l)
{
	size_t n = 0, nobjs = st->nobjs ? st->nobjs : 1;
	const char *slash = exe ? strrchr(exe, '/') : NULL;
	const char *main_name = st->nobjs ? st->objnames[0] : slash ? slash + 1 :
				exe ? exe : "[executable]";

	for (size_t k = 0; k < nobjs; k++) {
		const char *name = k ? st->objnames[k] : main_name;

		l[k] = (struct line){ name, 0, name, 0 };
	}
	l[0].samples = f->unknown;	/* the executable's gaps */
	for (size_t i = 0; i < f->nrows; i++) {
		uint32_t k = st->nobjs ? st->func_obj[f->rows[i].func] : 0;

		l[k].samples += f->rows[i].samples;
		l[k].functions++;
	}
	for (size_t k = 0; k < nobjs; k++)
		if (l[k].samples > 0)
			l[n++] = l[k];
	if (f->outside > 0)
		l[n++] = (struct line){ OUTSIDE, f->outside, OUTSIDE, 0 };
	qsort(l, n, sizeof(*l), cmp_lines);
	return n;
}

/* Columns a name takes on a terminal: its escaped form's characters
 * (UTF-8's continuation bytes take none). */
static size_t
text_width(const char *s)
{
	size_t w = 0;

	for (s = text_name(s); *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* The object column's width: 20, or the widest object shown. */
static int
object_width(const struct line *l, size_t shown)
{
	size_t w = 20;

	for (size_t i = 0; i < shown; i++)
		if (l[i].object && text_width(l[i].object) > w)
			w = text_width(l[i].object);
	return w > 200 ? 200 : (int)w;
}

/* The spaces after s in a column of width w. */
static int
pad_to(int w, const char *s)
{
	size_t n = text_width(s);

	return n < (size_t)w ? w - (int)n : 0;
}

/* The children that the wait named name waited for: *n of them from
 * o->children (sorted by site), or NULL. */
static const struct wait_child *
children_of(const char *name, const struct report_opts *o, size_t *n)
{
	const struct wait_child *c = NULL;

	*n = 0;
	if (!wait_name_is(name))
		return NULL;
	for (size_t i = 0; i < o->nchildren; i++)
		if (!strcmp(o->children[i].site, name)) {
			if (!c)
				c = &o->children[i];
			(*n)++;
		}
	return c;
}

#define CHILDREN_SHOWN	10	/* children listed under a row; the rest summed */

/* Text: under a wait for children, the children it waited for, each with
 * its time and the command that shows its own profile (a run directory
 * holds every process's), the longest first. */
static void
print_children(FILE *out, const char *name, const struct report_opts *o)
{
	const char *dir = o->files[0];
	char *slash = NULL, *copy;
	size_t n;
	const struct wait_child *c = children_of(name, o, &n);
	double rest = 0;
	struct stat sb;

	if (!c)
		return;
	/* a profile's directory, or the directory given */
	copy = pc_strdup(dir);
	if (stat(copy, &sb) == 0 && !S_ISDIR(sb.st_mode) && (slash = strrchr(copy, '/')))
		*slash = 0;
	else if (stat(copy, &sb) == 0 && !S_ISDIR(sb.st_mode))
		strcpy(copy, ".");
	for (size_t i = 0; i < n; i++) {
		if (i >= CHILDREN_SHOWN) {
			rest += c[i].samples;
			continue;
		}
		fprintf(out, "%41s for pid %lu: %.3f s (pcprof report %s --process %lu)\n", "",
			(unsigned long)c[i].pid, c[i].samples, text_name(copy),
			(unsigned long)c[i].pid);
	}
	if (n > CHILDREN_SHOWN)
		fprintf(out, "%41s for %zu more children: %.3f s\n", "", n - CHILDREN_SHOWN, rest);
	free(copy);
}

/* JSON: a wait's children, "wait_pids": [{"pid": N, "seconds": S}, ...]. */
static void
json_children(FILE *out, const char *name, const struct report_opts *o)
{
	size_t n;
	const struct wait_child *c = children_of(name, o, &n);

	if (!c)
		return;
	fputs(", \"wait_pids\": [", out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s{\"pid\": %lu, \"seconds\": %.6f}", i ? ", " : "",
			(unsigned long)c[i].pid, c[i].samples);
	fputc(']', out);
}

/* The window a report was cut to (--marker, --from, --to), if any. */
static void
print_window(FILE *out, const struct report_opts *o)
{
	if (o->window & WINDOW_MARKER)
		fprintf(out, ", inside marker '%s'", text_name(o->marker));
	if (o->window & WINDOW_FROM)
		fprintf(out, ", from %.3f s", o->from);
	if (o->window & WINDOW_TO)
		fprintf(out, ", to %.3f s", o->to);
}

static void
print_text(FILE *out, const struct flat *f, const struct line *l, size_t n,
	   size_t shown, const struct report_opts *o)
{
	double cum = 0, rest = 0;
	int ow = object_width(l, shown);
	/* an allocation metric's rate is 1: its units are whole */
	int alloc = CLOCK_IS_ALLOC(o->clock), prec = alloc ? 0 : 3;
	const char *self = alloc ? CLOCK_UNIT(o->clock) : "self s";

	fprintf(out, "%s profile of %s from %s", o->clock == PC_CLOCK_WALL ? "Wall-clock" :
		o->clock == PC_CLOCK_OFF ? "Off-CPU" : alloc ? "Allocation" : "Flat",
		text_name(o->exe), text_name(o->files[0]));
	if (o->nfiles > 1)
		fprintf(out, " and %d more", o->nfiles - 1);
	print_window(out, o);
	if (alloc)
		fprintf(out, ": %.0f %s (--metric %s)\n\n", f->total, CLOCK_UNIT(o->clock),
			clock_word(o->clock));
	else if (o->clock == PC_CLOCK_WALL || o->clock == PC_CLOCK_OFF)
		/* off-CPU time is in samples of the CPU rate: whole seconds
		 * are what it means */
		fprintf(out, ": %.3f s of %s time (%.3f s on CPU, %.3f s off CPU), in samples "
			"at %u Hz\n\n", f->total / f->rate, o->clock == PC_CLOCK_OFF ? "off-CPU" :
			"wall", (f->total - f->off) / f->rate, f->off / f->rate, f->rate);
	else
		fprintf(out, ": %.0f samples at %u Hz, %.3f s\n\n", f->total, f->rate,
			f->total / f->rate);
	if (o->by_object)
		fprintf(out, "%10s %7s %7s %10s %9s  %s\n", self, "share", "cum",
			"samples", "functions", "object");
	else if (n > 0 && (l[0].object || l[n - 1].object))
		fprintf(out, "%10s %7s %7s %10s  %-*s %s\n", self, "share", "cum",
			"samples", ow, "object", "function");
	else
		fprintf(out, "%10s %7s %7s %10s  %s\n", self, "share", "cum",
			"samples", "function");
	for (size_t i = 0; i < shown; i++) {
		double share = l[i].samples / f->total;

		cum += share;
		fprintf(out, "%10.*f %6.2f%% %6.2f%% %10.0f  ", prec,
			l[i].samples / f->rate, 100 * share, 100 * cum, l[i].samples);
		if (o->by_object)
			fprintf(out, "%8zu  %s\n", l[i].functions, text_name(l[i].name));
		else if (l[i].object)
			fprintf(out, "%s%*s %s\n", text_name(l[i].object),
				pad_to(ow, l[i].object), "", text_name(l[i].name));
		else
			fprintf(out, "%s\n", text_name(l[i].name));
		if (!o->by_object)
			print_children(out, l[i].name, o);
	}
	for (size_t i = shown; i < n; i++)
		rest += l[i].samples;
	if (shown < n)
		fprintf(out, "%10.*f %6.2f%% %7s %10.0f  (%zu more %s%s)\n", prec,
			rest / f->rate, 100 * rest / f->total, "", rest, n - shown,
			o->by_object ? "object" : "function", n - shown == 1 ? "" : "s");
}

/* JSON: the callers with no time of their own, after the k functions
 * listed, so that their total_seconds can be found too. */
static void
json_callers_only(FILE *out, const struct flat *f, const struct symtab *st,
		  const struct callgraph *cg, size_t k, int alloc)
{
	char *listed = pc_calloc(st->nfuncs ? st->nfuncs : 1, 1);

	for (size_t i = 0; i < f->nrows; i++)
		listed[f->rows[i].func] = 1;
	for (size_t i = 0; i < st->nfuncs; i++) {
		if (listed[i] || cg->total[i] <= 0)
			continue;
		fputs(k++ ? ",\n  " : "\n  ", out);
		fputs("{\"name\": ", out);
		json_string(out, st->funcs[i]);
		if (st->nobjs) {
			fputs(", \"object\": ", out);
			json_string(out, object_of(st, (uint32_t)i));
		}
		fprintf(out, ", \"self_seconds\": 0, \"self_samples\": 0, \"share\": 0, "
			"\"total_seconds\": %.6f", cg->total[i] / f->rate);
		if (alloc)
			fprintf(out, ", \"self\": 0, \"total\": %.0f", cg->total[i]);
		fputc('}', out);
	}
	free(listed);
}

/* JSON: the objects' rows, the executable's and outside it included. */
static void
json_objects(FILE *out, const struct flat *f, const struct symtab *st, const char *exe)
{
	struct line *l = pc_malloc((st->nobjs + 2) * sizeof(*l));
	size_t n;

	n = object_lines(f, st, exe, l);
	fputs(", \"objects\": [", out);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n  " : "\n  ", out);
		fputs("{\"name\": ", out);
		json_string(out, l[i].name);
		fprintf(out, ", \"self_seconds\": %.6f, \"self_samples\": %.15g, "
			"\"share\": %.6f, \"functions\": %zu}", l[i].samples / f->rate,
			l[i].samples, f->total ? l[i].samples / f->total : 0,
			l[i].functions);
	}
	fputs(n ? "\n]" : "]", out);
	free(l);
}

/* JSON: the call graph's arcs. */
static void
json_arcs(FILE *out, const struct symtab *st, const struct callgraph *cg)
{
	fputs(", \"arcs\": [", out);
	for (size_t i = 0; i < cg->narcs; i++) {
		fputs(i ? ",\n  " : "\n  ", out);
		fputs("{\"caller\": ", out);
		json_string(out, st->funcs[cg->arcs[i].caller]);
		fputs(", \"callee\": ", out);
		json_string(out, st->funcs[cg->arcs[i].callee]);
		if (st->nobjs) {
			fputs(", \"caller_object\": ", out);
			json_string(out, object_of(st, cg->arcs[i].caller));
			fputs(", \"callee_object\": ", out);
			json_string(out, object_of(st, cg->arcs[i].callee));
		}
		fprintf(out, ", \"samples\": %.15g}", cg->arcs[i].samples);
	}
	fprintf(out, "%s], \"unresolved_arc_samples\": %.15g", cg->narcs ? "\n" : "",
		cg->unresolved);
}

static void
print_json(FILE *out, const struct flat *f, const struct symtab *st,
	   const struct callgraph *cg, size_t shown, const struct report_opts *o)
{
	fputs("{\"executable\": ", out);
	json_string(out, o->exe);
	fputs(", \"profiles\": [", out);
	for (int i = 0; i < o->nfiles; i++) {
		fputs(i ? ", " : "", out);
		json_string(out, o->files[i]);
	}
	fprintf(out, "], \"clock\": \"%s\", \"rate_hz\": %u, \"total_seconds\": %.6f, "
		"\"total_samples\": %.0f, ", clock_word(o->clock), f->rate, f->total / f->rate,
		f->total);
	if (o->clock == PC_CLOCK_WALL || o->clock == PC_CLOCK_OFF)
		fprintf(out, "\"cpu_seconds\": %.6f, \"off_cpu_seconds\": %.6f, ",
			(f->total - f->off) / f->rate, f->off / f->rate);
	fputs("\"symbols\": ", out);
	json_string(out, st->source);
	if (st->debug_path) {
		fputs(", \"debug_file\": ", out);
		json_string(out, st->debug_path);
	}
	fputs(", \"functions\": [", out);
	for (size_t i = 0; i < shown && i < f->nrows; i++) {
		const struct flat_row *r = &f->rows[i];

		fputs(i ? ",\n  " : "\n  ", out);
		fputs("{\"name\": ", out);
		json_string(out, st->funcs[r->func]);
		if (st->nobjs) {
			fputs(", \"object\": ", out);
			json_string(out, object_of(st, r->func));
		}
		fprintf(out, ", \"self_seconds\": %.6f, \"self_samples\": %.15g, \"share\": %.6f",
			r->samples / f->rate, r->samples, r->samples / f->total);
		if (cg)
			fprintf(out, ", \"total_seconds\": %.6f", cg->total[r->func] / f->rate);
		/* an allocation metric's: in its unit, objects or bytes */
		if (CLOCK_IS_ALLOC(o->clock))
			fprintf(out, ", \"self\": %.0f, \"total\": %.0f", r->samples,
				cg ? cg->total[r->func] : r->samples);
		json_children(out, st->funcs[r->func], o);
		fputc('}', out);
	}
	if (cg && o->top <= 0)
		json_callers_only(out, f, st, cg, f->nrows, CLOCK_IS_ALLOC(o->clock));
	fprintf(out, "%s], \"unattributed_samples\": %.15g, \"unattributed_share\": %.6f",
		f->nrows ? "\n" : "", f->unknown, f->total ? f->unknown / f->total : 0);
	fprintf(out, ", \"outside_samples\": %.15g, \"outside_share\": %.6f",
		f->outside, f->total ? f->outside / f->total : 0);
	json_objects(out, f, st, o->exe);
	if (cg)
		json_arcs(out, st, cg);
	fputs("}\n", out);
}

/* CSV: l[0..shown) of n, then the rest in one row, named as text's
 * "(N more functions)" line, with no object. */
static void
print_csv(FILE *out, const struct flat *f, const struct line *l, size_t n, size_t shown,
	  const struct report_opts *o)
{
	double cum = 0, rest = 0;
	int objects = shown > 0 && l[0].object;
	/* the first figure in the metric's unit: an allocation profile's
	 * bytes or objects, not seconds */
	const char *unit = CLOCK_IS_ALLOC(o->clock) ? CLOCK_UNIT(o->clock) : "seconds";

	fprintf(out, "%s,self_%s,self_samples,share,cumulative_share\n",
		o->by_object ? "object" : objects ? "object,function" : "function", unit);
	for (size_t i = 0; i < shown; i++) {
		double share = l[i].samples / f->total;

		cum += share;
		if (objects && !o->by_object) {
			csv_string(out, l[i].object);
			fputc(',', out);
		}
		csv_string(out, l[i].name);
		fprintf(out, ",%.6f,%.15g,%.6f,%.6f\n", l[i].samples / f->rate,
			l[i].samples, share, cum);
	}
	for (size_t i = shown; i < n; i++)
		rest += l[i].samples;
	if (shown < n)
		fprintf(out, "%s(%zu more %s%s),%.6f,%.15g,%.6f,%.6f\n",
			objects && !o->by_object ? "," : "", n - shown,
			o->by_object ? "object" : "function", n - shown == 1 ? "" : "s",
			rest / f->rate, rest, rest / f->total, cum + rest / f->total);
}

void
report_print(FILE *out, const struct flat *f, const struct symtab *st,
	     const struct callgraph *cg, const struct report_opts *o)
{
	struct line *l = pc_malloc((f->nrows + 2 + st->nobjs) * sizeof(*l));
	size_t n, shown;

	n = o->by_object ? object_lines(f, st, o->exe, l) : lines_of(f, st, l);
	shown = o->top > 0 && (size_t)o->top < n ? (size_t)o->top : n;
	switch (o->format) {
	case FORMAT_TEXT:
		print_text(out, f, l, n, shown, o);
		if (f->outside > 0)
			fprintf(out, "\n%s: %.1f %% of the samples were in code outside %s\n"
				"(its shared libraries, the vDSO, JIT code), recorded without detail;\n"
				"pcprof run, or PC_SCOPE=all, records the whole process.\n",
				OUTSIDE, 100 * f->outside / f->total, text_name(o->exe));
		if (strstr(st->source, "unwind tables"))
			fprintf(out, "\nNote: %s has no symbol table: its functions are\n"
				"named from its unwind tables (OBJECT+0xOFFSET). Its debug symbols\n"
				"(Debian's -dbgsym package, under /usr/lib/debug) would name them.\n",
				text_name(o->exe));
		else if (!strcmp(st->source, "no symbols") || !st->source[0])
			fprintf(out, "\nNote: %s has no symbols that pcprof could read, nor\n"
				"unwind tables: its own code is [unknown]. Its debug symbols (Debian's\n"
				"-dbgsym package, under /usr/lib/debug) would name it.\n",
				text_name(o->exe));
		if (o->by_object)
			break;
		if (o->callgraph && cg)
			callgraph_print(out, cg, f, st, o->top);
		else if (o->callgraph)
			fputs("\nNo call graph: the profile holds no arcs "
			      "(recorded with PC_CALLGRAPH=0?).\n", out);
		break;
	case FORMAT_JSON:
		print_json(out, f, st, cg, o->top > 0 ? (size_t)o->top : f->nrows, o);
		break;
	case FORMAT_CSV:
		print_csv(out, f, l, n, shown, o);
		break;
	case FORMAT_FOLDED:
	case FORMAT_PPROF:
	case FORMAT_SPEEDSCOPE:
	case FORMAT_CALLGRIND:
	case FORMAT_FIREFOX:
	case FORMAT_GMON:
		break;		/* report_files writes them (stackfile.c, export.h) */
	}
	free(l);
}
