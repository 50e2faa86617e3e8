/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The wall sampler's accounting of one thread (wall_proc.c's look calls
 * it for every thread, every round, with the counters it read): its time
 * since the last look, from the kernel's own counters in
 * /proc/self/task/TID/schedstat, split exactly into time on the CPU
 * (which the CPU timer samples), time waiting for a CPU, and the rest,
 * time off the CPU; and where that went, from the thread's syscall line,
 * and the stack walked from it (wall_unwind.c) when the budget allows.
 * The time is counted at once under the call alone and moved under the
 * walked stack when a walk is made, so that a thread's time is in the
 * stacks table, whole, at every moment.
 *
 * Runs in the wall sampler's thread only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "pc.h"
#include "wall.h"

/* looks between readings of a thread's name */
#define NAME_EVERY	64
/* The look that first reads the name of a thread libpc started, which
 * notes its own at its end (wall_events.c): a short-lived helper costs no
 * read of its comm file, 16 us here, 25 to 40 us with the page of the
 * names' table it writes (tests/progs/wallattr's 16 workers start 80
 * helpers a second). */
#define NAME_TOLD	8

/* A new wait of thread tid from its syscall line's fields. */
static void
new_wait(struct pc_wwait *x, uint32_t tid, uint64_t key, long nr,
	 const unsigned long *arg, unsigned long ip)
{
	uint32_t pid = 0;
	unsigned fd = 0;

	memset(x, 0, sizeof(*x));
	x->key = key;
	x->ip = ip;
	if (nr < 0) {
		/* -1: blocked outside a call; -2: no wait seen at all */
		x->word = GMON_WAIT_WORD(nr == -1 ? GMON_WAIT_NOCALL :
						    GMON_WAIT_UNSEEN,
					 0, 0);
		x->io = 1;
		return;
	}
	/* wait4's pid is an int: -1 and 0 (any child, or the group) are
	 * 0xffffffff and 0 here */
	if (nr == SYS_wait4 && (int)arg[0] > 0)
		pid = (uint32_t)arg[0];
	else if (nr == SYS_waitid && arg[0] == P_PID)
		pid = (uint32_t)arg[1];
	if (pc_wall_takes_fd(nr))
		fd = pc_wall_fd_kind(tid, (int)arg[0]);
	x->word = GMON_WAIT_WORD((unsigned)nr & 0xfff, fd, pid);
	x->io = pc_wall_is_io(nr, fd);
}

/* Count ns off the CPU for thread tid in wait x: under its walked stack,
 * or under the call alone until a walk moves it; what the table has no
 * room for yet is kept, for pc_wall_place. */
static int unplaced;

/* Brief threads' time the stacks table had no room for yet. */
#define BRIEF_LEFT	16384
static struct brief {
	uint32_t tid;
	uint64_t ns;
} *brief_left;	/* BRIEF_LEFT of them, mapped when first needed */
static size_t nbrief_left;

static void
charge(uint32_t tid, struct pc_wwait *x, uint64_t ns)
{
	struct pc_frame f[1];

	ns += x->unplaced;
	x->unplaced = 0;
	if (!ns)
		return;
	if (!x->key) {
		/* no wait known: a thread not yet seen blocked, or looked
		 * at from its counters alone */
		new_wait(x, tid, 1, -2, NULL, 0);
		x->io = 0;
	}
	if (x->entry) {
		pc_stacks_add_again(x->entry, ns);
		return;
	}
	if (x->alone) {
		pc_stacks_add_again(x->alone, ns);
	} else {
		f[0].site = f[0].entry = (uintptr_t)x->ip;
		x->alone = pc_stacks_add_offcpu(tid, x->word, f, x->ip ? 1 : 0,
						GMON_STACK_CUT, ns);
		if (!x->alone) {
			x->unplaced = ns;
			unplaced = 1;
			return;
		}
	}
	x->pending += ns;
}

/* Count ns thread w waited for a CPU under the stack of entry blocked (or
 * where it was preempted); kept for pc_wall_place when there is no room. */
