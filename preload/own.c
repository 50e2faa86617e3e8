/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpc's own threads (the wall sampler, the snapshot writer), as one: a
 * registry of their ids, so that anything that must tell them from the
 * program's threads can (namespaces.c pauses them all), and the end of a
 * process whose program has no thread left. glibc's last thread calls
 * exit(0) when it ends, but libpc's threads count as threads: when the
 * main thread has called pthread_exit (interposed here) and the program's
 * last thread ends, one of libpc's threads ends the process as that thread
 * would have (pc_own_watch). Nothing here runs in a signal handler.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pc.h"
#include "../gmon/live.h"
#include "banned.h"

/* A thread of libpc's: its process and id (a fork child's copy of a
 * parent's slot names another process, and is free). */
struct own {
	int32_t pid;
	uint32_t tid;
};

#define OWN_SLOTS 8
static struct own owns[OWN_SLOTS];

/* What follows is this process's: a fork child starts afresh (its
 * forking thread is its main thread, and its only one). */
static pid_t counts_pid;
static int prog_threads;	/* the program's threads that libpc saw start */
static int main_gone;		/* the main thread called pthread_exit */
static int ended_asked;		/* the program's last thread asked for a look */
static int ending;		/* a thread of libpc's is ending the process */

/* Threads of libpc's that look (pc_own_watch) when woken. */
#define WAKERS 4
static void (*wakers[WAKERS])(void);

/* The counts, for this process; 0 in a vfork child, which owns none. */
static int
counts_here(void)
{
	pid_t pid = pc->pid;

	if (!pid || getpid() != pid)
		return 0;
	if (__atomic_load_n(&counts_pid, __ATOMIC_ACQUIRE) != pid) {
		prog_threads = 1;
		main_gone = ended_asked = ending = 0;
		__atomic_store_n(&counts_pid, pid, __ATOMIC_RELEASE);
	}
	return 1;
}

/* How many of libpc's threads are being started (pc_own_thread). */
static int starting;

void
pc_own_start_count(int delta)
{
	__atomic_add_fetch(&starting, delta, __ATOMIC_SEQ_CST);
}

int
pc_own_starting(void)
{
	return __atomic_load_n(&starting, __ATOMIC_SEQ_CST) > 0;
}

