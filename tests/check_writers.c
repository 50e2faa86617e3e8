/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Every writer of an export on the fixed model (check_fixture.c), as
 * `pcprof report` reaches it (export_finish, export_print), compared with
 * its golden file in tests/golden/ (UPDATE_GOLDEN=1 build/tests/unit
 * writes them afresh): the flat report in text, JSON and CSV, of a CPU and
 * of a wall-clock view; folded stacks; the threads; speedscope, sampled
 * and from the timeline; callgrind; the text timeline; the Firefox
 * Profiler's file, whose structure is checked too (check_pprof.c has
 * pprof's).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/export.h"
#include "writers/alloc_out.h"
#include "writers/export_out.h"
#include "writers/flame.h"
#include "check_fixture.h"
#include "unit.h"

/* export_finish of the fixed model under clock as r asks, into name. */
static void
finish_golden(enum pc_clock clock, int timeline, struct report_opts *r,
	      const char *name)
{
	static char file[] = "demo/gmon.out", *files[] = { file };
	struct export x;
	FILE *out = golden_open();

	r->files = files;
	r->nfiles = 1;
	fixture_export(&x, clock, timeline);
	ck_assert_int_eq(export_finish(&x, r, out, "demo"), 0);
	export_release(&x);
	golden_check(out, name);
}

/*
 * The flat report: functions by self samples, the escaped name in each
 * format, the sample of no thread, the inlined helper counted in work.
 */
START_TEST(test_report_text_json_csv_of_the_model)
{
	static const struct {
		enum format format;
		const char *golden;
	} v[] = {
		{ FORMAT_TEXT, "report.txt" },
		{ FORMAT_JSON, "report.json" },
		{ FORMAT_CSV, "report.csv" },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct report_opts r = { .format = v[i].format };

		finish_golden(PC_CLOCK_CPU, 0, &r, v[i].golden);
	}
}
END_TEST

/* --top 2: two rows, and the rest summed on one line. */
START_TEST(test_report_top_sums_the_rest)
{
	struct report_opts r = { .format = FORMAT_TEXT, .top = 2 };

	finish_golden(PC_CLOCK_CPU, 0, &r, "report-top2.txt");
}
END_TEST

/* A wall view: the wait is a function, totals come from the stacks. */
START_TEST(test_report_of_a_wall_view)
{
	struct report_opts r = { .format = FORMAT_TEXT };

	finish_golden(PC_CLOCK_WALL, 0, &r, "report-wall.txt");
	r.format = FORMAT_JSON;
	finish_golden(PC_CLOCK_WALL, 0, &r, "report-wall.json");
	r.format = FORMAT_TEXT;
	finish_golden(PC_CLOCK_OFF, 0, &r, "report-off.txt");
}
END_TEST

/* Folded stacks: recursion kept, ';' in a name escaped, counts summed. */
START_TEST(test_folded_of_the_model)
{
	struct report_opts r = { .format = FORMAT_FOLDED };

	finish_golden(PC_CLOCK_CPU, 0, &r, "folded.txt");
	finish_golden(PC_CLOCK_WALL, 0, &r, "folded-wall.txt");
}
END_TEST

/* --by-thread in text, CSV and JSON, and a wall view's top waits. */
START_TEST(test_threads_of_the_model)
{
	static const struct {
		enum pc_clock clock;
		enum format format;
		const char *golden;
	} v[] = {
		{ PC_CLOCK_CPU, FORMAT_TEXT, "threads.txt" },
		{ PC_CLOCK_CPU, FORMAT_CSV, "threads.csv" },
		{ PC_CLOCK_CPU, FORMAT_JSON, "threads.json" },
		{ PC_CLOCK_WALL, FORMAT_TEXT, "threads-wall.txt" },
		{ PC_CLOCK_WALL, FORMAT_CSV, "threads-wall.csv" },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct report_opts r = { .format = v[i].format,
					 .by_thread = 1 };

		finish_golden(v[i].clock, 0, &r, v[i].golden);
	}
}
END_TEST

/* speedscope: a sampled profile a thread (no timeline), and the evented
 * one of each thread's timeline. */
