/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * timerlimits.c, for timer.c: libpc's share of the program's limits, the
 * POSIX timer of one thread, and the marks of libpc's timers' signals.
 */
#ifndef PC_TIMERLIMITS_H
#define PC_TIMERLIMITS_H

#include <signal.h>
#include <sys/types.h>
#include <time.h>

#define PC_LIMIT_PERF	0	/* task-clock events: descriptors */
#define PC_LIMIT_POSIX	1	/* POSIX timers: queued-signal entries */

/* Take one task-clock event of libpc's share of RLIMIT_NOFILE: 1, or 0
 * when it is spent (said once). AS-safe. */
int pc_limits_take_perf(void);
/* Give one back (which: PC_LIMIT_*), how many are held, and none held
 * (a fork child). AS-safe. */
void pc_limits_give(int which);
int pc_limits_held(int which);
void pc_limits_forked(void);
/* A POSIX timer on clock (a thread's CPU clock) that signals thread tid
 * with sig every interval, its value libpc's tag; budget: it takes one of
 * libpc's share of RLIMIT_SIGPENDING (a timer that replaces another takes
 * none). 0 or -errno, counted as a timer failure. Not AS-safe by the
 * letter (timer_create). */
int pc_posix_timer_arm(clockid_t clock, pid_t tid, timer_t *t, int sig,
		       int budget);
/* fd held a task-clock event of libpc's; AS-safe. */
void pc_timers_note_fd(int fd);

#endif
