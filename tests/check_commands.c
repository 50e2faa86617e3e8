/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The commands' own options (tools/commands/: merge, compare, run,
 * annotate, flame, history, report), read through each command's entry
 * as main() calls it, in a child of its own (a bad value ends pcprof): for each
 * argv, the exit status and a line that stdout or stderr must hold (the
 * usage's first line, or the one message), the other stream empty where
 * the command prints one thing. No row gets as far as running or reading
 * anything: each stops at its options. Then merge at work: two profiles
 * of one program summed into one file, and profiles that do not add up
 * refused with no file left.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../gmon/gmon.h"
#include "pcprof.h"
#include "unit.h"
#include "writers/gmon_out.h"

#define N(a)	(sizeof(a) / sizeof((a)[0]))

struct cmd_out {
	int status;
	char out[8192], err[8192];
};

/* fd's bytes into buf (NUL-terminated). */
static void
drain(int fd, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t k;

	while (n + 1 < size && (k = read(fd, buf + n, size - n - 1)) > 0)
		n += (size_t)k;
	buf[n] = 0;
	close(fd);
}

/* fn(argc, argv) in a child, as main() calls it; its status and output. */
static void
run_cmd(int (*fn)(int, char **), const char *const *argv, struct cmd_out *r)
{
	char *v[24];
	int argc = 0, o[2], e[2], status;
	pid_t pid;

	while (argv[argc]) {
		ck_assert_int_lt(argc, (int)N(v) - 1);
		v[argc] = (char *)argv[argc];
		argc++;
	}
	v[argc] = NULL;
	ck_assert_int_eq(pipe(o), 0);
	ck_assert_int_eq(pipe(e), 0);
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(o[1], 1);
		dup2(e[1], 2);
		close(o[0]), close(o[1]), close(e[0]), close(e[1]);
		optind = 0;
		status = fn(argc, v);
		fflush(NULL);
		_exit(status);
	}
	close(o[1]);
	close(e[1]);
	/* the outputs are small: each fits its pipe */
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	drain(o[0], r->out, sizeof(r->out));
	drain(e[0], r->err, sizeof(r->err));
	ck_assert(WIFEXITED(status));
	r->status = WEXITSTATUS(status);
}

/* Whether text holds line as one of its lines. */
static int
has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');

		if (!strncmp(p, line, n) && (p[n] == '\n' || !p[n]))
			return 1;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

#define A(...)	{ __VA_ARGS__, NULL }
#define U_MERGE	"usage: pcprof merge -o OUT GMON..."
#define U_ANNOTATE \
	"usage: pcprof annotate [--asm|--source] [--source-dir DIR] " \
	"[--process PID|NAME]"
#define U_COMPARE \
	"usage: pcprof compare [OPTIONS] --base CMD [ARGS...] " \
	"--new CMD [ARGS...]"
#define U_FLAME \
	"usage: pcprof flame -o SVG [--title TEXT] [--stacks-file FILE] " \
	"[--process PID|NAME]"
#define U_RUN	"usage: pcprof run [OPTIONS] -- CMD [ARGS...]"
#define U_HISTORY	"usage: pcprof history [OPTIONS] FILE"
#define NOFILE	"/nonexistent/pc-history"
#define BASE_NEW	"--base", "true", "--new", "true"
#define CLOCKS	"not wall, cpu or off (or, of allocations, alloc, " \
		"alloc-bytes, inuse or inuse-bytes)"

/* fd: 1, the line is stdout's and stderr is empty; 2, stderr's and
 * stdout is empty; 3, stderr's (getopt's own line comes first). */
