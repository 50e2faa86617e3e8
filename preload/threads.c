/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pthread_create, interposed: every thread the program starts gets its
 * timer (timer.c) armed as it begins, with its creator's view of the
 * sampling signal's mask, and disarmed when it ends (a thread-specific key's
 * destructor).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include "pc.h"

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *,
			 void *(*)(void *), void *);
static create_fn real_create;
static pthread_key_t exit_key;
static int have_exit_key;

/* Runs at thread exit, by return or pthread_exit or cancellation. */
static void
thread_exit(void *unused)
{
	(void)unused;
	pc_wall_thread_event(1);
	pc_thread_disarm();
	pc_signals_small_stack_end();
	pc_own_prog_thread(-1);
}

/*
 * What a new thread gets from its creator. Nothing of libpc's allocates in
 * the new thread before the program's own function runs: a thread's first
 * malloc or free makes glibc give it an arena, and once arenas outnumber
 * eight, glibc reads /sys/devices/system/cpu/online to learn how many it
 * may make (in each thread that gets there before the answer is kept),
 * taking the lowest free descriptor while another thread may have just
 * closed 0 to open it again (seen: 7 opens of /dev/null in 700,000 got
 * another number, beside a CPU hog). So the record comes from a fixed
 * pool (calloc'd when 128 are in flight at once, and then freed by a
 * creator, never by the thread), and the creator asks for the thread's
 * stack bounds (pthread_getattr_np allocates) while the new thread waits
 * at its start. The creator is a thread that runs the program's code
 * already, most often the main one, whose arena is there from the start;
 * one that never allocated gets its arena from libpc here (glibc reusing
 * a cached stack allocates nothing for pthread_create). A creator held up for a
 * second (stopped, or in a long handler) is not waited for: the thread goes on
 * without the bounds (its samples then keep their PC only), and the creator,
 * seeing that, no longer touches it.
 */
enum {
	START_WAITING,		/* the thread waits for its creator */
	START_ASKING,		/* the creator asks for the bounds: wait */
	START_GAVE_UP,		/* the thread went on without them */
	START_READY,		/* lo and hi are written */
};

struct start {
	void *(*fn)(void *);
	void *arg;
	unsigned prog_blocked;	/* the creator's view of libpc's signals */
	int moves;		/* as of this many moves (signals.c) */
	int small;		/* its stack is under PC_SMALL_STACK */
	uintptr_t lo, hi;	/* the new thread's stack, 0 where not known */
	uint32_t state;		/* START_*, a futex word */
	uint32_t refs;		/* the creator's and the thread's */
	int pooled;
	struct start *next;	/* on to_free */
};

#define START_SLOTS	128
static struct start start_pool[START_SLOTS];
static uint64_t start_busy[START_SLOTS / 64];
static struct start *to_free;	/* calloc'd records their threads let go last */

static struct start *
start_claim(void)
{
	struct start *st =
		__atomic_exchange_n(&to_free, NULL, __ATOMIC_ACQUIRE);

	/* a creator allocates anyway: the threads' leftovers are freed here */
	while (st) {
		struct start *next = st->next;

		free(st);
		st = next;
	}
	for (unsigned i = 0; i < START_SLOTS; i++) {
		uint64_t bit = 1ull << (i % 64), old;

		old = __atomic_fetch_or(&start_busy[i / 64], bit,
					__ATOMIC_ACQUIRE);
		if (!(old & bit)) {
			start_pool[i].pooled = 1;
			return &start_pool[i];
		}
	}
	st = calloc(1, sizeof(*st));
	return st;
}

/* One of the two holders is done with st; the last gives it back (the
 * new thread never frees: it hands a calloc'd one to the next creator). */
static void
start_put(struct start *st, int creator)
{
	size_t i;

	if (__atomic_sub_fetch(&st->refs, 1, __ATOMIC_ACQ_REL))
		return;
	if (!st->pooled && creator) {
		free(st);
	} else if (!st->pooled) {
		st->next = __atomic_load_n(&to_free, __ATOMIC_RELAXED);
		while (!__atomic_compare_exchange_n(&to_free, &st->next, st, 1,
						    __ATOMIC_RELEASE,
						    __ATOMIC_RELAXED))
			;
	} else {
		i = (size_t)(st - start_pool);
		__atomic_fetch_and(&start_busy[i / 64], ~(1ull << (i % 64)),
				   __ATOMIC_RELEASE);
	}
}

