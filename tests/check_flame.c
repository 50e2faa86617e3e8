/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for the flame graph writer (tools/writers/flame.c) on stacks that
 * no real profile gives: NaN counts, 10,000 frames, names that are not UTF-8.
 * The SVG is written to memory and read back here, frame by frame, so the
 * assertions are on the names, samples, shares and boxes the graph shows.
 * With UNIT_FLAME_DIR set, the graphs are also left there as NAME.svg for
 * tests/e2e/test_flame_unit.py, which reads them with an XML parser and
 * clicks through their zoom script.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "writers/flame.h"
#include "unit.h"

#define N(a)	(sizeof(a) / sizeof((a)[0]))

#define CXX "std::map<int, std::vector<char>>::operator[](int const&) 'q' \"d\""
#define CXX_XML "std::map&lt;int, std::vector&lt;char&gt;&gt;::operator[](int const&amp;)" \
	" &apos;q&apos; &quot;d&quot;"
#define WEIRD "ctl\x01tab\tbad\xff\xfe" "end"
/* what the writer makes of it: XML 1.0 cannot carry \x01 even as a
 * reference, nor bytes that are not UTF-8 */
#define WEIRD_READ "ctl\xef\xbf\xbdtab\tbad\xef\xbf\xbd\xef\xbf\xbd" "end"
#define COLD "c\xc3\xb6ld\xe2\x86\x92"

static const char *const s_hot[] = { "main", "foo", "hot" };
static const char *const s_cold[] = { "main", "foo", COLD };
static const char *const s_bar[] = { "main", "bar" };
static const char *const s_unk[] = { "main", "bar", NULL };
static const char *const s_zz[] = { "main", "bar", "zz" };
static const char *const s_cxx[] = { "main", CXX };
static const char *const s_weird[] = { "main", WEIRD };
static const char *const s_tiny[] = { "main", "tiny" };
static const char *const s_ign[] = { "main", "ignored" };

/*
 * The basic case, 100 samples in all: duplicate stacks that merge, a NULL
 * frame name, a C++ name, control characters and invalid UTF-8, a frame
 * under 0.1 % ("tiny", 0.0625 %), self time in main, and last counts of 0,
 * -3, NaN and infinity, which do not count.
 */
static const struct flame_stack basic[] = {
	{ s_hot, 3, 30, NULL },      { s_hot, 3, 30, NULL },
	{ s_cold, 3, 10, NULL },     { s_bar, 2, 8, NULL },
	{ s_unk, 3, 5, NULL },       { s_zz, 3, 2, NULL },
	{ s_cxx, 2, 5, NULL },       { s_weird, 2, 5, NULL },
	{ s_tiny, 2, 0.0625, NULL }, { s_hot, 1, 4.9375, NULL },
	{ s_ign, 2, 0, NULL },       { s_ign, 2, -3, NULL },
	{ s_ign, 2, NAN, NULL },     { s_ign, 2, INFINITY, NULL },
};
#define NBASIC	N(basic)
#define NIGNORED	4

#define TITLE	"Basic <&> \"test\""

/* ------------------------------------------------------------ reading */

struct frame {
	char *name;		/* from the <title>, unescaped */
	double samples, share;	/* from the <title> */
	double fx, fw;		/* fg:x, fg:w */
	long level;		/* fg:l */
	double x, y, width;	/* the <rect> */
	char *label;		/* the <text>, or NULL */
};

struct svg {
	char *buf;
	size_t len;
	int ret, err;		/* flame_write_svg's return and errno */
	double height;
	char *title;
	struct frame *f;
	size_t n;
};

