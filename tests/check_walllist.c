/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/wall_list.c, the wall sampler's list of the
 * process's threads, over this process's own /proc/self/task, with
 * wall_mem.c's tables. This file stands in for what the list asks of
 * libpc's other parts: the starts and ends told (wall_events.c), libpc's
 * own threads (own.c, snapshot.c). Edge cases:
 *  - a listing: every thread of the process, sorted, each a new entry;
 *    the caller's (mine), the snapshot thread and libpc's own left out;
 *  - the task directory kept open and rewound from round to round;
 *  - rounds with nothing told follow the last round's threads not ended
 *    (one that is no thread now stays), and list afresh every 8th round;
 *    a start told lists at once and at the next round too; all lists;
 *  - while libpc starts a thread, a thread the last round did not follow
 *    waits for a later round, but the main thread is listed;
 *  - the program ended: only with the main thread alone listed, told
 *    (pthread_exit) at once, else looked for every 16 rounds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "../preload/pc.h"
#include "../preload/wall.h"
#include "unit.h"

/* ------------------------------------------------------- the stand-ins */

static uint32_t events, snapshot, own_tid, main_gone, ended_asked;
static int starting;

uint32_t
pc_wall_events_waiting(void)
{
	return events;
}

uint32_t
pc_snapshot_tid(void)
{
	return snapshot;
}

int
pc_own_is_of(uint32_t tid, int32_t pid)
{
	return tid == own_tid && pid == (int32_t)getpid();
}

int
pc_own_starting(void)
{
	return starting;
}

int
pc_own_main_gone(void)
{
	return (int)main_gone;
}

int
pc_own_program_ended(void)
{
	ended_asked++;
	return 1;
}

/* ------------------------------------------------------------ threads */

#define NKIDS	3

static int hold[2];
static uint32_t kid_tid[NKIDS];

static void *
kid(void *arg)
{
	char c;

	__atomic_store_n((uint32_t *)arg, (uint32_t)syscall(SYS_gettid),
			 __ATOMIC_RELEASE);
	/* blocked until the test ends */
	while (read(hold[0], &c, 1) < 0)
		;
	return NULL;
}

/* NKIDS threads of this process, blocked; their ids in kid_tid. */
static void
kids_start(pthread_t *t)
{
	ck_assert_int_eq(pipe(hold), 0);
	for (int i = 0; i < NKIDS; i++) {
		kid_tid[i] = 0;
		ck_assert_int_eq(pthread_create(&t[i], NULL, kid, &kid_tid[i]),
				 0);
	}
	for (int i = 0; i < NKIDS; i++)
		while (!__atomic_load_n(&kid_tid[i], __ATOMIC_ACQUIRE))
			usleep(1000);
}

static void
kids_end(pthread_t *t)
{
	close(hold[1]);
	for (int i = 0; i < NKIDS; i++)
		pthread_join(t[i], NULL);
	close(hold[0]);
}

static int
has(const struct pc_wthread *t, size_t n, uint32_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].tid == tid)
			return 1;
	return 0;
}

static struct pc_wthread *
list_start(void)
{
	struct pc_wthread *a, *b;

	unit_preload_reset();
	events = snapshot = own_tid = main_gone = ended_asked = 0;
	starting = 0;
	ck_assert_int_eq(pc_wall_mem_start(&a, &b), 0);
	pc_wall_task_dir_new();
	ck_assert_int_ge(pc_wall_task_dir(), 0);
	return a;
}

/* ------------------------------------------------------------- tests */

START_TEST(test_walllist_lists_the_threads_sorted_but_libpcs)
{
	pthread_t t[NKIDS];
	struct pc_wthread *a = list_start();
	uint32_t pid = (uint32_t)getpid();
	size_t n;

	kids_start(t);
	n = pc_wall_list(&a, NULL, 0, 0, 1);
	ck_assert_uint_eq(n, NKIDS + 1);
	ck_assert(has(a, n, pid));
	for (int i = 0; i < NKIDS; i++)
		ck_assert(has(a, n, kid_tid[i]));
	for (size_t i = 0; i < n; i++) {
		ck_assert(i == 0 || a[i - 1].tid < a[i].tid);
		ck_assert_int_eq(a[i].state, PC_W_NEW);
		ck_assert_int_eq(a[i].fd, -1);
	}
	/* the caller's, the snapshot's and one of libpc's own left out */
	snapshot = kid_tid[1];
	own_tid = kid_tid[2];
	ck_assert_int_ge(pc_wall_task_dir(), 0);
	n = pc_wall_list(&a, NULL, 0, kid_tid[0], 1);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(a[0].tid, pid);
	/* one of libpc's own that the last round followed (it was the
	 * program's then) stays */
	{
		struct pc_wthread cur[1] = { { .tid = own_tid } };

		ck_assert_int_ge(pc_wall_task_dir(), 0);
		n = pc_wall_list(&a, cur, 1, 0, 1);
		ck_assert(has(a, n, own_tid));
	}
	kids_end(t);
}
END_TEST