static void
runqueue(struct pc_wthread *w, const uint64_t *blocked, uint64_t ns)
{
	ns += w->rq_left;
	w->rq_left = 0;
	if (ns && !pc_stacks_add_runqueue(w->tid, blocked, ns)) {
		w->rq_left = ns;
		unplaced = 1;
	}
}

/* Count ns thread w spent off the CPU in waits no look saw, as
 * "[off-cpu: unknown]" (no call, no stack: the entry charge makes for a
 * thread never seen blocked); kept for pc_wall_place when there is no
 * room. */
static void
unseen(struct pc_wthread *w, uint64_t ns)
{
	static const struct pc_frame none[1];

	ns += w->unseen_left;
	w->unseen_left = 0;
	if (ns && !pc_stacks_add_offcpu(w->tid,
					GMON_WAIT_WORD(GMON_WAIT_UNSEEN, 0, 0),
					none, 0, GMON_STACK_CUT, ns)) {
		w->unseen_left = ns;
		unplaced = 1;
	}
}

int
pc_wall_unplaced(void)
{
	return unplaced;
}

void
pc_wall_place(struct pc_wthread *t, size_t n)
{
	size_t k = nbrief_left;

	unplaced = 0;
	nbrief_left = 0;
	for (size_t i = 0; i < k; i++)
		pc_wall_brief(brief_left[i].tid, brief_left[i].ns, 0);
	for (size_t i = 0; i < n; i++) {
		charge(t[i].tid, &t[i].cur, 0);
		charge(t[i].tid, &t[i].prev, 0);
		charge(t[i].tid, &t[i].iow, 0);
		runqueue(&t[i], NULL, 0);
		unseen(&t[i], 0);
	}
}

/*
 * Count drq, the time thread w waited for a CPU since its last look, once,
 * to what it was about to run: the wait it woke from (was_blocked, in the
 * wait keyed key_before), or where it was preempted (its last CPU sample).
 * In a disk wait (fsync) the kernel wakes the thread for each I/O, and it
 * waits for a CPU inside the call: that is the call's time. A thread that
 * waits for a CPU reads "running" whatever call it is in, so after a disk
 * wait, run-queue time waits for the look that finds the thread blocked
 * again: in the same call (the call's) or elsewhere (the run queue's,
 * under the disk wait). r: found blocked
 * (1) or running (0); k: times switched in since the last look; last:
 * nothing is kept for later.
 */
static void
runqueue_time(struct pc_wthread *w, int was_blocked, uint64_t key_before, int r,
	      uint64_t drq, uint64_t k, int last)
{
	struct pc_wwait *from =
		w->cur.key != key_before && w->prev.key == key_before ?
			&w->prev :
			&w->cur;

	if (from->io) {
		if (r == 1 && w->cur.key == key_before) {
			charge(w->tid, &w->cur, drq + w->rq_io_ns);
			w->rq_io_ns = 0;
			return;
		}
		if (r == 0 && !last) {
			w->rq_io_ns += drq;
			return;
		}
	}
	/*
	 * Of k switch-ins since a look that found it blocked, the first
	 * ended the wake from that wait; the others ended a preemption, or
	 * the wake from a wait never seen, in what it ran after: their share
	 * is where it is found running (its last CPU sample). All of it to
	 * the wait, four 0.3 s naps each followed by a 0.6 s loop beside two
	 * CPU hogs on its CPU (looks at 5 Hz) read 3 to 58 ms high, 26 on
	 * average over 6 runs (0 to 25, 9, split). A thread found in the
	 * same wait again woke from it each time (a poll loop): all of it
	 * stays there.
	 */
	if (was_blocked && !from->io && !w->rq_io_ns && k > 1 &&
	    !(r == 1 && w->cur.key == key_before)) {
		runqueue(w, NULL, drq - drq / k);
		drq /= k;
	}
	if (w->rq_io_ns || from->io)
		was_blocked = 1;
	drq += w->rq_io_ns;
	w->rq_io_ns = 0;
	if (drq)
		runqueue(w,
			 !was_blocked ? NULL :
			 from->entry  ? from->entry :
					from->alone,
			 drq);
}

static uint32_t ending_tid;

