/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Per-thread sampling: every thread gets a timer on its own CPU time that
 * signals that thread alone, so each thread is sampled in proportion to the
 * CPU it uses, on every kernel. Two kinds: the kernel's software task-clock
 * event (perf_event_open, for the calling thread only, its overflow sent as
 * our signal with F_SETOWN_EX), which is not limited to the kernel tick;
 * and a POSIX timer on the thread's CPU clock (SIGEV_THREAD_ID), which
 * fires at most once a tick but works where perf events are refused. The
 * main thread is armed at start-up, others as they start (threads.c), and
 * each timer is deleted when its thread ends. The handler's accessors
 * (*_from_handler) and disarming, which pc_finish runs from fatal-signal
 * handlers, are AS-safe; arming is not by the letter (timer_create and
 * pthread_getcpuclockid are not on signal-safety(7)'s list, and a thread
 * libpc adopted has its stack bounds taken by pthread_getattr_np) and runs
 * only at start-up, thread start, in a fork child (which lifecycle.c's
 * after_fork_child says is safe in practice), after an exec that failed,
 * and in the handler for a thread whose task-clock event the program took
 * the number of (a task-clock event is system calls only).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>		/* pthread_getcpuclockid */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pc.h"
#include "taskclock.h"
#include "banned.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif


static PC_TLS timer_t thread_timer;
/* What arms the calling thread: nothing, a POSIX timer (thread_timer) or
 * a task-clock event (thread_perf_fd). */
enum armed { ARMED_NONE, ARMED_POSIX, ARMED_PERF };
static PC_TLS enum armed thread_armed;
static PC_TLS int thread_perf_fd = -1;
static PC_TLS uint64_t thread_perf_seen;	/* thread CPU time already sampled */
static PC_TLS int thread_perf_holding;	/* pc_thread_hold(1) is in force */
static PC_TLS int thread_perf_retired = -1;	/* see pc_thread_perf_retired_from_handler */
static PC_TLS uint64_t thread_perf_id;	/* the kernel's id of that event */

/* The first task-clock event was refused (or PC_TIMER=auto's probe of
 * one): its errno (atomic). Every thread then gets a POSIX timer. */
static int taskclock_refused;

/*
 * What libpc takes out of the program's own limits: a task-clock event
 * holds a descriptor, a POSIX timer a pending-signal slot (the kernel
 * preallocates its signal), one each a thread. Both are the program's to
 * use, and RLIMIT_SIGPENDING counts every process of the user: libpc
 * keeps to a small share of each limit, a 512th of RLIMIT_NOFILE (2 at
 * the usual 1024) and a 40th of RLIMIT_SIGPENDING (7 at 300), and says
 * once when a thread gets less: a POSIX timer instead of a task-clock
 * event, or no timer at all.
 */
#define FD_SHARE	512
#define SIGQ_SHARE	40
static int perf_held, posix_held;	/* atomic */
static int said_fds, said_slots;

/*
 * Every thread's task-clock event, by descriptor (plus one: 0 is a free
 * slot) and kernel id: a fork child has one thread, but a copy of every
 * event of its parent's threads, which it must not hold (a daemon would
 * keep them for good). The child closes those that are still ours
 * (pc_thread_forget). A slot is taken with a compare-and-swap, so arming
 * and disarming in any thread, handlers included, stay AS-safe. More
 * events than slots are not listed (the budget above is far below).
 */
#define PERF_SLOTS	1024
static struct {
	int fd1;	/* descriptor + 1, or 0 */
	uint64_t id;
} perf_slots[PERF_SLOTS];

