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
#include "timerlimits.h"
#include "banned.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif


/* What arms the calling thread: nothing, a POSIX timer or a task-clock
 * event (its slot says which). */
enum armed { ARMED_NONE, ARMED_POSIX, ARMED_PERF };
static PC_TLS enum armed thread_armed;
static PC_TLS uint64_t thread_perf_seen;	/* thread CPU time already sampled */
static PC_TLS int thread_perf_holding;	/* pc_thread_hold(1) is in force */
static PC_TLS int thread_perf_retired = -1;	/* see pc_thread_perf_retired_from_handler */

/*
 * Every armed thread's timer, in a table libpc owns, so that one thread
 * can reach every other's: when libpc moves to another signal (the
 * program took its own, signals.c), each timer is aimed at the new one
 * (a task-clock event by F_SETSIG on its descriptor, a POSIX timer made
 * again for that thread's CPU clock), and when the program closes
 * libpc's task-clock events (close_range), each thread gets a new one,
 * opened for it by thread id. A slot moves FREE -> SETUP (its thread
 * arms) -> LIVE, and LIVE -> BUSY -> LIVE while one thread works on it
 * (the mover, or its own thread catching up), LIVE -> BUSY -> FREE when
 * its thread ends. Threads that start and end meanwhile only ever take
 * a slot with a compare-and-swap, so handlers (pc_finish disarms from a
 * fatal signal's) take no lock; a thread that finds its slot BUSY waits
 * for the few system calls the other thread makes, with every signal
 * blocked there, to end. Threads beyond the table's size keep a slot in
 * their own memory, which no other thread reaches: they keep the signal
 * they were armed with, and their events stay closed after close_range.
 */
enum { SLOT_FREE, SLOT_SETUP, SLOT_LIVE, SLOT_BUSY };
struct slot {
	int state;		/* SLOT_*, atomic */
	pid_t tid;
	enum armed kind;
	int sig;		/* the signal it sends now */
	int fd;			/* ARMED_PERF: the event (atomic) */
	uint64_t id;		/* the kernel's id of that event */
	timer_t timer;		/* ARMED_POSIX */
	clockid_t clock;	/* the thread's CPU clock */
	int adopted;		/* a thread whose end libpc never sees */
};
#define SLOTS	4096
static struct slot slots[SLOTS];
static int slots_hint;			/* where the last claim found one */
static PC_TLS struct slot own_slot;	/* when the table is full */
static PC_TLS struct slot *me;		/* this thread's, or NULL */
static int timers_stopped;		/* no free signal: no sampling (atomic) */

/* Whether sl's descriptor is still our event: the program may have closed
 * the number, or dup2'ed its own file onto it. AS-safe. */
static int
perf_fd_ours(const struct slot *sl)
{
	uint64_t id;
	int fd = sl ? __atomic_load_n(&sl->fd, __ATOMIC_ACQUIRE) : -1;

	return fd >= 0 && ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0 && id == sl->id;
}

static pid_t
gettid_raw(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/*
 * Thread tid's task-clock event (the calling thread's, or, after the program
 * closed it, another's), overflowing every interval_ns of its CPU time,
 * into slot sl; an overflow is sent as our signal to this thread (no ring
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
 * unsampled. 0 or -errno. AS-safe (system calls) after the first event.
 */
static int
arm_perf(struct slot *sl, pid_t tid, int sig)
{
	struct f_owner_ex owner;
	uint64_t id;
	int fd, self = tid == gettid_raw();

	/* above 10 kHz the signals would crowd out the program: sample at
	 * 10 kHz and let the weights carry the rate asked for */
	fd = pc_taskclock_open_for((uint64_t)(pc_cfg->interval_ns < 100000 ? 100000 :
					      pc_cfg->interval_ns), self ? 0 : tid);
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
	if (fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) || fcntl(fd, F_SETSIG, sig) ||
	    fcntl(fd, F_SETOWN_EX, &owner) || ioctl(fd, PERF_EVENT_IOC_ID, &id))
		goto fail;
	pc_timers_note_fd(fd);
	/* known before it runs: its first signal may come at once, and the
	 * handler must find it ours to grant the next */
	if (self)
		thread_perf_seen = pc_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	sl->id = id;
	sl->sig = sig;
	sl->kind = ARMED_PERF;
	__atomic_store_n(&sl->fd, fd, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) == 0)
		return 0;
	__atomic_store_n(&sl->fd, -1, __ATOMIC_RELEASE);