/* s[0..n) with XML's references resolved. */
static char *
unescape(const char *s, size_t n)
{
	static const struct { const char *ref; char c; } refs[] = {
		{ "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' },
		{ "&quot;", '"' }, { "&apos;", '\'' },
	};
	char *out = malloc(n + 1), *o = out;
	const char *end = s + n;

	ck_assert_ptr_nonnull(out);
	while (s < end) {
		size_t i;

		if (*s != '&') {
			*o++ = *s++;
			continue;
		}
		if (s[1] == '#') {
			char *e;
			long c = strtol(s + 2, &e, 10);

			ck_assert_msg(*e == ';' && c > 0 && c < 0x80,
				      "reference %.8s", s);
			*o++ = (char)c;
			s = e + 1;
			continue;
		}
		for (i = 0; i < N(refs); i++)
			if (!strncmp(s, refs[i].ref, strlen(refs[i].ref)))
				break;
		ck_assert_msg(i < N(refs), "bare & in %.20s", s);
		*o++ = refs[i].c;
		s += strlen(refs[i].ref);
	}
	*o = 0;
	return out;
}

/* The text from after open up to close, unescaped; *p moves past it. */
static char *
between(const char **p, const char *open, const char *close)
{
	const char *a = strstr(*p, open), *b;

	ck_assert_msg(a, "no %s", open);
	a += strlen(open);
	b = strstr(a, close);
	ck_assert_msg(b, "no %s", close);
	*p = b + strlen(close);
	return unescape(a, (size_t)(b - a));
}

static void
parse_frame(const char *p, struct frame *f)
{
	char *title, *paren;
	const char *q;

	memset(f, 0, sizeof(*f));
	ck_assert_int_eq(sscanf(p, "<g class=\"frame\" fg:x=\"%lf\" fg:w=\"%lf\" fg:l=\"%ld\">",
				&f->fx, &f->fw, &f->level), 3);
	title = between(&p, "<title>", "</title>");
	paren = strrchr(title, '(');
	ck_assert_msg(paren && paren > title && paren[-1] == ' ', "title '%s'",
		      title);
	ck_assert_msg(
		sscanf(paren, "(%lf %*s %lf%%)", &f->samples, &f->share) == 2,
		"title '%s'", title);
	paren[-1] = 0;
	f->name = title;
	ck_assert_int_eq(sscanf(p, "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\"",
				&f->x, &f->y, &f->width),
			 3);
	q = strstr(p, "/>");
	ck_assert_ptr_nonnull(q);
	if (!strncmp(q + 2, "<text ", 6)) {
		q += 2;
		f->label = between(&q, ">", "</text>");
	}
}

static void
parse(struct svg *g)
{
	const char *p = strstr(g->buf, "<svg ");
	size_t cap = 0;

	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sscanf(p, "<svg version=\"1.1\" width=\"1200\" height=\"%lf\"",
				&g->height), 1);
	g->title = between(&p, "<text id=\"title\" x=\"600\" y=\"24\">", "</text>");
	/*
	 * A frame a line. Line by line, because sscanf and the sanitizers'
	 * strstr measure the whole string they are given: on the rest of a
	 * 10,000-frame graph at every frame, that is quadratic.
	 */
	for (const char *end = g->buf + g->len, *nl; p < end; p = nl + 1) {
		char *line;

		nl = memchr(p, '\n', (size_t)(end - p));
		ck_assert_ptr_nonnull(nl);
		if (strncmp(p, "<g class=\"frame\" ", 17))
			continue;
		if (g->n == cap) {
			cap = cap ? 2 * cap : 64;
			g->f = realloc(g->f, cap * sizeof(*g->f));
			ck_assert_ptr_nonnull(g->f);
		}
		line = strndup(p, (size_t)(nl - p));
		ck_assert_ptr_nonnull(line);
		parse_frame(line, &g->f[g->n++]);
		free(line);
	}
	ck_assert_msg(g->len > 7 && !strcmp(g->buf + g->len - 7, "</svg>\n"), "no end");
}

/* Write stacks[0..n) into g (and into UNIT_FLAME_DIR/save.svg when set). */
static void
draw(struct svg *g, const struct flame_stack *stacks, size_t n,
     const char *title, const char *unit, const char *save)
{
	FILE *mem;
	const char *d = getenv("UNIT_FLAME_DIR");

	memset(g, 0, sizeof(*g));
	mem = open_memstream(&g->buf, &g->len);
	ck_assert_ptr_nonnull(mem);
	errno = 0;
	g->ret = flame_write_svg(mem, stacks, n, title, unit);
	g->err = errno;
	ck_assert_int_eq(fclose(mem), 0);
	ck_assert_msg(g->ret == 0, "flame_write_svg: %d, %s", g->ret,
		      strerror(g->err));
	ck_assert_uint_eq(strlen(g->buf), g->len);
	parse(g);
	if (d && save) {
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s.svg", d, save);
		f = fopen(path, "w");
		ck_assert_msg(f, "%s: %s", path, strerror(errno));
		ck_assert_uint_eq(fwrite(g->buf, 1, g->len, f), g->len);
		ck_assert_int_eq(fclose(f), 0);
	}
}

static void
svg_release(struct svg *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->f[i].name);
		free(g->f[i].label);
	}
	free(g->f);
	free(g->title);
	free(g->buf);
}