static void
slot_add(int fd, uint64_t id)
{
	for (int i = 0; i < PERF_SLOTS; i++) {
		int none = 0;

		if (__atomic_compare_exchange_n(&perf_slots[i].fd1, &none, fd + 1, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			__atomic_store_n(&perf_slots[i].id, id, __ATOMIC_RELEASE);
			return;
		}
	}
}

static void
slot_del(int fd)
{
	for (int i = 0; fd >= 0 && i < PERF_SLOTS; i++) {
		int mine = fd + 1;

		if (__atomic_load_n(&perf_slots[i].fd1, __ATOMIC_RELAXED) == mine &&
		    __atomic_load_n(&perf_slots[i].id, __ATOMIC_RELAXED) == thread_perf_id) {
			__atomic_store_n(&perf_slots[i].id, 0, __ATOMIC_RELAXED);
			__atomic_compare_exchange_n(&perf_slots[i].fd1, &mine, 0, 0,
						    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
			return;
		}
	}
}

/* In a fork child: the other threads' events, where their numbers are
 * still our events (not files the program put there since), closed. */
static void
slots_forked(int keep)
{
	for (int i = 0; i < PERF_SLOTS; i++) {
		int fd = perf_slots[i].fd1 - 1;
		uint64_t id;

		if (fd >= 0 && fd != keep && ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0 &&
		    id == perf_slots[i].id)
			close(fd);
		perf_slots[i].fd1 = 0;
		perf_slots[i].id = 0;
	}
}

/* The share of a limit libpc may hold; at least 1. AS-safe. */
static long
share_of(int resource, long part)
{
	struct rlimit r;

	if (getrlimit(resource, &r) || r.rlim_cur == RLIM_INFINITY ||
	    r.rlim_cur / (rlim_t)part > (rlim_t)INT_MAX)
		return INT_MAX;
	return r.rlim_cur / (rlim_t)part > 0 ? (long)(r.rlim_cur / (rlim_t)part) : 1;
}

/* Take one of a budget; 0 when it is spent. AS-safe. */
static int
take(int *held, long budget)
{
	int n = __atomic_load_n(held, __ATOMIC_RELAXED);

	do {
		if (n >= budget)
			return 0;
	} while (!__atomic_compare_exchange_n(held, &n, n + 1, 0, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
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
	return pc_cfg->timer && !__atomic_load_n(&taskclock_refused, __ATOMIC_RELAXED) ?
	       PC_TIMER_TASKCLOCK : PC_TIMER_POSIX;
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

/* Whether thread_perf_fd is still our event: the program may have closed
 * the number, or dup2'ed its own file onto it. */
static int
perf_fd_ours(void)
{
	uint64_t id;

	return thread_perf_fd >= 0 && ioctl(thread_perf_fd, PERF_EVENT_IOC_ID, &id) == 0 &&
	       id == thread_perf_id;
}

/*
 * The calling thread's task-clock event, overflowing every interval_ns of
 * its CPU time; an overflow is sent as our signal to this thread (no ring
 * buffer needed). Samples are taken in user mode only (exclude_kernel): an
 * overflow in the kernel would signal a thread inside a system call, and
 * poll, select and nanosleep would fail with EINTR, which the program
 * never saw before (and perf_event_paranoid 2 allows an ordinary process
 * no more). The handler weighs each sample by the thread's CPU time since
 * the last one (its CPU clock): the seconds stay true, but the kernel's
 * time goes to the next user code sampled, not to the call that spent it,
 * as a POSIX CPU-time timer's would.
 *
 * The event signals one overflow at a time (PERF_EVENT_IOC_REFRESH with a
 * grant of one; the overflow comes as POLL_HUP): the overflow stops it,
 * and the handler starts it again when its sample is taken
 * (pc_thread_perf_resume_from_handler). The CPU clock runs on meanwhile,
 * so the next sample's weight holds the time the event stood still (the
 * sample's own, and any the thread ran with the signal blocked). So a
 * thread gets a whole period between samples however long one takes: with
 * the event running on, a sample that cost more than the period (a deep
 * stack at 10 kHz) had the next signal waiting when it ended, and the
 * thread did nothing else. And a thread that runs with the sampling signal
 * blocked (a handler of the program's whose mask holds it, a longjmp out
 * of one, a raw rt_sigprocmask) holds one signal: each overflow queues a
 * real-time signal, which the kernel never merges, against
 * RLIMIT_SIGPENDING, which counts every process of the user; at the limit
 * no process of the user could queue one (sigqueue fails with EAGAIN), and
 * the kernel sends SIGIO, which kills, in place of each overflow's. Both
 * were seen: a python3 under pcprof compare (10 kHz) spent 40 s of CPU in
 * samples of its imports, then died of SIGIO. A signal of the event that
 * the program takes itself (a raw rt_sigtimedwait) leaves the thread
 * unsampled. 0 or -errno.
 */
static int
arm_perf(pid_t tid)
{
	struct f_owner_ex owner;
	uint64_t id;
	int fd;

	/* above 10 kHz the signals would crowd out the program: sample at
	 * 10 kHz and let the weights carry the rate asked for */
	fd = pc_taskclock_open((uint64_t)(pc_cfg->interval_ns < 100000 ? 100000 :
					  pc_cfg->interval_ns));
	if (fd < 0)
		return fd;
	{
		/* out of the numbers that shells and programs dup2 onto (200 is
		 * flock(1)'s idiom's) */
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, 600);

		if (hi >= 0) {
			close(fd);
			fd = hi;
		}
	}
	owner.type = F_OWNER_TID;
	owner.pid = tid;
	if (fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) || fcntl(fd, F_SETSIG, pc_cfg->sig) ||
	    fcntl(fd, F_SETOWN_EX, &owner) || ioctl(fd, PERF_EVENT_IOC_ID, &id))
		goto fail;
	/* known before it runs: its first signal may come at once, and the
	 * handler must find it ours to grant the next */
	thread_perf_seen = pc_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	thread_perf_id = id;
	thread_perf_fd = fd;
	slot_add(fd, id);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) == 0)
		return 0;
	slot_del(fd);
	thread_perf_fd = -1;
fail:
	{
		int e = -errno;

		close(fd);
		return e;
	}
}

uint32_t
pc_thread_perf_weight_from_handler(int fd, int *ours)
{
	uint64_t now, total, id;
	uint32_t w;

	*ours = 0;
	if (fd != thread_perf_fd)
		return 0;
	/* a shell that redirects onto our number keeps the event open in a
	 * saved copy, and its signals still carry the number: read only
	 * our event, never the program's file (its input would be eaten) */
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) || id != thread_perf_id)
		return 0;	/* the report counts it as not sampled */
	*ours = 1;
	if (!(now = pc_clock_ns(CLOCK_THREAD_CPUTIME_ID)) || now < thread_perf_seen)
		return 1;
	/* periods of CPU time since the last sample, the remainder carried:
	 * exact whatever the event skipped (overflows in the kernel, the
	 * time it stood still for a sample or a blocked signal) */
	total = now - thread_perf_seen;
	if (total / (uint64_t)pc_cfg->interval_ns > UINT32_MAX)
		total = (uint64_t)UINT32_MAX * (uint64_t)pc_cfg->interval_ns;
	w = (uint32_t)(total / (uint64_t)pc_cfg->interval_ns);
	thread_perf_seen += (uint64_t)w * (uint64_t)pc_cfg->interval_ns;
	return w;
}

