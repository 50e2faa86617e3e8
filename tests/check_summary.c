/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/summary.c, the line for a file that could not
 * be written (always) and PC_VERBOSE's closing line, on the test's
 * descriptor 2, with libpc's state set here (the wall sampler's figures
 * in pc_stats, the objects' in pc_objs, whether a live file is there by
 * the stand-in below). The CPU time is this image's since pc->cpu_start, set
 * 2 s back: 1000 samples are 500 Hz. Cases:
 *  - each errno's reason, and one not known: "write failed";
 *  - the line of a plain run: samples, signals, rates, threads, timer,
 *    samples outside, signal, version, and nothing of what is off;
 *  - the line of a run with all on: scope all, the call graph, the wall
 *    clock (rounds spaced under the budget, or not), the live file, the
 *    timeline, and each count that is not 0, once;
 *  - the timer's reason: refused with its errno, measured (under and
 *    over the bound, earlier this boot);
 *  - a file not written, under PC_VERBOSE: both lines.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "../preload/pc.h"
#include "../preload/live.h"
#include "../preload/wall.h"
#include "unit.h"

#define N(a)	(sizeof(a) / sizeof((a)[0]))

/* live.c's, which unit_preload.c stands in for: whether the live file
 * is there (livegrow.c's footprint of none: 0 bytes) */
static int live_on;

int
pc_live_active(void)
{
	return live_on;
}

/* ---------------------------------------------------------------- */

static char path[64];
static int saved_err = -1;

static void
setup(void)
{
	int fd;

	unit_preload_reset();
	live_on = 0;
	pc_sampling_sig = SIGRTMIN + 1;
	snprintf(path, sizeof(path), "/tmp/pc-summary-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	saved_err = dup(STDERR_FILENO);
	ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
	pc_msg_init();
}

static void
teardown(void)
{
	dup2(saved_err, STDERR_FILENO);
	close(saved_err);
	unlink(path);
}

/* What was said since the last call. */
static const char *
said(void)
{
	static char buf[4096];
	int fd = open(path, O_RDONLY);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);

	close(fd);
	buf[n > 0 ? n : 0] = 0;
	ck_assert_int_eq(ftruncate(STDERR_FILENO, 0), 0);
	ck_assert_int_eq(lseek(STDERR_FILENO, 0, SEEK_SET), 0);
	return buf;
}

/* This image's CPU time 2 s from now: called just before a line is
 * made, so that the microseconds between leave its rates as they are. */
static void
cpu_two_seconds(void)
{
	struct timespec now;

	ck_assert_int_eq(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now), 0);
	pc->cpu_start = now;
	pc->cpu_start.tv_sec -= 2;
}

/* A plain run's figures. */
static void
plain_run(void)
{
	struct pc_config *c = unit_config();

	c->hz = 1000;
	c->verbose = 1;
	c->callgraph = 0;
	c->timer = 0;
	c->timer_how = GMON_TIMER_ASKED;
	pc_stats->samples = 1000;
	pc_stats->signals = 1010;
	pc_stats->threads = 3;
	pc_stats->outside = 7;
	cpu_two_seconds();
}

START_TEST(test_summary_reasons)
{
	static const struct { int err; const char *why; } v[] = {
		{ ELOOP, "it is a symbolic link" },
		{ EISDIR, "it is a directory" },
		{ ENOSPC, "no space left on the device" },
		{ EDQUOT, "disk quota exceeded" },
		{ EACCES, "permission denied" },
		{ EPERM, "operation not permitted" },
		{ EROFS, "read-only file system" },
		{ ENOENT, "no such directory" },
		{ ENAMETOOLONG, "file name too long" },
		{ EMFILE, "too many open files" },
		{ ENFILE, "too many open files" },
		{ EIO, "write failed" },
	};
	char want[256];

	for (size_t i = 0; i < N(v); i++) {
		pc_dump_summary("/x/gmon.out", -v[i].err);
		snprintf(want, sizeof(want),
			 "libpc: cannot write '/x/gmon.out': %s; profile not "
			 "written\n", v[i].why);
		ck_assert_str_eq(said(), want);
	}
	/* written, and not verbose: nothing */
	pc_dump_summary("/x/gmon.out", 0);
	ck_assert_str_eq(said(), "");
}
END_TEST

START_TEST(test_summary_plain)
{
	char want[1024];

	plain_run();
	pc_dump_summary("/x/gmon.out", 0);
	snprintf(want, sizeof(want),
		 "libpc: wrote /x/gmon.out: 1000 samples (1010 signals) in 2.0 "
		 "s CPU; rate 1000 Hz requested, 500 Hz effective, 505 "
		 "signals/s; 3 threads; timer posix (PC_TIMER); 7 samples "
		 "outside the text; signal %d; libpc " PC_VERSION "\n",
		 SIGRTMIN + 1);
	ck_assert_str_eq(said(), want);
}
END_TEST

