/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hostile names in every format an export is written in: the fixed model
 * (check_fixture.c) with its function, thread, process, object, source
 * file and marker names, and the title, replaced by names that hold C0
 * and C1 controls, an escape sequence, DEL, tabs and line ends, bytes of
 * no valid UTF-8 (a lone 0xff, a cut sequence, a surrogate), U+2028, and
 * each format's own separators (';', ',', '"', '\', '<&>'). Each writer
 * is called as export_out.c calls it, and what it prints is compared
 * with its golden file (tests/golden/hostile-*; UPDATE_GOLDEN=1 rewrites
 * them) and checked for what a reader needs whatever the golden file
 * says: valid UTF-8, no control character but the format's own line
 * ends, as many lines (and CSV fields a line) as the tame model's, JSON
 * whose strings and brackets close, and SVG with no raw '<' or '&' of a
 * name. check_pprof.c has pprof's, which carries names as data.
 */
#include <stdlib.h>
#include <string.h>

#include "model/export.h"
#include "model/timeline.h"
#include "writers/alloc_out.h"
#include "writers/export_out.h"
#include "writers/flame.h"
#include "check_fixture.h"
#include "unit.h"

/* The names the model's tame ones are replaced by (check_fixture.h). */
static const struct {
	const char *tame, *hostile;
} names[] = {
	{ "ns::f<a;b>\"q\"",
	  "f\x01\x1b[31m\t\n\r\x7f\xc2\x85\xff\xe2\x82;\xed\xa0\x80"
	  "\xe2\x80\xa8<&>\"\\,\xc3\xa9" },
	{ "worker", "wo\nrk\x1b\xff,er" },
	{ "demo", "de\"mo\x07\xc3" },
	{ "/usr/bin/demo", "/usr/bin/de\nmo\xff" },
	{ "demo.c", "de\tmo\x01.c" },
};
static const char tick[] = "ti\x1b]0;pwn\x07" "ck\xff";
static const char title[] = "ti\ntle\x9b\xff";

/* The model, its names made hostile where hostile is set. */
static void
model(struct export *x, enum pc_clock clock, int timeline, int hostile)
{
	fixture_export(x, clock, timeline);
	for (size_t i = 0; hostile && i < x->nstrs; i++)
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
			if (!strcmp(x->strs[i], names[k].tame)) {
				free(x->strs[i]);
				x->strs[i] = strdup(names[k].hostile);
				ck_assert_ptr_nonnull(x->strs[i]);
				break;
			}
	for (size_t g = 0; hostile && x->timeline && g < x->timeline->n; g++)
		for (size_t m = 0; m < x->timeline->v[g].nmarkers; m++) {
			struct tl_marker *mk = &x->timeline->v[g].markers[m];

			if (!strcmp(mk->name, "tick")) {
				free(mk->name);
				mk->name = strdup(tick);
				ck_assert_ptr_nonnull(mk->name);
			}
		}
}

/* the formats, as the writers print them */
enum kind { TEXT, CSV, JSON, SVG };

typedef int (*writer)(struct export *x, FILE *out, const char *t);

/* Whether buf[0..len) is valid UTF-8 with no control character (C0 but
 * '\n', and '\t' where tab is set: the SVG page's own indentation; DEL,
 * C1); *at: the first byte that is not. */
static int
readable_as(const char *buf, size_t len, size_t *at, int tab)
{
	const unsigned char *p = (const unsigned char *)buf;
	size_t i = 0;

	while (i < len) {
		long cp;
		size_t n = utf8_next(p + i, &cp);
		int space = cp == '\n' || (cp == '\t' && tab);

		if (cp < 0 || (cp < 0x20 && !space) || cp == 0x7f ||
		    (cp >= 0x80 && cp <= 0x9f)) {
			*at = i;
			return 0;
		}
		i += n;
	}
	return 1;
}

static int
readable(const char *buf, size_t len, size_t *at)
{
	return readable_as(buf, len, at, 0);
}

static size_t
lines(const char *buf, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\n';
	return n;
}

