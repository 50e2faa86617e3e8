/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Flame graphs as SVG: stacks are sorted, merged into a tree built in
 * pre-order, laid out without recursion and written with the zoom script of
 * flame.js embedded. Called by whatever pcprof subcommand has stacks.
 */
#include <errno.h>
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "writers/flame.h"
#include "pcprof.h"
/* flame_js: tools/writers/flame.js as a C string, made by the Makefile */
#include "flame_js.h"

/* Layout in pixels, here alone: put_script hands XPAD, WIDTH, CHAR_W,
 * FRAME_H, TOP and BOTTOM to the zoom script. */
#define IMAGE_W		1200
#define XPAD		10
#define WIDTH		(IMAGE_W - 2 * XPAD)
#define FRAME_H		16		/* one level: a 15 px box and a 1 px gap */
#define TOP		48		/* title, buttons, legend */
#define BOTTOM		30		/* the details line */
#define CHAR_W		7.44		/* 12 px monospace, with a margin */
#define MIN_SHARE	0.001		/* narrower frames are left out */

#define FG_NS		"urn:x-pcprof:flame"

/*
 * A frame of the merged tree. Nodes are stored in pre-order with siblings
 * in name order, so a parent always comes before its children.
 */
struct node {
	const char *name;
	double value;		/* samples here and in all callees */
	double x;		/* samples left of this frame on its level */
	uint32_t px1, px2;	/* its edges, in hundredths of a pixel */
	size_t parent;
	size_t level;		/* 0 for the root, "all" */
	unsigned char kind;	/* enum flame_kind */
};

struct tree {
	struct node *nodes;
	size_t n, cap;
	size_t maxlevel;
	size_t *leaf;		/* each stack's last frame (SIZE_MAX: none), for
				 * the time strip */
};

static const char *
frame_name(const char *s)
{
	return s ? s : "[unknown]";
}

static int
name_cmp(const char *a, const char *b)
{
	/* Interned names make pointer equality the common case. */
	if (a == b)
		return 0;
	return strcmp(frame_name(a), frame_name(b));
}

/*
 * Lexicographic on the frames, a prefix before its extensions; equal stacks
 * by count, so that their counts are added in the same order whatever the
 * order of the input.
 */
static int
stack_cmp(const void *pa, const void *pb)
{
	const struct flame_stack *a = *(const struct flame_stack *const *)pa;
	const struct flame_stack *b = *(const struct flame_stack *const *)pb;
	size_t n = a->depth < b->depth ? a->depth : b->depth;

	for (size_t i = 0; i < n; i++) {
		int c = name_cmp(a->frames[i], b->frames[i]);

		if (c)
			return c;
	}
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	if (a->count < b->count)
		return -1;
	return a->count > b->count;
}

static size_t
common_prefix(const struct flame_stack *a, const struct flame_stack *b)
{
	size_t n = a->depth < b->depth ? a->depth : b->depth, i;

	for (i = 0; i < n; i++)
		if (name_cmp(a->frames[i], b->frames[i]))
			break;
	return i;
}

static int
node_add(struct tree *t, const char *name, size_t parent, size_t level, unsigned char kind)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct node *p;

		if (cap > SIZE_MAX / sizeof *p) {
			errno = ENOMEM;
			return -1;
		}
		p = realloc(t->nodes, cap * sizeof *p);
		if (!p)
			return -1;
		t->nodes = p;
		t->cap = cap;
	}
	t->nodes[t->n] = (struct node){ name, 0, 0, 0, 0, parent, level, kind };
	t->n++;
	if (level > t->maxlevel)
		t->maxlevel = level;
	return 0;
}

/* Room for at least need entries in *path (*cap of them now); -1 with
 * errno set when there is none. */
static int
path_room(size_t **path, size_t *cap, size_t need)
{
	size_t c = need > 2 * *cap ? need : 2 * *cap;
	size_t *p;

	if (c > SIZE_MAX / sizeof *p) {
		errno = ENOMEM;
		return -1;
	}
	p = realloc(*path, c * sizeof *p);
	if (!p)
		return -1;
	*path = p;
	*cap = c;
	return 0;
}

/*
 * Build the tree from the stacks sorted: each stack shares with the one
 * before it exactly the nodes of their common prefix, and its remaining
 * frames are new nodes, which come out in pre-order and sorted by name.
 * Counts go to the last frame, then are summed up into the parents by
 * walking the nodes backwards (children always follow their parent).
 */