void
pc_wall_acct_ending(uint32_t tid)
{
	ending_tid = tid;
}

/* Thread w is blocked in the wait its syscall line hashes to key: the
 * same as at its last look, the one before, or a new one. */
static void
now_in(struct pc_wthread *w, uint64_t key, long nr, const unsigned long *arg,
       unsigned long ip)
{
	struct pc_wwait t;

	if (key == w->cur.key)
		return;
	t = w->prev;
	w->prev = w->cur;
	if (key == t.key) {
		w->cur = t;
		return;
	}
	pc_wall_settle(&t);
	new_wait(&w->cur, w->tid, key, nr, arg, ip);
}

static int
timed_call(const struct pc_wwait *x)
{
	return pc_wall_timed_call(GMON_WAIT_CALL(x->word));
}

/* Where thread w's time not placed yet goes: its last wait not timed. */
static struct pc_wwait *
untimed(struct pc_wthread *w)
{
	if (!timed_call(&w->cur))
		return &w->cur;
	if (w->prev.key && !timed_call(&w->prev))
		return &w->prev;
	pc_wall_settle(&w->iow);
	memset(&w->iow, 0, sizeof(w->iow));
	return &w->iow;
}

/* Thread w's run-queue and off-CPU time since its last look, from its
 * counters ss read at now. */
static void
deltas(struct pc_wthread *w, const uint64_t ss[3], uint64_t now,
       uint64_t *dcpu_out, uint64_t *drq, uint64_t *off)
{
	uint64_t dcpu = ss[0] - w->run_ns;
	int64_t rest;

	*drq = ss[1] - w->rq_ns;
	/* run_delay grows when a thread that waited for a CPU gets one:
	 * time counted off the CPU at the last look may turn out to have
	 * been the run queue's; it is taken from what follows */
	rest = (int64_t)(now - w->seen_ns) - (int64_t)(dcpu + *drq) +
	       w->carry_ns;
	/* first from the time a look that found it running kept for later
	 * (unknown_ns): that time was the run queue's. Taken from the waits
	 * that follow alone, a thread that waited long for a CPU after every
	 * nap (load 12 on 2 CPUs) ended with up to 83 ms counted twice */
	if (rest < 0 && w->unknown_ns) {
		uint64_t take = (uint64_t)-rest < w->unknown_ns ?
					(uint64_t)-rest :
					w->unknown_ns;

		w->unknown_ns -= take;
		rest += (int64_t)take;
	}
	/* at a first look nothing was counted ahead: where its start was
	 * guessed, more is time before seen_ns (a thread older than libpc),
	 * not the waits that follow */
	w->carry_ns = rest < 0 && (w->rounds || !w->guessed) ? rest : 0;
	*off = rest > 0 ? (uint64_t)rest : 0;
	*dcpu_out = dcpu;
	w->seen_ns = now;
	w->run_ns = ss[0];
	w->rq_ns = ss[1];
	pc_wall_io_time(w, now, off, drq, 0, charge);
}

static uint64_t moved;	/* looks that found a thread switched in since */

uint64_t
pc_wall_moved(void)
{
	return moved;
}

/* Thread w, blocked at its last look, was not switched in since: its
 * time since, ns, is that wait's; a call it times itself (fsync) has its
 * own time counted exactly (wall_iotime.c), the rest kept for later. */
static void
still_blocked(struct pc_wthread *w, uint64_t ns)
{
	if (timed_call(&w->cur))
		w->unknown_ns += ns;
	else
		charge(w->tid, &w->cur, ns);
}

/* Thread w was switched in since its last look (its switches now
 * switches): how many times. */
static uint64_t
switched_in(struct pc_wthread *w, uint64_t switches)
{
	uint64_t k = switches - w->switches;

	moved++;
	w->switches = switches;
	return k;
}

/* Where thread w, switched in since its last look, is now: 1 blocked
 * (w->cur its wait), 0 running or gone; its state set. where: its
 * syscall line read. */