fail:
	{
		int e = -errno;

		close(fd);
		return e;
	}
}

int
pc_thread_perf_fd_from_handler(void)
{
	return me ? __atomic_load_n(&me->fd, __ATOMIC_ACQUIRE) : -1;
}

uint32_t
pc_thread_perf_weight_from_handler(int fd, int *ours)
{
	uint64_t now, total, id;
	uint32_t w;

	*ours = 0;
	if (!me || fd != __atomic_load_n(&me->fd, __ATOMIC_ACQUIRE))
		return 0;
	/* a shell that redirects onto our number keeps the event open in a
	 * saved copy, and its signals still carry the number: read only
	 * our event, never the program's file (its input would be eaten) */
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) || id != me->id)
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

/* ------------------------------------------------------------ slots */

/* A free slot for the calling thread, in SETUP; the thread's own when
 * the table is full. */
static struct slot *
slot_claim(void)
{
	int h = __atomic_load_n(&slots_hint, __ATOMIC_RELAXED);

	for (int k = 0; k < SLOTS; k++) {
		int i = (h + k) % SLOTS, s = SLOT_FREE;

		if (__atomic_load_n(&slots[i].state, __ATOMIC_RELAXED) == SLOT_FREE &&
		    __atomic_compare_exchange_n(&slots[i].state, &s, SLOT_SETUP, 0,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			__atomic_store_n(&slots_hint, i + 1, __ATOMIC_RELAXED);
			slots[i].fd = -1;
			slots[i].kind = ARMED_NONE;
			slots[i].adopted = 0;
			return &slots[i];
		}
	}
	memset(&own_slot, 0, sizeof(own_slot));
	own_slot.state = SLOT_SETUP;
	own_slot.fd = -1;
	return &own_slot;
}

/* LIVE -> BUSY; 0 where another thread has it (or it is not live).
 * AS-safe. */
static int
slot_take(struct slot *sl)
{
	int s = SLOT_LIVE;

	return __atomic_compare_exchange_n(&sl->state, &s, SLOT_BUSY, 0, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

/* The same, waiting while another thread works on it (a few system
 * calls, every signal blocked there): a thread that ends. AS-safe. */
static int
slot_take_wait(struct slot *sl)
{
	for (long n = 0; n < 1000000; n++) {
		if (slot_take(sl))
			return 1;
		if (__atomic_load_n(&sl->state, __ATOMIC_RELAXED) != SLOT_BUSY)
			return 0;
		syscall(SYS_sched_yield);
	}
	return 0;
}

static void
slot_put(struct slot *sl, int state)
{
	__atomic_store_n(&sl->state, state, __ATOMIC_SEQ_CST);
}

/* sl's timer, put out: deleted, or its event stopped and closed (a
 * number that is no longer our event is the program's: left alone). */
static void
slot_drop_timer(struct slot *sl)
{
	if (sl->kind == ARMED_POSIX) {
		timer_delete(sl->timer);
		pc_limits_give(PC_LIMIT_POSIX);
	}
	if (sl->kind == ARMED_PERF) {
		int fd = __atomic_load_n(&sl->fd, __ATOMIC_ACQUIRE), ours = perf_fd_ours(sl);

		pc_limits_give(PC_LIMIT_PERF);
		if (ours)
			ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		if (sl == me)
			thread_perf_retired = fd;
		__atomic_store_n(&sl->fd, -1, __ATOMIC_RELEASE);
		if (ours)
			close(fd);
	}
	sl->kind = ARMED_NONE;
}

/* sl's timer, taken (BUSY), aimed at sig: an event sends it from now on
 * (F_SETSIG; one the program closed is opened again for its thread), a
 * POSIX timer is made again for the thread's clock, the old one deleted
 * after (its late signals carry the tag: the new owner of the old signal
 * never sees them). AS-safe (system calls). */
static void
slot_reaim(struct slot *sl, int sig)
{
	int fd = __atomic_load_n(&sl->fd, __ATOMIC_ACQUIRE);
	timer_t t;

	if (__atomic_load_n(&timers_stopped, __ATOMIC_RELAXED)) {
		slot_drop_timer(sl);
		return;
	}
	if (sl->kind == ARMED_PERF) {
		if (perf_fd_ours(sl) && fcntl(fd, F_SETSIG, sig) == 0) {
			sl->sig = sig;
			return;
		}
		if (fd >= 0 && fcntl(fd, F_GETFD) >= 0)
			return;		/* the number is the program's file now: the
					 * handler replaces the event (it knows) */
		if (arm_perf(sl, sl->tid, sig)) {
			__atomic_fetch_add(&pc_stats->timer_failures, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&sl->fd, -1, __ATOMIC_RELEASE);
		}
		return;
	}
	if (sl->kind != ARMED_POSIX)
		return;
	if (pc_posix_timer_arm(sl->clock, sl->tid, &t, sig, 0) == 0) {
		timer_delete(sl->timer);
		sl->timer = t;
		sl->sig = sig;
		return;
	}
	/* the thread is gone (one adopted at start-up, whose end libpc never
	 * sees), or no timer can be had: the old one goes anyway, its
	 * signal being the program's now */
	slot_drop_timer(sl);
}

/* A slot its thread armed is LIVE from now on; where libpc moved to
 * another signal meanwhile, past this slot, it catches up. Not AS-safe
 * by the letter (timer_create). */
static void
slot_publish(struct slot *sl)
{
	sigset_t all, prev;

	slot_put(sl, SLOT_LIVE);
	if (sl->sig == __atomic_load_n(&pc_sampling_sig, __ATOMIC_SEQ_CST) &&
	    !__atomic_load_n(&timers_stopped, __ATOMIC_SEQ_CST))
		return;
	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &prev, (size_t)(_NSIG / 8));
	if (slot_take(sl)) {
		slot_reaim(sl, __atomic_load_n(&pc_sampling_sig, __ATOMIC_SEQ_CST));
		slot_put(sl, SLOT_LIVE);
	}
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &prev, NULL, (size_t)(_NSIG / 8));
}

void
pc_timers_move(int sig)
{
	for (int i = 0; i < SLOTS; i++) {
		struct slot *sl = &slots[i];

		if (__atomic_load_n(&sl->state, __ATOMIC_SEQ_CST) != SLOT_LIVE || !slot_take(sl))
			continue;
		if (sl->sig != sig || __atomic_load_n(&timers_stopped, __ATOMIC_RELAXED))
			slot_reaim(sl, sig);
		slot_put(sl, sl->kind == ARMED_NONE && sl->adopted ? SLOT_FREE : SLOT_LIVE);
	}
}

void
pc_timers_stop(void)
{
	__atomic_store_n(&timers_stopped, 1, __ATOMIC_SEQ_CST);
	pc_timers_move(__atomic_load_n(&pc_sampling_sig, __ATOMIC_SEQ_CST));
}

void
pc_timers_rearm_closed(void)
{
	sigset_t all, prev;
	int sig = __atomic_load_n(&pc_sampling_sig, __ATOMIC_SEQ_CST);

	if (!pc_limits_held(PC_LIMIT_PERF) || !pc_on())
		return;
	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &prev, (size_t)(_NSIG / 8));
	for (int i = -1; i < SLOTS; i++) {
		struct slot *sl = i < 0 ? me : &slots[i];
		int fd;

		if (!sl || (i >= 0 && sl == me) || sl->kind != ARMED_PERF)
			continue;
		fd = __atomic_load_n(&sl->fd, __ATOMIC_ACQUIRE);
		/* closed: its number is free (a number the program reused is
		 * the handler's to notice) */
		if (fd < 0 || fcntl(fd, F_GETFD) >= 0)
			continue;
		if (!slot_take(sl))
			continue;
		if (sl->kind == ARMED_PERF && arm_perf(sl, sl->tid, sig))
			__atomic_fetch_add(&pc_stats->timer_failures, 1, __ATOMIC_RELAXED);
		slot_put(sl, SLOT_LIVE);
	}
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &prev, NULL, (size_t)(_NSIG / 8));
}