void
pc_own_enter(void)
{
	int32_t pid = (int32_t)getpid();
	uint32_t self = (uint32_t)syscall(SYS_gettid);

	for (int i = 0; i < OWN_SLOTS; i++) {
		int32_t was = __atomic_load_n(&owns[i].pid, __ATOMIC_ACQUIRE);

		if (was != pid && __atomic_compare_exchange_n(
					  &owns[i].pid, &was, pid, 0,
					  __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			__atomic_store_n(&owns[i].tid, self, __ATOMIC_RELEASE);
			return;
		}
	}
}

void
pc_own_leave(void)
{
	uint32_t self = (uint32_t)syscall(SYS_gettid);
	int32_t pid = (int32_t)getpid();

	for (int i = 0; i < OWN_SLOTS; i++)
		if (__atomic_load_n(&owns[i].pid, __ATOMIC_ACQUIRE) == pid &&
		    __atomic_load_n(&owns[i].tid, __ATOMIC_ACQUIRE) == self) {
			__atomic_store_n(&owns[i].tid, 0, __ATOMIC_RELEASE);
			__atomic_store_n(&owns[i].pid, 0, __ATOMIC_RELEASE);
		}
}

int
pc_own_is(uint32_t tid)
{
	return pc_own_is_of(tid, (int32_t)getpid());
}

int
pc_own_is_of(uint32_t tid, int32_t pid)
{
	for (int i = 0; i < OWN_SLOTS; i++)
		if (__atomic_load_n(&owns[i].pid, __ATOMIC_ACQUIRE) == pid &&
		    __atomic_load_n(&owns[i].tid, __ATOMIC_ACQUIRE) == tid)
			return 1;
	return 0;
}

void
pc_own_waker(void (*wake)(void))
{
	for (int i = 0; i < WAKERS; i++) {
		void (*was)(void) = NULL;

		if (__atomic_load_n(&wakers[i], __ATOMIC_ACQUIRE) == wake ||
		    __atomic_compare_exchange_n(&wakers[i], &was, wake, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return;
	}
}

void
pc_own_gone(uint32_t tid)
{
	char path[48], num[24];
	struct pc_line l = { path, sizeof(path), 0 };

	/* the kernel takes an ended thread out of its group a moment after
	 * pthread_join returns: wait for that, 100 ms at most */
	if (!tid)
		return;
	pc_decimal(num, tid);
	pc_line_str(&l, "/proc/self/task/");
	pc_line_str(&l, num);
	path[l.len] = 0;
	for (int i = 0; i < 1000 && access(path, F_OK) == 0; i++) {
		struct timespec t = { 0, 100000 };

		nanosleep(&t, NULL);
	}
}

/* ------------------------------------------------ the program's end */

void
pc_own_prog_thread(int delta)
{
	if (!counts_here())
		return;		/* a vfork child's */
	if (delta > 0) {
		__atomic_add_fetch(&prog_threads, 1, __ATOMIC_ACQ_REL);
		return;
	}
	if (delta == -2)
		__atomic_store_n(&main_gone, 1, __ATOMIC_RELEASE);
	/* the last one that libpc knows of: have a look at once (the
	 * look itself tells, whatever this count says) */
	if (__atomic_sub_fetch(&prog_threads, 1, __ATOMIC_ACQ_REL) <= 0 &&
	    __atomic_load_n(&main_gone, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&ended_asked, 1, __ATOMIC_RELEASE);
		for (int i = 0; i < WAKERS; i++) {
			void (*wake)(void) =
				__atomic_load_n(&wakers[i], __ATOMIC_ACQUIRE);

			if (wake)
				wake();
		}
	}
}

int
pc_own_main_gone(void)
{
	return __atomic_load_n(&counts_pid, __ATOMIC_ACQUIRE) == pc->pid &&
	       __atomic_load_n(&main_gone, __ATOMIC_ACQUIRE);
}

typedef void (*exit_fn)(int);
typedef void (*pthread_exit_fn)(void *);

/*
 * pthread_exit of the main thread: the process ends when the program's
 * last thread does. Other threads are counted out by threads.c's key
 * destructor, which runs in pthread_exit too.
 */
PC_EXPORT void
pthread_exit(void *value)
{
	static pthread_exit_fn real;

	if (!real)
		real = (pthread_exit_fn)pc_next("pthread_exit");
	if (syscall(SYS_gettid) == getpid())
		pc_own_prog_thread(-2);
	if (real)
		real(value);
	syscall(SYS_exit, 0);
	__builtin_unreachable();
}

/* The state letter of this process's thread tid, or 0. */
static char
task_state(unsigned long tid)
{
	char path[64], buf[256], num[24];
	struct pc_line l = { path, sizeof(path), 0 };
	const char *p;

	pc_decimal(num, tid);
	pc_line_str(&l, "/proc/self/task/");
	pc_line_str(&l, num);
	pc_line_str(&l, "/stat");
	path[l.len] = 0;
	p = gmon_proc_stat_fields(path, buf, sizeof(buf));
	return p ? *p : 0;
}

/* Every thread of the process is libpc's but a main thread that called
 * pthread_exit, which stays listed as a zombie. */
int
pc_own_program_ended(void)
{
	static char buf[4096];
	unsigned long self = (unsigned long)getpid();
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC),
	    ended = 1;
	long got;

	if (fd < 0)
		return 0;
	while (ended &&
	       (got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; ended && off < got;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			unsigned long tid = strtoul(d->d_name, NULL, 10);
			char s;

			off += d->d_reclen;
			if (!tid || pc_own_is((uint32_t)tid))
				continue;
			s = tid == self ? task_state(tid) : 0;
			if (s != 'Z' && s != 'X')
				ended = 0;
		}
	close(fd);
	return ended && got == 0;
}

void
pc_own_end_process(void)
{
	exit_fn real = (exit_fn)pc_next("exit");

	/* one thread of libpc's ends it; another waits to be ended. glibc's
	 * exit, as its last thread would call it: the program's atexit
	 * handlers, then libpc's destructor, which writes the profile */
	if (!__atomic_exchange_n(&ending, 1, __ATOMIC_ACQ_REL) && real)
		real(0);
	for (;;)
		pause();
}

void
pc_own_watch(void)
{
	struct timespec ms = { 0, 1000000 };
	int tries;

	if (!pc_own_main_gone() || getpid() != pc->pid)
		return;
	/* asked: the last thread is on its way out; else a look now and
	 * then, for threads libpc did not see start */
	tries = __atomic_exchange_n(&ended_asked, 0, __ATOMIC_ACQ_REL) ? 200 :
									 1;
	for (int i = 0; i < tries; i++) {
		if (pc_own_program_ended())
			pc_own_end_process();
		if (i + 1 < tries)
			nanosleep(&ms, NULL);
	}
}
