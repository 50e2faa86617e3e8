/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The wall sampler's side of the calls a thread times itself (wall_io.c:
 * fsync, fdatasync; unlink, unlinkat, rename): at each look, the time the
 * thread spent off the CPU in them since the last, charged to the call
 * exactly (wall_acct.c's looks call it), under the stack the calling
 * thread walked of the call where it has one.
 *
 * Runs in the wall sampler's thread only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>

#include "pc.h"
#include "wall.h"

/*
 * The stack the calling thread walked of its call (entry) is the wait x's
 * own, where x has none of its own: the time x holds under the call alone
 * moves to it, as a walk of the sampler's moves it (wall_walks.c), and
 * what follows is charged there: the run queue's time after the call
 * (wall_acct.c's runqueue_time), a later call's not walked (one under
 * SLOW_NS). Left under the call alone, the time of a look that came
 * before the call's own walk (the first fsync of a loop, a single unlink:
 * walked after they return) stayed with no stack, and with it every
 * run-queue wait after fsync that the sampler could not walk (the kernel
 * wakes the thread for each I/O): 5 to 53 ms of tests/progs/wallstack's
 * fsync phase of 0.12 s beside two CPU hogs.
 */
static void
own_entry(struct pc_wwait *x, uint64_t *entry)
{
	if (x->entry)
		return;
	if (x->alone && x->pending) {
		pc_stacks_add_again(entry, x->pending);
		pc_stacks_add_again(x->alone, (uint64_t)0 - x->pending);
	}
	x->pending = 0;
	x->entry = entry;
}

/* Thread w's time off the CPU in the calls of kind it times itself
 * since its last look, charged to the call, exactly; taken from *drq,
 * then *off: the call's time holds its waits for a CPU (the kernel wakes
 * it for each I/O), which run_delay holds too. Taken from *off first,
 * they were counted twice, under the call and as its run-queue time, and
 * the wait after lost as much (fsync 0.5 to 0.9 points high at 16
 * threads). */
static void
io_kind_time(struct pc_wthread *w, unsigned kind, uint64_t now, uint64_t *off,
	     uint64_t *drq, int end, pc_wall_charge_fn charge)
{
	uint64_t total, ret, d, *entry;
	uint32_t nr;
	struct pc_wwait *x;

	if (!pc_wall_io_read(w->tid, kind, now, w->run_ns, end, &total, &nr,
			     &ret, &entry))
		return;
	/* no time since: the call's walk, done as it returned, may still
	 * be its wait's (a single call, a look during it) */
	if ((d = total > w->io_prev[kind] ? total - w->io_prev[kind] : 0) ==
		    0 &&
	    !entry)
		return;
	w->io_prev[kind] = total > w->io_prev[kind] ? total : w->io_prev[kind];
	/* more than this interval holds: counted off the CPU elsewhere at an
	 * earlier look (a wait for a CPU not yet in run_delay); taken from
	 * the intervals to come, as deltas' carry */
	if (d > *off + *drq) {
		w->carry_ns -= (int64_t)(d - *off - *drq);
		*off = *drq = 0;
	} else if (d <= *drq) {
		*drq -= d;
	} else {
		*off -= d - *drq;
		*drq = 0;
	}
	x = GMON_WAIT_CALL(w->cur.word) == nr ? &w->cur :
		GMON_WAIT_CALL(w->prev.word) == nr ? &w->prev : &w->iow;
	if (x == &w->iow && (GMON_WAIT_CALL(x->word) != nr || x->ip != ret)) {
		if (!d)
			return;
		pc_wall_settle(x);
		memset(x, 0, sizeof(*x));
		x->key = 3;
		x->word = GMON_WAIT_WORD(nr, pc_wall_io_fd(nr), 0);
		x->ip = ret;
	}
	if (entry) {	/* the stack the calling thread walked (wall_io.c) */
		own_entry(x, entry);
		/* a look during the call that found the thread running
		 * charged it to the call from ret alone (iow) */
		if (GMON_WAIT_CALL(w->iow.word) == nr && w->iow.ip == ret)
			own_entry(&w->iow, entry);
		if (d)
			pc_stacks_add_again(entry, d);
		return;
	}
	charge(w->tid, x, d);
}

void
pc_wall_io_time(struct pc_wthread *w, uint64_t now, uint64_t *off,
		uint64_t *drq, int end, pc_wall_charge_fn charge)
{
	for (unsigned k = 0; k < PC_IO_KINDS; k++)
		io_kind_time(w, k, now, off, drq, end, charge);
}
