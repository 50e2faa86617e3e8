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
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "pc.h"
#include "wall.h"
#include "banned.h"

#define RING		32768	/* events between two rounds (10,000 threads that start and end) */

/* Threads' starts and ends, from their own paths (any thread, lock-free):
 * seq is the event's number + 1 once it is whole. */
static struct pc_wevent ring[RING];
static uint32_t ring_head, ring_tail;
static int ring_on;

void
pc_wall_thread_event(int end)
{
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
		if (__atomic_load_n(&ring_head, __ATOMIC_ACQUIRE) - ring_tail > RING)
			ring_tail++;
		else
			return 0;
	}
	return 0;
}

uint32_t
pc_wall_events_waiting(void)
{
	return __atomic_load_n(&ring_head, __ATOMIC_ACQUIRE) - ring_tail;
}

void
pc_wall_events_on(void)
{
	__atomic_store_n(&ring_on, 1, __ATOMIC_RELEASE);
}

void
pc_wall_events_reset(void)
{
	ring_head = ring_tail = 0;
}
