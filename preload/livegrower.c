/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The live file's grower: a thread of libpc's, started with every signal
 * blocked and no timer, that does what handlers ask of livegrow.c (back
 * the pages samples wait for, double the tables half taken). It sleeps on
 * a futex that handlers wake. It is one of libpc's own threads (own.c):
 * a call that needs a process of one thread (namespaces.c) stops it and
 * starts it again, it ends the process when the program has no thread
 * left (pc_own_watch), and a fork child starts its own. Not AS-safe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/single_threaded.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pc.h"
#include "live.h"

static uint32_t stop_word;		/* 1: the grower is to end */
static pthread_t grower;
static int grower_on;
static pid_t grower_pid; /* whose thread it is: not a fork child's */
static uint32_t grower_tid;		/* its thread id, while it runs */

/* Wake the grower for a look (own.c: the program's last thread ended). */
static void
wake_grower(void)
{
	uint32_t *word = pc_live_grow_word();

	if (!grower_on || grower_pid != getpid())
		return;
	__atomic_store_n(word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *
grower_main(void *arg)
{
	uint32_t *word = pc_live_grow_word();

	(void)arg;
	prctl(PR_SET_NAME, "pc-grower", 0, 0, 0);
	/* a descriptor table of its own, empty: the live file it opens to
	 * map a block never takes a number a thread of the program's
	 * expects from its own open (livemap.c); the grower maps blocks
	 * even where the kernel refuses that */
	if (!syscall(SYS_unshare, CLONE_FILES))
		syscall(SYS_close_range, 0U, ~0U, 0U);
	pc_live_map_own_table();
	/* the id before the first look at the stop word (seq_cst): a pause
	 * that finds no id yet is seen by the loop's first look */
	__atomic_store_n(&grower_tid, (uint32_t)syscall(SYS_gettid),
			 __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&stop_word, __ATOMIC_SEQ_CST)) {
		/* woken by a handler; once a second anyway, for a wake
		 * that came while this thread was busy and for
		 * pc_own_watch's look after a pthread_exit of main */
		struct timespec t = { 1, 0 };

		pc_own_watch();
		if (!__atomic_load_n(word, __ATOMIC_ACQUIRE))
			syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 0, &t,
				NULL, 0);
		if (__atomic_load_n(&stop_word, __ATOMIC_SEQ_CST))
			break;
		__atomic_store_n(word, 0, __ATOMIC_RELEASE);
		if (pc_live_grow_round()) {
			/* a round of the main thread's (a handler's or a
			 * call's, begun before this thread ran): again soon */
			struct timespec ms = { 0, 1000000 };

			__atomic_store_n(word, 1, __ATOMIC_RELEASE);
			nanosleep(&ms, NULL);
		}
	}
	pc_own_leave();
	return NULL;
}

void
pc_live_grower_start(void)
{
	static uint32_t starting;	/* two pthread_creates at once */
	int saved = errno;

	if (__atomic_exchange_n(&starting, 1, __ATOMIC_ACQUIRE))
		return;
	if (grower_on && grower_pid != getpid())
		grower_on = 0;		/* the parent's, in a fork child */
	pc_live_grow_threaded(grower_on);
	/* the program's first pthread_create asks again (threads.c) */
	pc_threads_on_create(pc_live_grower_start);
	/* no thread in a process of one thread: glibc would take its stdio
	 * and malloc locks in every call from then on (a getc loop ran 6
	 * times as long); rounds run from calls and handlers there; none
	 * in a sandbox, which allows no new system call */
	if (!pc_live_active() || grower_on || __libc_single_threaded ||
	    pc_sandboxed()) {
		__atomic_store_n(&starting, 0, __ATOMIC_RELEASE);
		return;
	}
	grower_pid = getpid();
	grower_tid = 0;
	__atomic_store_n(&stop_word, 0, __ATOMIC_SEQ_CST);
	pc_own_waker(wake_grower);
	grower_on = pc_own_thread(&grower, 1, grower_main) == 0;
	pc_live_grow_threaded(grower_on);
	/* whatever handlers asked before it ran */
	wake_grower();
	__atomic_store_n(&starting, 0, __ATOMIC_RELEASE);
	errno = saved;
}

int
pc_live_grower_pause(void)
{
	/* a vfork child shares this memory but not the thread: leave it */
	if (!grower_on || grower_pid != getpid() || getpid() != pc->pid)
		return 0;
	__atomic_store_n(&stop_word, 1, __ATOMIC_SEQ_CST);
	wake_grower();
	pthread_join(grower, NULL);
	grower_on = 0;
	pc_live_grow_threaded(0);
	/* its id, which it wrote before it could stop, until it is gone */
	pc_own_gone(__atomic_exchange_n(&grower_tid, 0, __ATOMIC_SEQ_CST));
	return 1;
}