static int
tree_build(struct tree *t, const struct flame_stack *stacks, size_t n)
{
	const struct flame_stack **order = NULL, *prev = NULL;
	size_t *path = NULL, pathcap = 0, m = 0;
	int ret = -1;

	if (n > SIZE_MAX / sizeof *order) {
		errno = ENOMEM;
		return -1;
	}
	order = malloc((n ? n : 1) * sizeof *order);
	if (!order)
		return -1;
	for (size_t i = 0; i < n; i++) {
		/* Also drops NaN and infinity. */
		if (stacks[i].count > 0 && stacks[i].count <= DBL_MAX)
			order[m++] = &stacks[i];
	}
	qsort(order, m, sizeof *order, stack_cmp);

	if (node_add(t, "all", 0, 0, FLAME_KIND_NONE))
		goto out;
	for (size_t i = 0; i < m; i++) {
		const struct flame_stack *s = order[i];
		size_t k = prev ? common_prefix(prev, s) : 0;

		if (s->depth >= pathcap && path_room(&path, &pathcap, s->depth + 1))
			goto out;
		path[0] = 0;
		for (size_t d = k; d < s->depth; d++) {
			unsigned char kind = s->kinds && s->kinds[d] < FLAME_KINDS ?
					     s->kinds[d] : FLAME_KIND_NONE;

			if (node_add(t, frame_name(s->frames[d]), path[d], d + 1, kind))
				goto out;
			path[d + 1] = t->n - 1;
		}
		t->nodes[path[s->depth]].value += s->count;
		t->leaf[s - stacks] = path[s->depth];
		prev = s;
	}
	for (size_t i = t->n - 1; i > 0; i--) {
		t->nodes[t->nodes[i].parent].value += t->nodes[i].value;
		/* a differential graph's root is no frame that changed: grey,
		 * not the warm colour of a frame not said, which reads as
		 * slower there */
		if (t->nodes[i].kind >= FLAME_KIND_SLOWER && t->nodes[i].kind <= FLAME_KIND_SAME)
			t->nodes[0].kind = FLAME_KIND_SAME;
	}
	if (!(t->nodes[0].value <= DBL_MAX)) {
		errno = ERANGE;
		goto out;
	}
	ret = 0;
out:
	free(path);
	free(order);
	return ret;
}

/* Non-negative v rounded to hundredths, kept as an integer. */
static uint32_t
hundredths(double v)
{
	return (uint32_t)(v * 100 + 0.5);
}

/*
 * Place each frame after its earlier siblings. In pre-order, when a node of
 * level L is reached, next[L] holds where it starts: its parent reset it
 * and only its earlier siblings have moved it since. Edges are rounded
 * rather than widths, and kept within the parent's, so that children never
 * add up to more than their parent however the sums round.
 */
static int
tree_layout(struct tree *t)
{
	double *next = malloc((t->maxlevel + 2) * sizeof *next);
	double total = t->nodes[0].value;

	if (!next)
		return -1;
	next[0] = 0;
	for (size_t i = 0; i < t->n; i++) {
		struct node *nd = &t->nodes[i];
		const struct node *up = &t->nodes[nd->parent];

		nd->x = next[nd->level];
		next[nd->level] += nd->value;
		next[nd->level + 1] = nd->x;
		if (!(total > 0))
			continue;
		nd->px1 = hundredths(XPAD + nd->x / total * WIDTH);
		nd->px2 = hundredths(XPAD + (nd->x + nd->value) / total * WIDTH);
		if (i && nd->px1 < up->px1)
			nd->px1 = up->px1;
		if (i && nd->px2 > up->px2)
			nd->px2 = up->px2;
		if (nd->px2 < nd->px1)
			nd->px2 = nd->px1;
	}
	free(next);
	return 0;
}

/* Characters in s, counting no further than limit. */
static size_t
utf8_count(const char *s, size_t limit)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;
	long cp;

	while (*p && n < limit) {
		p += utf8_next(p, &cp);
		n++;
	}
	return n;
}

