/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof report --lines: the samples by source line (lines.c) as text,
 * JSON or CSV. A row is file:line and the function the code is in, with
 * the function inlined there when there is one; code with no line
 * information is function+0xOFFSET. Shares are of every sample, the
 * [unknown] and [outside the executable] rows included.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "model/lines.h"

#define OUTSIDE "[outside the executable]"

/* A printed row: a line, or one of the rows of what no line can hold. */
struct lrow_out {
	const struct line_row *r;	/* NULL for a pseudo row */
	const char *pseudo;
	double samples;
};

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* "file.c:12", or "func+0x1a" where there is no line; into buf. */
static const char *
where(const struct symtab *st, const struct line_row *r, char *buf, size_t n)
{
	if (r->file)
		snprintf(buf, n, "%s:%d", base_name(r->file), r->line);
	else
		snprintf(buf, n, "%s+0x%llx", st->funcs[r->func],
			 (unsigned long long)r->offset);
	return buf;
}

/* The rows, the pseudo rows in their places by samples. */
static size_t
rows_out(const struct lines *L, struct lrow_out *o)
{
	struct pseudo { const char *name; double samples; int done; } ps[2] = {
		{ OUTSIDE, L->outside, L->outside <= 0 },
		{ "[unknown]", L->unknown, L->unknown <= 0 },
	};
	size_t n = 0;

	if (ps[1].samples > ps[0].samples) {	/* the larger first */
		struct pseudo t = ps[0];

		ps[0] = ps[1];
		ps[1] = t;
	}
	/* each pseudo row before the first line with fewer samples */
	for (size_t i = 0; i <= L->nrows; i++) {
		for (int k = 0; k < 2; k++)
			if (!ps[k].done &&
			    (i == L->nrows ||
			     ps[k].samples > L->rows[i].samples)) {
				o[n++] = (struct lrow_out){ NULL, ps[k].name,
							    ps[k].samples };
				ps[k].done = 1;
			}
		if (i < L->nrows)
			o[n++] = (struct lrow_out){ &L->rows[i], NULL,
						    L->rows[i].samples };
	}
	return n;
}

static void
text_row(FILE *out, const struct symtab *st, const struct lrow_out *o)
{
	char buf[512];
	const struct line_row *r = o->r;

	if (!r) {
		fprintf(out, "%s\n", o->pseudo);
		return;
	}
	fprintf(out, "%-28s %s", text_name(where(st, r, buf, sizeof(buf))),
		text_name(st->funcs[r->func]));
	if (st->nobjs)
		fprintf(out, " (%s)",
			text_name(st->objnames[st->func_obj[r->func]]));
	if (r->inlined)
		fprintf(out, "  [inlined: %s]", text_name(r->inlined));
	fputc('\n', out);
}

static void
print_text(FILE *out, const struct lines *L, const struct symtab *st,
	   const struct lrow_out *o, size_t n, size_t shown,
	   const struct report_opts *ro)
{
	double cum = 0, rest = 0;

	fprintf(out, "Lines of %s from %s", text_name(ro->exe),
		text_name(ro->files[0]));
	if (ro->nfiles > 1)
		fprintf(out, " and %d more", ro->nfiles - 1);
	fprintf(out, ": %.0f samples at %u Hz, %.3f s\n\n", L->total, L->rate,
		L->rate ? L->total / L->rate : 0);
	fprintf(out, "%10s %7s %7s %10s  %-28s %s\n", "self s", "share", "cum",
		"samples", "line", "function");
	for (size_t i = 0; i < shown; i++) {
		double share = o[i].samples / L->total;

		cum += share;
		fprintf(out, "%10.3f %6.2f%% %6.2f%% %10.1f  ",
			o[i].samples / L->rate, 100 * share, 100 * cum,
			o[i].samples);
		text_row(out, st, &o[i]);
	}
	for (size_t i = shown; i < n; i++)
		rest += o[i].samples;
	if (shown < n)
		fprintf(out, "%10.3f %6.2f%% %7s %10.1f  (%zu more line%s)\n",
			rest / L->rate, 100 * rest / L->total, "", rest,
			n - shown, n - shown == 1 ? "" : "s");
	if (!L->have_lines && L->nolines > 0)
		fprintf(out, "\nNote: no line information was found for %s (build with -g, or\n"
			"install its debug file): its code is shown as function+0xOFFSET.\n",
			text_name(ro->exe));
}

