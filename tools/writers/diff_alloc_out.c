/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Printing the gate on allocations (pcprof diff and compare --metric
 * alloc|alloc-bytes): the verdict, naming the function whose allocations
 * grew most, the model's terms, and the functions in text, markdown or
 * JSON.
 * Called by commands/diff_alloc.c with model/diff_alloc.c's result.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pcprof.h"
#include "model/diff_alloc.h"
#include "writers/diff_alloc_out.h"
#include "writers/diff_out.h"

static const char *
unit_of(const struct diff_opts *o)
{
	return o->metric == METRIC_ALLOC ? "allocations" : "bytes";
}

static const char *
status_name(enum status s)
{
	static const char *const names[] = { "more", "fewer", "same", "small", "appeared",
					     "gone" };

	return names[s];
}

static double
change_pct(const struct row *w)
{
	return w->mb > 0 ? 100 * (w->mn - w->mb) / w->mb : 0;
}

/* The first row of status s (rows are sorted: the largest first). */
static const struct row *
first_of(const struct result *res, enum status s)
{
	for (size_t i = 0; i < res->nrows; i++)
		if (res->rows[i].status == s)
			return &res->rows[i];
	return NULL;
}

/* "regression: grow_site 1.0% more bytes (1000000 -> 1010000 a run)" */
static void
verdict(FILE *out, const struct result *res, const struct diff_opts *o, int md)
{
	const struct row *w = first_of(res, ST_SLOWER);
	const char *b = md ? "**" : "";

	if (!w) {
		fprintf(out, "%s%s: no significant growth in allocations%s", b,
			o->who, b);
		if (res->nfast)
			fprintf(out, "; %d function%s with significantly fewer",
				res->nfast, res->nfast == 1 ? "" : "s");
		fputc('\n', out);
		return;
	}
	fprintf(out,
		"%s%s: regression%s: %s %.2f%% more %s (%.0f -> %.0f a run, "
		"p %.2g)",
		b, o->who, b, text_name(w->name), change_pct(w),
		o->metric == METRIC_ALLOC ? "allocations" : "bytes allocated",
		w->mb, w->mn, w->padj);
	if (res->nslow > 1)
		fprintf(out, ", and %d more function%s", res->nslow - 1,
			res->nslow == 2 ? "" : "s");
	fputc('\n', out);
}

/* What was compared, and how. */
static void
terms(FILE *out, const struct result *res, const struct alloc_side *b,
      const struct alloc_side *n, const struct diff_opts *o)
{
	fprintf(out, "compared: %s a run, of each function and its callees, ",
		o->metric == METRIC_ALLOC ? "allocations" : "bytes allocated");
	if (b->rate <= 1 && n->rate <= 1)
		fputs("every allocation recorded (PC_ALLOC_RATE=1: exact)",
		      out);
	else if (b->rate == n->rate)
		fprintf(out,
			"sampled every %llu bytes on both sides (a function's "
			"error from its samples)",
			(unsigned long long)b->rate);
	else
		fprintf(out,
			"sampled every %llu bytes (base) and %llu (new) (a "
			"function's error from its samples)",
			(unsigned long long)b->rate,
			(unsigned long long)n->rate);
	fprintf(out,
		"; %d base run%s against %d new run%s; alpha %g over %zu function%s (Holm); "
		"changes of %g%% and %.0f %s at least\n",
		b->nruns, b->nruns == 1 ? "" : "s", n->nruns,
		n->nruns == 1 ? "" : "s", o->alpha, res->family,
		res->family == 1 ? "" : "s", 100 * o->threshold,
		fmax(1, ALLOC_MIN_SHARE * b->program), unit_of(o));
	if (o->exp)
		fprintf(out,
			"%d run%s a side in turns after a warm-up pair%s%s\n",
			o->exp->runs, o->exp->runs == 1 ? "" : "s",
			o->exp->dir ? "; the runs are in " : "",
			o->exp->dir ? text_name(o->exp->dir) : "");
}