/* The fields of each line of a CSV text, a line's count a digit each. */
static void
csv_shape(const char *buf, size_t len, char *shape, size_t size)
{
	size_t k = 0, fields = 1;
	int quoted = 0;

	for (size_t i = 0; i < len && k + 2 < size; i++) {
		if (buf[i] == '"')
			quoted = !quoted;
		else if (buf[i] == ',' && !quoted)
			fields++;
		else if (buf[i] == '\n' && !quoted) {
			shape[k++] = (char)('0' + fields % 10);
			fields = 1;
		}
	}
	shape[k] = 0;
}

/* Whether a JSON text's strings close and its brackets match: a name
 * that ended its string early leaves one or the other open. */
static int
json_closes(const char *buf, size_t len)
{
	char stack[64];
	size_t depth = 0;
	int in_str = 0;

	for (size_t i = 0; i < len; i++) {
		char c = buf[i];

		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
			else if ((unsigned char)c < 0x20)
				return 0;
		} else if (c == '"') {
			in_str = 1;
		} else if (c == '[' || c == '{') {
			if (depth == sizeof(stack))
				return 0;
			stack[depth++] = c == '[' ? ']' : '}';
		} else if (c == ']' || c == '}') {
			if (!depth || stack[--depth] != c)
				return 0;
		}
	}
	return !in_str && depth == 0;
}

/* What write prints of the model, tame or hostile, into *buf. */
static size_t
print(writer write, enum pc_clock clock, int timeline, int hostile,
      char **buf)
{
	struct export x;
	size_t len = 0;
	FILE *out = open_memstream(buf, &len);

	ck_assert_ptr_nonnull(out);
	model(&x, clock, timeline, hostile);
	ck_assert_int_eq(write(&x, out, hostile ? title : "demo"), 0);
	export_release(&x);
	ck_assert_int_eq(fclose(out), 0);
	return len;
}

/*
 * One format: the hostile model's output is golden, readable, as long in
 * lines (and CSV fields) as the tame model's, and of its kind's syntax.
 */
static void
check_format(writer write, enum pc_clock clock, int timeline, enum kind kind,
	     const char *golden)
{
	char *tame = NULL, *bad = NULL, ts[256], bs[256];
	size_t tlen = print(write, clock, timeline, 0, &tame);
	size_t blen = print(write, clock, timeline, 1, &bad);
	size_t at;

	ck_assert_msg(readable(bad, blen, &at),
		      "%s: byte %zu (%#x) is no readable text", golden, at,
		      (unsigned char)bad[at]);
	ck_assert_msg(lines(bad, blen) == lines(tame, tlen),
		      "%s: %zu lines, %zu of the tame names", golden,
		      lines(bad, blen), lines(tame, tlen));
	if (kind == CSV) {
		csv_shape(tame, tlen, ts, sizeof(ts));
		csv_shape(bad, blen, bs, sizeof(bs));
		ck_assert_msg(!strcmp(ts, bs), "%s: fields a line %s, tame %s",
			      golden, bs, ts);
	}
	if (kind == JSON)
		ck_assert_msg(json_closes(bad, blen), "%s: not closed", golden);
	if (kind == SVG)
		ck_assert_msg(!strstr(bad, "<&>"), "%s: a raw '<&>'", golden);
	golden_check_bytes(bad, blen, golden);
	free(tame);
	free(bad);
}

/* ------------------------------------------------------------- the writers */

static int
report_as(struct export *x, FILE *out, const char *t, enum format format)
{
	static char file[] = "demo/gmon.out", *files[] = { file };
	struct report_opts r = { .format = format, .files = files,
				 .nfiles = 1 };

	return export_finish(x, &r, out, t);
}

static int
report_text(struct export *x, FILE *out, const char *t)
{
	return report_as(x, out, t, FORMAT_TEXT);
}

static int
report_json(struct export *x, FILE *out, const char *t)
{
	return report_as(x, out, t, FORMAT_JSON);
}

static int
report_csv(struct export *x, FILE *out, const char *t)
{
	return report_as(x, out, t, FORMAT_CSV);
}

