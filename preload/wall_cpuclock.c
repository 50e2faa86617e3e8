/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A thread's CPU time from its CPU clock, for a first look from the
 * counters alone (the last round of a run that started thousands of
 * threads since the one before, short of budget): the kernel's
 * sum_exec_runtime, the counter schedstat's first field shows, in one
 * clock_gettime of about a microsecond, where opening, reading and
 * closing its schedstat file cost 11 to 15 us (path lookups, two proc
 * inodes made). Its run-queue time is not read: it stays in the time off
 * the CPU, unnamed as that is, and the thread's totals stay exact.
 *
 * Runs in the wall sampler's thread only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <time.h>

#include "pc.h"
#include "wall.h"
#include "banned.h"

int
pc_wall_read_cpuclock(struct pc_wthread *w, uint64_t v[3])
{
	struct timespec t;

	if (clock_gettime(pc_thread_clock((pid_t)w->tid), &t))
		return -1;	/* gone */
	v[0] = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
	v[1] = w->rq_ns;
	v[2] = w->switches;
	return 0;
}