START_TEST(test_speedscope_sampled_and_evented)
{
	struct report_opts r = { .format = FORMAT_SPEEDSCOPE };

	finish_golden(PC_CLOCK_CPU, 0, &r, "speedscope.json");
	finish_golden(PC_CLOCK_WALL, 1, &r, "speedscope-timeline.json");
}
END_TEST

/*
 * The frames both speedscope writers share (speedscope_frames.c): one a
 * function of the model, in its order (the profiles' events and samples
 * name a frame by its function's index), a file and line where the
 * function has one, and the profiles' array opened after them.
 */
START_TEST(test_speedscope_frames_one_a_function)
{
	static const char head[] = ",\"shared\":{\"frames\":["
				   "{\"name\":\"main\"";
	static const char tail[] = "]},\"profiles\":[";
	char *buf = NULL;
	size_t len = 0, frames = 0, files = 0;
	FILE *out = open_memstream(&buf, &len);
	struct export x;

	ck_assert_ptr_nonnull(out);
	fixture_export(&x, PC_CLOCK_CPU, 0);
	export_speedscope_frames(&x, out);
	ck_assert_int_eq(fclose(out), 0);
	ck_assert_int_eq(strncmp(buf, head, strlen(head)), 0);
	ck_assert_uint_ge(len, strlen(tail));
	ck_assert_str_eq(buf + len - strlen(tail), tail);
	for (const char *p = buf; (p = strstr(p, "{\"name\":")); p++)
		frames++;
	for (const char *p = buf; (p = strstr(p, ",\"file\":")); p++)
		files++;
	ck_assert_uint_eq(frames, x.nfuncs);
	for (size_t i = 0; i < x.nfuncs; i++)
		files -= x.funcs[i].file != 0;
	ck_assert_uint_eq(files, 0);
	ck_assert_ptr_nonnull(strstr(buf, "{\"name\":\"memcpy\"}"));
	export_release(&x);
	free(buf);
}
END_TEST

/* callgrind: self cost by line, calls with their inclusive cost. */
START_TEST(test_callgrind_of_the_model)
{
	struct report_opts r = { .format = FORMAT_CALLGRIND };

	finish_golden(PC_CLOCK_CPU, 0, &r, "callgrind.txt");
}
END_TEST

/* The text timeline: each thread's buckets and the markers. */
START_TEST(test_timeline_text_of_the_model)
{
	struct report_opts r = { .format = FORMAT_TEXT, .timeline = 1 };

	finish_golden(PC_CLOCK_CPU, 1, &r, "timeline.txt");
	finish_golden(PC_CLOCK_WALL, 1, &r, "timeline-wall.txt");
}
END_TEST

/* A timeline's writers refuse an export that has none. */
START_TEST(test_timeline_writers_need_a_timeline)
{
	struct report_opts r = { .format = FORMAT_TEXT, .timeline = 1 };
	struct export x;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	fixture_export(&x, PC_CLOCK_CPU, 0);
	ck_assert_int_eq(export_finish(&x, &r, out, "demo"), -1);
	r.timeline = 0;
	r.format = FORMAT_FIREFOX;
	ck_assert_int_eq(export_finish(&x, &r, out, "demo"), -1);
	export_release(&x);
	ck_assert_int_eq(fclose(out), 0);
	ck_assert_uint_eq(len, 0);	/* the one line is on stderr */
	free(buf);
}
END_TEST

/*
 * What the Firefox Profiler reads of the file (its processed format): the
 * meta's version and interval, one thread per tid with its pid and name,
 * its samples' table as long as its stack, time and CPU-delta columns,
 * each stack's frame and each frame's function in range, the function
 * names in the string table, and the markers. Checked by Python's json
 * module, as a program that did not write the file reads it.
 */