static void
print_text(FILE *out, const struct result *res, const struct alloc_side *b,
	   const struct alloc_side *n, const struct diff_opts *o)
{
	size_t shown = 0;

	verdict(out, res, o, 0);
	terms(out, res, b, n, o);
	fprintf(out, "\n%15s %15s %9s %9s  %-8s %s\n", "base", "new", "change",
		"p", "status", "function");
	for (size_t i = 0; i < res->nrows; i++) {
		const struct row *w = &res->rows[i];
		int sig = w->status == ST_SLOWER || w->status == ST_FASTER;

		if (!sig && o->top && shown >= (size_t)o->top)
			continue;
		shown += !sig;
		fprintf(out, "%15.0f %15.0f ", w->mb, w->mn);
		if (w->tested)
			fprintf(out, "%+8.2f%% %9.2g", change_pct(w), w->padj);
		else
			fprintf(out, "%9s %9s", "-", "-");
		fprintf(out, "  %-8s %s\n", status_name(w->status),
			text_name(w->name));
	}
	if (shown < res->nrows - (size_t)(res->nslow + res->nfast))
		fprintf(out, "(%zu more functions, none significant)\n",
			res->nrows - (size_t)(res->nslow + res->nfast) - shown);
}

static void
print_markdown(FILE *out, const struct result *res, const struct alloc_side *b,
	       const struct alloc_side *n, const struct diff_opts *o)
{
	verdict(out, res, o, 1);
	fputc('\n', out);
	terms(out, res, b, n, o);
	if (!res->nslow && !res->nfast)
		return;
	fprintf(out, "\n| function | base %s | new %s | change | p |\n|---|---|---|---|---|\n",
		unit_of(o), unit_of(o));
	for (size_t i = 0; i < res->nrows; i++) {
		const struct row *w = &res->rows[i];

		if (w->status != ST_SLOWER && w->status != ST_FASTER)
			continue;
		fputs("| ", out);
		md_name(out, w->name);
		fprintf(out, " | %.0f | %.0f | %+.2f%% | %.2g |\n", w->mb,
			w->mn, change_pct(w), w->padj);
	}
}

static void
json_row(FILE *out, const struct row *w)
{
	fputs("{\"name\": ", out);
	json_string(out, w->name);
	fprintf(out,
		", \"status\": \"%s\", \"significant\": %s, \"base\": %.15g, "
		"\"new\": %.15g, \"change\": %.15g, \"change_ratio\": %.6g, \"se\": %.6g, "
		"\"p\": %.6g, \"p_adjusted\": %.6g}",
		status_name(w->status),
		w->status == ST_SLOWER || w->status == ST_FASTER ? "true" :
								   "false",
		w->mb, w->mn, w->mn - w->mb, w->mb > 0 ? w->mn / w->mb : 0,
		isfinite(w->se) ? w->se : 0, w->tested ? w->p : 1,
		w->tested ? w->padj : 1);
}

static void
print_json(FILE *out, const struct result *res, const struct alloc_side *b,
	   const struct alloc_side *n, const struct diff_opts *o)
{
	const struct row *w = first_of(res, ST_SLOWER);

	fprintf(out,
		"{\"verdict\": \"%s\", \"exit_status\": %d, \"regressions\": %d, "
		"\"improvements\": %d, \"metric\": \"%s\", \"unit\": \"%s\", \"blamed\": ",
		res->nslow ? "regression" : "no regression",
		res->nslow ? EXIT_REGRESSION : 0, res->nslow, res->nfast,
		o->metric == METRIC_ALLOC ? "alloc" : "alloc-bytes",
		unit_of(o));
	if (w)
		json_string(out, w->name);
	else
		fputs("null", out);
	fprintf(out,
		", \"exact\": %s, \"rate_bytes\": {\"base\": %llu, \"new\": %llu}, "
		"\"runs\": {\"base\": %d, \"new\": %d}, \"alpha\": %g, \"threshold\": %g, "
		"\"min_change\": %.6g, \"family_size\": %zu,\n \"program\": ",
		b->rate <= 1 && n->rate <= 1 ? "true" : "false",
		(unsigned long long)b->rate, (unsigned long long)n->rate,
		b->nruns, n->nruns, o->alpha, o->threshold,
		fmax(1, ALLOC_MIN_SHARE * b->program), res->family);
	json_row(out, &res->prog);
	fputs(",\n \"functions\": [", out);
	for (size_t i = 0; i < res->nrows; i++) {
		fputs(i ? ",\n  " : "\n  ", out);
		json_row(out, &res->rows[i]);
	}
	fprintf(out, "%s]}\n", res->nrows ? "\n " : "");
}

void
diff_alloc_print(FILE *out, const struct result *res,
		 const struct alloc_side *b, const struct alloc_side *n,
		 const struct diff_opts *o)
{
	if (o->format == DIFF_JSON)
		print_json(out, res, b, n, o);
	else if (o->format == DIFF_MARKDOWN)
		print_markdown(out, res, b, n, o);
	else
		print_text(out, res, b, n, o);
}