static int
found(struct pc_wthread *w, int how, int was_blocked, pc_wall_where_fn where)
{
	struct pc_wfound f;
	int r;

	/* the thread that ends the process waits for this round: running */
	if (how & PC_LOOK_CHEAP || w->tid == ending_tid)
		r = was_blocked && w->tid != ending_tid;
	else if ((r = where(w, &f)) == 1)
		now_in(w, f.key, f.nr, f.arg, f.ip);
	if (r < 0)
		r = 0;
	w->state = r == 1 ? PC_W_BLOCKED : PC_W_RUNNING;
	return r;
}

/*
 * A thread in the wait keyed key_before at its last look (blocked, or
 * running since) and found in a call it times itself (fsync): that wait
 * ended before the call, whose own time is taken out exactly
 * (wall_iotime.c). Its tail is the time off the CPU in the interval in
 * which it left that wait: this one (was_blocked), or the one that ended
 * at a look that found it running (tail_ns). Kept for the next wait
 * found, it went to the wait after the call: a condition variable's
 * before an fsync loop read 0.7 to 2.6 points low, an accept after it
 * high, at 16 threads (waits of 0.4 s, 10 looks a second). The rest, off
 * the CPU after a look had seen it past that wait and before this call,
 * was in waits no look saw: "[off-cpu: unknown]". All of it to the wait
 * before, a condition variable's before an fsync loop read 0.73 s for
 * 0.21 s in CI at load 15, the loop's time off the CPU outside fsync
 * (tests/check_wallacct.c). A thread found running keeps its time for
 * the next wait found (given half, a frame-pointer build's sparse looks
 * put a whole phase under the wait before).
 */
static uint64_t
tail(struct pc_wthread *w, uint64_t key_before, int was_blocked, int r,
     uint64_t off)
{
	struct pc_wwait *x = w->prev.key == key_before ? &w->prev : NULL;
	uint64_t left;

	if (r != 1 || !x || !key_before || w->cur.key == key_before ||
	    timed_call(x))
		return off;
	left = was_blocked		   ? off :
	       w->tail_ns < w->unknown_ns ? w->tail_ns :
					    w->unknown_ns;
	charge(w->tid, x, left);
	unseen(w, off + w->unknown_ns - left);
	w->unknown_ns = 0;
	w->tail_ns = 0;
	return 0;
}

/*
 * Thread w's time off the CPU since its last look, off, switched in since
 * and found now (r, as found's) where it was in the wait keyed key_before
 * (was_blocked: blocked there at that look).
 * Off the CPU: the wait it is found in. A thread found running has no
 * wait to show: its time waits for the next look that finds it blocked
 * (an unbiased sample of where it waits). Given to its last wait instead,
 * it went to the wait it spends most time in, on the CPU too: sqlite3's
 * fdatasync (58 % on the CPU, in the kernel) got 0.37 s where perf saw
 * 0.23 s off the CPU in it.
 */
static void
off_cpu(struct pc_wthread *w, uint64_t key_before, int was_blocked, int r,
	uint64_t off, int last)
{
	if ((r != 1 || timed_call(&w->cur)) && !last) {
		off = tail(w, key_before, was_blocked, r, off);
		/* it left the wait it was seen in during this interval */
		if (was_blocked && r != 1)
			w->tail_ns = off;
		w->unknown_ns += off;
		return;
	}
	off += w->unknown_ns;
	w->unknown_ns = 0;
	w->tail_ns = 0;
	/* found in another wait than at the last look: it left that one at
	 * some time between, on average halfway (charged whole to the new
	 * one, a 0.3 s phase read 0 when rounds were far apart); a thread
	 * never seen blocked before had no wait to leave (its empty one took
	 * half as "[off-cpu: unknown]": a late first look lost it) */
	if (r == 1 && key_before && w->cur.key != key_before &&
	    w->prev.key == key_before && !timed_call(&w->prev)) {
		charge(w->tid, &w->prev, off / 2);
		off -= off / 2;
	}
	charge(w->tid, untimed(w), off);
}

