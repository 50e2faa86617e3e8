/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof history's output: the change points found (history_cp.c) as
 * text, JSON or a markdown summary for a CI comment, and the SVG plot of
 * one series over the commits. Called by commands/history.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "model/history.h"
#include "writers/diff_out.h"
#include "writers/flame.h"

/* One change point of one series, for printing in commit order. */
struct found {
	const struct hist_series *s;
	const struct change *c;
	size_t rec;		/* the record of its first commit */
};

static int
cmp_found(const void *a, const void *b)
{
	const struct found *x = a, *y = b;

	if (x->rec != y->rec)
		return x->rec < y->rec ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

/* Every change point of res, by commit: res->nchanges of them, then
 * res->nheld held back (unconfirmed), by commit too. */
static struct found *
found_all(const struct hist_result *res)
{
	struct found *v = pc_realloc(
		NULL, (res->nchanges + res->nheld + 1) * sizeof(*v));
	size_t k = 0;

	for (size_t i = 0; i < res->ns; i++)
		for (size_t j = 0; j < res->s[i].nch; j++)
			v[k++] = (struct found){
				&res->s[i], &res->s[i].ch[j],
				res->s[i].idx[res->s[i].ch[j].at]
			};
	qsort(v, k, sizeof(*v), cmp_found);
	for (size_t i = 0; i < res->ns; i++)
		if (res->s[i].nheld)
			v[k++] = (struct found){
				&res->s[i], &res->s[i].held,
				res->s[i].idx[res->s[i].held.at]
			};
	qsort(v + res->nchanges, k - res->nchanges, sizeof(*v), cmp_found);
	return v;
}

static const char *
commit_of(const struct hist_result *res, size_t rec)
{
	return res->h->recs[rec].commit;
}

/* The previous commit of f's series (the last of the old level). */
static size_t
prev_rec(const struct found *f)
{
	return f->s->idx[f->c->at - 1];
}

static double
rel(const struct change *c)
{
	return c->before > 0 ? (c->after - c->before) / c->before : INFINITY;
}

/* Why record rec's runs were disturbed, in words, into buf. */
static const char *
held_why(const struct hist_result *res, size_t rec, char *buf, size_t size)
{
	const struct hist_record *r = &res->h->recs[rec];

	if (res->why && res->why[rec] == HIST_RUNQUEUE)
		snprintf(buf, size,
			 "its wall time over its CPU time stood out: %.3g s a run",
			 r->wall.mean - r->cpu.mean);
	else
		snprintf(buf, size, "its machine stood out %.1f %% slower",
			 100 * ((res->speed ? res->speed[rec] : 1) - 1));
	return buf;
}

static void
text_row(FILE *out, const struct hist_result *res, const struct found *f)
{
	fprintf(out, "%-14s %-14s %10.4f %10.4f %+8.1f%% %9.2g  %s%s\n",
		text_name(commit_of(res, f->rec)),
		text_name(commit_of(res, prev_rec(f))), f->c->before,
		f->c->after, rel(f->c) * 100, f->c->p,
		f->s->program ? "[program] " : "", text_name(f->s->name));
}

#define TEXT_HEAD	"\n%-14s %-14s %10s %10s %9s %9s  %s\n", "commit", \
			"previous", "before s", "after s", "change", "p", \
			"function"

static void
print_text(FILE *out, const struct hist_result *res, const struct found *v)
{
	const struct history *h = res->h;
	char why[160];

	fprintf(out,
		"pcprof history: %zu commit%s (%s to %s), %zu change point%s "
		"(%s, alpha %g, threshold %g %%)",
		h->n, h->n == 1 ? "" : "s", text_name(h->recs[0].commit),
		text_name(h->recs[h->n - 1].commit), res->nchanges,
		res->nchanges == 1 ? "" : "s", res->method, res->alpha,
		res->threshold * 100);
	if (res->nheld)
		fprintf(out, ", %zu unconfirmed", res->nheld);
	fputc('\n', out);
	if (res->nchanges)
		fprintf(out, TEXT_HEAD);
	for (size_t i = 0; i < res->nchanges; i++)
		text_row(out, res, &v[i]);
	if (!res->nheld)
		return;
	fprintf(out,
		"\nunconfirmed: only the last commit, whose runs were disturbed (%s); the next commit confirms it or not\n",
		held_why(res, v[res->nchanges].rec, why, sizeof(why)));
	fprintf(out, TEXT_HEAD);
	for (size_t i = res->nchanges; i < res->nchanges + res->nheld; i++)
		text_row(out, res, &v[i]);
}

static void
json_row(FILE *out, const struct hist_result *res, const struct found *f,
	 int first, int held)
{
	const struct history *h = res->h;
	char why[160];

	fputs(first ? "\n{\"commit\":" : ",\n{\"commit\":", out);
	json_string(out, commit_of(res, f->rec));
	fprintf(out, ",\"index\":%zu,\"time\":%.17g,\"previous\":", f->rec,
		h->recs[f->rec].time);
	json_string(out, commit_of(res, prev_rec(f)));
	fputs(",\"function\":", out);
	if (f->s->program)
		fputs("null", out);
	else
		json_string(out, f->s->name);
	fprintf(out,
		",\"program\":%s%s%s,\"before\":%.6g,\"after\":%.6g,\"change\":%.6g,"
		"\"p\":%.3g",
		f->s->program ? "\"" : "", f->s->program ? f->s->name : "null",
		f->s->program ? "\"" : "", f->c->before, f->c->after,
		rel(f->c), f->c->p);
	if (held) {
		fputs(",\"why\":", out);
		json_string(out, held_why(res, f->rec, why, sizeof(why)));
	}
	fputc('}', out);
}

static void
print_json(FILE *out, const struct hist_result *res, const struct found *v)
{
	const struct history *h = res->h;

	fprintf(out, "{\"commits\":%zu,\"first\":", h->n);
	json_string(out, h->recs[0].commit);
	fputs(",\"last\":", out);
	json_string(out, h->recs[h->n - 1].commit);
	fprintf(out,
		",\"method\":\"%s\",\"alpha\":%g,\"threshold\":%g,\"series\":%zu,"
		"\"changes\":[",
		res->method, res->alpha, res->threshold, res->ns);
	for (size_t i = 0; i < res->nchanges; i++)
		json_row(out, res, &v[i], !i, 0);
	fputs("],\n\"unconfirmed\":[", out);
	for (size_t i = 0; i < res->nheld; i++)
		json_row(out, res, &v[res->nchanges + i], !i, 1);
	fputs("]}\n", out);
}

/* the markdown table's head */
static const char md_head[] =
	"| Commit | Function | Change | Before (s) | After (s) | p |\n"
	"|---|---|---:|---:|---:|---:|\n";

static void
md_row(FILE *out, const struct hist_result *res, const struct found *f)
{
	fputs("| ", out);
	md_name(out, commit_of(res, f->rec));
	fputs(" | ", out);
	if (f->s->program)
		fprintf(out, "whole program (%s)", f->s->name);
	else
		md_name(out, f->s->name);
	fprintf(out, " | %+.1f %% | %.4f | %.4f | %.2g |\n", rel(f->c) * 100,
		f->c->before, f->c->after, f->c->p);
}

static void
print_markdown(FILE *out, const struct hist_result *res, const struct found *v)
{
	size_t n = res->h->n;
	char why[160];

	if (!res->nchanges)
		fprintf(out,
			"**pcprof history: no change point in %zu commits**\n",
			n);
	else
		fprintf(out,
			"**pcprof history: %zu change point%s in %zu commits**\n\n%s",
			res->nchanges, res->nchanges == 1 ? "" : "s", n,
			md_head);
	for (size_t i = 0; i < res->nchanges; i++)
		md_row(out, res, &v[i]);
	if (!res->nheld)
		return;
	fprintf(out,
		"\nUnconfirmed, only the last commit, whose runs were disturbed (%s); the next commit confirms it or not:\n\n%s",
		held_why(res, v[res->nchanges].rec, why, sizeof(why)), md_head);
	for (size_t i = res->nchanges; i < res->nchanges + res->nheld; i++)
		md_row(out, res, &v[i]);
}

void
history_print(FILE *out, const struct hist_result *res, int format)
{
	struct found *v = found_all(res);

	if (format == 1)
		print_json(out, res, v);
	else if (format == 2)
		print_markdown(out, res, v);
	else
		print_text(out, res, v);
	free(v);
}

/* the plot's size and its margins, in pixels */
#define PW	900
#define PH	420
#define ML	80
#define MR	20
#define MT	50
#define MB	60

struct frame {
	double lo, hi;
	size_t n;
};

static double
px(const struct frame *fr, size_t i)
{
	return ML + (fr->n > 1 ?
			     (double)i * (PW - ML - MR) / (double)(fr->n - 1) :
			     (PW - ML - MR) / 2.0);
}

static double
py(const struct frame *fr, double y)
{
	return MT + (fr->hi - y) / (fr->hi - fr->lo) * (PH - MT - MB);
}

/* The axes: the seconds at the bottom and top, the first and last commits. */
static void
plot_axes(FILE *out, const struct hist_result *res, const struct hist_series *s,
	  const struct frame *fr)
{
	fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>\n"
		"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>\n",
		ML, MT, ML, PH - MB, ML, PH - MB, PW - MR, PH - MB);
	fprintf(out,
		"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.4g s</text>\n"
		"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.4g s</text>\n",
		ML - 6, py(fr, fr->hi) + 4, fr->hi, ML - 6, py(fr, fr->lo) + 4,
		fr->lo);
	fprintf(out, "<text x=\"%.1f\" y=\"%d\">", px(fr, 0), PH - MB + 18);
	xml_put(out, commit_of(res, s->idx[0]), 16);
	fprintf(out, "</text>\n<text x=\"%.1f\" y=\"%d\" text-anchor=\"end\">",
		px(fr, s->n - 1), PH - MB + 18);
	xml_put(out, commit_of(res, s->idx[s->n - 1]), 16);
	fputs("</text>\n", out);
}

