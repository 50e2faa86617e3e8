/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/wall_mem.c, the wall sampler's memory without
 * malloc. Edge cases:
 *  - a listing of thread ids in order, reversed, at random, of one, of
 *    none: sorted in place, and spread into entries, each new (fd -1,
 *    the rest 0), none lost or repeated;
 *  - a table grown past its room keeps its entries, grows by whole
 *    steps, and stops at 32768 threads, said so;
 *  - after mlockall(MCL_FUTURE) (pc_live_map_locked) a table grows no
 *    more and the picks neither, said so; they grow again after
 *    munlockall;
 *  - a start told is taken once; a clash of two ids in one slot doubles
 *    the table, and keeps the later only while the memory is locked.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include "../preload/pc.h"
#include "../preload/live.h"
#include "../preload/wall.h"
#include "unit.h"

/* n ids into t's first bytes, in order (how 0), reversed (1) or at
 * random (2), sorted and spread; each checked. */
static void
spread_check(struct pc_wthread *t, size_t n, int how)
{
	uint32_t *id = (uint32_t *)t;
	unsigned seed = 7;

	ck_assert_uint_ge(pc_wall_room_of(t), n);
	for (size_t i = 0; i < n; i++)
		id[i] = how == 0 ? 100 + (uint32_t)i :
			how == 1 ? 100 + (uint32_t)(n - i) :
				   (uint32_t)i;
	/* at random: a shuffle of 0..n-1 */
	for (size_t i = n; how == 2 && i > 1; i--) {
		size_t j = (size_t)rand_r(&seed) % i;
		uint32_t v = id[i - 1];

		id[i - 1] = id[j];
		id[j] = v;
	}
	pc_wall_spread(t, n);
	for (size_t i = 0; i < n; i++) {
		struct pc_wthread *w = &t[i];

		ck_assert_uint_eq(w->tid, how == 0 ? 100 + i :
					  how == 1 ? 101 + i :
						     i);
		ck_assert_int_eq(w->fd, -1);
		ck_assert_uint_eq(w->seen_ns | w->run_ns | w->cur.key |
					  w->state | w->listed,
				  0);
	}
}

START_TEST(test_wallmem_sorts_and_spreads_every_listing)
{
	struct pc_wthread *a, *b;
	size_t sizes[] = { 0, 1, 2, 48, 49, 50, 3000 };

	ck_assert_int_eq(pc_wall_mem_start(&a, &b), 0);
	ck_assert_uint_eq(pc_wall_room_of(a),
			  16384 / sizeof(struct pc_wthread));
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		for (int how = 0; how < 3; how++) {
			a = pc_wall_room(a, sizes[k] ? sizes[k] - 1 : 0);
			ck_assert_ptr_nonnull(a);
			spread_check(a, sizes[k], how);
		}
}
END_TEST

START_TEST(test_wallmem_tables_grow_and_keep_their_entries)
{
	struct pc_wthread *a, *b, *t;
	size_t cap;
	int why;

	ck_assert_int_eq(pc_wall_mem_start(&a, &b), 0);
	cap = pc_wall_room_of(a);
	for (size_t i = 0; i < cap; i++)
		a[i].tid = (uint32_t)i + 1;
	ck_assert_ptr_eq(pc_wall_room(a, cap - 1), a);
	ck_assert_uint_eq(pc_wall_room_of(a), cap);
	a = pc_wall_room(a, cap);
	ck_assert_ptr_nonnull(a);
	/* 16 KiB and a step of 64 KiB, in whole steps */
	ck_assert_uint_eq(pc_wall_room_of(a),
			  128 * 1024 / sizeof(struct pc_wthread));
	for (size_t i = 0; i < cap; i++)
		ck_assert_uint_eq(a[i].tid, i + 1);
	a = pc_wall_room(a, 32767);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_ge(pc_wall_room_of(a), 32768);
	ck_assert_ptr_null(pc_wall_room(a, 32768));
	pc_wall_not_followed(3);
	ck_assert_uint_eq(pc_wall_unfollowed(&why), 3);
	ck_assert_int_eq(why, PC_LIVE_CAPPED);
	for (size_t i = 0; i < cap; i++)
		ck_assert_uint_eq(a[i].tid, i + 1);
	/* the other table is its own; a pointer of neither has no room */
	ck_assert_uint_eq(pc_wall_room_of(b), cap);
	t = a + 1;
	ck_assert_ptr_null(pc_wall_room(t, 0));
}
END_TEST

START_TEST(test_wallmem_grows_nothing_while_memory_is_locked)
{
	struct pc_wthread *a, *b;
	size_t cap;
	int why;

	ck_assert_int_eq(pc_wall_mem_start(&a, &b), 0);
	cap = pc_wall_room_of(a);
	ck_assert_ptr_nonnull(pc_wall_picks(1024));
	pc_live_map_locked(1);
	ck_assert_ptr_eq(pc_wall_room(a, cap - 1), a);
	ck_assert_ptr_null(pc_wall_room(a, cap));
	ck_assert_uint_eq(pc_wall_room_of(a), cap);
	ck_assert_ptr_nonnull(pc_wall_picks(cap));
	ck_assert_ptr_null(pc_wall_picks(4096));
	pc_wall_not_followed(5);
	pc_wall_not_followed(2);
	ck_assert_uint_eq(pc_wall_unfollowed(&why), 5);
	ck_assert_int_eq(why, PC_LIVE_LOCKED);
	pc_live_map_locked(0);
	ck_assert_ptr_nonnull(pc_wall_room(a, cap));
	ck_assert_ptr_nonnull(pc_wall_picks(4096));
}
END_TEST

START_TEST(test_wallmem_starts_are_taken_once)
{
	struct pc_wthread *a, *b;

	ck_assert_int_eq(pc_wall_mem_start(&a, &b), 0);
	ck_assert_uint_eq(pc_wall_begun(42), 0);
	pc_wall_begin(42, 1000);
	pc_wall_begin(43, 2000);
	ck_assert_uint_eq(pc_wall_begun(42), 1000);
	ck_assert_uint_eq(pc_wall_begun(42), 0);
	/* 42 + 4096 and 42 + 8192 share 42's slot: the table doubles, twice */
	pc_wall_begin(42, 3000);
	pc_wall_begin(42 + 4096, 4000);
	pc_wall_begin(42 + 8192, 5000);
	ck_assert_uint_eq(pc_wall_begun(42 + 4096), 4000);
	ck_assert_uint_eq(pc_wall_begun(42), 3000);
	ck_assert_uint_eq(pc_wall_begun(42 + 8192), 5000);
	ck_assert_uint_eq(pc_wall_begun(43), 2000);
	/* locked: the table stays, the later start is kept */
	pc_live_map_locked(1);
	for (uint32_t k = 1; k <= 4; k++)
		pc_wall_begin(7 + k * 16384, k);
	ck_assert_uint_eq(pc_wall_begun(7 + 4 * 16384), 4);
	ck_assert_uint_eq(pc_wall_begun(7 + 16384), 0);
	pc_live_map_locked(0);
}
END_TEST

Suite *
wallmem_suite(void)
{
	Suite *s = suite_create("wallmem");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_wallmem_sorts_and_spreads_every_listing);
	tcase_add_test(t, test_wallmem_tables_grow_and_keep_their_entries);
	tcase_add_test(t, test_wallmem_grows_nothing_while_memory_is_locked);
	tcase_add_test(t, test_wallmem_starts_are_taken_once);
	suite_add_tcase(s, t);
	return s;
}
