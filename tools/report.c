/*
 * pcprof report: the flat profile of an executable from one or more gmon
 * files, as text for people, JSON for scripts, or CSV for spreadsheets.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"

static void
json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void
csv_string(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* A row of the report: a function, or the samples in no symbol. */
struct line {
	const char *name;
	double samples;
};

static size_t
lines_of(const struct flat *f, const struct symtab *st, struct line *l)
{
	size_t n = 0;
	int unknown_done = f->unknown <= 0;

	for (size_t i = 0; i < f->nrows; i++) {
		if (!unknown_done && f->unknown > f->rows[i].samples) {
			l[n++] = (struct line){ "[unknown]", f->unknown };
			unknown_done = 1;
		}
		l[n++] = (struct line){ st->funcs[f->rows[i].func], f->rows[i].samples };
	}
	if (!unknown_done)
		l[n++] = (struct line){ "[unknown]", f->unknown };
	return n;
}

static void
print_text(FILE *out, const struct flat *f, const struct line *l, size_t n,
	   size_t shown, const struct report_opts *o)
{
	double cum = 0, rest = 0;

	fprintf(out, "Flat profile of %s from %s%s: %.0f samples at %u Hz, %.3f s\n\n",
		o->exe, o->files[0], o->nfiles > 1 ? " and others" : "",
		f->total, f->rate, f->total / f->rate);
	fprintf(out, "%10s %7s %7s %10s  %s\n", "self s", "share", "cum", "samples", "function");
	for (size_t i = 0; i < shown; i++) {
		double share = l[i].samples / f->total;

		cum += share;
		fprintf(out, "%10.3f %6.2f%% %6.2f%% %10.0f  %s\n",
			l[i].samples / f->rate, 100 * share, 100 * cum,
			l[i].samples, l[i].name);
	}
	for (size_t i = shown; i < n; i++)
		rest += l[i].samples;
	if (shown < n)
		fprintf(out, "%10.3f %6.2f%% %7s %10.0f  (%zu more functions)\n",
			rest / f->rate, 100 * rest / f->total, "", rest, n - shown);
}

static void
print_json(FILE *out, const struct flat *f, const struct symtab *st,
	   size_t shown, const struct report_opts *o)
{
	fputs("{\"executable\": ", out);
	json_string(out, o->exe);
	fputs(", \"profiles\": [", out);
	for (int i = 0; i < o->nfiles; i++) {
		fputs(i ? ", " : "", out);
		json_string(out, o->files[i]);
	}
	fprintf(out, "], \"rate_hz\": %u, \"total_seconds\": %.6f, \"total_samples\": %.0f, "
		"\"symbols\": ", f->rate, f->total / f->rate, f->total);
	json_string(out, st->source);
	fputs(", \"functions\": [", out);
	for (size_t i = 0; i < shown && i < f->nrows; i++) {
		const struct flat_row *r = &f->rows[i];

		fputs(i ? ",\n  " : "\n  ", out);
		fputs("{\"name\": ", out);
		json_string(out, st->funcs[r->func]);
		fprintf(out, ", \"self_seconds\": %.6f, \"self_samples\": %.6g, \"share\": %.6f}",
			r->samples / f->rate, r->samples, r->samples / f->total);
	}
	fprintf(out, "%s], \"unattributed_samples\": %.6g, \"unattributed_share\": %.6f}\n",
		f->nrows ? "\n" : "", f->unknown, f->total ? f->unknown / f->total : 0);
}

static void
print_csv(FILE *out, const struct flat *f, const struct line *l, size_t shown)
{
	double cum = 0;

	fputs("function,self_seconds,self_samples,share,cumulative_share\n", out);
	for (size_t i = 0; i < shown; i++) {
		double share = l[i].samples / f->total;

		cum += share;
		csv_string(out, l[i].name);
		fprintf(out, ",%.6f,%.6g,%.6f,%.6f\n", l[i].samples / f->rate,
			l[i].samples, share, cum);
	}
}

void
report_print(FILE *out, const struct flat *f, const struct symtab *st,
	     const struct report_opts *o)
{
	struct line *l = malloc((f->nrows + 1) * sizeof(*l));
	size_t n, shown;

	if (!l)
		pc_fatal("out of memory");
	n = lines_of(f, st, l);
	shown = o->top > 0 && (size_t)o->top < n ? (size_t)o->top : n;
	switch (o->format) {
	case FORMAT_TEXT:
		print_text(out, f, l, n, shown, o);
		break;
	case FORMAT_JSON:
		print_json(out, f, st, o->top > 0 ? (size_t)o->top : f->nrows, o);
		break;
	case FORMAT_CSV:
		print_csv(out, f, l, shown);
		break;
	}
	free(l);
}
