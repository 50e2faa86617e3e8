/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A flame graph's time strip (flame.c calls it): the timeline's samples
 * and markers handed to the page's script, which draws each thread's
 * samples over time and the markers, and redraws the graph for the window
 * dragged across it (flame.js).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "writers/flame.h"
#include "pcprof.h"

/* Layout in pixels (the script reads them from the data). */
#define LANE_H		14		/* a thread's lane */
#define MARK_H		12		/* a row of markers */
#define MAX_LANES	12		/* threads past these share the last lane */
#define MAX_ROWS	6		/* marker names past these share the last row */
#define AXIS_H		14		/* the time axis under the strip */
#define GAP		8		/* between the strip and the graph */

/* The rows of the markers: one for each name, in order of first start;
 * how many (0 where there are none). */
static size_t
marker_rows(const struct flame_timeline *tl, const char **rows)
{
	size_t n = 0;

	for (size_t i = 0; i < tl->nmarkers; i++) {
		size_t r;

		for (r = 0; r < n; r++)
			if (!strcmp(rows[r], tl->markers[i].name))
				break;
		if (r == n && n < MAX_ROWS)
			rows[n++] = tl->markers[i].name;
	}
	return n;
}

static size_t
row_of(const char **rows, size_t n, const char *name)
{
	for (size_t r = 0; r < n; r++)
		if (!strcmp(rows[r], name))
			return r;
	return n - 1;
}

static size_t
lanes(const struct flame_timeline *tl)
{
	return tl->nlanes < MAX_LANES ? (tl->nlanes ? tl->nlanes : 1) :
					MAX_LANES;
}

size_t
flame_strip_height(const struct flame_timeline *tl)
{
	const char *rows[MAX_ROWS];

	if (!tl)
		return 0;
	return lanes(tl) * LANE_H + marker_rows(tl, rows) * MARK_H + AXIS_H +
	       GAP;
}

/* s as a JavaScript string inside CDATA: JSON's escapes, and '>' as
 * \u003e, so that no name ends the section. */
static void
js_string(FILE *out, const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m) {
		fputs("\"?\"", out);
		return;
	}
	json_string(m, s);
	if (fclose(m)) {
		free(buf);
		fputs("\"?\"", out);
		return;
	}
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '>')
			fputs("\\u003e", out);
		else
			fputc(buf[i], out);
	}
	free(buf);
}

static void
put_names(FILE *out, const char *key, const char *const *v, size_t n)
{
	fprintf(out, "%s:[", key);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		js_string(out, v[i]);
	}
	fputs("],\n", out);
}

/* The lanes' labels: the last one, where threads share it, says so. */
static void
put_lanes(FILE *out, const struct flame_timeline *tl)
{
	size_t n = lanes(tl);

	fputs("lanes:[", out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		if (i == MAX_LANES - 1 && tl->nlanes > MAX_LANES)
			fprintf(out, "\"%zu other threads\"", tl->nlanes - i);
		else
			js_string(out, i < tl->nlanes ? tl->lanes[i] : "");
	}
	fputs("],\n", out);
}

/* qsort of marker indices by their marker's name, then by index. */
static const struct flame_marker *by_name_of;

static int
cmp_by_name(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = strcmp(by_name_of[x].name, by_name_of[y].name);

	return c ? c : (x > y) - (x < y);
}

/* The markers: [row, start us, end us, name] each, name an index into
 * names, each name once (10,000 requests of one name wrote it 10,000
 * times); the names in order of their first marker. */