/* Each level between change points, a change point's line and label. */
static void
plot_levels(FILE *out, const struct hist_result *res,
	    const struct hist_series *s, const struct frame *fr)
{
	for (size_t j = 0; j <= s->nch; j++) {
		size_t a = j ? s->ch[j - 1].at : 0,
		       b = j < s->nch ? s->ch[j].at : s->n;
		double m = j < s->nch ? s->ch[j].before :
			   s->nch     ? s->ch[j - 1].after :
					0;

		if (!s->nch) {
			for (size_t i = 0; i < s->n; i++)
				m += s->x[i] / (double)s->n;
		}
		fprintf(out,
			"<line class=\"level\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"#2a7\" stroke-width=\"2\"/>\n",
			px(fr, a), py(fr, m), px(fr, b - 1), py(fr, m));
	}
	for (size_t j = 0; j < s->nch; j++) {
		double x = (px(fr, s->ch[j].at - 1) + px(fr, s->ch[j].at)) / 2;

		fprintf(out,
			"<line class=\"change\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
			"stroke=\"#d22\" stroke-dasharray=\"4 3\"/>\n<text x=\"%.1f\" y=\"%d\" "
			"fill=\"#d22\">",
			x, MT, x, PH - MB, x + 3, MT + 12 + 14 * (int)(j % 3));
		xml_put(out, commit_of(res, s->idx[s->ch[j].at]), 16);
		fprintf(out, " %+.1f %% (p %.2g)</text>\n",
			rel(&s->ch[j]) * 100, s->ch[j].p);
	}
	if (s->nheld) {
		double x = (px(fr, s->held.at - 1) + px(fr, s->held.at)) / 2;

		fprintf(out,
			"<line class=\"unconfirmed\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
			"stroke=\"#999\" stroke-dasharray=\"2 4\"/>\n<text x=\"%.1f\" y=\"%d\" "
			"fill=\"#777\" text-anchor=\"end\">unconfirmed %+.1f %%</text>\n",
			x, MT, x, PH - MB, x - 3, PH - MB - 6,
			rel(&s->held) * 100);
	}
}

