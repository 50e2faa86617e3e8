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

struct start {
	void *(*fn)(void *);
	void *arg;
	unsigned prog_blocked;	/* the creator's view of libpc's signals */
};

static void *
thread_start(void *p)
{
	struct start st = *(struct start *)p;

	free(p);
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
	if (!pc_on() || !(st = malloc(sizeof(*st))))
		return create(thread, attr, fn, arg);
	st->fn = fn;
	st->arg = arg;
	st->prog_blocked = pc_signals_prog_blocked();
	pc_objects_scan();	/* PC_SCOPE=all: a cheap moment for an inventory */
	r = create(thread, attr, thread_start, st);
	if (r)
		free(st);
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
