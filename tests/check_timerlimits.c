/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/timerlimits.c, what libpc's timers may take of
 * the program's limits, under limits the test sets (each test runs in a
 * child of its own). Cases:
 *  - task-clock events: a 512th of RLIMIT_NOFILE (2 at 1024, 10 at 5120,
 *    at least 1 under 512), then 0 and the one line, said once; one
 *    given back may be taken again; none held after a fork;
 *  - POSIX timers: a 100th of RLIMIT_SIGPENDING (3 at 300, or more
 *    where the user's processes queue many signals now), then -EAGAIN,
 *    a timer failure counted and the one line; a timer that replaces
 *    another takes none; a refused clock gives its share back;
 *  - the timer's kind: task-clock while not refused, else POSIX;
 *  - a late signal of libpc's known by its timer's tag, or by a
 *    descriptor that held an event, and no other; a real timer's signal
 *    taken with sigwaitinfo is known.
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
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../preload/pc.h"
#include "../preload/timerlimits.h"
#include "unit.h"

#define NOFILE_LINE \
	"libpc: the descriptor limit (ulimit -n) leaves libpc no more " \
	"task-clock events; later threads get POSIX timers\n"
#define SIGQ_LINE \
	"libpc: the pending-signal limit (ulimit -i) leaves libpc no more " \
	"timers; later threads are not sampled\n"

static char path[64];
static int saved_err = -1;

/* libpc's messages into a file of the test's (path). */
static void
setup(void)
{
	int fd;

	unit_preload_reset();
	pc_limits_forked();
	snprintf(path, sizeof(path), "/tmp/pc-timerlimits-XXXXXX");
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

static const char *
said(void)
{
	static char buf[1024];
	int fd = open(path, O_RDONLY);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);

	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

static void
soft_limit(int resource, rlim_t cur)
{
	struct rlimit r;

	ck_assert_int_eq(getrlimit(resource, &r), 0);
	if (r.rlim_max != RLIM_INFINITY && r.rlim_max < cur)
		ck_abort_msg("hard limit %lu under %lu",
			     (unsigned long)r.rlim_max, (unsigned long)cur);
	r.rlim_cur = cur;
	ck_assert_int_eq(setrlimit(resource, &r), 0);
}

/* How many task-clock events the share allows, taken until refused. */
static int
take_all_perf(void)
{
	int n = 0;

	while (pc_limits_take_perf() && n < 100)
		n++;
	return n;
}

START_TEST(test_timerlimits_descriptors)
{
	soft_limit(RLIMIT_NOFILE, 1024);
	ck_assert_int_eq(take_all_perf(), 2);
	ck_assert_int_eq(pc_limits_held(PC_LIMIT_PERF), 2);
	ck_assert_str_eq(said(), NOFILE_LINE);
	/* refused again: not said again */
	ck_assert_int_eq(pc_limits_take_perf(), 0);
	ck_assert_str_eq(said(), NOFILE_LINE);
	/* one given back (its thread ended) is there to take */
	pc_limits_give(PC_LIMIT_PERF);
	ck_assert_int_eq(pc_limits_held(PC_LIMIT_PERF), 1);
	ck_assert_int_eq(pc_limits_take_perf(), 1);
	ck_assert_int_eq(pc_limits_take_perf(), 0);

	/* the share follows the limit as it is now */
	pc_limits_forked();
	ck_assert_int_eq(pc_limits_held(PC_LIMIT_PERF), 0);
	soft_limit(RLIMIT_NOFILE, 5120);
	ck_assert_int_eq(take_all_perf(), 10);
	pc_limits_forked();
	soft_limit(RLIMIT_NOFILE, 100);
	ck_assert_int_eq(take_all_perf(), 1);
	ck_assert_int_eq(pc_limits_held(PC_LIMIT_POSIX), 0);
}
END_TEST

/* The signals queued or held by this user's processes now (SigQ). */
static long
user_sigq(void)
{
	char line[256];
	long n = -1;
	FILE *f = fopen("/proc/self/status", "r");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigQ: %ld/", &n) == 1)
			break;
	fclose(f);
	ck_assert_int_ge(n, 0);
	return n;
}

START_TEST(test_timerlimits_pending_signals)
{
	static timer_t t[1002];
	pid_t tid = gettid();
	const int sig = SIGRTMIN + 3;
	/* 3 at 300; where the user's other processes hold many already (the
	 * kernel counts them all against the limit), a limit that leaves
	 * room for the share and 400 more */
	long used = user_sigq(), cur = used < 100 ? 300 :
					(used + 400) / 100 * 100 + 100;
	int share = (int)(cur / 100);

	ck_assert_int_le(share, 1000);
	/* never fires while the test runs */
	unit_config()->interval_ns = 100 * 1000000000L;
	soft_limit(RLIMIT_SIGPENDING, (rlim_t)cur);
	for (int i = 0; i < share; i++)
		ck_assert_int_eq(pc_posix_timer_arm(CLOCK_MONOTONIC, tid, &t[i],
						    sig, 1), 0);
	ck_assert_int_eq(pc_limits_held(PC_LIMIT_POSIX), share);
	ck_assert_str_eq(said(), "");
	errno = 0;
	ck_assert_int_eq(pc_posix_timer_arm(CLOCK_MONOTONIC, tid, &t[share],
					    sig, 1), -EAGAIN);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_uint_eq(pc_stats->timer_failures, 1);
	ck_assert_str_eq(said(), SIGQ_LINE);
	/* a timer that replaces one of the thread's takes no share */
	ck_assert_int_eq(pc_posix_timer_arm(CLOCK_MONOTONIC, tid, &t[share],
					    sig, 0), 0);
	ck_assert_int_eq(pc_limits_held(PC_LIMIT_POSIX), share);
	/* a clock the kernel refuses: its share back, a failure counted */
	pc_limits_give(PC_LIMIT_POSIX);
	ck_assert_int_lt(pc_posix_timer_arm((clockid_t)999, tid, &t[share + 1],
					    sig, 1), 0);
	ck_assert_int_eq(pc_limits_held(PC_LIMIT_POSIX), share - 1);
	ck_assert_uint_eq(pc_stats->timer_failures, 2);
	ck_assert_str_eq(said(), SIGQ_LINE);
	for (int i = 0; i <= share; i++)
		ck_assert_int_eq(timer_delete(t[i]), 0);
}
END_TEST

START_TEST(test_timerlimits_kind)
{
	unit_config()->timer = 1;
	ck_assert_int_eq(pc_timer_kind(), PC_TIMER_TASKCLOCK);
	ck_assert_int_eq(pc_timer_refused(), 0);
	pc_timer_note_refused(EACCES);
	ck_assert_int_eq(pc_timer_kind(), PC_TIMER_POSIX);
	ck_assert_int_eq(pc_timer_refused(), EACCES);
	pc_timer_note_refused(0);
	unit_config()->timer = 0;
	ck_assert_int_eq(pc_timer_kind(), PC_TIMER_POSIX);
}
END_TEST

START_TEST(test_timerlimits_late_signals)
{
	static const char other_tag;
	const int sig = SIGRTMIN + 3;
	siginfo_t si;
	sigset_t set;
	timer_t t;

	memset(&si, 0, sizeof(si));
	si.si_code = SI_TIMER;
	si.si_value.sival_ptr = (void *)&pc_timer_tag;
	ck_assert_int_eq(pc_timers_late_from_handler(&si), 1);
	/* the program's own timer */
	si.si_value.sival_ptr = (void *)&other_tag;
	ck_assert_int_eq(pc_timers_late_from_handler(&si), 0);
	si.si_code = SI_USER;				/* kill(2) */
	si.si_value.sival_ptr = (void *)&pc_timer_tag;
	ck_assert_int_eq(pc_timers_late_from_handler(&si), 0);

	/* a task-clock event's signal: by its descriptor */
	pc_timers_note_fd(5);
	pc_timers_note_fd(70);
	pc_timers_note_fd(9000);			/* past the table */
	memset(&si, 0, sizeof(si));
	si.si_code = POLL_IN;
	for (int fd = 0; fd < 9100; fd++) {
		si.si_fd = fd;
		ck_assert_int_eq(pc_timers_late_from_handler(&si),
				 fd == 5 || fd == 70);
	}
	si.si_fd = -1;
	ck_assert_int_eq(pc_timers_late_from_handler(&si), 0);
	si.si_fd = 5;
	si.si_code = SI_QUEUE;
	ck_assert_int_eq(pc_timers_late_from_handler(&si), 0);

	/* a real timer of libpc's, its signal taken as it comes */
	sigemptyset(&set);
	sigaddset(&set, sig);
	ck_assert_int_eq(sigprocmask(SIG_BLOCK, &set, NULL), 0);
	unit_config()->interval_ns = 1000000;
	ck_assert_int_eq(pc_posix_timer_arm(CLOCK_MONOTONIC, gettid(), &t, sig,
					    0), 0);
	ck_assert_int_eq(sigwaitinfo(&set, &si), sig);
	ck_assert_int_eq(timer_delete(t), 0);
	ck_assert_int_eq(si.si_code, SI_TIMER);
	ck_assert_int_eq(pc_timers_late_from_handler(&si), 1);
}
END_TEST

Suite *
timerlimits_suite(void)
{
	Suite *s = suite_create("timerlimits");
	TCase *t = tcase_create("core");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_timerlimits_descriptors);
	tcase_add_test(t, test_timerlimits_pending_signals);
	tcase_add_test(t, test_timerlimits_kind);
	tcase_add_test(t, test_timerlimits_late_signals);
	suite_add_tcase(s, t);
	return s;
}