static const char firefox_check[] =
	"import json, sys\n"
	"p = json.load(open(sys.argv[1]))\n"
	"m = p['meta']\n"
	"assert m['interval'] == 10 and abs(m['startTime'] - 1700000000123.457) < 1e-3, m\n"
	"names = {}\n"
	"for t in p['threads']:\n"
	"    s = t['samples']; n = s['length']\n"
	"    assert len(s['stack']) == len(s['time']) == n > 0, t['name']\n"
	"    st, fr, fn = t['stackTable'], t['frameTable'], t['funcTable']\n"
	"    assert all(0 <= k < st['length'] for k in s['stack'])\n"
	"    assert all(0 <= f < fr['length'] for f in st['frame'])\n"
	"    assert all(0 <= f < fn['length'] for f in fr['func'])\n"
	"    strs = t['stringArray'] if 'stringArray' in t else p['shared']['stringArray']\n"
	"    names[(t['pid'], t['tid'])] = (t['name'], n, t['markers']['length'],\n"
	"        sorted(set(strs[k] for k in fn['name'])))\n"
	"for k in sorted(names): print(k, names[k])\n";

START_TEST(test_firefox_of_the_model)
{
	struct report_opts r = { .format = FORMAT_FIREFOX };
	char path[] = "/tmp/pcprof-firefox-XXXXXX", cmd[600];
	struct export x;
	FILE *f;
	int fd, status;

	finish_golden(PC_CLOCK_WALL, 1, &r, "firefox.json");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fixture_export(&x, PC_CLOCK_WALL, 1);
	ck_assert_int_eq(export_print(&x, FORMAT_FIREFOX, f, "demo"), 0);
	export_release(&x);
	ck_assert_int_eq(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "python3 -c \"$PC_FF_CHECK\" %s > %s.out",
		 path, path);
	setenv("PC_FF_CHECK", firefox_check, 1);
	status = system(cmd);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		unlink(path);
		golden_skipped("firefox-read.txt");
		unit_skip("test_firefox_of_the_model", "no python3");
		return;
	}
	ck_assert_msg(status == 0, "the Firefox file does not read: %s", path);
	unlink(path);
	strcat(path, ".out");
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	{
		char buf[4096];
		size_t n = fread(buf, 1, sizeof(buf), f);

		fclose(f);
		unlink(path);
		golden_check_bytes(buf, n, "firefox-read.txt");
	}
}
END_TEST

/*
 * The Firefox file's native allocations (export_firefox_allocs.c), from
 * the timeline's allocation events: each thread's own, in time order,
 * a free's bytes negative at its allocation's address and on its
 * allocation's stack; an event of no stack recorded on that frame.
 */
START_TEST(test_firefox_native_allocations_of_the_model)
{
	static char file[] = "demo/gmon.out", *files[] = { file };
	struct report_opts r = { .format = FORMAT_FIREFOX,
				 .files = files,
				 .nfiles = 1 };
	struct export x;
	FILE *out = golden_open();

	fixture_export(&x, PC_CLOCK_WALL, 1);
	fixture_timeline_allocs(&x);
	ck_assert_int_eq(export_finish(&x, &r, out, "demo"), 0);
	export_release(&x);
	golden_check(out, "firefox-allocs.json");
}
END_TEST

/*
 * pcprof report --alloc (alloc_out.c): the sites by bytes allocated, a
 * stack whose leaf is no function's summed into its caller's site, the
 * error from each site's samples, the leaks largest first with their
 * callers; JSON; --top 1 and the rest. And the flat report of an
 * allocation metric, in whole bytes.
 */
START_TEST(test_alloc_sites_of_the_model)
{
	static const struct {
		enum format format;
		long top;
		const char *golden;
	} v[] = {
		{ FORMAT_TEXT, 0, "alloc.txt" },
		{ FORMAT_TEXT, 1, "alloc-top1.txt" },
		{ FORMAT_JSON, 0, "alloc.json" },
	};
	static char file[] = "demo/gmon.out", *files[] = { file };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct report_opts r = { .format = v[i].format,
					 .top = v[i].top,
					 .alloc = 1 };
		struct export x;
		FILE *out = golden_open();

		fixture_alloc_export(&x, 1);
		alloc_print(out, &x, &r);
		export_release(&x);
		golden_check(out, v[i].golden);
	}
	for (size_t i = 0; i < 2; i++) {
		struct report_opts r = { .format = i ? FORMAT_CSV : FORMAT_TEXT,
					 .files = files,
					 .nfiles = 1 };
		struct export x;
		FILE *out = golden_open();

		fixture_alloc_export(&x, 0);
		ck_assert_int_eq(export_finish(&x, &r, out, "demo"), 0);
		export_release(&x);
		golden_check(out, i ? "alloc-bytes.csv" : "alloc-bytes.txt");
	}
}
END_TEST