/* This thread's event replaced by a new one (its number is no longer
 * ours, or an exec held it); where none can be had, the thread is left
 * without a timer, counted as a failure. AS-safe (system calls). */
static void
replace_perf(void)
{
	if (!me || !slot_take(me))
		return;		/* another thread is at it */
	if (arm_perf(me, gettid_raw(), __atomic_load_n(&pc_sampling_sig, __ATOMIC_SEQ_CST))) {
		__atomic_fetch_add(&pc_stats->timer_failures, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&me->fd, -1, __ATOMIC_RELEASE);
	}
	slot_put(me, SLOT_LIVE);
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
	replace_perf();
}

/* The descriptor of this thread's last event, closed since (its signals
 * may still be on their way), or -1. AS-safe. */
int
pc_thread_perf_retired_from_handler(void)
{
	return thread_perf_retired;
}

/* The calling thread's timer, in sl: a task-clock event where they are
 * the kind (and libpc's share of descriptors allows one), else a POSIX
 * timer. 0 or -errno. */
static int
arm_slot(struct slot *sl, pid_t tid, int sig)
{
	int r;

	if (pc_timer_kind() == PC_TIMER_TASKCLOCK && !pc_limits_take_perf()) {
		/* said once: later threads get POSIX timers */
	} else if (pc_timer_kind() == PC_TIMER_TASKCLOCK) {
		r = arm_perf(sl, tid, sig);
		if (r == 0)
			return 0;
		pc_limits_give(PC_LIMIT_PERF);
		/* refused (or out of descriptors): this thread gets a POSIX
		 * timer; if the very first is refused, every thread will */
		if (!__atomic_load_n(&pc_stats->threads, __ATOMIC_RELAXED))
			pc_timer_note_refused(-r);
	}
	r = pc_posix_timer_arm(sl->clock, tid, &sl->timer, sig, 1);
	if (r)
		return r;
	sl->kind = ARMED_POSIX;
	sl->sig = sig;
	return 0;
}