static const struct row {
	int (*fn)(int, char **);
	const char *argv[16];
	int status, fd;
	const char *line;
} rows[] = {
	{ cmd_merge, A("merge"), 2, 2, U_MERGE },
	{ cmd_merge, A("merge", "-h"), 0, 1, U_MERGE },
	{ cmd_merge, A("merge", "--help", "-o"), 0, 1, U_MERGE },
	{ cmd_merge, A("merge", "-o", "out"), 2, 2, U_MERGE },
	{ cmd_merge, A("merge", "in"), 2, 2, U_MERGE },
	{ cmd_merge, A("merge", "-o"), 2, 3, U_MERGE },
	{ cmd_merge, A("merge", "--bogus", "-o", "out", "in"), 2, 3, U_MERGE },

	{ cmd_compare, A("compare"), 2, 2,
	  "pcprof: compare: no --base command" },
	{ cmd_compare, A("compare", "-h"), 0, 1, U_COMPARE },
	{ cmd_compare, A("compare", "--runs", "3", "--help", BASE_NEW), 0, 1,
	  U_COMPARE },
	{ cmd_compare, A("compare", "--base", "true"), 2, 2,
	  "pcprof: compare: no --new command after --base" },
	{ cmd_compare, A("compare", "x", BASE_NEW), 2, 2,
	  "pcprof: compare: 'x': an argument before --base" },
	{ cmd_compare, A("compare", "--base", "--new", "true"), 2, 2,
	  "pcprof: compare: --base names no command" },
	{ cmd_compare, A("compare", "--base", "true", "--new"), 2, 2,
	  "pcprof: compare: --new names no command" },
	{ cmd_compare, A("compare", "--base", "true", "--new",
			 "/nonexistent/pc-cmd"), 2, 2,
	  "pcprof: compare: the new command '/nonexistent/pc-cmd': "
	  "command not found" },
	{ cmd_compare, A("compare", "--budget", "2x", BASE_NEW), 2, 2,
	  "pcprof: --budget '2x': not a time (60, 90s, 2m, 1h)" },
	{ cmd_compare, A("compare", "--budget", "0", BASE_NEW), 2, 2,
	  "pcprof: --budget '0': not a time (60, 90s, 2m, 1h)" },
	{ cmd_compare, A("compare", "--budget", "-1m", BASE_NEW), 2, 2,
	  "pcprof: --budget '-1m': not a time (60, 90s, 2m, 1h)" },
	{ cmd_compare, A("compare", "--budget", "1d", BASE_NEW), 2, 2,
	  "pcprof: --budget '1d': not a time (60, 90s, 2m, 1h)" },
	{ cmd_compare, A("compare", "--runs", "1", BASE_NEW), 2, 2,
	  "pcprof: --runs '1': not a whole number from 2 to 1000" },
	{ cmd_compare, A("compare", "--runs", "1001", BASE_NEW), 2, 2,
	  "pcprof: --runs '1001': not a whole number from 2 to 1000" },
	{ cmd_compare, A("compare", "--runs", "5x", BASE_NEW), 2, 2,
	  "pcprof: --runs '5x': not a whole number from 2 to 1000" },
	{ cmd_compare, A("compare", "--runs", "5", "--budget", "2m",
			 BASE_NEW), 2, 2,
	  "pcprof: compare: --budget and --runs: give one (the runs a side, "
	  "or the time to fill with them)" },
	{ cmd_compare, A("compare", "--timer", "perf", BASE_NEW), 2, 2,
	  "pcprof: --timer 'perf': not taskclock or posix" },
	{ cmd_compare, A("compare", "--hz", "0", BASE_NEW), 2, 2,
	  "pcprof: --hz '0': not a whole number from 1 to 1000000" },
	{ cmd_compare, A("compare", "-o", "", BASE_NEW), 2, 2,
	  "pcprof: -o '': no name" },
	{ cmd_compare, A("compare", "--commit", "", BASE_NEW), 2, 2,
	  "pcprof: --commit '': an empty name" },
	{ cmd_compare, A("compare", "--time", "-1", BASE_NEW), 2, 2,
	  "pcprof: --time '-1': not a whole number from 0 to "
	  "9223372036854775807" },
	{ cmd_compare, A("compare", "--bogus", BASE_NEW), 2, 3, U_COMPARE },

	{ cmd_run, A("run"), 2, 2, U_RUN },
	{ cmd_run, A("run", "-h"), 0, 1, U_RUN },
	{ cmd_run, A("run", "-o", "dir"), 2, 2, U_RUN },
	{ cmd_run, A("run", "--bogus", "--", "true"), 2, 3, U_RUN },
	{ cmd_run, A("run", "--format", "pprof", "--", "true"), 2, 2,
	  "pcprof: --format pprof: a file for another tool: name it with "
	  "--report FILE" },
	{ cmd_run, A("run", "--no-cpu", "--", "true"), 2, 2,
	  "pcprof: --no-cpu: nothing left to record; with --alloc (or "
	  "--metric), the allocations alone" },
	{ cmd_run, A("run", "--clock", "never", "--", "true"), 2, 2,
	  "pcprof: --clock 'never': " CLOCKS },

	{ cmd_annotate, A("annotate"), 2, 2, U_ANNOTATE },
	{ cmd_annotate, A("annotate", "main"), 2, 2, U_ANNOTATE },
	{ cmd_annotate, A("annotate", "-h"), 0, 1, U_ANNOTATE },
	{ cmd_annotate, A("annotate", "--asm", "--source-dir"), 2, 3,
	  U_ANNOTATE },
	{ cmd_annotate, A("annotate", "--bogus", "exe", "main"), 2, 3,
	  U_ANNOTATE },

	{ cmd_flame, A("flame"), 2, 2, U_FLAME },
	{ cmd_flame, A("flame", "-h"), 0, 1, U_FLAME },
	{ cmd_flame, A("flame", "-o", "x.svg"), 2, 2, U_FLAME },
	{ cmd_flame, A("flame", "prog"), 2, 2, U_FLAME },
	{ cmd_flame, A("flame", "--clock", "never", "-o", "x.svg", "prog"), 2,
	  2, "pcprof: --clock 'never': " CLOCKS },
	{ cmd_flame, A("flame", "--bogus", "-o", "x.svg", "prog"), 2, 3,
	  U_FLAME },

	{ cmd_history, A("history"), 2, 2,
	  "pcprof: history: one FILE is needed" },
	{ cmd_history, A("history", "a", "b"), 2, 2, U_HISTORY },
	{ cmd_history, A("history", "-h"), 0, 1, U_HISTORY },
	{ cmd_history, A("history", "--bogus", "f"), 2, 3, U_HISTORY },
	{ cmd_history, A("history", "--alpha"), 2, 3, U_HISTORY },
	{ cmd_history, A("history", "--alpha", "1", "f"), 2, 2,
	  "pcprof: --alpha '1': not between 0 and 1" },
	{ cmd_history, A("history", "--alpha", "0", "f"), 2, 2,
	  "pcprof: --alpha '0': not between 0 and 1" },
	{ cmd_history, A("history", "--alpha", "x", "f"), 2, 2,
	  "pcprof: --alpha 'x': not a number" },
	{ cmd_history, A("history", "--threshold", "-1", "f"), 2, 2,
	  "pcprof: --threshold '-1': not a number" },
	{ cmd_history, A("history", "--threshold", "5%%", "f"), 2, 2,
	  "pcprof: --threshold '5%%': not a number" },
	/* accepted, each: then the file is read, and is not there */
	{ cmd_history, A("history", "--threshold", "5%", "--alpha", "0.05",
			 "--method", "edivisive", "--format", "markdown",
			 "--absolute", NOFILE), 2, 2,
	  "pcprof: '" NOFILE "': No such file or directory" },
	{ cmd_history, A("history", "--format", "yaml", "f"), 2, 2,
	  "pcprof: --format 'yaml': not one of its words "
	  "(see pcprof history --help)" },
	{ cmd_history, A("history", "--method", "ttest2", "f"), 2, 2,
	  "pcprof: --method 'ttest2': not one of its words "
	  "(see pcprof history --help)" },
	{ cmd_history, A("history", "--time", "nan", "f"), 2, 2,
	  "pcprof: --time 'nan': not a number" },
	{ cmd_history, A("history", "add", "--commit", "", "f"), 2, 2,
	  "pcprof: --commit '': an empty name" },
	{ cmd_history, A("history", "add", "f"), 2, 2,
	  "pcprof: history add: a FILE and the runs are needed" },
	{ cmd_history, A("history", "add", "-h"), 0, 1, U_HISTORY },

	{ cmd_report, A("report", "-h"), 0, 1,
	  "usage: pcprof report [OPTIONS] EXE [GMON|DIR...]" },
	/* no operand: the short usage */
	{ cmd_report, A("report", "--timeline"), 2, 2,
	  "pcprof report --help for more." },
	{ cmd_report, A("report", "--timeline", "--top", "x", "prog"), 2, 2,
	  "pcprof: --top 'x': not a count" },
};