void
pc_wall_account(struct pc_wthread *w, int how, const uint64_t ss[3],
		uint64_t now, pc_wall_where_fn where)
{
	uint64_t dcpu, drq, off, k;
	uint64_t key_before = w->cur.key;
	int was_blocked = w->state == PC_W_BLOCKED, r;

	deltas(w, ss, now, &dcpu, &drq, &off);
	w->rounds++;
	/* not switched in since: where it was */
	if (was_blocked && ss[2] == w->switches && !dcpu) {
		still_blocked(w, off + drq);
		return;
	}
	k = switched_in(w, ss[2]);
	r = found(w, how, was_blocked, where);
	runqueue_time(w, was_blocked, key_before, r, drq, k,
		      how & PC_LOOK_LAST);
	off_cpu(w, key_before, was_blocked, r, off, how & PC_LOOK_LAST);
}

void
pc_wall_look(struct pc_wthread *w, int how)
{
	int cheap = how & PC_LOOK_CHEAP;
	uint64_t ss[3], now;

	if (cheap && !w->rounds ? pc_wall_read_cpuclock(w, ss) :
				  pc_wall_read_schedstat(w, ss)) {
		/* gone since its exit hook: its end as the hook told it */
		if (w->exit_ns)
			pc_wall_ended(w, w->exit_ns, w->exit_cpu);
		return;	/* gone: wall.c counts its end */
	}
	/* now, at the counters: a round that is preempted (a busy machine)
	 * must not count a thread's time to the round's start */
	now = pc_clock_ns(CLOCK_MONOTONIC);
	/* at its second look (NAME_TOLD-th), every NAME_EVERY after, at the
	 * last if never */
	if (!cheap && (w->rounds % NAME_EVERY == (w->told ? NAME_TOLD : 1) ||
		       (!w->rounds && how & PC_LOOK_LAST)))
		pc_wall_note_name(w->tid);
	pc_wall_account(w, how, ss, now, pc_wall_where_now);
}

void
pc_wall_ended(struct pc_wthread *w, uint64_t end_ns, uint64_t cpu_ns)
{
	uint64_t elapsed = end_ns > w->seen_ns ? end_ns - w->seen_ns : 0, off,
		 none = 0;
	int64_t rest;

	if (w->state == PC_W_ENDED)
		return;
	if (cpu_ns == ~0ULL) {
		/* its end not known: on average halfway */
		elapsed /= 2;
		cpu_ns = w->run_ns;
	}
	cpu_ns = cpu_ns > w->run_ns ? cpu_ns - w->run_ns : 0;
	/* its last wait, the one it ran from to its end (a run queue's
	 * wait on waking from it is in it: schedstat is not readable at the
	 * end) */
	/* less what earlier looks counted ahead of run_delay (deltas) */
	rest = (int64_t)elapsed - (int64_t)cpu_ns + w->carry_ns +
	       (int64_t)w->unknown_ns;
	off = rest > 0 ? (uint64_t)rest : 0;
	pc_wall_io_time(w, end_ns, &off, &none, 1, charge);
	charge(w->tid, untimed(w), off);
	w->unknown_ns = 0;
	w->tail_ns = 0;
	w->carry_ns = 0;
	if (w->rq_io_ns)
		runqueue(w, w->cur.entry ? w->cur.entry : w->cur.alone,
			 w->rq_io_ns);
	w->rq_io_ns = 0;
	w->seen_ns = end_ns;
	w->state = PC_W_ENDED;
	pc_wall_settle(&w->cur);
	pc_wall_settle(&w->prev);
	pc_wall_settle(&w->iow);
}

void
pc_wall_brief(uint32_t tid, uint64_t life_ns, uint64_t cpu_ns)
{
	struct pc_wwait x;

	memset(&x, 0, sizeof(x));
	charge(tid, &x, life_ns > cpu_ns ? life_ns - cpu_ns : 0);
	if (x.unplaced && !brief_left &&
	    (brief_left = mmap(NULL, BRIEF_LEFT * sizeof(*brief_left),
			       PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) ==
		    MAP_FAILED)
		brief_left = NULL;
	if (x.unplaced && brief_left && nbrief_left < BRIEF_LEFT) {
		brief_left[nbrief_left].tid = tid;
		brief_left[nbrief_left++].ns = x.unplaced;
	}
}