void
history_plot(FILE *out, const struct hist_result *res,
	     const struct hist_series *s)
{
	struct frame fr = { INFINITY, -INFINITY, s->n };

	for (size_t i = 0; i < s->n; i++) {
		double sd = sqrt(s->within[i]);

		fr.lo = fmin(fr.lo, s->x[i] - sd);
		fr.hi = fmax(fr.hi, s->x[i] + sd);
	}
	if (!(fr.hi > fr.lo)) {
		fr.lo -= 0.5;
		fr.hi += 0.5;
	}
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n<svg version=\"1.1\" "
		"width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" "
		"font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"%d\" y=\"24\" font-size=\"15\">",
		PW, PH, PW, PH, ML);
	if (s->program)
		fprintf(out, "the whole program's %s",
			s->program && !strcmp(s->name, "wall") ? "wall" :
								 "CPU");
	else
		xml_put(out, s->name, 120);
	fprintf(out,
		": seconds a run over %zu commits, %zu change point%s</text>\n",
		s->n, s->nch, s->nch == 1 ? "" : "s");
	plot_axes(out, res, s, &fr);
	plot_levels(out, res, s, &fr);
	for (size_t i = 0; i < s->n; i++) {
		double sd = sqrt(s->within[i]);

		fprintf(out, "<g class=\"commit\"><title>");
		xml_put(out, commit_of(res, s->idx[i]), 200);
		fprintf(out,
			": %.6g s</title><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"#88a\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#225\"/></g>\n",
			s->x[i], px(&fr, i), py(&fr, s->x[i] - sd), px(&fr, i),
			py(&fr, s->x[i] + sd), px(&fr, i), py(&fr, s->x[i]));
	}
	fputs("</svg>\n", out);
}