START_TEST(test_walllist_keeps_its_directory_open)
{
	int fd;

	list_start();
	fd = pc_wall_task_dir();
	ck_assert_int_eq(fcntl(fd, F_GETFD), FD_CLOEXEC);
	/* a mark on the open descriptor: one opened again has no mark
	 * (and the same number, the lowest free) */
	ck_assert_int_eq(fcntl(fd, F_SETFD, 0), 0);
	ck_assert_int_eq(pc_wall_task_dir(), fd);
	ck_assert_int_eq(pc_wall_task_dir(), fd);
	ck_assert_int_eq(fcntl(fd, F_GETFD), 0);
	close(fd);
	/* closed behind its back: opened again */
	ck_assert_int_ge(pc_wall_task_dir(), 0);
}
END_TEST

/* A round of the list with nothing told: 1 where it read the directory
 * (the fake thread of cur is gone), 0 where it followed cur. */
static int
listed(struct pc_wthread **a, const struct pc_wthread *cur, size_t ncur)
{
	size_t n;

	ck_assert_int_ge(pc_wall_task_dir(), 0);
	n = pc_wall_list(a, cur, ncur, 0, 0);
	if (!has(*a, n, 999999)) {
		ck_assert(has(*a, n, (uint32_t)getpid()));
		return 1;
	}
	/* followed: cur's threads not ended, the ended one left out */
	ck_assert_uint_eq(n, 2);
	ck_assert(!has(*a, n, 999998));
	return 0;
}

START_TEST(test_walllist_lists_every_8_rounds_or_when_told)
{
	/* a thread of the last round that is none now (999999: a listing
	 * drops it), and one that ended */
	struct pc_wthread cur[3] = {
		{ .tid = (uint32_t)getpid(), .state = PC_W_RUNNING },
		{ .tid = 999998, .state = PC_W_ENDED },
		{ .tid = 999999, .state = PC_W_BLOCKED },
	};
	struct pc_wthread *a = list_start();
	int reads = 0;

	/* the first round lists (a new thread lists at once) */
	ck_assert_int_eq(listed(&a, cur, 3), 1);
	for (int round = 1; round <= 24; round++)
		reads += listed(&a, cur, 3) * round;
	/* rounds 8, 16 and 24 */
	ck_assert_int_eq(reads, 8 + 16 + 24);
	/* a start told: this round and the next list */
	events = 1;
	ck_assert_int_eq(listed(&a, cur, 3), 1);
	events = 0;
	ck_assert_int_eq(listed(&a, cur, 3), 1);
	ck_assert_int_eq(listed(&a, cur, 3), 0);
	/* all: a listing whatever was told */
	ck_assert_int_ge(pc_wall_task_dir(), 0);
	ck_assert(!has(a, pc_wall_list(&a, cur, 3, 0, 1), 999999));
}
END_TEST

START_TEST(test_walllist_leaves_a_thread_starting_to_a_later_round)
{
	pthread_t t[NKIDS];
	struct pc_wthread *a = list_start();
	struct pc_wthread cur[1];
	size_t n;

	kids_start(t);
	cur[0] = (struct pc_wthread){ .tid = kid_tid[1] };
	starting = 1;
	n = pc_wall_list(&a, cur, 1, 0, 1);
	/* the main thread and the one followed before; the others wait */
	ck_assert_uint_eq(n, 2);
	ck_assert(has(a, n, (uint32_t)getpid()));
	ck_assert(has(a, n, kid_tid[1]));
	starting = 0;
	ck_assert_int_ge(pc_wall_task_dir(), 0);
	ck_assert_uint_eq(pc_wall_list(&a, cur, 1, 0, 1), NKIDS + 1);
	kids_end(t);
}
END_TEST

START_TEST(test_walllist_program_ends_with_its_main_thread)
{
	struct pc_wthread main_only[1] = { { .tid = (uint32_t)getpid() } };
	struct pc_wthread two[2] = { { .tid = (uint32_t)getpid() },
				     { .tid = 999999 } };
	struct pc_wthread other[1] = { { .tid = 999999 } };
	int said = 0;

	list_start();
	main_gone = 1;
	ck_assert_int_eq(pc_wall_program_ended(two, 2), 0);
	ck_assert_int_eq(pc_wall_program_ended(other, 1), 0);
	ck_assert_uint_eq(ended_asked, 0);
	/* told: asked at once */
	ck_assert_int_eq(pc_wall_program_ended(main_only, 1), 1);
	ck_assert_uint_eq(ended_asked, 1);
	/* untold: asked once in 16 rounds */
	main_gone = 0;
	for (int i = 0; i < 32; i++)
		said += pc_wall_program_ended(main_only, 1);
	ck_assert_int_eq(said, 2);
	ck_assert_uint_eq(ended_asked, 3);
}
END_TEST

Suite *
walllist_suite(void)
{
	Suite *s = suite_create("walllist");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_walllist_lists_the_threads_sorted_but_libpcs);
	tcase_add_test(t, test_walllist_keeps_its_directory_open);
	tcase_add_test(t, test_walllist_lists_every_8_rounds_or_when_told);
	tcase_add_test(t,
		       test_walllist_leaves_a_thread_starting_to_a_later_round);
	tcase_add_test(t, test_walllist_program_ends_with_its_main_thread);
	suite_add_tcase(s, t);
	return s;
}
