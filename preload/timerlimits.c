/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What libpc's timers may take of the program's limits (descriptors,
 * queued signals), the kind of timer threads get, the POSIX timer itself,
 * and the marks by which a late signal of a timer of libpc's is known.
 * timer.c, which arms each thread, calls these; they call nothing of its.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "pc.h"
#include "timerlimits.h"
#include "banned.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

/* The first task-clock event was refused (or PC_TIMER=auto's probe of
 * one): its errno (atomic). Every thread then gets a POSIX timer. */
static int taskclock_refused;

/*
 * What libpc takes out of the program's own limits: a task-clock event
 * holds a descriptor, a POSIX timer a pending-signal slot (the kernel
 * preallocates its signal), one each a thread. Both are the program's to
 * use, and RLIMIT_SIGPENDING counts every process of the user: libpc
 * keeps to a small share of each limit, a 512th of RLIMIT_NOFILE (2 at
 * the usual 1024) and a 100th of RLIMIT_SIGPENDING (3 at 300, so that
 * 44 processes of one user hold 132 of its 300, where a 40th left none),
 * and says once when a thread gets less: a POSIX timer instead of a
 * task-clock event, or no timer at all. A task-clock event queues one
 * signal at most, while its thread has not taken it.
 */
#define FD_SHARE	512
#define SIGQ_SHARE	100
static int perf_held, posix_held;	/* atomic */
static int said_fds, said_slots;

/* The share of a limit libpc may hold; at least 1. AS-safe. */
static long
share_of(int resource, long part)
{
	struct rlimit r;

	if (getrlimit(resource, &r) || r.rlim_cur == RLIM_INFINITY ||
	    r.rlim_cur / (rlim_t)part > (rlim_t)INT_MAX)
		return INT_MAX;
	return r.rlim_cur / (rlim_t)part > 0 ?
		       (long)(r.rlim_cur / (rlim_t)part) :
		       1;
}

/* Take one of a budget; 0 when it is spent. AS-safe. */
static int
take(int *held, long budget)
{
	int n = __atomic_load_n(held, __ATOMIC_RELAXED);

	do {
		if (n >= budget)
			return 0;
	} while (!__atomic_compare_exchange_n(
		held, &n, n + 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return 1;
}

static void
give_back(int *held)
{
	__atomic_fetch_sub(held, 1, __ATOMIC_RELAXED);
}

static void
say_once(int *said, const char *what)
{
	if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED))
		pc_say(what, "", "");
}

enum pc_timer_kind
pc_timer_kind(void)
{
	return pc_cfg->timer && !__atomic_load_n(&taskclock_refused,
						 __ATOMIC_RELAXED) ?
		       PC_TIMER_TASKCLOCK :
		       PC_TIMER_POSIX;
}

int
pc_timer_refused(void)
{
	return __atomic_load_n(&taskclock_refused, __ATOMIC_RELAXED);
}

void
pc_timer_note_refused(int err)
{
	__atomic_store_n(&taskclock_refused, err, __ATOMIC_RELAXED);
}

int
pc_limits_take_perf(void)
{
	if (take(&perf_held, share_of(RLIMIT_NOFILE, FD_SHARE)))
		return 1;
	say_once(&said_fds, "the descriptor limit (ulimit -n) leaves libpc no more "
		 "task-clock events; later threads get POSIX timers");
	return 0;
}

void
pc_limits_give(int which)
{
	give_back(which == PC_LIMIT_PERF ? &perf_held : &posix_held);
}

int
pc_limits_held(int which)
{
	return __atomic_load_n(which == PC_LIMIT_PERF ? &perf_held :
							&posix_held,
			       __ATOMIC_RELAXED);
}

void
pc_limits_forked(void)
{
	perf_held = posix_held = 0;
}

/*
 * A POSIX timer on clock (a thread's CPU clock) that signals thread tid
 * with sig every interval_ns; the signal's value tells our ticks from
 * kill(2)'s. budget: it takes one of libpc's share of pending-signal
 * slots (a timer that replaces another takes none). 0 or -errno,
 * counted as a timer failure.
 */
int
pc_posix_timer_arm(clockid_t clock, pid_t tid, timer_t *t, int sig, int budget)
{
	struct sigevent sev;
	struct itimerspec its;
	int r;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = sig;
	sev.sigev_value.sival_ptr = (void *)&pc_timer_tag;
	sev.sigev_notify_thread_id = tid;
	if (budget &&
	    !take(&posix_held, share_of(RLIMIT_SIGPENDING, SIGQ_SHARE))) {
		say_once(&said_slots, "the pending-signal limit (ulimit -i) leaves libpc no more "
			 "timers; later threads are not sampled");
		errno = EAGAIN;
		goto fail;
	}
	if (timer_create(clock, &sev, t)) {
		if (budget)
			give_back(&posix_held);
		goto fail;
	}
	its.it_interval.tv_sec = pc_cfg->interval_ns / 1000000000L;
	its.it_interval.tv_nsec = pc_cfg->interval_ns % 1000000000L;
	its.it_value = its.it_interval;
	if (timer_settime(*t, 0, &its, NULL) == 0)
		return 0;
	r = -errno;
	timer_delete(*t);
	if (budget)
		give_back(&posix_held);
	errno = -r;
fail:
	__atomic_fetch_add(&pc_stats->timer_failures, 1, __ATOMIC_RELAXED);
	return -errno;
}

/* Descriptor numbers that ever held an event of libpc's, so that a late
 * signal of one, on a signal libpc has since left to the program, is
 * known (pc_timers_late_from_handler). */
#define FD_BITS	8192
static uint64_t fds_used[FD_BITS / 64];

void
pc_timers_note_fd(int fd)
{
	if (fd >= 0 && fd < FD_BITS)
		__atomic_fetch_or(&fds_used[fd / 64], UINT64_C(1) << (fd % 64),
				  __ATOMIC_RELAXED);
}

int
pc_timers_late_from_handler(const siginfo_t *si)
{
	if (si->si_code == SI_TIMER && si->si_value.sival_ptr == &pc_timer_tag)
		return 1;
	return si->si_code >= POLL_IN && si->si_code <= POLL_HUP &&
	       si->si_fd >= 0 && si->si_fd < FD_BITS &&
	       (__atomic_load_n(&fds_used[si->si_fd / 64], __ATOMIC_RELAXED) &
		(UINT64_C(1) << (si->si_fd % 64)));
}

