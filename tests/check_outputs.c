/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The writers that print no export, each on a small fixed model made here,
 * compared with golden files in tests/golden/ (UPDATE_GOLDEN=1
 * build/tests/unit writes them afresh): the flat report and call graph of
 * a gmon profile (report.c, callgraph_out.c), --lines (lines_out.c),
 * gprof's file (gmon_out.c, read back by gmon/ too), a whole run's
 * processes (runview_out.c), pcprof history's change points and plot
 * (history_out.c).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../gmon/gmon.h"
#include "pcprof.h"
#include "inputs/runview.h"
#include "model/history.h"
#include "model/lines.h"
#include "symbols/symtab.h"
#include "writers/gmon_out.h"
#include "writers/runview_out.h"
#include "check_fixture.h"
#include "unit.h"

#define N(a)	(sizeof(a) / sizeof((a)[0]))

static const struct unit_sym syms[] = {
	{ 0x1000, 0x1100, "main" },
	{ 0x1100, 0x1200, "work" },
	{ 0x1200, 0x1300, "fib" },
	{ 0x1300, 0x1380, "ns::f<a;b>\"q\"" },
	{ 0x1380, 0x13c0, "work" },	/* work.cold: a piece of work */
};

/* A gmon profile of syms: 4-byte bins over [0x1000, 0x1400), samples in
 * each function (work's cold piece too) and 3 in no symbol; arcs main ->
 * work 9, work -> fib 5 and 2 from another site, fib -> fib 3, work ->
 * ns::f 1. */
static void
gmon_of(struct gmon_profile *p)
{
	uint64_t counts[256 + 4];

	memset(counts, 0, sizeof(counts));
	counts[0x04] = 2;	/* main */
	counts[0x44] = 30;	/* work */
	counts[0x45] = 10;
	counts[0x84] = 25;	/* fib */
	counts[0xc4] = 5;	/* ns::f */
	counts[0xe4] = 7;	/* work.cold */
	counts[0xfc] = 3;	/* past every symbol */
	unit_profile(p, 0);
	unit_hist(p, 0x1000, 0x1400, 100, counts, 256);
	unit_arc(p, 0x1010, 0x1100, 9);
	unit_arc(p, 0x1150, 0x1200, 5);
	unit_arc(p, 0x1160, 0x1200, 2);
	unit_arc(p, 0x1220, 0x1200, 3);
	unit_arc(p, 0x1170, 0x1300, 1);
}

/* The flat report and --callgraph of a gmon profile, in text; JSON; CSV
 * and CSV's --top with its rest line; the rows by object (--by-object of
 * one object) in each format; the head of a window's report (--from,
 * --to, --marker). */
START_TEST(test_report_of_a_gmon_profile)
{
	static char file[] = "demo/gmon.out", *files[] = { file };
	static const struct {
		enum format format;
		int callgraph, by_object, top, window;
		const char *golden;
	} v[] = {
		{ FORMAT_TEXT, 1, 0, 0, 0, "gmon-report.txt" },
		{ FORMAT_JSON, 0, 0, 0, 0, "gmon-report.json" },
		{ FORMAT_CSV, 0, 0, 0, 0, "gmon-report.csv" },
		{ FORMAT_CSV, 0, 0, 2, 0, "gmon-report-top2.csv" },
		{ FORMAT_TEXT, 0, 1, 0, 0, "gmon-report-objects.txt" },
		{ FORMAT_JSON, 0, 1, 0, 0, "gmon-report-objects.json" },
		{ FORMAT_CSV, 0, 1, 0, 0, "gmon-report-objects.csv" },
		{ FORMAT_TEXT, 0, 0, 2, WINDOW_FROM | WINDOW_TO | WINDOW_MARKER,
		  "gmon-report-window.txt" },
	};
	struct gmon_profile p;
	struct callgraph cg;
	struct symtab st;
	struct flat f;

	unit_symtab(&st, syms, N(syms));
	gmon_of(&p);
	flat_build(&f, &st, &p);
	callgraph_build(&cg, &st, &p, &f);
	for (size_t i = 0; i < N(v); i++) {
		struct report_opts r = { .format = v[i].format,
					 .callgraph = v[i].callgraph,
					 .by_object = v[i].by_object,
					 .top = v[i].top,
					 .exe = "demo",
					 .files = files,
					 .nfiles = 1,
					 .clock = PC_CLOCK_CPU,
					 .window = v[i].window,
					 .from = 0.25,
					 .to = 1.5,
					 .marker = "phase one" };
		FILE *out = golden_open();

		report_print(out, &f, &st, v[i].callgraph ? &cg : NULL, &r);
		golden_check(out, v[i].golden);
	}
	callgraph_release(&cg);
	flat_release(&f);
	symtab_release(&st);
	gmon_profile_release(&p);
}
END_TEST

/*
 * --lines: lines by samples, the inlined function named, code of no line
 * as function+offset, the [unknown] row in its place; text, JSON, CSV and
 * --top 2 with the rest.
 */