/* The one frame named name, or NULL where there is none. */
static const struct frame *
frame(const struct svg *g, const char *name)
{
	const struct frame *found = NULL;

	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->f[i].name, name)) {
			ck_assert_msg(!found, "two frames named '%s'", name);
			found = &g->f[i];
		}
	return found;
}

static long
hundredths(double v)
{
	return lround(v * 100);
}

/*
 * What every graph keeps: each frame is on the row its level says and
 * within the image; one root, "all", the full width; the frames come in
 * pre-order, so a frame's parent is the last one a level up; each lies
 * within its parent, in pixels and in samples; siblings add up to no more
 * than their parent and come in name order, each name once; and no frame
 * under 0.1 % of all samples is drawn.
 */
static void
check_nesting(const struct svg *g)
{
	size_t *up = calloc(g->n + 1, sizeof(*up));
	long *kids_w = calloc(g->n + 1, sizeof(*kids_w));
	double *kids_s = calloc(g->n + 1, sizeof(*kids_s));
	size_t *last_kid = calloc(g->n + 1, sizeof(*last_kid));
	double total;

	ck_assert(up && kids_w && kids_s && last_kid);
	ck_assert_uint_gt(g->n, 0);
	ck_assert_str_eq(g->f[0].name, "all");
	ck_assert_int_eq(g->f[0].level, 0);
	ck_assert_int_eq(hundredths(g->f[0].x), 1000);
	ck_assert_int_eq(hundredths(g->f[0].width), 118000);
	total = g->f[0].samples;
	for (size_t i = 0; i < g->n; i++) {
		const struct frame *f = &g->f[i];

		ck_assert(f->y == g->height - 30 - (double)(f->level + 1) * 16);
		ck_assert(hundredths(f->x) >= 1000 &&
			  hundredths(f->x + f->width) <= 119000);
		ck_assert(f->samples == f->fw);
		if (i == 0)
			continue;
		ck_assert_msg(f->level >= 1 &&
				      f->level <= g->f[i - 1].level + 1,
			      "frame %zu at level %ld after %ld", i, f->level,
			      g->f[i - 1].level);
		ck_assert_msg(f->samples >= total * 0.001,
			      "'%s' drawn at %g of %g", f->name, f->samples,
			      total);
	}
	/* up[level] is the last frame seen at that level */
	for (size_t i = 1; i < g->n; i++) {
		const struct frame *f = &g->f[i];
		size_t pi = up[f->level - 1];
		const struct frame *p = &g->f[pi];

		up[f->level] = i;
		ck_assert_int_eq(p->level, f->level - 1);
		ck_assert_msg(hundredths(p->x) <= hundredths(f->x) &&
				      hundredths(f->x + f->width) <=
					      hundredths(p->x + p->width),
			      "'%s' outside its parent '%s'", f->name, p->name);
		ck_assert(p->fx <= f->fx &&
			  f->fx + f->fw <= p->fx + p->fw + 1e-9 * total);
		if (last_kid[pi])
			ck_assert_msg(strcmp(g->f[last_kid[pi]].name, f->name) <
					      0,
				      "siblings '%s', '%s' out of order",
				      g->f[last_kid[pi]].name, f->name);
		last_kid[pi] = i;
		kids_w[pi] += hundredths(f->width);
		kids_s[pi] += f->samples;
	}
	for (size_t i = 0; i < g->n; i++) {
		ck_assert(kids_w[i] <= hundredths(g->f[i].width));
		ck_assert(kids_s[i] <= g->f[i].samples * (1 + 1e-12));
	}
	free(up);
	free(kids_w);
	free(kids_s);
	free(last_kid);
}

/* The basic graph, with its frames checked against the stacks. */
static void
draw_basic(struct svg *g, const char *save)
{
	draw(g, basic, NBASIC, TITLE, "samples", save);
	check_nesting(g);
}

/* ------------------------------------------------------------ tests */

