/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The wall sampler's list of the process's threads, each round (wall.c):
 * /proc/self/task, kept open from round to round and read again from its
 * start (an open and a close of it cost 25 us a round here, more than a
 * look at a sleeping thread); and read only where threads may have come:
 * a thread that libpc starts tells its start (wall_events.c), so a round
 * with no start or end told since the last one, and none at that one,
 * follows the threads it followed (read every LIST_EVERY rounds still,
 * for threads started some other way: a raw clone).
 *
 * Runs in the wall sampler's thread only, in its own descriptor table.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "pc.h"
#include "wall.h"

#define LIST_EVERY	8	/* rounds between listings, at most */
#define ENDED_EVERY	16	/* rounds between looks for a main thread gone unsaid */

static int dir = -1;
static unsigned unlisted;	/* rounds since the last listing */
static int events_before;	/* the last round had starts or ends told */

void
pc_wall_task_dir_new(void)
{
	dir = -1;
	unlisted = 0;
	events_before = 1;
}

int
pc_wall_task_dir(void)
{
	if (dir >= 0 && lseek(dir, 0, SEEK_SET) == 0)
		return dir;
	if (dir >= 0)
		close(dir);
	return dir = open("/proc/self/task",
			  O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static int
cmp_tid(const void *key, const void *e)
{
	uint32_t x = *(const uint32_t *)key,
		 y = ((const struct pc_wthread *)e)->tid;

	return x < y ? -1 : x > y;
}

/* Thread tid one of libpc's own: one followed at the last round, not
 * ended, is not (pc_own_is reads the pid, a system call: 10,000 of them
 * a listing at 10,000 threads). */
static int
own(uint32_t tid, int32_t pid, const struct pc_wthread *cur, size_t ncur)
{
	const struct pc_wthread *x =
		bsearch(&tid, cur, ncur, sizeof(*cur), cmp_tid);

	return (!x || x->state == PC_W_ENDED) && pc_own_is_of(tid, pid);
}

/* The threads of cur[0..ncur) not ended, into *t: no thread can have
 * come unsaid since the last listing but by a raw clone. */
static size_t
list_known(struct pc_wthread **t, const struct pc_wthread *cur, size_t ncur)
{
	size_t n = 0;
	struct pc_wthread *x;

	for (size_t i = 0; i < ncur; i++)
		if (cur[i].state != PC_W_ENDED && (x = pc_wall_room(*t, n)))
			((uint32_t *)(*t = x))[n++] = cur[i].tid;
	pc_wall_spread(*t, n);
	return n;
}

size_t
pc_wall_list(struct pc_wthread **t, const struct pc_wthread *cur, size_t ncur,
	     uint32_t mine, int all)
{
	static char buf[32768];
	size_t n = 0, more = 0;
	struct pc_wthread *x;
	long got;
	int events = pc_wall_events_waiting() != 0;
	int32_t pid = (int32_t)getpid();

	if (!all && !events && !events_before && ++unlisted < LIST_EVERY) {
		events_before = 0;
		return list_known(t, cur, ncur);
	}
	events_before = events;
	unlisted = 0;
	while ((got = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < got;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			uint32_t tid = (uint32_t)strtoul(d->d_name, NULL, 10);

			off += d->d_reclen;
			/* while libpc starts a thread of its own, a new one may
			 * be it before it says so: it waits for a later round
			 * (not the main thread: left out of the first round, as
			 * libpc's start-up went on to start its next thread, it
			 * was not looked at for 0.6 s, its first waits lost) */
			if (!tid || tid == mine || tid == pc_snapshot_tid() ||
			    own(tid, pid, cur, ncur) ||
			    (pc_own_starting() && tid != (uint32_t)pid &&
			     !bsearch(&tid, cur, ncur, sizeof(*cur), cmp_tid)))
				continue;
			/* ids first, spread into entries once sorted */
			if (more || !(x = pc_wall_room(*t, n)))
				more++;
			else
				((uint32_t *)(*t = x))[n++] = tid;
		}
	}
	pc_wall_not_followed(more);
	/* sorted: the next round finds each thread's last look by bsearch */
	pc_wall_spread(*t, n);
	return n;
}

int
pc_wall_program_ended(const struct pc_wthread *t, size_t n)
{
	static unsigned skipped;

	if (n != 1 || t[0].tid != (uint32_t)getpid())
		return 0;
	/* a main thread's pthread_exit is told (own.c); one that ended some
	 * other way (a raw exit) is looked for now and then */
	if (!pc_own_main_gone() && ++skipped % ENDED_EVERY)
		return 0;
	/* from /proc/self/task read afresh: a round that did not list
	 * (list_known) knows only the threads told to it, and a thread the
	 * main one started just before its pthread_exit tells its start
	 * when it first runs, beside a CPU hog milliseconds later: the
	 * process was ended with it alive, its output lost */
	return pc_own_program_ended();
}