/* This thread's event replaced by a new one (its number is no longer
 * ours, or an exec held it); where none can be had, the thread is left
 * without a timer, counted as a failure. */
static void
replace_perf(void)
{
	if (arm_perf((pid_t)syscall(SYS_gettid)) == 0)
		return;
	__atomic_fetch_add(&pc_stats->timer_failures, 1, __ATOMIC_RELAXED);
	give_back(&perf_held);
	thread_armed = ARMED_NONE;
}

void
pc_thread_perf_resume_from_handler(int fd, int ours)
{
	/* held (an exec under way): pc_thread_hold(0) arms it again */
	if (thread_perf_holding)
		return;
	if (ours) {
		if (ioctl(fd, PERF_EVENT_IOC_REFRESH, 1))
			__atomic_fetch_add(&pc_stats->timer_failures, 1, __ATOMIC_RELAXED);
		return;
	}
	/* being disarmed (or not armed yet: the number was ours then) */
	if (thread_armed != ARMED_PERF)
		return;
	/* the number is the program's now (a shell's redirection onto it
	 * while it keeps our event in a saved copy): that event has stopped
	 * for good, and this thread gets another, at another number */
	slot_del(fd);
	thread_perf_fd = -1;
	replace_perf();
}

/*
 * A POSIX timer on clock (a thread's CPU clock) that signals thread tid
 * every interval_ns; the signal's value tells our ticks from kill(2)'s.
 * 0 or -errno, counted as a timer failure.
 */