static int
folded(struct export *x, FILE *out, const char *t)
{
	struct folded_set fs;

	(void)t;
	export_folded(x, &fs);
	folded_print(out, &fs);
	folded_release(&fs);
	return 0;
}

static int
threads_text(struct export *x, FILE *out, const char *t)
{
	return export_print_threads(x, FORMAT_TEXT, out, t);
}

static int
threads_csv(struct export *x, FILE *out, const char *t)
{
	return export_print_threads(x, FORMAT_CSV, out, t);
}

static int
threads_json(struct export *x, FILE *out, const char *t)
{
	return export_print_threads(x, FORMAT_JSON, out, t);
}

static int
speedscope(struct export *x, FILE *out, const char *t)
{
	return export_speedscope(x, out, t);
}

static int
speedscope_timeline(struct export *x, FILE *out, const char *t)
{
	return export_speedscope_timeline(x, out, t);
}

static int
callgrind(struct export *x, FILE *out, const char *t)
{
	return export_callgrind(x, out, t);
}

static int
firefox(struct export *x, FILE *out, const char *t)
{
	return export_firefox(x, out, t);
}

static int
timeline_text(struct export *x, FILE *out, const char *t)
{
	return timeline_print(x, out, t);
}

/* ------------------------------------------------------------------ tests */

START_TEST(test_hostile_names_in_the_flat_report)
{
	check_format(report_text, PC_CLOCK_CPU, 0, TEXT, "hostile-report.txt");
	check_format(report_json, PC_CLOCK_CPU, 0, JSON, "hostile-report.json");
	check_format(report_csv, PC_CLOCK_CPU, 0, CSV, "hostile-report.csv");
	check_format(report_text, PC_CLOCK_WALL, 0, TEXT,
		     "hostile-report-wall.txt");
}
END_TEST

/* folded stacks: one line a stack, whatever a name holds of ';' */
START_TEST(test_hostile_names_in_folded_stacks)
{
	check_format(folded, PC_CLOCK_WALL, 0, TEXT, "hostile-folded.txt");
}
END_TEST

START_TEST(test_hostile_names_in_the_threads)
{
	check_format(threads_text, PC_CLOCK_WALL, 0, TEXT,
		     "hostile-threads.txt");
	check_format(threads_csv, PC_CLOCK_WALL, 0, CSV,
		     "hostile-threads.csv");
	check_format(threads_json, PC_CLOCK_CPU, 0, JSON,
		     "hostile-threads.json");
}
END_TEST

START_TEST(test_hostile_names_in_speedscope)
{
	check_format(speedscope, PC_CLOCK_CPU, 0, JSON,
		     "hostile-speedscope.json");
	check_format(speedscope_timeline, PC_CLOCK_WALL, 1, JSON,
		     "hostile-speedscope-timeline.json");
}
END_TEST

/* callgrind: fn=, fl= and ob= lines, one a name */
START_TEST(test_hostile_names_in_callgrind)
{
	check_format(callgrind, PC_CLOCK_CPU, 0, TEXT, "hostile-callgrind.txt");
}
END_TEST

/* the Firefox Profiler's file: its string table, threads, markers */
START_TEST(test_hostile_names_in_the_firefox_profile)
{
	check_format(firefox, PC_CLOCK_WALL, 1, JSON, "hostile-firefox.json");
}
END_TEST

/* the text timeline: the title, threads, what each ran, the markers */
START_TEST(test_hostile_names_in_the_text_timeline)
{
	check_format(timeline_text, PC_CLOCK_WALL, 1, TEXT,
		     "hostile-timeline.txt");
}
END_TEST

static int
alloc_text(struct export *x, FILE *out, const char *t)
{
	struct report_opts r = { .format = FORMAT_TEXT, .alloc = 1 };

	(void)t;
	alloc_print(out, x, &r);
	return 0;
}

static int
alloc_json(struct export *x, FILE *out, const char *t)
{
	struct report_opts r = { .format = FORMAT_JSON, .alloc = 1 };

	(void)t;
	alloc_print(out, x, &r);
	return 0;
}