START_TEST(test_lines_of_the_model)
{
	static char file[] = "demo/gmon.out", *files[] = { file };
	struct line_row rows[] = {
		{ "/src/demo.c", 22, 1, NULL, 0, 40 },
		{ "/src/demo.c", 31, 2, NULL, 0, 25 },
		{ NULL, 0, 3, NULL, 0x10, 10 },
		{ "/src/demo.h", 6, 1, "helper", 0, 5 },
		{ "/src/demo.c", 12, 0, NULL, 0, 2 },
	};
	static const struct {
		enum format format;
		long top;
		const char *golden;
	} v[] = {
		{ FORMAT_TEXT, 0, "lines.txt" },
		{ FORMAT_TEXT, 2, "lines-top2.txt" },
		{ FORMAT_JSON, 0, "lines.json" },
		{ FORMAT_CSV, 0, "lines.csv" },
		{ FORMAT_CSV, 2, "lines-top2.csv" },
	};
	struct lines L;
	struct symtab st;

	unit_symtab(&st, syms, N(syms) - 1);
	memset(&L, 0, sizeof(L));
	L.rows = rows;
	L.nrows = N(rows);
	L.total = 85;
	L.unknown = 3;
	L.nolines = 10;
	L.rate = 100;
	L.have_lines = 1;
	for (size_t i = 0; i < N(v); i++) {
		struct report_opts r = { .format = v[i].format,
					 .top = v[i].top,
					 .lines = 1,
					 .exe = "demo",
					 .files = files,
					 .nfiles = 1 };
		FILE *out = golden_open();

		lines_print(out, &L, &st, &r);
		golden_check(out, v[i].golden);
	}
	symtab_release(&st);
}
END_TEST

/*
 * gprof's file (merge, --format gmon): the histogram, then the arcs
 * sorted, equal ones summed and a sum past 32 bits split in records of
 * UINT32_MAX. The bytes are golden; gmon/'s reader reads them back to the
 * same counts and arcs.
 */
START_TEST(test_gmon_file_written_and_read_back)
{
	struct gmon_profile p, q;
	struct gmon_error err;
	uint64_t big = 5000000000ull, sum = 0, got[256];
	int fd = memfd_create("gmon", 0);
	off_t len;
	char *buf;

	ck_assert_int_ge(fd, 0);
	gmon_of(&p);
	unit_arc(&p, 0x1010, 0x1100, big);	/* main -> work: 9 + 5e9 */
	ck_assert_int_eq(gmon_write_fd(fd, &p), 0);
	len = lseek(fd, 0, SEEK_END);
	ck_assert_int_gt(len, 0);
	buf = malloc((size_t)len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pread(fd, buf, (size_t)len, 0), len);
	close(fd);
	golden_check_bytes(buf, (size_t)len, "merged.gmon");
	ck_assert_int_eq(gmon_parse(buf, (size_t)len, &q, &err), 0);
	/* the histogram in records of the bins that have counts */
	memset(got, 0, sizeof(got));
	for (size_t i = 0; i < q.nhists; i++) {
		const struct gmon_hist *h = &q.hists[i];

		ck_assert_uint_eq((h->high - h->low) / h->nbins, 4);
		ck_assert(h->low >= 0x1000 && h->high <= 0x1400);
		for (uint32_t b = 0; b < h->nbins; b++)
			got[(h->low - 0x1000) / 4 + b] += h->counts[b];
	}
	ck_assert_mem_eq(got, p.hists[0].counts, sizeof(got));
	/* five pairs, main -> work's 5e9 + 9 in two records */
	ck_assert_uint_eq(q.narcs, 6);
	for (size_t i = 0; i < q.narcs; i++) {
		if (i)
			ck_assert(q.arcs[i - 1].from_pc < q.arcs[i].from_pc ||
				  (q.arcs[i - 1].from_pc == q.arcs[i].from_pc &&
				   q.arcs[i - 1].self_pc <= q.arcs[i].self_pc));
		if (q.arcs[i].from_pc == 0x1010)
			sum += q.arcs[i].count;
	}
	ck_assert_uint_eq(sum, big + 9);
	gmon_profile_release(&q);
	gmon_profile_release(&p);
	free(buf);
}
END_TEST

/* A process of a run: program, pid, threads, CPU seconds. */
static struct runview_proc
proc(const char *program, uint64_t pid, double seconds)
{
	struct runview_proc p;

	memset(&p, 0, sizeof(p));
	p.program = program;
	p.exe = (char *)program;
	p.profile = (char *)"run/gmon.out";
	p.pid = pid;
	p.threads = 1;
	p.seconds = p.shown = seconds;
	p.samples = seconds * 100;
	p.rate = 100;
	return p;
}

/*
 * A whole run's head: a line a process, how each ended (an exit, a
 * signal, finished by pcprof), the timer chosen by its cost, the rate
 * note where a signal stood for several samples, the CPU time no sample
 * saw; in JSON up to its "profile" key. Then twelve processes, summed
 * by program.
 */
