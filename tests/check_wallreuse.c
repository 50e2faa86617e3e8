/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for the walks kept for reuse (preload/wall_stackreuse.c): a
 * walk is found again by its pc and sp only, with its frames, how it
 * ended and the stack words it read (for wall_unwind.c to check), or by
 * its pc alone at another sp, its words shifted to that sp; one too
 * long to keep is not kept; a clearing forgets them all.
 *
 * Edge cases: another sp at the same pc (words that point into the old
 * stack shift, others stay); another pc; a caller with less room than
 * the walk's frames; 33 frames or 65 words (not kept); pc 0.
 */
#include <string.h>
#include <check.h>

#include "../preload/pc.h"
#include "../preload/wall.h"
#include "unit.h"

static void
fill(struct pc_frame *f, int n, struct pc_wword *w, unsigned nw, uintptr_t base)
{
	for (int i = 0; i < n; i++)
		f[i].site = base + (uintptr_t)i * 16, f[i].entry = 0;
	for (unsigned i = 0; i < nw; i++)
		w[i].addr = 0x7000 + i * 8, w[i].val = base + i;
}

START_TEST(test_reuse_finds_a_walk_by_its_pc_and_sp_only)
{
	struct pc_frame f[8], got[8];
	struct pc_wword w[4];
	const struct pc_wword *gw;
	unsigned nw = 0;
	int how = -1;

	ck_assert_int_eq(pc_wall_reuse_map(), 0);
	pc_wall_reuse_clear();
	fill(f, 5, w, 4, 0x401000);
	pc_wall_reuse_put(0x7f0010, 0x7ffd000, f, 5, PC_WALL_FULL, w, 4);
	ck_assert_int_eq(
		pc_wall_reuse_get(0x7f0010, 0x7ffd000, got, 8, &how, &gw, &nw),
		5);
	ck_assert_int_eq(how, PC_WALL_FULL);
	ck_assert_uint_eq(nw, 4);
	ck_assert_mem_eq(got, f, 5 * sizeof(*f));
	ck_assert_mem_eq(gw, w, 4 * sizeof(*w));
	/* another pc: none */
	ck_assert_int_eq(
		pc_wall_reuse_get(0x7f0018, 0x7ffd000, got, 8, &how, &gw, &nw),
		0);
	/* no room for its frames */
	ck_assert_int_eq(
		pc_wall_reuse_get(0x7f0010, 0x7ffd000, got, 4, &how, &gw, &nw),
		0);
	/* pc 0 is never kept nor found */
	pc_wall_reuse_put(0, 0x7ffd000, f, 5, PC_WALL_FULL, w, 4);
	ck_assert_int_eq(
		pc_wall_reuse_get(0, 0x7ffd000, got, 8, &how, &gw, &nw), 0);
	pc_wall_reuse_clear();
	ck_assert_int_eq(
		pc_wall_reuse_get(0x7f0010, 0x7ffd000, got, 8, &how, &gw, &nw),
		0);
}
END_TEST

/* A thread at the same pc on another stack: the same frames, its words
 * read at the same offsets from its sp, a saved frame pointer (a word
 * that pointed into the old stack) as far into the new one. */
START_TEST(test_reuse_shifts_a_walk_to_another_stack_at_its_pc)
{
	struct pc_frame f[8], got[8];
	struct pc_wword w[3] = { { 0x7ffd010, 0x401234 },
				 { 0x7ffd018, 0x7ffd040 },
				 { 0x7ffd048, 0x7 } };
	const struct pc_wword *gw;
	unsigned nw = 0;
	int how = -1;

	ck_assert_int_eq(pc_wall_reuse_map(), 0);
	pc_wall_reuse_clear();
	fill(f, 4, w, 0, 0x401000);
	pc_wall_reuse_put(0x7f0030, 0x7ffd000, f, 4, PC_WALL_FULL, w, 3);
	ck_assert_int_eq(
		pc_wall_reuse_get(0x7f0030, 0x6ffd000, got, 8, &how, &gw, &nw),
		4);
	ck_assert_int_eq(how, PC_WALL_FULL);
	ck_assert_mem_eq(got, f, 4 * sizeof(*f));
	ck_assert_uint_eq(nw, 3);
	ck_assert_uint_eq(gw[0].addr, 0x6ffd010);
	ck_assert_uint_eq(gw[0].val, 0x401234);
	ck_assert_uint_eq(gw[1].addr, 0x6ffd018);
	ck_assert_uint_eq(gw[1].val, 0x6ffd040);
	ck_assert_uint_eq(gw[2].addr, 0x6ffd048);
	ck_assert_uint_eq(gw[2].val, 0x7);
	/* the walk's own sp still finds its own words */
	ck_assert_int_eq(
		pc_wall_reuse_get(0x7f0030, 0x7ffd000, got, 8, &how, &gw, &nw),
		4);
	ck_assert_uint_eq(gw[1].val, 0x7ffd040);
}
END_TEST

START_TEST(test_reuse_keeps_no_walk_too_long_to_check)
{
	static struct pc_frame f[40], got[40];
	static struct pc_wword w[70];
	const struct pc_wword *gw;
	unsigned nw;
	int how;

	ck_assert_int_eq(pc_wall_reuse_map(), 0);
	pc_wall_reuse_clear();
	fill(f, 33, w, 4, 0x401000);
	pc_wall_reuse_put(0x7f0020, 0x7ffe000, f, 33, PC_WALL_FULL, w, 4);
	ck_assert_int_eq(
		pc_wall_reuse_get(0x7f0020, 0x7ffe000, got, 40, &how, &gw, &nw),
		0);
	fill(f, 6, w, 65, 0x402000);
	pc_wall_reuse_put(0x7f0020, 0x7ffe000, f, 6, PC_WALL_CUT, w, 65);
	ck_assert_int_eq(
		pc_wall_reuse_get(0x7f0020, 0x7ffe000, got, 40, &how, &gw, &nw),
		0);
	/* the most that is kept */
	fill(f, 32, w, 64, 0x403000);
	pc_wall_reuse_put(0x7f0020, 0x7ffe000, f, 32, PC_WALL_TRUNCATED, w, 64);
	ck_assert_int_eq(
		pc_wall_reuse_get(0x7f0020, 0x7ffe000, got, 40, &how, &gw, &nw),
		32);
	ck_assert_int_eq(how, PC_WALL_TRUNCATED);
	ck_assert_uint_eq(nw, 64);
	ck_assert_mem_eq(gw, w, 64 * sizeof(*w));
}
END_TEST

Suite *
wallreuse_suite(void)
{
	Suite *s = suite_create("wallreuse");
	TCase *tc = tcase_create("reuse");

	tcase_add_test(tc, test_reuse_finds_a_walk_by_its_pc_and_sp_only);
	tcase_add_test(tc, test_reuse_shifts_a_walk_to_another_stack_at_its_pc);
	tcase_add_test(tc, test_reuse_keeps_no_walk_too_long_to_check);
	suite_add_tcase(s, tc);
	return s;
}
