/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The live file's grower: a thread of libpc's, started with every signal
 * blocked and no timer, that does what handlers ask of livegrow.c (back
 * the pages samples wait for, double the tables half taken). It sleeps on
 * a futex that handlers wake. A call that needs a process of one thread
 * (namespaces.c) stops it and starts it again; a fork child starts its
 * own. Not AS-safe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <linux/futex.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pc.h"
#include "live.h"

static uint32_t stop_word;		/* 1: the grower is to end */
static pthread_t grower;
static int grower_on;
static pid_t grower_pid;		/* whose thread it is: not a fork child's */
static uint32_t grower_tid;

static void *
grower_main(void *arg)
{
	uint32_t *word = pc_live_grow_word();

	(void)arg;
	__atomic_store_n(&grower_tid, (uint32_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&stop_word, __ATOMIC_ACQUIRE)) {
		/* woken by a handler; once a second anyway, for a wake
		 * that came while this thread was busy */
		struct timespec t = { 1, 0 };

		if (!__atomic_load_n(word, __ATOMIC_ACQUIRE))
			syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 0, &t, NULL, 0);
		if (__atomic_load_n(&stop_word, __ATOMIC_ACQUIRE))
			break;
		__atomic_store_n(word, 0, __ATOMIC_RELEASE);
		pc_live_grow_round();
	}
	return NULL;
}

void
pc_live_grower_start(void)
{
	if (!pc_live_active() || (grower_on && grower_pid == getpid()))
		return;
	grower_pid = getpid();
	__atomic_store_n(&stop_word, 0, __ATOMIC_RELEASE);
	grower_on = pc_own_thread(&grower, 1, grower_main) == 0;
	if (grower_on) {
		/* whatever handlers asked before it ran */
		__atomic_store_n(pc_live_grow_word(), 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, pc_live_grow_word(), FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

uint32_t
pc_live_grower_tid(void)
{
	return __atomic_load_n(&grower_tid, __ATOMIC_RELAXED);
}

/* The kernel takes an ended thread out of its group a moment after
 * pthread_join returns: wait for that, 100 ms at most (as wall.c). */
static void
gone(uint32_t tid)
{
	char name[48] = "/proc/self/task/", num[12];
	size_t n = 0, k = strlen(name);

	do
		num[n++] = (char)('0' + tid % 10);
	while ((tid /= 10) && n < sizeof(num));
	while (n)
		name[k++] = num[--n];
	name[k] = 0;
	for (int i = 0; k > 16 && i < 1000 && access(name, F_OK) == 0; i++) {
		struct timespec t = { 0, 100000 };

		nanosleep(&t, NULL);
	}
}

int
pc_live_grower_pause(void)
{
	/* a vfork child shares this memory but not the thread: leave it */
	if (!grower_on || grower_pid != getpid() || getpid() != pc->pid)
		return 0;
	__atomic_store_n(&stop_word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, pc_live_grow_word(), FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	pthread_join(grower, NULL);
	grower_on = 0;
	gone(__atomic_exchange_n(&grower_tid, 0, __ATOMIC_ACQ_REL));
	return 1;
}
