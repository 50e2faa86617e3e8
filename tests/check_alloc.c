/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for the pure parts of allocation profiling: the countdowns
 * the companion draws (preload/alloc_draw.c) and the tables that keep the
 * samples (preload/alloc_table.c), over unit_preload.c's text and memory.
 * Edge cases:
 *  - -log(u) without libm, against libm's, from the smallest normal
 *    double (a draw's u is 2^-53 or more) to 1,
 *    and 745 for 0 (a countdown out of reach, not a NaN);
 *  - the countdowns: an exponential's of mean the rate, rounded down:
 *    their mean and their share above the rate (about e^-1) within 5
 *    standard errors of 200,000 draws, rates 2 to 2^30; 0 at
 *    rate 1; never negative; the generator advanced, never to 0;
 *  - a sample's weight, pprof's 1 / (1 - exp(-size / rate)), against
 *    libm's, for sizes from a byte to 40 times the rate; 1 at rate 1;
 *  - a sampled block forgotten once, with its size and stack, the filter
 *    back at 0 and no block tracked; a free of a block never sampled
 *    found nowhere;
 *  - one stack stored once however many blocks it sampled;
 *  - a failed realloc's block tracked again;
 *  - the block table full where a block's probe chain is (64 blocks at
 *    one home slot): the next block is dropped (not tracked) and a
 *    segment of twice the slots mapped, where the one after goes; the
 *    older blocks still found; a tombstone taken before a drop.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../preload/pc.h"
#include "../preload/alloc.h"
#include "unit.h"

#define RATE	4096u
#define SEG0	4096u		/* alloc_table.c's first segment */
#define PROBE	64		/* and its probe chain */

START_TEST(test_alloc_neglog_is_libms_log)
{
	static const double u[] = { 0x1p-1022, 1e-300, 1e-30, 1e-10, 1e-3,
				    0.1,       0.25,   0.5,   0.70710678,
				    0.7072,    0.9,    0.999999, 1 };

	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		double want = -log(u[i]), got = pc_alloc_neglog(u[i]);

		ck_assert_msg(fabs(got - want) <= 2e-15 * (1 + want),
			      "-log(%g): %.17g, libm %.17g", u[i], got, want);
	}
	for (double x = 1e-6; x < 1; x += 0.0013)
		ck_assert(fabs(pc_alloc_neglog(x) + log(x)) <=
			  2e-15 * (1 - log(x)));
	ck_assert(pc_alloc_neglog(0) == 745.0);
	ck_assert(pc_alloc_neglog(-1) == 745.0);
}
END_TEST

#define DRAWS	200000

START_TEST(test_alloc_countdown_is_exponential_of_mean_the_rate)
{
	static const uint64_t rates[] = { 2, 4096, 524288, 1u << 30 };

	for (size_t r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
		uint64_t rng = 0x9e3779b97f4a7c15ull + r, prev;
		double sum = 0, above = 0, mean, share, q, want, p;
		double rate = (double)rates[r];
		int bad = 0;

		/* Check's asserts cost a write each: counted, asserted once */
		for (int i = 0; i < DRAWS; i++) {
			int64_t c;

			prev = rng;
			c = pc_alloc_draw(&rng, rates[r]);
			bad += rng == prev || rng == 0 || c < 0;
			sum += (double)c;
			above += (double)c > rate;
		}
		ck_assert_int_eq(bad, 0);
		mean = sum / DRAWS;
		share = above / DRAWS;
		/* each draw is an exponential's X rounded down, a geometric
		 * count: P(floor X >= k) = q^k, q = exp(-1 / rate), of mean
		 * q / (1 - q) (rate - 0.5 for a large rate) and standard
		 * deviation sqrt(q) / (1 - q) (the rate): the mean of n draws
		 * is within 5 standard errors, 1.1 % */
		q = exp(-1 / rate);
		want = q / -expm1(-1 / rate);
		ck_assert_msg(fabs(mean - want) <
				      5 * sqrt(q) / -expm1(-1 / rate) /
					      sqrt(DRAWS),
			      "rate %g: mean %g, want %g", rate, mean, want);
		/* P(floor X > rate) = q^(rate + 1): about e^-1 */
		p = pow(q, rate + 1);
		ck_assert_msg(fabs(share - p) < 5 * sqrt(p * (1 - p) / DRAWS),
			      "rate %g: %g above it, want %g", rate, share, p);
	}
	{
		uint64_t rng = 12345;

		ck_assert_int_eq(pc_alloc_draw(&rng, 1), 0);
		ck_assert_int_eq(pc_alloc_draw(&rng, 0), 0);
	}
}
END_TEST