/*
 * The flame graph (flame.c) with its time strip (flame_strip.c) of the
 * model's stacks: frames coloured by kind (the executable, libc, a wait),
 * recursion kept, the escaped name, two threads' lanes, an interval, an
 * instant and a process's marker. The page's script (flame.js) is in the
 * golden file too.
 */
START_TEST(test_flame_graph_with_its_strip)
{
	static const char *const s0[] = { "main" };
	static const char *const s1[] = { "main", "work" };
	static const char *const s2[] = { "main", "work", "fib", "fib" };
	static const char *const s3[] = { "main", "work", "memcpy" };
	static const char *const s4[] = { "main", "work", "ns::f<a;b>\"q\"" };
	static const char *const s5[] = { "main", "work",
					  "[off-cpu: nanosleep]" };
	static const unsigned char exe[] = { FLAME_KIND_EXE, FLAME_KIND_EXE,
					     FLAME_KIND_EXE, FLAME_KIND_EXE };
	static const unsigned char libc[] = { FLAME_KIND_EXE, FLAME_KIND_EXE,
					      FLAME_KIND_LIBC };
	static const unsigned char off[] = { FLAME_KIND_EXE, FLAME_KIND_EXE,
					     FLAME_KIND_OFFCPU };
	static const struct flame_stack stacks[] = {
		{ s0, 1, 1, exe },  { s1, 2, 5, exe }, { s2, 4, 3, exe },
		{ s3, 3, 2, libc }, { s4, 3, 1, exe }, { s5, 3, 9, off },
	};
	/* each sample's time (ms), stack, weight and lane */
	static const uint64_t t[] = { 0,  0,  10,  10,  20,  20, 30,
				      40, 50, 140, 150, 160, 240 };
	static const size_t stack[] = { 1, 2, 1, 2, 4, 3, 1, 2, 1, 5, 1, 3, 0 };
	static const double weight[] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 9, 1, 1, 1 };
	static const size_t lane[] = { 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0 };
	static const char *const lanes[] = { "demo (tid 100)", "worker (tid 101)" };
	static const struct flame_marker markers[] = {
		{ "phase one", 5000000, 35000000, 0 },
		{ "tick", 25000000, 25000000, 1 },
		{ "from a file", 90000000, 190000000, -1 },
	};
	uint64_t ns[sizeof(t) / sizeof(t[0])];
	struct flame_timeline tl = {
		250000000, sizeof(t) / sizeof(t[0]),
		ns,        stack,
		weight,    lane,
		lanes,     2,
		markers,   3,
	};
	FILE *out = golden_open();

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ns[i] = t[i] * 1000000;
	ck_assert_int_eq(
		flame_write_svg_timeline(out, stacks,
					 sizeof(stacks) / sizeof(stacks[0]),
					 "demo <&>", "samples", &tl),
		0);
	golden_check(out, "flame-strip.svg");
}
END_TEST

Suite *
writers_suite(void)
{
	Suite *s = suite_create("writers");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_report_text_json_csv_of_the_model);
	tcase_add_test(t, test_report_top_sums_the_rest);
	tcase_add_test(t, test_report_of_a_wall_view);
	tcase_add_test(t, test_folded_of_the_model);
	tcase_add_test(t, test_threads_of_the_model);
	tcase_add_test(t, test_speedscope_sampled_and_evented);
	tcase_add_test(t, test_speedscope_frames_one_a_function);
	tcase_add_test(t, test_callgrind_of_the_model);
	tcase_add_test(t, test_timeline_text_of_the_model);
	tcase_add_test(t, test_timeline_writers_need_a_timeline);
	tcase_add_test(t, test_firefox_of_the_model);
	tcase_add_test(t, test_firefox_native_allocations_of_the_model);
	tcase_add_test(t, test_alloc_sites_of_the_model);
	tcase_add_test(t, test_flame_graph_with_its_strip);
	/* Python's start, beside a CPU hog, can take seconds */
	tcase_set_timeout(t, 60);
	suite_add_tcase(s, t);
	return s;
}
