/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Threads' starts and ends, told by the threads themselves (threads.c's
 * start and exit paths) to the wall sampler (wall.c), which reads them at
 * its next round: a ring, lock-free, that any thread writes and only the
 * sampler reads. A thread's first and last intervals then count from and
 * to the nanosecond, however far apart the rounds are.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "pc.h"
#include "wall.h"
#include "procread.h"
#include "banned.h"

#define RING		32768	/* events between two rounds (10,000 threads that start and end) */

/* Threads' starts and ends, from their own paths (any thread, lock-free):
 * seq is the event's number + 1 once it is whole. */
static struct pc_wevent *ring; /* RING of them, mapped when the sampler starts */
static uint32_t ring_head, ring_tail;
static int ring_on;

void
pc_wall_thread_event(int end)
{
	char name[GMON_THREAD_NAME_SIZE + 1] = { 0 };
	uint32_t i;
	struct pc_wevent *e;

	if (!__atomic_load_n(&ring_on, __ATOMIC_ACQUIRE) || !pc_on())
		return;
	i = __atomic_fetch_add(&ring_head, 1, __ATOMIC_ACQ_REL);
	e = &ring[i % RING];
	__atomic_store_n(&e->seq, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	e->tid = (uint32_t)syscall(SYS_gettid);
	e->t_ns = pc_clock_ns(CLOCK_MONOTONIC);
	e->cpu_ns = end ? pc_clock_ns(CLOCK_THREAD_CPUTIME_ID) : ~0ULL;
	__atomic_store_n(&e->seq, i + 1, __ATOMIC_RELEASE);
	/* its name as it ends: the sampler reads none at a first look */
	if (end && !prctl(PR_GET_NAME, name, 0, 0, 0))
		pc_stacks_note_name((uint32_t)syscall(SYS_gettid), name);
}

/* The next whole event into *out: 1, or 0 when none is. */
int
pc_wall_next_event(struct pc_wevent *out)
{
	while (ring_tail != __atomic_load_n(&ring_head, __ATOMIC_ACQUIRE)) {
		struct pc_wevent *e = &ring[ring_tail % RING];
		uint32_t s = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);

		if (s == ring_tail + 1) {
			*out = *e;
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			ring_tail++;
			if (__atomic_load_n(&e->seq, __ATOMIC_RELAXED) == s)
				return 1;
			continue;
		}
		/* overwritten (more than RING since the last round): lost;
		 * otherwise still being written: the next round's */
		if (__atomic_load_n(&ring_head, __ATOMIC_ACQUIRE) - ring_tail >
		    RING)
			ring_tail++;
		else
			return 0;
	}
	return 0;
}

uint64_t
pc_wall_random(uint64_t *seed)
{
	*seed ^= *seed << 13;
	*seed ^= *seed >> 7;
	*seed ^= *seed << 17;
	return *seed;
}

uint32_t
pc_wall_events_waiting(void)
{
	return __atomic_load_n(&ring_head, __ATOMIC_ACQUIRE) - ring_tail;
}

size_t
pc_wall_events_staying(void)
{
	uint32_t head = __atomic_load_n(&ring_head, __ATOMIC_ACQUIRE);
	long net = 0;

	/* a glance, not a read: a slot being written counts as it was */
	for (uint32_t i = ring_tail; i != head && head - i <= RING; i++)
		net += __atomic_load_n(&ring[i % RING].cpu_ns,
				       __ATOMIC_RELAXED) == ~0ULL ?
			       1 :
			       -1;
	return net > 0 ? (size_t)net : 0;
}