START_TEST(test_alloc_weight_is_pprofs_scale)
{
	for (uint64_t size = 1; size < 40 * RATE; size = size * 3 / 2 + 1) {
		double want = 1 / (1 - exp(-(double)size / RATE));
		double got = pc_alloc_weight(size, RATE);

		ck_assert_msg(fabs(got - want) <= 1e-12 * want,
			      "size %llu: %.17g, libm %.17g",
			      (unsigned long long)size, got, want);
	}
	ck_assert(pc_alloc_weight(0, RATE) == pc_alloc_weight(1, RATE));
	ck_assert(pc_alloc_weight(1u << 30, RATE) == 1);
	ck_assert(pc_alloc_weight(12345, 1) == 1);
	ck_assert(pc_alloc_weight(12345, 0) == 1);
}
END_TEST

/* ---------------------------------------------------------- the tables */

static void
tables_init(void)
{
	unit_preload_reset();
	ck_assert_int_eq(pc_alloc_table_init(RATE), 0);
	ck_assert(!pc_alloc_tracking());
}

/* A stack of depth frames in the text, the caller first, told apart by
 * which. */
static void
frames(struct pc_frame *f, int depth, unsigned which)
{
	for (int i = 0; i < depth; i++) {
		f[i].site = unit_text_at(0x100 + 0x40 * (size_t)i + which) + 1;
		f[i].entry = 0;
	}
}

START_TEST(test_alloc_block_is_forgotten_once)
{
	struct pc_frame f[3];
	void *p = (void *)(uintptr_t)0x7f0000001230ull;
	size_t size = 0;
	uint32_t stack = 0;

	tables_init();
	frames(f, 3, 0);
	ck_assert(!pc_alloc_maybe(p));
	pc_alloc_record(p, 100, f, 3);
	ck_assert(pc_alloc_tracking());
	ck_assert(pc_alloc_maybe(p));
	ck_assert_int_eq(pc_alloc_forget((char *)p + 16, &size, &stack), 0);
	ck_assert_int_eq(pc_alloc_forget(p, &size, &stack), 1);
	ck_assert_uint_eq(size, 100);
	ck_assert_uint_ne(stack, 0);
	ck_assert(!pc_alloc_tracking());
	ck_assert(!pc_alloc_maybe(p));
	ck_assert_int_eq(pc_alloc_forget(p, &size, &stack), 0);
}
END_TEST

START_TEST(test_alloc_stack_is_stored_once)
{
	struct pc_frame f[4], g[4];
	size_t size;
	uint32_t s1, s2, s3;

	tables_init();
	frames(f, 4, 0);
	frames(g, 4, 2);
	pc_alloc_record((void *)0x10000, 8, f, 4);
	pc_alloc_record((void *)0x20000, 16, f, 4);
	pc_alloc_record((void *)0x30000, 8, g, 4);
	ck_assert_int_eq(pc_alloc_forget((void *)0x10000, &size, &s1), 1);
	ck_assert_int_eq(pc_alloc_forget((void *)0x20000, &size, &s2), 1);
	ck_assert_uint_eq(size, 16);
	ck_assert_int_eq(pc_alloc_forget((void *)0x30000, &size, &s3), 1);
	ck_assert_uint_eq(s1, s2);
	ck_assert_uint_ne(s1, s3);
}
END_TEST

