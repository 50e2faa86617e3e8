/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/stacks.c, the flame graphs' lock-free table of
 * whole stacks: threads adding at once keep each thread's stacks apart
 * (the tid is part of the key), with exact counts and their names; frames
 * outside the program fold to one 0; a full arena keeps whole stacks and
 * counts what it drops. Read back through the stacks file's own writer
 * and parser (gmon/), as pcprof reads it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../preload/pc.h"
#include "unit.h"

#define MAX_DEPTH	200

/* Stack k of depth d: a leaf at 0x100 + 2k (so the leaf tells k), then
 * callers at 0x1000 + 16 i, each return address one byte past its call. */
static int
frames_of(struct pc_frame *f, int k, int depth)
{
	for (int i = 0; i < depth; i++)
		f[i] = (struct pc_frame){
			unit_text_at(i ? 0x1000 + 16 * (size_t)i + 1 :
					 0x100 + 2 * (size_t)k),
			0
		};
	return depth;
}

/* Its word i as stored: a link-time address, inside the call above 0. */
static uint64_t
word_of(int k, int i)
{
	return UNIT_TEXT_LINK +
	       (i ? 0x1000 + 16 * (uint64_t)i : 0x100 + 2 * (uint64_t)k);
}

static int
k_of(const struct gmon_stack *s)
{
	return (int)((s->pcs[0] - UNIT_TEXT_LINK - 0x100) / 2);
}

struct adder {
	int index;		/* the thread's, for its name */
	int nstacks, depth;	/* depth 0: k % 8 + 1 */
	int rounds;
	uint32_t tid;		/* set by the thread */
};

static void *
add_stacks(void *arg)
{
	struct adder *a = arg;
	struct pc_frame f[MAX_DEPTH];
	char name[16];

	snprintf(name, sizeof(name), "unit-%d", a->index);
	pthread_setname_np(pthread_self(), name);
	a->tid = (uint32_t)syscall(SYS_gettid);
	unit_threads_go();
	for (int r = 0; r < a->rounds; r++)
		for (int k = 0; k < a->nstacks; k++) {
			int d = a->depth ? a->depth : k % 8 + 1;

			pc_stacks_add_from_handler(f, frames_of(f, k, d), 0,
						   (uint32_t)(k % 2 + 1));
		}
	return NULL;
}

/* Whether s is stack k of its depth, word for word. */
static int
whole(const struct gmon_stack *s)
{
	int k = k_of(s);

	for (uint32_t i = 0; i < s->depth; i++)
		if (s->pcs[i] != word_of(k, (int)i))
			return 0;
	return 1;
}

/* Six threads add the same 64 stacks 100 times each: each thread's come
 * back as its own 64 records, counts exact, under the thread's name. */
START_TEST(test_threads_keep_their_stacks_apart_and_exact)
{
	struct adder a[6];
	struct gmon_stacks st;
	int found[6][64];

	unit_preload_reset();
	ck_assert_int_eq(pc_stacks_init(4), 0);
	for (int t = 0; t < 6; t++)
		a[t] = (struct adder){ t, 64, 0, 100, 0 };
	unit_threads(6, add_stacks, a, sizeof(a[0]));
	unit_stacks_read_back(&st);
	memset(found, 0, sizeof(found));
	ck_assert_uint_eq(st.n, 6 * 64);
	for (size_t i = 0; i < st.n; i++) {
		const struct gmon_stack *s = &st.v[i];
		int t = 0, k = k_of(s);

		while (t < 6 && a[t].tid != s->tid)
			t++;
		ck_assert_int_lt(t, 6);
		ck_assert(k >= 0 && k < 64 && whole(s));
		ck_assert_uint_eq(s->depth, k % 8 + 1);
		ck_assert_uint_eq(s->count, 100 * (k % 2 + 1));
		ck_assert_uint_eq(s->flags, 0);
		found[t][k]++;
	}
	for (int t = 0; t < 6; t++)
		for (int k = 0; k < 64; k++)
			ck_assert_int_eq(found[t][k], 1);
	ck_assert_uint_eq(st.nthreads, 6);
	for (size_t i = 0; i < st.nthreads; i++) {
		char want[16];
		int t = 0;

		while (t < 6 && a[t].tid != st.threads[i].tid)
			t++;
		ck_assert_int_lt(t, 6);
		snprintf(want, sizeof(want), "unit-%d", t);
		ck_assert_str_eq(st.threads[i].name, want);
	}
	ck_assert_uint_eq(pc_stats->stacks_dropped, 0);
	gmon_stacks_release(&st);
}
END_TEST