/* The new thread's wait for its creator; START_READY or START_GAVE_UP. */
static uint32_t
await_creator(struct start *sp)
{
	struct timespec end, now, left;
	uint32_t s;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 1;
	for (;;) {
		s = __atomic_load_n(&sp->state, __ATOMIC_ACQUIRE);
		if (s == START_READY)
			return s;
		if (s == START_ASKING) {
			/* it is at it: as long as it takes */
			syscall(SYS_futex, &sp->state, FUTEX_WAIT_PRIVATE, s,
				NULL, NULL, 0);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		left.tv_sec = end.tv_sec - now.tv_sec;
		left.tv_nsec = end.tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0) {
			left.tv_nsec += 1000000000L;
			left.tv_sec--;
		}
		if (left.tv_sec < 0) {
			s = START_WAITING;
			if (__atomic_compare_exchange_n(
				    &sp->state, &s, START_GAVE_UP, 0,
				    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				return START_GAVE_UP;
			continue;	/* the creator came meanwhile */
		}
		/* a signal cuts a wait short: the loop goes on to the end */
		syscall(SYS_futex, &sp->state, FUTEX_WAIT_PRIVATE, s, &left,
			NULL, 0);
	}
}

static void *
thread_start(void *p)
{
	struct start *sp = p;
	uint32_t s = await_creator(sp);
	void *(*fn)(void *) = sp->fn;
	void *arg = sp->arg;
	unsigned prog_blocked = sp->prog_blocked;
	int moves = sp->moves, small = sp->small;

	/* known or not, the thread never asks itself (that allocates) */
	pc_unwind_thread_bounds(s == START_READY ? sp->lo : 0,
				s == START_READY ? sp->hi : 0);
	start_put(sp, 0);
	pc_signals_inherit_block(prog_blocked, moves);
	if (have_exit_key &&
	    !pthread_setspecific(exit_key, &exit_key)) /* any non-NULL */
		pc_own_prog_thread(1);
	/* a small stack gets an alternate one for samples, or no samples */
	if (!small || pc_signals_small_stack() == 0)
		pc_thread_arm();
	pc_wall_thread_event(0);
	return fn(arg);
}

/* A fork child has no thread of the parent's but the forking one, which
 * is in fork, not starting a thread: no record is in flight. */
void
pc_threads_forked(void)
{
	memset(start_busy, 0, sizeof(start_busy));
}

/* run after each pthread_create of the program's (livegrower.c) */
static void (*on_create)(void);

static create_fn
resolve_create(void)
{
	create_fn f = real_create;

	if (!f) {
		/* the default version: GLIBC_2.34 on glibc >= 2.34, the only
		 * one before; the older GLIBC_2.2.5 is the same function */
		f = (create_fn)pc_next("pthread_create");
		__atomic_store_n(&real_create, f, __ATOMIC_RELEASE);
	}
	return f;
}

/*
 * Exported without a symbol version, so it takes every versioned reference
 * programs make (pthread_create@GLIBC_2.2.5 from programs built before glibc
 * 2.34, @GLIBC_2.34 from newer ones): the dynamic linker accepts an
 * unversioned definition for a versioned reference.
 */
PC_EXPORT int
pthread_create(pthread_t *thread, const pthread_attr_t *attr,
	       void *(*fn)(void *), void *arg)
{
	create_fn create = resolve_create();
	struct start *st;
	void (*hook)(void);
	uint32_t w;
	int r;

	if (!create)
		return EAGAIN;
	if (!pc_on() || !(st = start_claim()))
		return create(thread, attr, fn, arg);
	st->fn = fn;
	st->arg = arg;
	pc_signals_sync();
	st->prog_blocked = pc_signals_prog_blocked();
	st->moves = pc_signals_moves();
	st->small = 0;
	if (attr) {
		size_t size = 0;

		st->small = pthread_attr_getstacksize(attr, &size) == 0 &&
			    size && size < PC_SMALL_STACK;
	}
	st->lo = st->hi = 0;
	st->state = START_WAITING;
	st->refs = 2;
	pc_objects_scan(); /* PC_SCOPE=all: a cheap moment for an inventory */
	r = create(thread, attr, thread_start, st);
	if (r) {
		st->refs = 1;
		start_put(st, 1);
		return r;
	}
	/* the program's first thread: the process is no longer one thread
	 * (__libc_single_threaded), and the live file's grower runs */
	if ((hook = __atomic_load_n(&on_create, __ATOMIC_ACQUIRE)))
		hook();
	/* while ASKING the thread waits, so it has not ended and *thread
	 * is as create left it; one that gave up is left alone */
	w = START_WAITING;
	if (__atomic_compare_exchange_n(&st->state, &w, START_ASKING, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (pc_unwind_stack_of(*thread, &st->lo, &st->hi))
			st->lo = st->hi = 0;
		__atomic_store_n(&st->state, START_READY, __ATOMIC_RELEASE);
		syscall(SYS_futex, &st->state, FUTEX_WAKE_PRIVATE, 1, NULL,
			NULL, 0);
	}
	start_put(st, 1);
	return r;
}

void
pc_threads_on_create(void (*fn)(void))
{
	__atomic_store_n(&on_create, fn, __ATOMIC_RELEASE);
}

/* A thread of libpc's, as pc_own_thread starts it: it says it is libpc's
 * (own.c) before anything else, and its starter waits for that. */
struct own_start {
	void *(*fn)(void *);
	uint32_t said;
};

static void *
own_start(void *arg)
{
	struct own_start *o = arg;
	void *(*fn)(void *) = o->fn;

	pc_own_enter();
	__atomic_store_n(&o->said, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &o->said, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	return fn(NULL);
}

int
pc_own_thread(pthread_t *t, int joinable, void *(*fn)(void *))
{
	create_fn create = resolve_create();
	struct own_start o = { fn, 0 };
	struct timespec step = { 0, 10 * 1000 * 1000 };
	pthread_attr_t attr;
	sigset_t all, prev;
	int r;

	if (!create)
		return EAGAIN;
	/* the wall sampler lists no new thread until this one has said it
	 * is libpc's (a round that saw it first counted it the program's) */
	pc_own_start_count(1);
	/* the thread starts with every signal blocked: no signal of the
	 * program's is ever delivered to it */
	sigfillset(&all);
	pc_real_sigmask(SIG_SETMASK, &all, &prev);
	pthread_attr_init(&attr);
	if (!joinable)
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	r = create(t, &attr, own_start, &o);
	pthread_attr_destroy(&attr);
	pc_real_sigmask(SIG_SETMASK, &prev, NULL);
	/* until it has (o is on this stack): it runs with every signal
	 * blocked, and says so first */
	while (!r && !__atomic_load_n(&o.said, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &o.said, FUTEX_WAIT_PRIVATE, 0, &step, NULL,
			0);
	pc_own_start_count(-1);
	return r;
}

int
pc_threads_init(void)
{
	resolve_create();
	if (pthread_key_create(&exit_key, thread_exit))
		return -EAGAIN;
	have_exit_key = 1;
	return 0;
}