void
xml_put(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	long cp;

	for (size_t i = 0; *p && i < max; i++) {
		size_t len = utf8_next(p, &cp);

		switch (cp) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&apos;", out);
			break;
		case '\t':
		case '\n':
		case '\r':
			fprintf(out, "&#%ld;", cp);
			break;
		default:
			/* XML 1.0 has no C0 control, nor U+FFFE and U+FFFF;
			 * DEL and the C1 controls it allows but discourages,
			 * and a browser shows nothing of them */
			if (cp < 0x20 || cp == 0x7f ||
			    (cp >= 0x80 && cp <= 0x9f) || cp == 0xfffe ||
			    cp == 0xffff)
				fputs("\xef\xbf\xbd", out);
			else
				fwrite(p, 1, len, out);
		}
		p += len;
	}
}

/*
 * A count as printf's %.15g would, but with '.' whatever LC_NUMERIC says:
 * XML, the script and the tests all read a full stop.
 */
static void
put_num(FILE *out, double v)
{
	char buf[64];
	int sep = 0;

	snprintf(buf, sizeof buf, "%.15g", v);
	for (const char *p = buf; *p; p++) {
		if ((*p >= '0' && *p <= '9') || *p == '-' || *p == '+' ||
		    *p == 'e') {
			if (sep)
				fputc('.', out);
			sep = 0;
			fputc(*p, out);
		} else {
			sep = 1;
		}
	}
}

static void
put_fixed(FILE *out, uint32_t h)
{
	fprintf(out, "%u.%02u", (unsigned)(h / 100), (unsigned)(h % 100));
}

/* The colour of a frame: its kind's hue, its name's shade within it (a
 * hash of the name: FNV-1a, then mixed). */
static void
put_colour(FILE *out, const char *name, unsigned char kind)
{
	uint32_t h = 2166136261u;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	switch (kind) {
	case FLAME_KIND_LIBC:		/* blues */
		fprintf(out, "rgb(%u,%u,%u)", 80 + h % 60, 150 + (h >> 8) % 60, 230 + (h >> 16) % 26);
		break;
	case FLAME_KIND_LIB:		/* greens */
		fprintf(out, "rgb(%u,%u,%u)", 60 + h % 60, 190 + (h >> 8) % 56, 80 + (h >> 16) % 60);
		break;
	case FLAME_KIND_ANON:		/* greys */
		fprintf(out, "rgb(%u,%u,%u)", 170 + h % 30, 170 + h % 30, 170 + h % 30);
		break;
	case FLAME_KIND_SLOWER:
		fprintf(out, "rgb(%u,%u,%u)", 225 + h % 31, 40 + (h >> 8) % 40, 40 + (h >> 8) % 40);
		break;
	case FLAME_KIND_FASTER:
		fprintf(out, "rgb(%u,%u,%u)", 40 + (h >> 8) % 40, 90 + (h >> 8) % 40, 225 + h % 31);
		break;
	case FLAME_KIND_SAME:
		fprintf(out, "rgb(%u,%u,%u)", 200 + h % 20, 200 + h % 20, 200 + h % 20);
		break;
	case FLAME_KIND_OFFCPU:		/* violets: apart from libc's blues */
		fprintf(out, "rgb(%u,%u,%u)", 140 + h % 40, 100 + (h >> 8) % 40, 230 + (h >> 16) % 26);
		break;
	default:			/* the executable, or not said: warm */
		fprintf(out, "rgb(%u,%u,%u)", 205 + h % 51, (h >> 8) % 231, (h >> 16) % 56);
	}
}

/* The legend of the kinds, where the frames have them. */
static void
put_legend(FILE *out, const struct tree *t)
{
	static const char *const label[FLAME_KINDS] = {
		NULL, "executable", "libc", "other libraries", "no object",
		"slower", "faster", "no significant change", "off-CPU"
	};
	static const char *const sample[FLAME_KINDS] = {
		NULL, "rgb(230,110,30)", "rgb(110,180,243)", "rgb(90,218,110)", "rgb(185,185,185)",
		"rgb(240,60,60)", "rgb(60,110,240)", "rgb(210,210,210)", "rgb(160,120,243)"
	};
	int seen[FLAME_KINDS] = { 0 }, x = IMAGE_W - XPAD - 560;

	for (size_t i = 1; i < t->n; i++)	/* the root's grey is no kind of its own */
		seen[t->nodes[i].kind] = 1;
	for (int k = FLAME_KIND_EXE; k < FLAME_KINDS; k++) {
		if (!seen[k])
			continue;
		fprintf(out, "<rect class=\"legend\" x=\"%d\" y=\"30\" width=\"10\" "
			"height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"39\">%s</text>\n",
			x, sample[k], x + 14, label[k]);
		x += 14 + (int)(strlen(label[k]) * CHAR_W) + 16;
	}
}