START_TEST(test_summary_all_on)
{
	struct pc_config *c = unit_config();
	char want[2048];

	plain_run();
	ck_assert_int_eq(pc_timeline_init(64, 0), 0);
	c->scope_all = 1;
	pc_objs->nobjs = 5;
	pc_objs->pending_dropped = 2;
	pc_objs->no_object = 3;
	pc_objs->pending_samples = 4;
	c->callgraph = 1;
	c->unwinder = PC_UNWIND_FP;
	c->stacks = 1;
	pc_stats->stacks_walked = 100;
	pc_stats->frames = 1234;
	pc_stats->arcs_dropped = 2;
	pc_stats->stacks_dropped = 3;
	c->clock_wall = 1;
	c->wall_budget = 5;
	pc_stats->wall[GMON_WALL_HZ] = 1000;
	pc_stats->wall[GMON_WALL_HZ_LOW] = 0;
	pc_stats->wall[GMON_WALL_TICKS] = 1;
	pc_stats->wall[GMON_WALL_FULL] = 11;
	pc_stats->wall[GMON_WALL_CUT] = 12;
	pc_stats->wall[GMON_WALL_NONE] = 13;
	pc_stats->wall[GMON_WALL_THREADS] = 5000;
	pc_stats->wall[GMON_WALL_DROPPED] = 6;
	pc_wall_not_followed(8);
	pc_stats->wall_cpu_ns = 12345678;
	live_on = 1;
	pc_stats->live_unplaced = 1;
	pc_stats->live_waiting = 2;
	c->timeline = 1;
	c->pg_built = 1;
	pc_stats->snapshots = 1;
	pc_stats->lost_blocked = 2;
	pc_stats->eintr_kept = 3;
	pc_stats->timer_failures = 4;
	pc_stats->no_room = 5;
	pc_stats->foreign = 6;
	cpu_two_seconds();
	pc_dump_summary("/x/gmon.out", 0);
	snprintf(want, sizeof(want),
		 "libpc: wrote /x/gmon.out: 1000 samples (1010 signals) in 2.0 "
		 "s CPU; rate 1000 Hz requested, 500 Hz effective, 505 "
		 "signals/s; 3 threads; timer posix (PC_TIMER); 7 samples "
		 "outside the text; scope all: 4 other objects, 9 samples in "
		 "none; call graph: 12 frames a stack (fp), 2 arc samples "
		 "dropped (table full), 3 stack samples dropped; wall clock: 1 "
		 "round at 1000 Hz (each thread looked at under 1 Hz on "
		 "average, to keep its cost under 5 %% of a CPU, at 5000 "
		 "threads), off-CPU stacks: 11 whole, 12 cut short, 13 the "
		 "wait alone; 6 lost (the stacks table full); 8 threads not "
		 "followed (32768 at most); its own CPU 12.3 ms; live file 0 "
		 "KiB; 3 samples not placed (no room in the live file); "
		 "timeline 0 of 0 samples kept; signal %d (the program is built with -pg: "
		 "SIGPROF is glibc's); 1 snapshots; 2 of the program's own "
		 "signals held while it blocked them; 3 calls ended with EINTR "
		 "for the program's signal that came with a sample; 4 threads "
		 "unsampled (no timer); 5 samples without a call chain (no "
		 "room on their stack); 6 foreign signals passed on; libpc "
		 PC_VERSION "\n", SIGRTMIN + 1);
	ck_assert_str_eq(said(), want);

	/* each thread looked at the rate asked; many rounds */
	pc_stats->wall[GMON_WALL_HZ_LOW] = 1000;
	pc_stats->wall[GMON_WALL_TICKS] = 2;
	pc_dump_summary("/x/gmon.out", 0);
	ck_assert_ptr_nonnull(strstr(said(),
		"; wall clock: 2 rounds at 1000 Hz, off-CPU stacks: 11 whole, "
		"12 cut short, 13 the wait alone; 6 lost (the stacks table "
		"full); 8 threads not followed (32768 at most); its own CPU "
		"12.3 ms; live file 0 KiB; "));
}
END_TEST

START_TEST(test_summary_timer_reasons)
{
	struct pc_config *c = unit_config();

	plain_run();
	c->timer = 1;
	pc_timer_note_refused(EACCES);
	pc_dump_summary("p", 0);
	ck_assert_ptr_nonnull(strstr(said(),
		"; timer posix (task-clock refused: errno 13); "));
	pc_timer_note_refused(0);
	c->timer_how = GMON_TIMER_MEASURED;
	c->timer_cost_ns = 18249;
	pc_dump_summary("p", 0);
	ck_assert_ptr_nonnull(strstr(said(),
		"; timer taskclock (chosen: a task-clock sample costs 18.2 us "
		"here, over "));
	c->timer_cost_ns = 1950;
	c->timer_cost_earlier = 1;
	pc_dump_summary("p", 0);
	ck_assert_ptr_nonnull(strstr(said(),
		"; timer taskclock (chosen: a task-clock sample costs 2.0 us "
		"here, under "));
	c->timer_cost_ns = 1950;
	pc_dump_summary("p", 0);
	ck_assert_ptr_nonnull(strstr(said(),
		" us, as measured earlier this boot); "));
}
END_TEST

START_TEST(test_summary_not_written)
{
	static const char head[] =
		"libpc: cannot write '/ro/gmon.out': read-only file system; "
		"profile not written\n"
		"libpc: not written /ro/gmon.out: 1000 samples";
	const char *s;

	plain_run();
	pc_dump_summary("/ro/gmon.out", -EROFS);
	s = said();
	ck_assert_int_eq(strncmp(s, head, strlen(head)), 0);
	ck_assert_ptr_nonnull(strstr(s, "; libpc " PC_VERSION "\n"));
}
END_TEST

Suite *
summary_suite(void)
{
	Suite *s = suite_create("summary");
	TCase *t = tcase_create("core");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_summary_reasons);
	tcase_add_test(t, test_summary_plain);
	tcase_add_test(t, test_summary_all_on);
	tcase_add_test(t, test_summary_timer_reasons);
	tcase_add_test(t, test_summary_not_written);
	suite_add_tcase(s, t);
	return s;
}