START_TEST(test_flame_merges_stacks_and_sums_callees)
{
	static const struct {
		const char *name;
		double samples;
		long level;
	} want[] = {
		{ "all", 100, 0 },     { "main", 100, 1 }, { "foo", 70, 2 },
		{ "hot", 60, 3 },      { COLD, 10, 3 },    { "bar", 15, 2 },
		{ "[unknown]", 5, 3 }, { "zz", 2, 3 },     { CXX, 5, 2 },
		{ WEIRD_READ, 5, 2 },
	};
	struct svg g;

	draw_basic(&g, "basic");
	ck_assert_uint_eq(g.n, N(want));
	for (size_t i = 0; i < N(want); i++) {
		const struct frame *f = frame(&g, want[i].name);

		ck_assert_msg(f, "no frame '%s'", want[i].name);
		ck_assert_msg(f->samples == want[i].samples, "'%s': %g samples, want %g",
			      want[i].name, f->samples, want[i].samples);
		ck_assert(f->share == want[i].samples);
		ck_assert_int_eq(f->level, want[i].level);
		/* 1180 px for 100 samples */
		ck_assert_msg(labs(hundredths(f->width) -
				   lround(want[i].samples * 1180)) <= 1,
			      "'%s': %.2f px wide", want[i].name, f->width);
	}
	/* siblings in name order, from the left */
	ck_assert(frame(&g, "bar")->x == 10 &&
		  frame(&g, "foo")->x == frame(&g, COLD)->x);
	ck_assert(frame(&g, "foo")->x > frame(&g, WEIRD_READ)->x);
	ck_assert(frame(&g, "hot")->x > frame(&g, COLD)->x);
	ck_assert(frame(&g, "zz")->x > frame(&g, "[unknown]")->x);
	/* 4 levels under the title and above the details line */
	ck_assert(g.height == 48 + 4 * 16 + 30);
	ck_assert_str_eq(g.title, TITLE);
	ck_assert_ptr_nonnull(strstr(g.buf, "<title>hot (60 samples, 60.00%)</title>"));
	svg_release(&g);
}
END_TEST

START_TEST(test_flame_names_a_null_frame_unknown)
{
	const struct frame *f;
	struct svg g;

	draw_basic(&g, NULL);
	f = frame(&g, "[unknown]");
	ck_assert_ptr_nonnull(f);
	ck_assert(f->samples == 5 && f->level == 3);
	/* under bar: bar holds it, [unknown] before zz */
	ck_assert(f->fx == frame(&g, "bar")->fx);
	svg_release(&g);
}
END_TEST

START_TEST(test_flame_escapes_cxx_names)
{
	const struct frame *f;
	struct svg g;

	draw_basic(&g, NULL);
	ck_assert_ptr_nonnull(strstr(g.buf, "<title>" CXX_XML " (5 samples, 5.00%)</title>"));
	ck_assert_ptr_nonnull(strstr(g.buf, ">Basic &lt;&amp;&gt; &quot;test&quot;</text>"));
	f = frame(&g, CXX);
	ck_assert_ptr_nonnull(f);
	/* 59 px hold 7 characters: 5 of the name and ".." */
	ck_assert_str_eq(f->label, "std::..");
	ck_assert_str_eq(frame(&g, "hot")->label, "hot");
	/* 23.6 px: no room for a label */
	ck_assert_ptr_null(frame(&g, "zz")->label);
	svg_release(&g);
}
END_TEST

/* Whether s[0..n) is UTF-8 of the characters XML 1.0 allows. */
static int
xml_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; ) {
		unsigned c = s[i], len = c < 0x80               ? 1 :
					 c >= 0xc2 && c <= 0xdf ? 2 :
					 c >= 0xe0 && c <= 0xef ? 3 :
					 c >= 0xf0 && c <= 0xf4 ? 4 :
								  0;
		unsigned long cp = len == 1 ? c :
				   len == 2 ? c & 0x1f :
				   len == 3 ? c & 0x0f :
					      c & 7;

		if (!len || i + len > n)
			return 0;
		for (unsigned k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe ||
		    cp == 0xffff || cp > 0x10ffff || (len == 3 && cp < 0x800) ||
		    (len == 4 && cp < 0x10000))
			return 0;
		i += len;
	}
	return 1;
}

START_TEST(test_flame_replaces_control_chars_and_invalid_utf8)
{
	const struct frame *f;
	struct svg g;

	draw_basic(&g, NULL);
	ck_assert(xml_utf8((const unsigned char *)g.buf, g.len));
	ck_assert_ptr_null(memchr(g.buf, '\x01', g.len));
	ck_assert_ptr_null(memchr(g.buf, '\xff', g.len));
	ck_assert_ptr_null(memchr(g.buf, '\xfe', g.len));
	/* a tab is a reference; valid UTF-8 is kept as it is */
	ck_assert_ptr_nonnull(
		strstr(g.buf, "<title>ctl\xef\xbf\xbdtab&#9;bad"));
	f = frame(&g, WEIRD_READ);
	ck_assert_ptr_nonnull(f);
	ck_assert(f->samples == 5);
	ck_assert_ptr_nonnull(frame(&g, COLD));
	svg_release(&g);
}
END_TEST

