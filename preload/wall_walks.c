/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The wall sampler's walks (wall.c calls pc_wall_walks after each round's
 * looks, wall_acct.c): which blocked threads' stacks are walked
 * (wall_unwind.c) while the budget allows, and their time moved from the
 * call alone to the stack walked.
 *
 * Runs in the wall sampler's thread only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pc.h"
#include "wall.h"

#define WALK_MAX	PC_WALL_FRAMES	/* frames walked of a blocked thread */

/* Whether thread w was switched in, or ran, between two reads of its
 * schedstat. */
static int
ran(const uint64_t a[3], const uint64_t b[3])
{
	return a[2] != b[2] || a[0] != b[0];
}

/* Whether the walk of thread w, switched in during it, holds: its frames
 * a stack known right, or w blocked at the same pc and sp again, every
 * stack word the walk read the same, and w not switched in since (then a
 * walk now reads what it read). */
static int
holds(struct pc_wthread *w, long nr, const unsigned long arg[6],
      unsigned long sp, unsigned long ip, const uint64_t again[3])
{
	uint64_t after[3];
	int r = pc_wall_walk_holds(w->tid, nr, arg, sp, ip);

	return r == 1 || (r == 2 && !pc_wall_read_schedstat(w, after) &&
			  !ran(again, after));
}

/* Walk thread w's stack where it is blocked, if it still is in the wait
 * it was seen in; its time so far moves from the call alone to the stack. */
static void
walk(struct pc_wthread *w)
{
	struct pc_frame *f = pc_wall_frames();
	struct pc_wwait *x = &w->cur;
	uint64_t ss[3], again[3], key;
	unsigned long arg[6], sp, ip;
	long nr;
	int n, how;

	if (!f || pc_wall_read_schedstat(w, ss) ||
	    pc_wall_read_syscall(w, &key, &nr, arg, &sp, &ip) != 1 ||
	    key != x->key)
		return;
	n = pc_wall_unwind(ip, sp, f, WALK_MAX, &how);
	/* switched in during the walk, and the walk does not hold: its time
	 * stays under the call alone, and the walk is not kept (a wait's
	 * stack stays with it while it comes back, wall_acct.c) */
	if (pc_wall_read_schedstat(w, again) ||
	    (ran(ss, again) && !holds(w, nr, arg, sp, ip, again))) {
		pc_wall_count(GMON_WALL_NONE, 1);
		return;
	}
	pc_wall_walk_right();
	pc_wall_count(how == PC_WALL_FULL ? GMON_WALL_FULL :
		      n > 1               ? GMON_WALL_CUT :
					    GMON_WALL_NONE,
		      1);
	x->entry = pc_stacks_add_offcpu(
		w->tid, x->word, f, n,
		how == PC_WALL_CUT       ? GMON_STACK_CUT :
		how == PC_WALL_TRUNCATED ? GMON_STACK_TRUNCATED :
					   0,
		x->pending);
	if (x->entry && x->alone)
		pc_stacks_add_again(x->alone, (uint64_t)0 - x->pending);
	if (x->entry)
		x->pending = 0;
}

/*
 * A wait found at this look (its thread blocked in another wait than at
 * its last look), walked at once while more() allows: walked after every
 * thread's look (a round of 27 threads' looks takes 1 ms of CPU, 5 to 10
 * beside the program's threads), the brief ones (a lock taken by fork,
 * glibc's stack cache's, a page fault while fork holds the address space,
 * some ms) were over by then, and their time stayed under the call alone:
 * 1.8 s of tests/progs/wallattr's 29 s of 16 workers' lives, at any
 * budget. Returns the walk's CPU ns + 1, or 0 where it did not walk.
 */
uint64_t
pc_wall_walk_found(struct pc_wthread *w, uint64_t key_before, int (*more)(void))
{
	uint64_t c0;

	if (w->state != PC_W_BLOCKED || w->cur.entry ||
	    w->cur.key == key_before || !more())
		return 0;
	c0 = pc_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	walk(w);
	return pc_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0 + 1;
}

/* A blocked thread's weight in the draw of walks: its time not yet under
 * a stack, and a round's worth more, so that a wait found with no time
 * counted yet (its thread seen running at the look before) is walked
 * too: left for the next round, it was often left by then, and its time,
 * then given to it as the wait before, stayed under the call alone (at
 * 16 threads, some 100 waits a run). */
static double
weight(const struct pc_wthread *w)
{
	return (double)w->cur.pending + 1e6;
}

size_t
pc_wall_walks(struct pc_wthread *t, size_t n, int (*more)(void), uint64_t *seed)
{
	uint32_t *pick = pc_wall_picks(n);	/* mapped: no malloc here */
	size_t k = 0, done = 0;
	double total = 0;

	if (!pick)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (t[i].state == PC_W_BLOCKED && !t[i].cur.entry) {
			pick[k++] = (uint32_t)i;
			total += weight(&t[i]);
		}
	/* at random, weighted by the time not yet under a stack, without
	 * putting back */
	while (k && more()) {
		double r = (double)(pc_wall_random(seed) >> 11) /
			   9007199254740992.0 * total;
		size_t j = 0;

		while (j + 1 < k && r >= weight(&t[pick[j]])) {
			r -= weight(&t[pick[j]]);
			j++;
		}
		total -= weight(&t[pick[j]]);
		walk(&t[pick[j]]);
		pick[j] = pick[--k];
		done++;
	}
	return done;
}