START_TEST(test_runview_head_of_a_run)
{
	struct runview_proc procs[13];
	struct runview v;
	FILE *out;

	memset(&v, 0, sizeof(v));
	procs[0] = proc("sh", 200, 0.01);
	procs[1] = proc("demo", 201, 0.82);
	procs[1].threads = 2;
	procs[1].ended = GMON_ENDED_SIGNAL;
	procs[1].end_signal = SIGTERM;
	procs[1].timer = GMON_TIMER_POSIX;
	procs[1].timer_how = GMON_TIMER_MEASURED;
	procs[1].timer_cost = 18950;
	procs[1].signals = 41;
	procs[1].signal_samples = 410;	/* each signal stood for 10 */
	procs[1].have_cpu = 1;
	procs[1].before = 0.003;
	procs[1].tail = 0.012;
	procs[1].writing = 0.001;
	procs[2] = proc("wc<1>", 0, 0.02);
	procs[2].threads = 0;
	procs[2].ended = GMON_ENDED_KILLED;
	v.procs = procs;
	v.nprocs = 3;
	v.clock = PC_CLOCK_CPU;
	v.cpu_total = 0.85;
	out = golden_open();
	runview_print_text(out, &v, "run", 0.85);
	golden_check(out, "runview.txt");
	out = golden_open();
	runview_print_json(out, &v, 0.85);
	golden_check(out, "runview.json");
	for (size_t i = 3; i < N(procs); i++) {
		procs[i] = proc(i % 2 ? "cc1" : "as", 300 + i, 0.1 * (double)i);
		v.cpu_total += procs[i].seconds;	/* 0.85 + 7.5 */
	}
	v.nprocs = N(procs);
	out = golden_open();
	runview_print_text(out, &v, "run", v.cpu_total);
	golden_check(out, "runview-programs.txt");
}
END_TEST

/*
 * pcprof history: six commits, the program's CPU stepping up at c4 and a
 * function (a name that markdown and SVG must escape) stepping down at
 * c5, then up at c6, whose runs were disturbed (a slower machine): held
 * back, unconfirmed; text, JSON, markdown, and the SVG plot of each
 * series.
 */
START_TEST(test_history_of_six_commits)
{
	static char c1[] = "c1", c2[] = "c2", c3[] = "c3", c4[] = "c4<&>",
		    c5[] = "c5|x", c6[] = "c6";
	static char *commits[] = { c1, c2, c3, c4, c5, c6 };
	struct hist_record recs[6];
	struct history h = { recs, 6 };
	size_t idx[6] = { 0, 1, 2, 3, 4, 5 };
	double x0[6] = { 1.00, 1.01, 0.99, 1.10, 1.11, 1.09 };
	double x1[6] = { 0.50, 0.51, 0.49, 0.50, 0.40, 0.46 };
	double speed[6] = { 1, 1.01, 0.99, 1, 1, 1.12 };
	signed char why[6] = { -1, -1, -1, -1, -1, HIST_SLOWER };
	double within[6] = { 1e-4, 1e-4, 1e-4, 1e-4, 1e-4, 1e-4 };
	struct change ch0 = { 3, 1.0, 1.1, 0.001 },
		      ch1 = { 4, 0.5, 0.405, 0.02 };
	struct hist_series s[2] = {
		{ "cpu", 1, 6, idx, x0, within, &ch0, 1, NULL, NULL,
		  { 0, 0, 0, 0 }, 0 },
		{ "parse|<b>", 0, 6, idx, x1, within, &ch1, 1, NULL, NULL,
		  { 5, 0.405, 0.46, 0.003 }, 1 },
	};
	struct hist_result res = { &h, s, 2, 2, 0.05, 0.02, "t-test",
				   1, speed, why };
	static const char *const golden[] = { "history.txt", "history.json", "history.markdown" };

	memset(recs, 0, sizeof(recs));
	for (int i = 0; i < 6; i++) {
		recs[i].commit = commits[i];
		recs[i].time = 1700000000 + 3600 * i;
		recs[i].runs = 3;
	}
	for (int format = 0; format < 3; format++) {
		FILE *out = golden_open();

		history_print(out, &res, format);
		golden_check(out, golden[format]);
	}
	for (int i = 0; i < 2; i++) {
		FILE *out = golden_open();

		history_plot(out, &res, &s[i]);
		golden_check(out,
			     i ? "history-function.svg" : "history-cpu.svg");
	}
}
END_TEST

Suite *
outputs_suite(void)
{
	Suite *s = suite_create("outputs");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_report_of_a_gmon_profile);
	tcase_add_test(t, test_lines_of_the_model);
	tcase_add_test(t, test_gmon_file_written_and_read_back);
	tcase_add_test(t, test_runview_head_of_a_run);
	tcase_add_test(t, test_history_of_six_commits);
	suite_add_tcase(s, t);
	return s;
}