/* The same stacks in any order, and without the ones that do not count,
 * give the same bytes. */
START_TEST(test_flame_same_stacks_in_any_order_same_bytes)
{
	struct flame_stack st[NBASIC];
	struct svg a, b;
	uint64_t x = 42;

	draw_basic(&a, NULL);
	for (size_t i = 0; i < NBASIC; i++)
		st[i] = basic[NBASIC - 1 - i];
	draw(&b, st, NBASIC, TITLE, "samples", NULL);
	ck_assert_uint_eq(a.len, b.len);
	ck_assert(!memcmp(a.buf, b.buf, a.len));
	svg_release(&b);
	for (int round = 0; round < 20; round++) {
		memcpy(st, basic, sizeof(st));
		for (size_t i = NBASIC - 1; i > 0; i--) {
			struct flame_stack t;
			size_t j;

			x = x * 6364136223846793005ull + 1442695040888963407ull;
			j = (size_t)(x >> 33) % (i + 1);
			t = st[i];
			st[i] = st[j];
			st[j] = t;
		}
		draw(&b, st, NBASIC, TITLE, "samples", NULL);
		ck_assert_msg(b.len == a.len && !memcmp(a.buf, b.buf, a.len),
			      "shuffle %d changed the output", round);
		svg_release(&b);
	}
	draw(&b, basic, NBASIC - NIGNORED, TITLE, "samples", NULL);
	ck_assert(b.len == a.len && !memcmp(a.buf, b.buf, a.len));
	svg_release(&b);
	svg_release(&a);
}
END_TEST

/*
 * Equal stacks are added in one order whatever the input's: in floating
 * point, 2^53 and then 1000 ones is 2^53, and 1000 ones and then 2^53 is
 * not (the titles show 15 digits: 9.00719925474099e+15 or ...74199e+15).
 */
START_TEST(test_flame_adds_equal_stacks_in_one_order)
{
	static const char *const a[] = { "main", "a" };
	static const size_t at[] = { 0, 500, 1000 };
	struct flame_stack st[1001];
	struct svg first, g;

	for (size_t k = 0; k < N(at); k++) {
		for (size_t i = 0; i < N(st); i++)
			st[i] = (struct flame_stack){ a, 2,
						      i == at[k] ? 0x1p53 : 1,
						      NULL };
		draw(k ? &g : &first, st, N(st), NULL, NULL, NULL);
		if (!k)
			continue;
		ck_assert_msg(
			g.len == first.len && !memcmp(g.buf, first.buf, g.len),
			"2^53 at %zu: 'a' has %.17g samples, not %.17g", at[k],
			frame(&g, "a")->samples, frame(&first, "a")->samples);
		svg_release(&g);
	}
	/* the ones first: none lost */
	ck_assert(frame(&first, "a")->samples > 0x1p53 + 500);
	svg_release(&first);
}
END_TEST

/* Under 0.1 % of all samples a frame is left out, its samples still in
 * its parent's; at 0.1 % it is drawn. */
START_TEST(test_flame_leaves_out_tiny_frames)
{
	static const char *const a[] = { "main", "a" }, *const b[] = { "main", "b" };
	const struct flame_stack at[] = { { a, 2, 999, NULL },
					  { b, 2, 1, NULL } };
	const struct flame_stack under[] = { { a, 2, 1000, NULL },
					     { b, 2, 1, NULL } };
	struct svg g;

	draw_basic(&g, NULL);
	ck_assert_ptr_null(frame(&g, "tiny"));
	ck_assert(frame(&g, "main")->samples == 100);
	svg_release(&g);
	draw(&g, at, N(at), NULL, NULL, NULL);
	ck_assert_ptr_nonnull(frame(&g, "b"));
	ck_assert(frame(&g, "b")->share == 0.1);
	svg_release(&g);
	draw(&g, under, N(under), NULL, NULL, NULL);
	ck_assert_ptr_null(frame(&g, "b"));
	ck_assert(frame(&g, "main")->samples == 1001);
	ck_assert_uint_eq(g.n, 3);
	svg_release(&g);
}
END_TEST