int
pc_wall_events_on(void)
{
	void *m;

	/* mapped here, not in libpc's .bss: a program of the CPU clock (or
	 * one that calls mlockall) would carry its 768 KiB too */
	if (!ring) {
		m = mmap(NULL, RING * sizeof(*ring), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return -1;
		ring = m;
	}
	__atomic_store_n(&ring_on, 1, __ATOMIC_RELEASE);
	return 0;
}

void
pc_wall_events_reset(void)
{
	ring_head = ring_tail = 0;
}

/*
 * The sampler's wake-ups and the last round, here rather than in wall.c:
 * pc_finish, which the fatal-signal handler runs, asks for the last round
 * (pc_wall_final), so what it reaches is AS-safe: atomics and futexes.
 */
static uint32_t wake_word;	/* bumped: a pause or the last round */
static uint32_t final_word;	/* 1: a last round asked for; 2: done */
static uint32_t final_tid;	/* the thread that asked for it */
static uint32_t sampler_tid;	/* the sampler's thread, 0 while none runs */
static int sampler_on;

void
pc_wall_sampler_is(int on, uint32_t tid)
{
	__atomic_store_n(&sampler_on, on, __ATOMIC_RELEASE);
	if (tid || !on)
		__atomic_store_n(&sampler_tid, tid, __ATOMIC_RELEASE);
}

uint32_t
pc_wall_wake_seq(void)
{
	return __atomic_load_n(&wake_word, __ATOMIC_ACQUIRE);
}

void
pc_wall_wake(void)
{
	__atomic_fetch_add(&wake_word, 1, __ATOMIC_ACQ_REL);
	syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

int
pc_wall_wait(uint32_t seen, const struct timespec *at)
{
	/* FUTEX_WAIT_BITSET's timeout is absolute, on CLOCK_MONOTONIC */
	return syscall(SYS_futex, &wake_word, FUTEX_WAIT_BITSET_PRIVATE, seen,
		       at, NULL, FUTEX_BITSET_MATCH_ANY) == -1 &&
	       errno == ETIMEDOUT;
}

int
pc_wall_final_state(void)
{
	return (int)__atomic_load_n(&final_word, __ATOMIC_ACQUIRE);
}

uint32_t
pc_wall_final_tid(void)
{
	return __atomic_load_n(&final_tid, __ATOMIC_ACQUIRE);
}

void
pc_wall_final_done(void)
{
	__atomic_store_n(&final_word, 2, __ATOMIC_RELEASE);
	syscall(SYS_futex, &final_word, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL,
		NULL, 0);
}

void
pc_wall_final_reset(void)
{
	__atomic_store_n(&final_word, 0, __ATOMIC_RELEASE);
}

void
pc_wall_final(void)
{
	struct timespec left = { 1, 0 };
	uint32_t f = 0, me;
	int saved = errno;

	/* not in a vfork child, nor in the sampler itself (a fatal signal) */
	if (!__atomic_load_n(&sampler_on, __ATOMIC_ACQUIRE) ||
	    getpid() != pc->pid || !pc_on())
		return;
	me = (uint32_t)syscall(SYS_gettid);
	if (me == __atomic_load_n(&sampler_tid, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&final_tid, me, __ATOMIC_RELEASE);
	if (!__atomic_compare_exchange_n(&final_word, &f, 1, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	pc_wall_wake();
	/* a second at most: a round of 10,000 threads takes some 25 ms */
	while (__atomic_load_n(&final_word, __ATOMIC_ACQUIRE) == 1 &&
	       syscall(SYS_futex, &final_word, FUTEX_WAIT_PRIVATE, 1, &left,
		       NULL, 0) == -1 &&
	       errno != ETIMEDOUT)
		;
	errno = saved;
}

/*
 * The schedstat counters of the thread that starts libpc, read as its
 * start-up ends (the wait for the sampler's set-up is libpc's, not the
 * program's): what they held then (its exec, the loader, libpc's start,
 * and whatever it ran before an exec: python3 that burns 0.3 s and execs
 * a program) is no time of the profile's. Counted, it was taken from the
 * thread's first waits (a 0.4 s sleep read 0 s after 0.3 s of CPU before
 * the exec; 0.28 s in CI, its run queue before libpc started). The first
 * round waits for it (pc_wall_base_ready).
 */
static struct {
	uint32_t tid;
	int ready;
	uint64_t t_ns;
	uint64_t v[3];
} base;

static int
read_counters(uint64_t v[3])
{
	char buf[96];
	const char *p = buf;

	if (pc_read_small("/proc/thread-self/schedstat", 0, buf, sizeof(buf),
			  NULL) <= 0)
		return -1;
	for (int i = 0; i < 3; i++) {
		if (pc_parse_u64(&p, UINT64_MAX, &v[i]))
			return -1;
		while (*p == ' ')
			p++;
	}
	return 0;
}

void
pc_wall_base_take(void)
{
	base.t_ns = pc_clock_ns(CLOCK_MONOTONIC);
	base.tid = read_counters(base.v) ? 0 : (uint32_t)syscall(SYS_gettid);
	__atomic_store_n(&base.ready, 1, __ATOMIC_RELEASE);
}

int
pc_wall_base_ready(void)
{
	return __atomic_load_n(&base.ready, __ATOMIC_ACQUIRE);
}

int
pc_wall_base_give(struct pc_wthread *w)
{
	if (!base.tid || w->tid != base.tid)
		return 0;
	w->run_ns = base.v[0];
	w->rq_ns = base.v[1];
	w->switches = base.v[2];
	w->seen_ns = base.t_ns;
	base.tid = 0;
	return 1;
}
