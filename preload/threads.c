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
	pc_thread_disarm();
}

/*
 * What a new thread gets from its creator. Nothing of libpc's allocates in
 * the new thread before the program's own function runs: a thread's first
 * malloc or free makes glibc give it an arena, and once arenas outnumber
 * eight, glibc reads /sys/devices/system/cpu/online to learn how many it
 * may make (in each thread that gets there before the answer is kept),
 * taking the lowest free descriptor while another thread may have just
 * closed 0 to open it again (seen: 7 opens of /dev/null in 700,000 got
 * another number, beside a CPU hog). So the
 * record comes from a fixed pool, and the creator, which has allocated
 * already (pthread_create's own TLS), asks for the thread's stack bounds
 * (pthread_getattr_np allocates) while the new thread waits at its start
 * for them. A pool used up falls back to malloc, as does a creator that
 * never says (the thread asks itself, after a second).
 */
struct start {
	void *(*fn)(void *);
	void *arg;
	unsigned prog_blocked;	/* the creator's view of libpc's signals */
	uintptr_t lo, hi;	/* the new thread's stack, 0 where not known */
	uint32_t ready;		/* lo and hi are written (a futex word) */
	uint32_t refs;		/* the creator's and the thread's */
	int pooled;
};

#define START_SLOTS	128
static struct start start_pool[START_SLOTS];
static uint64_t start_busy[START_SLOTS / 64];

static struct start *
start_claim(void)
{
	for (unsigned i = 0; i < START_SLOTS; i++) {
		uint64_t bit = 1ull << (i % 64), old;

		old = __atomic_fetch_or(&start_busy[i / 64], bit, __ATOMIC_ACQUIRE);
		if (!(old & bit)) {
			start_pool[i].pooled = 1;
			return &start_pool[i];
		}
	}
	return NULL;
}

/* One of the two holders is done with st; the last gives it back. */
static void
start_put(struct start *st)
{
	size_t i;

	if (__atomic_sub_fetch(&st->refs, 1, __ATOMIC_ACQ_REL))
		return;
	if (!st->pooled) {
		free(st);
		return;
	}
	i = (size_t)(st - start_pool);
	__atomic_fetch_and(&start_busy[i / 64], ~(1ull << (i % 64)), __ATOMIC_RELEASE);
}

static void *
thread_start(void *p)
{
	struct start *sp = p, st;
	struct timespec ms = { 0, 1000000 };
	uint32_t ready = 0;

	/* the creator's bounds: it is running, so they come at once, but a
	 * creator cancelled or stopped in between must not hold us for
	 * more than a second (a signal cuts a wait short: 1 ms at a time) */
	for (int i = 0; i < 1000 && !(ready = __atomic_load_n(&sp->ready, __ATOMIC_ACQUIRE));
	     i++)
		syscall(SYS_futex, &sp->ready, FUTEX_WAIT_PRIVATE, 0, &ms, NULL, 0);
	st = *sp;
	if (ready && st.hi)
		pc_unwind_thread_bounds(st.lo, st.hi);
	start_put(sp);
	pc_signals_inherit_block(st.prog_blocked);
	if (have_exit_key)
		pthread_setspecific(exit_key, &exit_key);	/* any non-NULL */
	pc_thread_arm();
	return st.fn(st.arg);
}

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
	int r;

	if (!create)
		return EAGAIN;
	if (!pc_on())
		return create(thread, attr, fn, arg);
	st = start_claim();
	if (!st)
		st = calloc(1, sizeof(*st));
	if (!st)
		return create(thread, attr, fn, arg);
	st->fn = fn;
	st->arg = arg;
	st->prog_blocked = pc_signals_prog_blocked();
	st->lo = st->hi = 0;
	st->ready = 0;
	st->refs = 2;
	pc_objects_scan();	/* PC_SCOPE=all: a cheap moment for an inventory */
	r = create(thread, attr, thread_start, st);
	if (r) {
		st->refs = 1;
		start_put(st);
		return r;
	}
	/* the thread waits for this; it cannot have ended */
	if (pc_unwind_stack_of(*thread, &st->lo, &st->hi))
		st->lo = st->hi = 0;
	__atomic_store_n(&st->ready, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &st->ready, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	start_put(st);
	return r;
}

int
pc_own_thread(pthread_t *t, int joinable, void *(*fn)(void *))
{
	create_fn create = resolve_create();
	pthread_attr_t attr;
	sigset_t all, prev;
	int r;

	if (!create)
		return EAGAIN;
	/* the thread starts with every signal blocked: no signal of the
	 * program's is ever delivered to it */
	sigfillset(&all);
	pc_real_sigmask(SIG_SETMASK, &all, &prev);
	pthread_attr_init(&attr);
	if (!joinable)
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	r = create(t, &attr, fn, NULL);
	pthread_attr_destroy(&attr);
	pc_real_sigmask(SIG_SETMASK, &prev, NULL);
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