/* No stacks, or only stacks that do not count: a graph that says so. */
START_TEST(test_flame_without_samples_says_so)
{
	struct svg g;

	draw(&g, NULL, 0, "Empty", "samples", "empty");
	ck_assert_uint_eq(g.n, 0);
	ck_assert_str_eq(g.title, "Empty");
	ck_assert_ptr_nonnull(strstr(g.buf, ">no samples</text>"));
	svg_release(&g);
	draw(&g, basic + NBASIC - NIGNORED, NIGNORED, NULL, NULL, "zero");
	ck_assert_uint_eq(g.n, 0);
	ck_assert_str_eq(g.title, "Flame Graph");
	ck_assert_ptr_nonnull(strstr(g.buf, ">no samples</text>"));
	svg_release(&g);
}
END_TEST

START_TEST(test_flame_names_the_unit)
{
	struct svg g;

	draw(&g, basic, 2, NULL, "ms", NULL);
	ck_assert_ptr_nonnull(strstr(g.buf, "<title>hot (60 ms, 100.00%)</title>"));
	ck_assert_str_eq(g.title, "Flame Graph");
	svg_release(&g);
	draw(&g, basic, 2, NULL, NULL, NULL);
	ck_assert_ptr_nonnull(strstr(g.buf, "<title>hot (60 samples, 100.00%)</title>"));
	svg_release(&g);
}
END_TEST