START_TEST(test_alloc_failed_realloc_is_tracked_again)
{
	struct pc_frame f[2];
	size_t size;
	uint32_t stack, again;

	tables_init();
	frames(f, 2, 0);
	pc_alloc_record((void *)0x40000, 4096, f, 2);
	ck_assert_int_eq(pc_alloc_forget((void *)0x40000, &size, &stack), 1);
	pc_alloc_restore((void *)0x40000, size, stack);
	ck_assert(pc_alloc_tracking());
	ck_assert(pc_alloc_maybe((void *)0x40000));
	ck_assert_int_eq(pc_alloc_forget((void *)0x40000, &size, &again), 1);
	ck_assert_uint_eq(size, 4096);
	ck_assert_uint_eq(again, stack);
}
END_TEST

/* n block addresses (16-aligned) whose home slot in a table of slots
 * slots is the same, as alloc_table.c's slot_of finds it. */
static void
same_home(uint64_t *v, size_t n, size_t slots)
{
	uint64_t home = 0;
	size_t k = 0;

	for (uint64_t a = 0x100000; k < n; a += 16) {
		uint64_t h = pc_mix(a >> 4) & (slots - 1);

		if (k == 0)
			home = h;
		if (h == home)
			v[k++] = a;
	}
}

START_TEST(test_alloc_full_probe_chain_drops_and_grows)
{
	uint64_t v[PROBE + 2];
	struct pc_frame f[2];
	size_t size;
	uint32_t stack;

	tables_init();
	frames(f, 2, 0);
	same_home(v, PROBE + 2, SEG0);
	for (int i = 0; i < PROBE + 2; i++)
		pc_alloc_record((void *)(uintptr_t)v[i], 32, f, 2);
	/* the 65th found the chain full: dropped, and the next segment
	 * mapped, where the 66th went */
	ck_assert_int_eq(pc_alloc_forget((void *)(uintptr_t)v[PROBE], &size,
					 &stack),
			 0);
	ck_assert_int_eq(pc_alloc_forget((void *)(uintptr_t)v[PROBE + 1],
					 &size, &stack),
			 1);
	for (int i = 0; i < PROBE; i++)
		ck_assert_msg(pc_alloc_forget((void *)(uintptr_t)v[i], &size,
					      &stack) == 1,
			      "block %d lost", i);
	ck_assert(!pc_alloc_tracking());
}
END_TEST

START_TEST(test_alloc_tombstone_is_taken_again)
{
	uint64_t v[PROBE + 1];
	struct pc_frame f[2];
	size_t size;
	uint32_t stack;

	tables_init();
	frames(f, 2, 0);
	same_home(v, PROBE + 1, SEG0);
	for (int i = 0; i < PROBE; i++)
		pc_alloc_record((void *)(uintptr_t)v[i], 32, f, 2);
	ck_assert_int_eq(pc_alloc_forget((void *)(uintptr_t)v[7], &size,
					 &stack),
			 1);
	pc_alloc_record((void *)(uintptr_t)v[PROBE], 32, f, 2);
	ck_assert_int_eq(pc_alloc_forget((void *)(uintptr_t)v[PROBE], &size,
					 &stack),
			 1);
}
END_TEST

Suite *
alloc_suite(void)
{
	Suite *s = suite_create("alloc");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_alloc_neglog_is_libms_log);
	tcase_add_test(t, test_alloc_countdown_is_exponential_of_mean_the_rate);
	tcase_add_test(t, test_alloc_weight_is_pprofs_scale);
	tcase_add_test(t, test_alloc_block_is_forgotten_once);
	tcase_add_test(t, test_alloc_stack_is_stored_once);
	tcase_add_test(t, test_alloc_failed_realloc_is_tracked_again);
	tcase_add_test(t, test_alloc_full_probe_chain_drops_and_grows);
	tcase_add_test(t, test_alloc_tombstone_is_taken_again);
	suite_add_tcase(s, t);
	return s;
}