static void
json_row(FILE *out, const struct lines *L, const struct symtab *st,
	 const struct line_row *r)
{
	fputs("{\"file\": ", out);
	if (r->file)
		json_string(out, r->file);
	else
		fputs("null", out);
	fprintf(out, ", \"line\": %d, \"function\": ", r->file ? r->line : 0);
	json_string(out, st->funcs[r->func]);
	if (st->nobjs) {
		fputs(", \"object\": ", out);
		json_string(out, st->objnames[st->func_obj[r->func]]);
	}
	fputs(", \"inlined\": ", out);
	if (r->inlined)
		json_string(out, r->inlined);
	else
		fputs("null", out);
	if (!r->file)
		fprintf(out, ", \"offset\": %llu",
			(unsigned long long)r->offset);
	fprintf(out, ", \"self_seconds\": %.6f, \"self_samples\": %.15g, \"share\": %.6f}",
		r->samples / L->rate, r->samples, r->samples / L->total);
}

static void
print_json(FILE *out, const struct lines *L, const struct symtab *st,
	   size_t shown, const struct report_opts *ro)
{
	fputs("{\"executable\": ", out);
	json_string(out, ro->exe);
	fputs(", \"profiles\": [", out);
	for (int i = 0; i < ro->nfiles; i++) {
		fputs(i ? ", " : "", out);
		json_string(out, ro->files[i]);
	}
	fprintf(out,
		"], \"rate_hz\": %u, \"total_seconds\": %.6f, \"total_samples\": %.0f, "
		"\"line_information\": %s, \"lines\": [",
		L->rate, L->rate ? L->total / L->rate : 0, L->total,
		L->have_lines ? "true" : "false");
	for (size_t i = 0; i < shown && i < L->nrows; i++) {
		fputs(i ? ",\n  " : "\n  ", out);
		json_row(out, L, st, &L->rows[i]);
	}
	fprintf(out,
		"%s], \"no_line_samples\": %.15g, \"unattributed_samples\": %.15g, "
		"\"outside_samples\": %.15g}\n",
		L->nrows ? "\n" : "", L->nolines, L->unknown, L->outside);
}

/* CSV: o[0..shown) of n, then the rest in one row, its function named
 * as text's "(N more lines)". */
static void
print_csv(FILE *out, const struct lines *L, const struct symtab *st,
	  const struct lrow_out *o, size_t n, size_t shown)
{
	double rest = 0;

	fputs("file,line,function,inlined,offset,self_seconds,self_samples,share\n",
	      out);
	for (size_t i = 0; i < shown; i++) {
		const struct line_row *r = o[i].r;

		if (!r) {
			fprintf(out, ",,");
			csv_string(out, o[i].pseudo);
			fputs(",,", out);
		} else {
			csv_string(out, r->file ? r->file : "");
			if (r->file)
				fprintf(out, ",%d,", r->line);
			else
				fputs(",,", out);
			csv_string(out, st->funcs[r->func]);
			fputc(',', out);
			csv_string(out, r->inlined ? r->inlined : "");
			if (!r->file)
				fprintf(out, ",%llu",
					(unsigned long long)r->offset);
			else
				fputc(',', out);
		}
		fprintf(out, ",%.6f,%.15g,%.6f\n", o[i].samples / L->rate,
			o[i].samples, o[i].samples / L->total);
	}
	for (size_t i = shown; i < n; i++)
		rest += o[i].samples;
	if (shown < n)
		fprintf(out, ",,(%zu more line%s),,,%.6f,%.15g,%.6f\n",
			n - shown, n - shown == 1 ? "" : "s", rest / L->rate,
			rest, rest / L->total);
}

void
lines_print(FILE *out, const struct lines *L, const struct symtab *st,
	    const struct report_opts *ro)
{
	struct lrow_out *o = pc_malloc((L->nrows + 2) * sizeof(*o));
	size_t n, shown;

	n = rows_out(L, o);
	shown = ro->top > 0 && (size_t)ro->top < n ? (size_t)ro->top : n;
	if (ro->format == FORMAT_JSON)
		print_json(out, L, st, ro->top > 0 ? (size_t)ro->top : L->nrows,
			   ro);
	else if (ro->format == FORMAT_CSV)
		print_csv(out, L, st, o, n, shown);
	else
		print_text(out, L, st, o, n, shown, ro);
	free(o);
}