/* Each row in a child of its own: one test for all, as a test is a
 * fork of this whole binary too. */
START_TEST(test_commands_options)
{
	static struct cmd_out r;

	for (size_t i = 0; i < N(rows); i++) {
		const struct row *w = &rows[i];
		const char *in = w->fd == 1 ? r.out : r.err;

		run_cmd(w->fn, w->argv, &r);
		if (r.status != w->status || !has_line(in, w->line) ||
		    (w->fd == 1 && r.err[0]) || (w->fd == 2 && r.out[0]))
			ck_abort_msg("row %zu (%s %s): status %d, stdout:\n"
				     "%.300s\nstderr:\n%.300s\nwanted status "
				     "%d and on fd %d:\n%s",
				     i, w->argv[0],
				     w->argv[1] ? w->argv[1] : "",
				     r.status, r.out, r.err, w->status, w->fd,
				     w->line);
	}
}
END_TEST

/* ---------------------------------------------------------------- merge */

static char dir[64];

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/pc-commands-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* A plain gmon file at dir/name: a histogram of n bins of bin bytes
 * from 0x1000, at 100 Hz, and an arc 0x1010 -> 0x1020 called calls
 * times. */
static void
put_profile(const char *name, uint32_t bin, const uint64_t *counts,
	    uint32_t n, uint64_t calls)
{
	struct gmon_profile p;
	char path[256];

	unit_profile(&p, 0);
	unit_hist(&p, 0x1000, 0x1000 + (uint64_t)bin * n, 100, counts, n);
	unit_arc(&p, 0x1010, 0x1020, calls);
	ck_assert_int_eq(gmon_write_file(unit_at(path, sizeof(path), dir, name),
					 &p), 0);
	gmon_profile_release(&p);
}