START_TEST(test_flame_rejects_bad_arguments)
{
	static const char *const m[] = { "main" };
	const struct flame_stack no_frames[] = { { NULL, 2, 1, NULL } };
	const struct flame_stack huge[] = { { m, 1, DBL_MAX, NULL },
					    { m, 1, DBL_MAX, NULL } };
	const struct flame_stack rootless[] = { { NULL, 0, 5, NULL } };
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	struct svg g;

	ck_assert_ptr_nonnull(mem);
	errno = 0;
	ck_assert_int_eq(flame_write_svg(NULL, basic, NBASIC, NULL, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(flame_write_svg(mem, NULL, 3, NULL, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(flame_write_svg(mem, no_frames, 1, NULL, NULL), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(flame_write_svg(mem, huge, 2, NULL, NULL), -1);
	ck_assert_int_eq(errno, ERANGE);
	fclose(mem);
	free(buf);
	/* depth 0: samples of the root alone */
	draw(&g, rootless, 1, NULL, NULL, NULL);
	ck_assert_uint_eq(g.n, 1);
	ck_assert(g.f[0].samples == 5);
	svg_release(&g);
}
END_TEST

/* A 10,000-frame recursion with half the samples; and with 1 in 100,001,
 * so that all of it is left out. */
START_TEST(test_flame_deep_recursion_is_bounded)
{
	static const char *deep[10000];
	static const char *const hot[] = { "main", "hot" };
	struct flame_stack two[2];
	size_t nrec = 0;
	struct svg g;

	deep[0] = "main";
	for (size_t i = 1; i < N(deep); i++)
		deep[i] = "recurse";
	two[0] = (struct flame_stack){ deep, N(deep), 100, NULL };
	two[1] = (struct flame_stack){ hot, 2, 100, NULL };
	draw(&g, two, 2, "Deep", "samples", "deep");
	ck_assert_uint_eq(g.n, 10002);
	ck_assert(g.height == 48 + 10001 * 16 + 30);
	for (size_t i = 0; i < g.n; i++)
		if (!strcmp(g.f[i].name, "recurse")) {
			ck_assert(g.f[i].samples == 100 && g.f[i].share == 50);
			ck_assert_int_eq(g.f[i].level, (long)nrec + 2);
			nrec++;
		}
	ck_assert_uint_eq(nrec, 9999);
	check_nesting(&g);
	svg_release(&g);

	two[0].count = 1;
	two[1].count = 100000;
	draw(&g, two, 2, "Deep", "samples", "deeptiny");
	ck_assert_uint_eq(g.n, 3);
	ck_assert_ptr_nonnull(frame(&g, "hot"));
	ck_assert(frame(&g, "main")->samples == 100001);
	ck_assert(g.height == 48 + 3 * 16 + 30);
	svg_release(&g);
}
END_TEST

/* 100,000 pseudo-random stacks up to 30 deep; name k is drawn with odds
 * 2^-(k+1), so that some paths are hot. */
static struct flame_stack *
many_stacks(size_t n, const char ***framesp, double *total)
{
	static const char *names[48];
	static char buf[48][32];
	size_t maxd = 30;
	const char **frames = malloc(n * maxd * sizeof(*frames));
	struct flame_stack *s = malloc(n * sizeof(*s));
	unsigned long long x = 12345;

	ck_assert(frames && s);
	for (size_t i = 0; i < 48; i++) {
		snprintf(buf[i], sizeof(buf[i]),
			 i % 8 ? "fn%02zu" : "ns::t<%zu>&", i);
		names[i] = buf[i];
	}
	*total = 0;
	for (size_t i = 0; i < n; i++) {
		const char **f = frames + i * maxd;
		size_t k;

		x = x * 6364136223846793005ull + 1442695040888963407ull;
		s[i].depth = 1 + (x >> 33) % maxd;
		s[i].count = (double)(1 + (x >> 20) % 10);
		*total += s[i].count;
		f[0] = "main";
		for (size_t d = 1; d < s[i].depth; d++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			for (k = 0; k < 47 && (x >> (30 + k) & 1); k++)
				;
			f[d] = names[k];
		}
		s[i].frames = f;
	}
	*framesp = frames;
	return s;
}

START_TEST(test_flame_many_stacks_nest_and_repeat)
{
	const size_t n = 100000;
	const char **frames;
	double total, took;
	struct flame_stack *s = many_stacks(n, &frames, &total);
	struct timespec t0, t1;
	struct svg g, h;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	draw(&g, s, n, "Many", "samples", "many");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_msg(took < 20, "%.1f s for %zu stacks", took, n);
	ck_assert(g.f[0].samples == total);
	ck_assert(frame(&g, "main")->samples == total);
	ck_assert_uint_gt(g.n, 100);
	check_nesting(&g);
	draw(&h, s, n, "Many", "samples", NULL);
	ck_assert(g.len == h.len && !memcmp(g.buf, h.buf, g.len));
	svg_release(&h);
	svg_release(&g);
	free(frames);
	free(s);
}
END_TEST

/* A full disk: -1 and ENOSPC, whether the graph outgrows stdio's buffer
 * or only the last flush fails. */
START_TEST(test_flame_reports_write_errors)
{
	FILE *f = fopen("/dev/full", "w");

	ck_assert_ptr_nonnull(f);
	errno = 0;
	ck_assert_int_eq(flame_write_svg(f, basic, NBASIC, TITLE, "samples"),
			 -1);
	ck_assert_int_eq(errno, ENOSPC);
	fclose(f);
	f = fopen("/dev/full", "w");
	ck_assert_ptr_nonnull(f);
	errno = 0;
	ck_assert_int_eq(flame_write_svg(f, NULL, 0, NULL, NULL), -1);
	ck_assert_int_eq(errno, ENOSPC);
	fclose(f);
}
END_TEST
/* The fill of the first frame whose <title> starts with name, into fill
 * (a "rgb(R,G,B)" string). */
static void
fill_of(const struct svg *g, const char *name, char *fill, size_t size)
{
	char want[64];
	const char *at, *f;

	snprintf(want, sizeof(want), "<title>%s (", name);
	at = strstr(g->buf, want);
	ck_assert_msg(at, "no frame %s", name);
	f = strstr(at, "fill=\"");
	ck_assert_ptr_nonnull(f);
	f += 6;
	ck_assert_uint_lt((size_t)(strchr(f, '"') - f), size);
	snprintf(fill, size, "%.*s", (int)(strchr(f, '"') - f), f);
}

/* A differential graph's root, "all", is grey, not the warm colour that
 * reads as slower beside its red frames; a graph with no kinds keeps
 * its warm root. */
START_TEST(test_flame_differential_root_is_neutral)
{
	static const unsigned char slower[] = { FLAME_KIND_SAME,
						FLAME_KIND_SLOWER };
	static const unsigned char faster[] = { FLAME_KIND_SAME,
						FLAME_KIND_FASTER };
	const struct flame_stack diff[] = {
		{ s_hot, 2, 60, slower }, { s_cold, 2, 40, faster },
	};
	struct svg g;
	char fill[64];
	unsigned r, gr, b;

	draw(&g, diff, 2, "Diff", "samples", NULL);
	fill_of(&g, "all", fill, sizeof(fill));
	ck_assert_int_eq(sscanf(fill, "rgb(%u,%u,%u)", &r, &gr, &b), 3);
	ck_assert_msg(r == gr && gr == b, "root of a differential graph: %s",
		      fill);
	ck_assert_ptr_nonnull(strstr(g.buf, "class=\"legend\""));
	svg_release(&g);
	draw(&g, basic, 2, NULL, NULL, NULL);
	fill_of(&g, "all", fill, sizeof(fill));
	ck_assert_int_eq(sscanf(fill, "rgb(%u,%u,%u)", &r, &gr, &b), 3);
	ck_assert_msg(r > b, "root of a plain graph: %s", fill);
	svg_release(&g);
}
END_TEST

/*
 * The time strip's data: each sample in the frame written for its stack,
 * or its nearest caller's where that frame is left out (under 0.1 %); a
 * sample of a stack that does not count is left out; times in whole
 * microseconds, cut down; weights where one is not 1; a marker's name
 * that would end the script's CDATA escaped; threads past the twelfth
 * share the last lane, which says how many.
 */
START_TEST(test_flame_strip_counts_each_sample_in_its_frame)
{
	static const char *const a[] = { "main", "a" }, *const b[] = { "main", "b" };
	const struct flame_stack st[] = {
		{ a, 2, 2000, NULL }, { b, 2, 1, NULL }, { s_ign, 2, 0, NULL },
	};
	const uint64_t t[] = { 1500, 2000000, 3000999, 4000000 };
	const size_t stack[] = { 0, 0, 1, 2 }, lane[] = { 0, 13, 1, 0 };
	const double w[] = { 1000, 1000, 1, 0 };
	static const char *const lanes[14] = { "main 1", "w 2", "3",  "4", "5",
					       "6",      "7",   "8",  "9", "10",
					       "11",     "12",  "13", "14" };
	const struct flame_marker m[] = { { "a]]>b", 1000, 2500000, -1 } };
	const struct flame_timeline tl = { 5000000, 4,     t,  stack, w,
					   lane,    lanes, 14, m,     1 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(flame_write_svg_timeline(f, st, N(st), "T", NULL, &tl),
			 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "span:5000,\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nt:[1,2000,3000],\nf:[2,2,1],\nl:[0,11,1],\n"
				     "w:[1000,1000,1]\n"));
	ck_assert_ptr_nonnull(strstr(buf, "names:[\"a]]\\u003eb\"],\nm:[0,1,2500,0],"));
	ck_assert_ptr_nonnull(strstr(buf, "\"11\",\"3 other threads\"],"));
	ck_assert_ptr_null(strstr(buf, "]]>b"));
	/* the frames: all, main, a; b is in main's */
	ck_assert_ptr_null(strstr(buf, "<title>b "));
	ck_assert_ptr_nonnull(strstr(buf, "<title>a (2000 samples"));
	free(buf);
	/* a sample of a stack that is not one of them */
	f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	errno = 0;
	ck_assert_int_eq(flame_write_svg_timeline(f, st, 2, "T", NULL, &tl),
			 -1);
	ck_assert_int_eq(errno, EINVAL);
	fclose(f);
	free(buf);
}
END_TEST

Suite *
flame_suite(void)
{
	Suite *s = suite_create("flame");
	TCase *t = tcase_create("svg");

	tcase_add_test(t, test_flame_merges_stacks_and_sums_callees);
	tcase_add_test(t, test_flame_names_a_null_frame_unknown);
	tcase_add_test(t, test_flame_escapes_cxx_names);
	tcase_add_test(t, test_flame_replaces_control_chars_and_invalid_utf8);
	tcase_add_test(t, test_flame_same_stacks_in_any_order_same_bytes);
	tcase_add_test(t, test_flame_adds_equal_stacks_in_one_order);
	tcase_add_test(t, test_flame_leaves_out_tiny_frames);
	tcase_add_test(t, test_flame_without_samples_says_so);
	tcase_add_test(t, test_flame_names_the_unit);
	tcase_add_test(t, test_flame_rejects_bad_arguments);
	tcase_add_test(t, test_flame_deep_recursion_is_bounded);
	tcase_add_test(t, test_flame_many_stacks_nest_and_repeat);
	tcase_add_test(t, test_flame_differential_root_is_neutral);
	tcase_add_test(t, test_flame_strip_counts_each_sample_in_its_frame);
	if (access("/dev/full", W_OK) == 0)
		tcase_add_test(t, test_flame_reports_write_errors);
	else
		unit_skip("test_flame_reports_write_errors", "no /dev/full");
	tcase_set_timeout(t, 120);
	suite_add_tcase(s, t);
	return s;
}