int
pc_thread_arm(void)
{
	int saved = errno, r;
	pid_t tid = gettid_raw();
	struct slot *sl;

	if (thread_armed != ARMED_NONE || !pc_on() ||
	    __atomic_load_n(&timers_stopped, __ATOMIC_RELAXED))
		return 0;
	pc_unwind_thread_init();
	/* PC_ALLOC=only: the stack bounds (allocations' walks), no timer */
	if (pc_cfg->cpu_off)
		return 0;
	thread_perf_holding = 0;	/* a disarm's */
	sl = slot_claim();
	sl->tid = tid;
	sl->clock = pc_thread_clock(tid);
	/* known before the first signal, which may come at once */
	me = sl;
	r = arm_slot(sl, tid, __atomic_load_n(&pc_sampling_sig, __ATOMIC_SEQ_CST));
	if (r) {
		me = NULL;
		sl->tid = 0;
		slot_put(sl, SLOT_FREE);
		goto out;
	}
	thread_armed = sl->kind;
	__atomic_fetch_add(&pc_stats->threads, 1, __ATOMIC_RELAXED);
	slot_publish(sl);
out:
	errno = saved;
	return r;
}

void
pc_thread_disarm(void)
{
	int saved = errno;
	struct slot *sl = me;

	if (thread_armed == ARMED_NONE || !sl)
		goto out;
	/* first: a signal from here on grants and arms nothing */
	thread_armed = ARMED_NONE;
	thread_perf_holding = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (sl != &own_slot && !slot_take_wait(sl))
		goto out;	/* another thread never let go: left as it is */
	slot_drop_timer(sl);
	me = NULL;
	sl->tid = 0;
	slot_put(sl, SLOT_FREE);
out:
	thread_armed = ARMED_NONE;
	errno = saved;
}