static void
read_profile(const char *path, struct gmon_profile *p)
{
	static unsigned char buf[1 << 16];
	struct gmon_error err;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(gmon_parse(buf, (size_t)n, p, &err), 0);
}

START_TEST(test_commands_merge_sums)
{
	static const uint64_t a[4] = { 1, 0, 7, 2 }, b[3] = { 0, 5, 3 };
	char pa[256], pb[256], out[256];
	struct gmon_profile p;
	struct cmd_out r;
	uint64_t arcs = 0;

	/* b cuts the same text shorter: summed over the union */
	put_profile("a", 2, a, 4, 3);
	put_profile("b", 2, b, 3, 4);
	unit_at(pa, sizeof(pa), dir, "a");
	unit_at(pb, sizeof(pb), dir, "b");
	unit_at(out, sizeof(out), dir, "m");
	{
		const char *argv[] = { "merge", "-o", out, pa, pb, NULL };

		run_cmd(cmd_merge, argv, &r);
	}
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.out, "");
	ck_assert_str_eq(r.err, "");
	read_profile(out, &p);
	ck_assert_uint_eq(p.nhists, 1);
	ck_assert_uint_eq(p.hists[0].low, 0x1000);
	ck_assert_uint_eq(p.hists[0].high, 0x1008);
	ck_assert_uint_eq(p.hists[0].rate, 100);
	ck_assert_uint_eq(p.hists[0].counts[0], 1);
	ck_assert_uint_eq(p.hists[0].counts[1], 5);
	ck_assert_uint_eq(p.hists[0].counts[2], 10);
	ck_assert_uint_eq(p.hists[0].counts[3], 2);
	for (size_t i = 0; i < p.narcs; i++) {
		ck_assert_uint_eq(p.arcs[i].from_pc, 0x1010);
		ck_assert_uint_eq(p.arcs[i].self_pc, 0x1020);
		arcs += p.arcs[i].count;
	}
	ck_assert_uint_eq(arcs, 7);
	gmon_profile_release(&p);
}
END_TEST

START_TEST(test_commands_merge_refuses_what_does_not_add_up)
{
	static const uint64_t a[4] = { 1, 0, 7, 2 }, b[2] = { 5, 3 };
	char pa[256], pb[256], out[256];
	struct stat st;
	struct cmd_out r;

	/* the same text in bins of another size: gprof refuses them */
	put_profile("a", 2, a, 4, 3);
	put_profile("b", 4, b, 2, 4);
	unit_at(pa, sizeof(pa), dir, "a");
	unit_at(pb, sizeof(pb), dir, "b");
	unit_at(out, sizeof(out), dir, "m");
	{
		const char *argv[] = { "merge", "-o", out, pa, pb, NULL };

		run_cmd(cmd_merge, argv, &r);
	}
	ck_assert_int_eq(r.status, 2);
	ck_assert_str_eq(r.out, "");
	ck_assert_ptr_nonnull(strstr(r.err, "pcprof: "));
	ck_assert_int_eq(stat(out, &st), -1);
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

Suite *
commands_suite(void)
{
	Suite *s = suite_create("commands");
	TCase *t = tcase_create("options");
	TCase *m = tcase_create("merge");

	tcase_add_test(t, test_commands_options);
	suite_add_tcase(s, t);
	tcase_add_checked_fixture(m, setup, teardown);
	tcase_add_test(m, test_commands_merge_sums);
	tcase_add_test(m, test_commands_merge_refuses_what_does_not_add_up);
	suite_add_tcase(s, m);
	return s;
}