static void
put_header(FILE *out, size_t height, const char *title)
{
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%zu\""
		" viewBox=\"0 0 %d %zu\" xmlns=\"http://www.w3.org/2000/svg\""
		" xmlns:fg=\"" FG_NS "\">\n",
		IMAGE_W, height, IMAGE_W, height);
	fputs("<defs><linearGradient id=\"background\" x1=\"0\" y1=\"0\""
	      " x2=\"0\" y2=\"1\"><stop offset=\"5%\" stop-color=\"#eeeeee\"/>"
	      "<stop offset=\"95%\" stop-color=\"#eeeeb0\"/></linearGradient>"
	      "</defs>\n"
	      "<style type=\"text/css\">\n"
	      "text { font-family: monospace; font-size: 12px; fill: #000; }\n"
	      "#title { font-size: 17px; text-anchor: middle; }\n"
	      "#unzoom, #search, #invert { cursor: pointer; }\n"
	      "#matched { text-anchor: end; }\n"
	      ".frame { cursor: pointer; }\n"
	      ".frame:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	      ".parent { opacity: 0.5; }\n"
	      "</style>\n", out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%zu\""
		" fill=\"url(#background)\"/>\n", IMAGE_W, height);
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"24\">", IMAGE_W / 2);
	xml_put(out, title, SIZE_MAX);
	fputs("</text>\n", out);
}

/*
 * The zoom script (flame.js), after a prologue that hands it the layout:
 * the constants are defined above alone, and the script reads them by name.
 */
static void
put_script(FILE *out, size_t top)
{
	fputs("<script type=\"text/ecmascript\"><![CDATA[\n"
	      "'use strict';\n"
	      "var SVGNS = 'http://www.w3.org/2000/svg', FGNS = '" FG_NS "';\n", out);
	fprintf(out, "var XPAD = %d, WIDTH = %d, CHARW = ", XPAD, WIDTH);
	put_num(out, CHAR_W);
	fprintf(out, ", FRAMEH = %d, TOP = %zu, BOTTOM = %d;\n", FRAME_H, top, BOTTOM);
	fputs(flame_js, out);
	fputs("]]></script>\n", out);
}

/*
 * One frame: a <g> holding the <title> that viewers show on hover, the box,
 * and a label cut to the box (or none).
 */