static void
put_markers(FILE *out, const struct flame_timeline *tl, const char **rows,
	    size_t nrows)
{
	size_t n = tl->nmarkers, *order = pc_calloc(n ? n : 1, sizeof(*order));
	size_t *id = pc_calloc(n ? n : 1, sizeof(*id)),
	       *first = pc_calloc(n ? n : 1, sizeof(*first));
	size_t nnames = 0;

	for (size_t i = 0; i < n; i++)
		order[i] = i;
	by_name_of = tl->markers;
	qsort(order, n, sizeof(*order), cmp_by_name);
	/* ids by first appearance: sorted, each name's run starts at its
	 * first marker; numbered in the order of those */
	for (size_t k = 0; k < n; k++)
		if (!k || strcmp(tl->markers[order[k]].name,
				 tl->markers[order[k - 1]].name))
			first[order[k]] = 1;
	for (size_t i = 0; i < n; i++)
		if (first[i])
			first[i] = ++nnames;
	for (size_t k = 0, cur = 0; k < n; k++) {
		if (first[order[k]])
			cur = first[order[k]] - 1;
		id[order[k]] = cur;
	}
	fputs("names:[", out);
	for (size_t i = 0, k = 0; i < n; i++)
		if (first[i]) {
			if (k++)
				fputc(',', out);
			js_string(out, tl->markers[i].name);
		}
	fputs("],\nm:[", out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%zu,%llu,%llu,%zu", i ? "," : "",
			row_of(rows, nrows, tl->markers[i].name),
			(unsigned long long)(tl->markers[i].start / 1000),
			(unsigned long long)(tl->markers[i].end / 1000), id[i]);
	fputs("],\n", out);
	free(order);
	free(id);
	free(first);
}

/*
 * The samples as parallel arrays: t, microseconds from the start (cut
 * down, so that t >= A and t < B is pcprof report's --from A --to B of
 * the same microseconds); f, the frame (in the order the graph's frames
 * are written) that counts it; l, its lane; w, its weight, or null
 * where every one is 1.
 */
static void
put_samples(FILE *out, const struct flame_timeline *tl,
	    const size_t *frame_of_stack)
{
	size_t nl = lanes(tl);
	int ones = 1;

	fputs("t:[", out);
	for (size_t i = 0, k = 0; i < tl->n; i++)
		if (frame_of_stack[tl->stack[i]] != SIZE_MAX)
			fprintf(out, "%s%llu", k++ ? "," : "",
				(unsigned long long)(tl->t[i] / 1000));
	fputs("],\nf:[", out);
	for (size_t i = 0, k = 0; i < tl->n; i++)
		if (frame_of_stack[tl->stack[i]] != SIZE_MAX)
			fprintf(out, "%s%zu", k++ ? "," : "",
				frame_of_stack[tl->stack[i]]);
	fputs("],\nl:[", out);
	for (size_t i = 0, k = 0; i < tl->n; i++)
		if (frame_of_stack[tl->stack[i]] != SIZE_MAX) {
			fprintf(out, "%s%zu", k++ ? "," : "",
				tl->lane[i] < nl ? tl->lane[i] : nl - 1);
			ones &= tl->weight[i] == 1;
		}
	fputs("],\nw:", out);
	if (ones) {
		fputs("null", out);
		return;
	}
	fputc('[', out);
	for (size_t i = 0, k = 0; i < tl->n; i++)
		if (frame_of_stack[tl->stack[i]] != SIZE_MAX)
			fprintf(out, "%s%.9g", k++ ? "," : "", tl->weight[i]);
	fputc(']', out);
}

void
flame_strip_put(FILE *out, const struct flame_timeline *tl,
		const size_t *frame_of_stack, size_t y)
{
	const char *rows[MAX_ROWS];
	size_t nrows = marker_rows(tl, rows);

	fputs("<script type=\"text/ecmascript\"><![CDATA[\nvar TL = {\n", out);
	fprintf(out, "y:%zu, laneH:%d, markH:%d, axisH:%d, span:%llu,\n", y,
		LANE_H, MARK_H, AXIS_H, (unsigned long long)(tl->span / 1000));
	put_lanes(out, tl);
	put_names(out, "rows", rows, nrows);
	put_markers(out, tl, rows, nrows);
	put_samples(out, tl, frame_of_stack);
	fputs("\n};\n]]></script>\n", out);
}