void
pc_thread_hold(int hold)
{
	int saved = errno;

	if (thread_armed != ARMED_PERF || !me)
		goto out;
	if (hold) {
		thread_perf_holding = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (perf_fd_ours(me))
			ioctl(me->fd, PERF_EVENT_IOC_DISABLE, 0);
		goto out;
	}
	/* a new event, at another number: the old one's grant may be spent
	 * with its signal lost (an exec made an ignored signal real, which
	 * drops what is pending) or still to come (then known as retired).
	 * The hold ends before the new one runs: its first signal may come
	 * at once, and must be granted the next. */
	{
		int old = me->fd, ours = perf_fd_ours(me);

		thread_perf_retired = old;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		thread_perf_holding = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		replace_perf();
		if (ours && me->fd != old)
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
	/* the descriptors are copies of the parent threads' events: let
	 * them go, unless a number is the program's by now */
	for (int i = -1; i < SLOTS; i++) {
		struct slot *sl = i < 0 ? me : &slots[i];

		if (sl && (i < 0 || sl != me) && sl->state != SLOT_FREE &&
		    sl->kind == ARMED_PERF && perf_fd_ours(sl))
			close(sl->fd);
		if (i >= 0) {
			sl->state = SLOT_FREE;
			sl->kind = ARMED_NONE;
			sl->fd = -1;
			sl->tid = 0;
		}
	}
	me = NULL;
	thread_perf_retired = -1;
	thread_perf_holding = 0;	/* forked where an exec had held it */
	thread_armed = ARMED_NONE;
	/* the child's one thread is all it holds */
	pc_limits_forked();
}

/*
 * Threads that were running before our constructor (started by another
 * preloaded library's constructor) never pass through our pthread_create:
 * give each a POSIX timer on its CPU clock, aimed at it by thread id. No
 * hook of ours runs when such a thread ends, so its timer stays until the
 * process ends (it no longer fires), or until libpc moves to another
 * signal; there are few such threads.
 */
void
pc_threads_adopt(void)
{
	pid_t self = gettid_raw();
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
			struct slot *sl;

			off += d->reclen;
			if (tid <= 0 || tid == self)
				continue;
			sl = slot_claim();
			if (sl == &own_slot)
				continue;	/* no room to remember it */
			sl->tid = (pid_t)tid;
			sl->clock = pc_thread_clock((pid_t)tid);
			sl->sig = __atomic_load_n(&pc_sampling_sig, __ATOMIC_SEQ_CST);
			if (pc_posix_timer_arm(sl->clock, (pid_t)tid, &sl->timer, sl->sig, 1)) {
				sl->tid = 0;
				slot_put(sl, SLOT_FREE);
				continue;
			}
			sl->kind = ARMED_POSIX;
			sl->adopted = 1;
			slot_put(sl, SLOT_LIVE);
			__atomic_fetch_add(&pc_stats->threads, 1, __ATOMIC_RELAXED);
		}
	}
	close(fd);
}

/*
 * A late signal of this thread's own task-clock event, sent on the old
 * signal before the move aimed the event at the new one: the event waits
 * for this signal's sample to be granted its next overflow (above), so
 * it is sampled and granted here, or the thread would never be sampled
 * again (seen beside a CPU hog: 0 samples after the move). AS-safe.
 */
void
pc_thread_perf_late_from_handler(const siginfo_t *si, void *ucv)
{
	int fd = pc_thread_perf_fd_from_handler(), ours;
	uint32_t weight;

	if (fd < 0 || si->si_fd != fd || si->si_code < POLL_IN || si->si_code > POLL_HUP ||
	    pc_sandboxed())
		return;
	weight = pc_thread_perf_weight_from_handler(fd, &ours);
	if (weight && pc_on())
		pc_sample_from_handler(ucv, weight);
	pc_thread_perf_resume_from_handler(fd, ours);
}