static void
put_frame(FILE *out, const struct node *nd, double total, size_t height,
	  const char *unit)
{
	uint32_t x1 = nd->px1, x2 = nd->px2;
	double room = (double)(x2 - x1) / 100 - 6;
	size_t fits = room > 0 ? (size_t)(room / CHAR_W) : 0;
	size_t y = height - BOTTOM - (nd->level + 1) * FRAME_H;

	fputs("<g class=\"frame\" fg:x=\"", out);
	put_num(out, nd->x);
	fputs("\" fg:w=\"", out);
	put_num(out, nd->value);
	fprintf(out, "\" fg:l=\"%zu\"><title>", nd->level);
	xml_put(out, nd->name, SIZE_MAX);
	fputs(" (", out);
	put_num(out, nd->value);
	fputc(' ', out);
	xml_put(out, unit, SIZE_MAX);
	fputs(", ", out);
	put_fixed(out, hundredths(nd->value / total * 100));
	fputs("%)</title><rect x=\"", out);
	put_fixed(out, x1);
	fprintf(out, "\" y=\"%zu\" width=\"", y);
	put_fixed(out, x2 - x1);
	fprintf(out, "\" height=\"%d\" rx=\"2\" ry=\"2\" fill=\"", FRAME_H - 1);
	put_colour(out, nd->name, nd->kind);
	fputs("\"/>", out);
	if (fits >= 3) {
		fputs("<text x=\"", out);
		put_fixed(out, x1 + 300);
		fprintf(out, "\" y=\"%zu\">", y + 11);
		if (utf8_count(nd->name, fits + 1) <= fits) {
			xml_put(out, nd->name, SIZE_MAX);
		} else {
			xml_put(out, nd->name, fits - 2);
			fputs("..", out);
		}
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
}

/*
 * The time strip's data: each stack's frame, the index among the frames
 * written of its last frame, or of the nearest caller written where that
 * one is not (a frame is narrower than its caller: the root is written).
 */
static int
put_strip(FILE *out, const struct tree *t, const struct flame_timeline *tl, size_t nstacks)
{
	double total = t->nodes[0].value;
	size_t *ord = malloc(t->n * sizeof *ord), *fos, k = 0;

	fos = malloc((nstacks ? nstacks : 1) * sizeof *fos);
	if (!ord || !fos) {
		free(ord);
		free(fos);
		return -1;
	}
	for (size_t i = 0; i < t->n; i++)
		ord[i] = t->nodes[i].value >= total * MIN_SHARE ? k++ : ord[t->nodes[i].parent];
	for (size_t i = 0; i < nstacks; i++)
		fos[i] = t->leaf[i] == SIZE_MAX ? SIZE_MAX : ord[t->leaf[i]];
	flame_strip_put(out, tl, fos, TOP);
	free(ord);
	free(fos);
	return 0;
}

static int
put_graph(FILE *out, const struct tree *t, const char *title,
	  const char *unit, const struct flame_timeline *tl, size_t nstacks)
{
	double total = t->nodes[0].value;
	size_t levels = 0, height, top = TOP + flame_strip_height(tl);

	for (size_t i = 0; i < t->n; i++)
		if (t->nodes[i].value >= total * MIN_SHARE &&
		    t->nodes[i].level >= levels)
			levels = t->nodes[i].level + 1;
	height = top + levels * FRAME_H + BOTTOM;

	put_header(out, height, title);
	fprintf(out, "<text id=\"unzoom\" x=\"%d\" y=\"24\" display=\"none\">"
		"Reset zoom</text>\n", XPAD);
	fprintf(out, "<text id=\"search\" x=\"%d\" y=\"24\">Search</text>\n",
		IMAGE_W - XPAD - 120);
	fprintf(out, "<text id=\"invert\" x=\"%d\" y=\"24\">Invert</text>\n",
		IMAGE_W - XPAD - 56);
	fprintf(out, "<text id=\"matched\" x=\"%d\" y=\"%zu\"> </text>\n",
		IMAGE_W - XPAD, height - 10);
	put_legend(out, t);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%zu\"> </text>\n",
		XPAD, height - 10);
	fputs("<g id=\"frames\">\n", out);
	for (size_t i = 0; i < t->n; i++)
		if (t->nodes[i].value >= total * MIN_SHARE)
			put_frame(out, &t->nodes[i], total, height, unit);
	fputs("</g>\n", out);
	if (tl && put_strip(out, t, tl, nstacks))
		return -1;
	put_script(out, top);
	fputs("</svg>\n", out);
	return 0;
}

static void
put_empty(FILE *out, const char *title)
{
	put_header(out, 100, title);
	fprintf(out, "<text x=\"%d\" y=\"64\" text-anchor=\"middle\">"
		"no samples</text>\n</svg>\n", IMAGE_W / 2);
}

int
flame_write_svg(FILE *out, const struct flame_stack *stacks, size_t n,
		const char *title, const char *unit)
{
	return flame_write_svg_timeline(out, stacks, n, title, unit, NULL);
}

int
flame_write_svg_timeline(FILE *out, const struct flame_stack *stacks, size_t n,
			 const char *title, const char *unit,
			 const struct flame_timeline *tl)
{
	struct tree t = { 0 };
	int ret = -1;

	if (!out || (n && !stacks)) {
		errno = EINVAL;
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (stacks[i].depth && !stacks[i].frames) {
			errno = EINVAL;
			return -1;
		}
	}
	for (size_t i = 0; tl && i < tl->n; i++) {
		if (tl->stack[i] >= n) {
			errno = EINVAL;
			return -1;
		}
	}
	if (!title)
		title = "Flame Graph";
	if (!unit)
		unit = "samples";

	/* each stack's last frame, where tree_build puts it */
	t.leaf = n <= SIZE_MAX / sizeof *t.leaf ? malloc((n ? n : 1) * sizeof *t.leaf) : NULL;
	for (size_t i = 0; t.leaf && i < n; i++)
		t.leaf[i] = SIZE_MAX;
	if (!t.leaf || tree_build(&t, stacks, n) || tree_layout(&t))
		goto out;
	if (t.nodes[0].value > 0) {
		if (put_graph(out, &t, title, unit, tl, n))
			goto out;
	} else {
		put_empty(out, title);
	}
	if (fflush(out) == EOF || ferror(out)) {
		if (!errno)
			errno = EIO;
		goto out;
	}
	ret = 0;
out:
	free(t.nodes);
	free(t.leaf);
	return ret;
}
