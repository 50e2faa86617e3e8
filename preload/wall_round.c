/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A round's looks (wall.c's round_all): the threads' starts and ends told
 * since the last round, given to the listed threads, and a look at each
 * thread (wall_acct.c), a wait found now walked at once (wall_walks.c).
 * The last round looks at each thread in full (its wait read, walked)
 * while the budget allows and reads the counters alone of the rest: a
 * first look at a thread costs 40 to 60 us in full (three /proc files
 * opened: schedstat, syscall, comm), 12 to 25 us from its counters, and
 * 1,000 threads started since the last round cost the run twice its
 * budget when the last round looked at them all in full (65 ms in 3.5
 * s). The cost of a first look, full or not, is learned here.
 *
 * Runs in the wall sampler's thread only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pc.h"
#include "wall.h"

static int
cmp_tid(const void *key, const void *e)
{
	uint32_t x = *(const uint32_t *)key,
		 y = ((const struct pc_wthread *)e)->tid;

	return x < y ? -1 : x > y;
}

struct pc_wthread *
pc_wall_find(struct pc_wthread *t, size_t n, uint32_t tid)
{
	return bsearch(&tid, t, n, sizeof(*t), cmp_tid);
}

/* A thread's start: one listed and not looked at yet began then; one
 * listed as ended is a new one with the same id. */
static void
event_start(const struct pc_wevent *e, struct pc_wthread *nxt, size_t n,
	    struct pc_wthread *cur, size_t ncur)
{
	struct pc_wthread *x = pc_wall_find(nxt, n, e->tid);

	/* a thread still listed after its exit hook, its id taken again */
	if (x && x->exit_ns)
		pc_wall_ended(x, x->exit_ns, x->exit_cpu);
	/* listed at the last round, not now: ended since */
	if (!x && (x = pc_wall_find(cur, ncur, e->tid)) &&
	    (x->listed || x->state != PC_W_NEW || x->rounds))
		x = NULL;
	if (x && x->state == PC_W_NEW && !x->rounds && !x->listed) {
		x->seen_ns = e->t_ns;
		x->young = x->guessed = 0;
		x->told = 1;
	} else if (x && (x->state == PC_W_ENDED ||
			 (x->state == PC_W_NEW && !x->rounds))) {
		pc_wall_forget(x);
		memset(x, 0, sizeof(*x));
		x->fd = -1;
		x->tid = e->tid;
		x->listed = 1;
		x->told = 1;
		x->seen_ns = e->t_ns;
	} else if (!x) {
		pc_wall_begin(e->tid, e->t_ns);
	}
}

/*
 * A thread's end: its last interval, to the nanosecond. One listed now
 * was still there after its exit hook, and may stay: preempted there on a
 * busy machine (0.35 s on a run queue, seen), or in a destructor of the
 * program's that runs after libpc's. It is looked at as any other until
 * it is gone; a look that finds it gone ends it at its hook.
 */
static void
event_end(const struct pc_wevent *e, struct pc_wthread *nxt, size_t n,
	  struct pc_wthread *cur, size_t ncur)
{
	struct pc_wthread *x = pc_wall_find(nxt, n, e->tid);
	uint64_t t;

	if (x && x->state != PC_W_ENDED) {
		x->exit_ns = e->t_ns;
		x->exit_cpu = e->cpu_ns;
		return;
	}
	if (!x && (x = pc_wall_find(cur, ncur, e->tid)) && x->listed)
		x = NULL;	/* listed now: in nxt */
	if (x)
		pc_wall_ended(x, e->t_ns, e->cpu_ns);
	/* begun and ended between two rounds */
	else if ((t = pc_wall_begun(e->tid)))
		pc_wall_brief(e->tid, e->t_ns > t ? e->t_ns - t : 0, e->cpu_ns);
}

void
pc_wall_events(struct pc_wthread *nxt, size_t n, struct pc_wthread *cur,
	       size_t ncur)
{
	struct pc_wevent e;

	while (pc_wall_next_event(&e))
		(e.cpu_ns == ~0ULL ? event_start : event_end)(&e, nxt, n, cur,
							      ncur);
}

/* A first look's CPU ns, in full [0] and from the counters alone [1],
 * lately: 30 and 15 us to start with. */
static double first_ns[2] = { 30e3, 15e3 };
#define TIME_EVERY	8	/* first looks between two timed */

double
pc_wall_first_ns(int cheap)
{
	return first_ns[cheap != 0];
}

/* A look at thread w, and the walk of a wait it is found in, new; the
 * cost of a first look learned where timed (the thread's CPU clock is a
 * system call here, 0.5 to 1 us: 10,000 threads' first looks all timed
 * cost 30 ms more). Returns the walk's CPU ns + 1, or 0. */
static uint64_t
look(struct pc_wthread *w, int how, int (*more)(void), int timed,
     uint64_t *spent)
{
	uint64_t key = w->cur.key, walked = 0;
	uint64_t c0 = timed ? pc_clock_ns(CLOCK_THREAD_CPUTIME_ID) : 0;
	double *f = &first_ns[(how & PC_LOOK_CHEAP) != 0];

	pc_wall_look(w, how);
	/* a wait found now: walked now, while it lasts */
	if (!(how & PC_LOOK_CHEAP))
		walked = pc_wall_walk_found(w, key, more);
	if (timed && w->rounds) {
		uint64_t c = pc_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;

		*f = *f * 0.9 + 0.1 * (double)c;
		*spent += c - (walked ? walked - 1 : 0);
	}
	return walked;
}

size_t
pc_wall_looks(struct pc_wthread *t, size_t n, int how, int (*more)(void),
	      int (*afford)(size_t left), uint64_t *in_walks,
	      uint64_t *in_first)
{
	size_t walks = 0, firsts = 0, ntimed = 0;
	uint64_t w, spent = 0;
	int first, timed;

	for (size_t i = 0; i < n; i++) {
		/* a thread listed before its start path ran (it waits for
		 * its creator) is looked at once its start is told, when
		 * its life begins; 20 rounds at most, for threads libpc did
		 * not start */
		if (t[i].state == PC_W_ENDED ||
		    (t[i].young && t[i].young++ < 20 && !how))
			continue;
		first = !t[i].rounds && t[i].state == PC_W_NEW;
		timed = first && firsts++ % TIME_EVERY == 0;
		/* the last round: in full while the budget holds the next
		 * TIME_EVERY and the rest read from their counters */
		if ((how & (PC_LOOK_LAST | PC_LOOK_CHEAP)) == PC_LOOK_LAST &&
		    timed && !afford(n - i))
			how |= PC_LOOK_CHEAP;
		ntimed += timed;
		if ((w = look(&t[i], how, more, timed, &spent)))
			walks++, *in_walks += w;
	}
	/* the first looks not timed cost as those timed, about */
	if (ntimed)
		*in_first += spent * firsts / ntimed;
	return walks;
}