/* pcprof report --alloc's sites and leaks: the allocation model's
 * process and a site's function (work) of hostile names */
START_TEST(test_hostile_names_in_the_allocation_sites)
{
	static const struct {
		writer write;
		enum kind kind;
		const char *golden;
	} v[] = {
		{ alloc_text, TEXT, "hostile-alloc.txt" },
		{ alloc_json, JSON, "hostile-alloc.json" },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char *buf = NULL;
		size_t len = 0, at;
		FILE *out = open_memstream(&buf, &len);
		struct export x;

		ck_assert_ptr_nonnull(out);
		fixture_alloc_export(&x, 1);
		/* its sites are work's, fib's and memcpy's */
		for (size_t s = 0; s < x.nstrs; s++)
			if (!strcmp(x.strs[s], "work") ||
			    !strcmp(x.strs[s], "demo")) {
				int work = !strcmp(x.strs[s], "work");

				free(x.strs[s]);
				x.strs[s] = strdup(names[work ? 0 : 2].hostile);
			}
		ck_assert_int_eq(v[i].write(&x, out, title), 0);
		export_release(&x);
		ck_assert_int_eq(fclose(out), 0);
		ck_assert_msg(readable(buf, len, &at), "%s: byte %zu",
			      v[i].golden, at);
		if (v[i].kind == JSON)
			ck_assert(json_closes(buf, len));
		golden_check_bytes(buf, len, v[i].golden);
		free(buf);
	}
}
END_TEST

/* The flame graph with its strip: a frame, a lane and a marker of
 * hostile names, each an SVG text or a string of the page's script. */
START_TEST(test_hostile_names_in_the_flame_graph)
{
	static const char *const s0[] = { "main" };
	const char *s1[] = { "main", names[0].hostile };
	const struct flame_stack stacks[] = {
		{ s0, 1, 2, NULL },
		{ s1, 2, 3, NULL },
	};
	static const uint64_t t[] = { 0, 10000000, 20000000, 30000000,
				      40000000 };
	static const size_t stack[] = { 0, 1, 1, 0, 1 };
	static const double weight[] = { 1, 1, 1, 1, 1 };
	static const size_t lane[] = { 0, 1, 0, 1, 0 };
	const char *lanes[] = { "demo (tid 100)", names[1].hostile };
	const struct flame_marker markers[] = {
		{ tick, 5000000, 15000000, 1 },
	};
	struct flame_timeline tl = { 50000000, 5,      t,     stack, weight,
				     lane,     lanes,  2,     markers, 1 };
	char *buf = NULL;
	size_t len = 0, at;
	FILE *out = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(out);
	ck_assert_uint_gt(flame_strip_height(&tl), 0);
	ck_assert_uint_eq(flame_strip_height(NULL), 0);
	ck_assert_int_eq(flame_write_svg_timeline(out, stacks, 2, title,
						  "samples", &tl),
			 0);
	ck_assert_int_eq(fclose(out), 0);
	ck_assert_msg(readable_as(buf, len, &at, 1), "flame: byte %zu (%#x)",
		      at, (unsigned char)buf[at]);
	ck_assert_msg(!strstr(buf, "<&>"), "flame: a raw '<&>'");
	golden_check_bytes(buf, len, "hostile-flame.svg");
	free(buf);
}
END_TEST

Suite *
hostile_suite(void)
{
	Suite *s = suite_create("hostile");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_hostile_names_in_the_flat_report);
	tcase_add_test(t, test_hostile_names_in_folded_stacks);
	tcase_add_test(t, test_hostile_names_in_the_threads);
	tcase_add_test(t, test_hostile_names_in_speedscope);
	tcase_add_test(t, test_hostile_names_in_callgrind);
	tcase_add_test(t, test_hostile_names_in_the_firefox_profile);
	tcase_add_test(t, test_hostile_names_in_the_text_timeline);
	tcase_add_test(t, test_hostile_names_in_the_allocation_sites);
	tcase_add_test(t, test_hostile_names_in_the_flame_graph);
	suite_add_tcase(s, t);
	return s;
}