/* Frames outside the program (a library's) are one 0 however many, and a
 * walk cut at its depth limit is another stack than the same frames
 * whole. */
START_TEST(test_outside_frames_fold_and_truncation_is_kept)
{
	/* a library's frames, somewhere no program text is (page 1) */
	struct pc_frame f[5] = {
		{ unit_text_at(0x100), 0 },
		{ 0x1010, 0 },
		{ 0x1020, 0 },
		{ unit_text_at(0x1001), 0 },
		{ 0x1030, 0 },
	};
	const uint64_t want[] = { UNIT_TEXT_LINK + 0x100, 0,
				  UNIT_TEXT_LINK + 0x1000, 0 };
	struct gmon_stacks st;

	unit_preload_reset();
	ck_assert_int_eq(pc_stacks_init(1), 0);
	pc_stacks_add_from_handler(f, 5, 1, 2);
	pc_stacks_add_from_handler(f, 5, 1, 3);
	pc_stacks_add_from_handler(f, 5, 0, 4);
	unit_stacks_read_back(&st);
	ck_assert_uint_eq(st.n, 2);
	for (size_t i = 0; i < 2; i++) {
		ck_assert_uint_eq(st.v[i].depth, 4);
		ck_assert_int_eq(memcmp(st.v[i].pcs, want, sizeof(want)), 0);
		ck_assert_uint_eq(st.v[i].count,
				  st.v[i].flags & GMON_STACK_TRUNCATED ? 5 : 4);
	}
	ck_assert_uint_ne(st.v[0].flags, st.v[1].flags);
	gmon_stacks_release(&st);
}
END_TEST

/* Four threads, 300 stacks of 200 frames each, twice: 1200 x 204 words
 * into a 1 MiB arena (131072 words). What is kept is whole, and kept plus
 * dropped is every weight added. */
START_TEST(test_full_arena_drops_and_counts_without_corruption)
{
	struct adder a[4];
	struct gmon_stacks st;
	uint64_t kept = 0, want = 0;

	unit_preload_reset();
	ck_assert_int_eq(pc_stacks_init(1), 0);
	for (int t = 0; t < 4; t++)
		a[t] = (struct adder){ t, 300, MAX_DEPTH, 2, 0 };
	unit_threads(4, add_stacks, a, sizeof(a[0]));
	for (int k = 0; k < 300; k++)
		want += 4 * 2 * (uint64_t)(k % 2 + 1);
	unit_stacks_read_back(&st);
	ck_assert(st.n > 0 && st.n < 1200);
	for (size_t i = 0; i < st.n; i++) {
		const struct gmon_stack *s = &st.v[i];
		int k = k_of(s);

		ck_assert(k >= 0 && k < 300);
		ck_assert_uint_eq(s->depth, MAX_DEPTH);
		ck_assert(whole(s));
		/* both rounds: a stack the arena took in the first is found
		 * in the second, and the arena, once full, takes nothing */
		ck_assert_uint_eq(s->count, 2 * (uint64_t)(k % 2 + 1));
		kept += s->count;
	}
	ck_assert(pc_stats->stacks_dropped > 0);
	ck_assert_uint_eq(kept + pc_stats->stacks_dropped, want);
	gmon_stacks_release(&st);
}
END_TEST

Suite *
stacks_suite(void)
{
	Suite *s = suite_create("stacks");
	TCase *t = tcase_create("core");

	/* a fixed amount of work, which a busy machine may take long over */
	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_threads_keep_their_stacks_apart_and_exact);
	tcase_add_test(t, test_outside_frames_fold_and_truncation_is_kept);
	tcase_add_test(t, test_full_arena_drops_and_counts_without_corruption);
	suite_add_tcase(s, t);
	return s;
}