static int
arm_posix(clockid_t clock, pid_t tid, timer_t *t)
{
	struct sigevent sev;
	struct itimerspec its;
	int r;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = pc_cfg->sig;
	sev.sigev_value.sival_ptr = (void *)&pc_timer_tag;
	sev.sigev_notify_thread_id = tid;
	if (!take(&posix_held, share_of(RLIMIT_SIGPENDING, SIGQ_SHARE))) {
		say_once(&said_slots, "the pending-signal limit (ulimit -i) leaves libpc no more "
			 "timers; later threads are not sampled");
		errno = EAGAIN;
		goto fail;
	}
	if (timer_create(clock, &sev, t)) {
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
	give_back(&posix_held);
	errno = -r;
fail:
	__atomic_fetch_add(&pc_stats->timer_failures, 1, __ATOMIC_RELAXED);
	return -errno;
}

int
pc_thread_perf_fd_from_handler(void)
{
	return thread_perf_fd;
}

/* The descriptor of this thread's last event, closed since (its signals
 * may still be on their way), or -1. AS-safe. */
int
pc_thread_perf_retired_from_handler(void)
{
	return thread_perf_retired;
}

int
pc_thread_arm(void)
{
	clockid_t clock;
	int saved = errno;
	int r = 0;

	if (thread_armed != ARMED_NONE || !pc_on())
		return 0;
	pc_unwind_thread_init();
	thread_perf_holding = 0;	/* a disarm's */
	if (pc_timer_kind() == PC_TIMER_TASKCLOCK &&
	    !take(&perf_held, share_of(RLIMIT_NOFILE, FD_SHARE))) {
		say_once(&said_fds, "the descriptor limit (ulimit -n) leaves libpc no more "
			 "task-clock events; later threads get POSIX timers");
	} else if (pc_timer_kind() == PC_TIMER_TASKCLOCK) {
		r = arm_perf((pid_t)syscall(SYS_gettid));
		if (r)
			give_back(&perf_held);
		if (r == 0) {
			thread_armed = ARMED_PERF;
			__atomic_fetch_add(&pc_stats->threads, 1, __ATOMIC_RELAXED);
			goto out;
		}
		/* refused (or out of descriptors): this thread gets a POSIX
		 * timer; if the very first is refused, every thread will */
		if (!__atomic_load_n(&pc_stats->threads, __ATOMIC_RELAXED))
			__atomic_store_n(&taskclock_refused, -r, __ATOMIC_RELAXED);
	}
	if (pthread_getcpuclockid(pthread_self(), &clock))
		clock = CLOCK_THREAD_CPUTIME_ID;
	r = arm_posix(clock, (pid_t)syscall(SYS_gettid), &thread_timer);
	if (r)
		goto out;
	thread_armed = ARMED_POSIX;
	__atomic_fetch_add(&pc_stats->threads, 1, __ATOMIC_RELAXED);
out:
	errno = saved;
	return r;
}

void
pc_thread_disarm(void)
{
	int saved = errno;

	if (thread_armed == ARMED_POSIX) {
		timer_delete(thread_timer);
		give_back(&posix_held);
	}
	if (thread_armed == ARMED_PERF) {
		/* first: a signal from here on grants and arms nothing */
		thread_armed = ARMED_NONE;
		thread_perf_holding = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		give_back(&perf_held);
		int fd = thread_perf_fd, ours = perf_fd_ours();

		/* stop it first, then close: a signal of its still on the way
		 * is known by the retired descriptor. A number that is no
		 * longer our event is the program's: left alone. */
		if (ours)
			ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		slot_del(fd);
		thread_perf_retired = fd;
		thread_perf_fd = -1;
		if (ours)
			close(fd);
	}
	thread_armed = ARMED_NONE;
	errno = saved;
}

void
pc_thread_hold(int hold)
{
	int saved = errno;

	if (thread_armed != ARMED_PERF)
		goto out;
	if (hold) {
		thread_perf_holding = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (perf_fd_ours())
			ioctl(thread_perf_fd, PERF_EVENT_IOC_DISABLE, 0);
		goto out;
	}
	/* a new event, at another number: the old one's grant may be spent
	 * with its signal lost (an exec made an ignored signal real, which
	 * drops what is pending) or still to come (then known as retired).
	 * The hold ends before the new one runs: its first signal may come
	 * at once, and must be granted the next. */
	{
		int old = thread_perf_fd, ours = perf_fd_ours();

		slot_del(old);
		thread_perf_retired = old;
		thread_perf_fd = -1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		thread_perf_holding = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		replace_perf();
		if (ours)
			close(old);
	}
out:
	errno = saved;
}

/* Forget the timer without deleting it: after fork, the child inherits the
 * thread-local word but not the kernel timer it named. */
void
pc_thread_forget(void)
{
	/* the descriptor is a copy of the parent thread's event: let it go,
	 * unless the number is the program's by now */
	if (thread_armed == ARMED_PERF && perf_fd_ours())
		close(thread_perf_fd);
	/* and the copies of the other threads' events */
	slots_forked(thread_perf_fd);
	thread_perf_fd = -1;
	thread_perf_retired = -1;
	thread_perf_holding = 0;	/* forked where an exec had held it */
	thread_armed = ARMED_NONE;
	/* the child's one thread is all it holds */
	perf_held = posix_held = 0;
}

/*
 * Threads that were running before our constructor (started by another
 * preloaded library's constructor) never pass through our pthread_create:
 * give each a POSIX timer on its CPU clock, aimed at it by thread id. No
 * hook of ours runs when such a thread ends, so its timer stays until the
 * process ends (it no longer fires); there are few such threads.
 */
void
pc_threads_adopt(void)
{
	pid_t self = (pid_t)syscall(SYS_gettid);
	char buf[4096];
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;

	if (fd < 0)
		return;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n; ) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);
			long tid = strtol(d->name, NULL, 10);
			timer_t t;
			/* the kernel's CPU clock of one thread: CPUCLOCK_SCHED of
			 * a PERTHREAD clock, by tid */
			clockid_t clock = (clockid_t)((~(unsigned)tid << 3) | 4 | 2);

			off += d->reclen;
			if (tid <= 0 || tid == self || arm_posix(clock, (pid_t)tid, &t))
				continue;
			__atomic_fetch_add(&pc_stats->threads, 1, __ATOMIC_RELAXED);
		}
	}
	close(fd);
}
