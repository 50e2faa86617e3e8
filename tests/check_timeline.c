/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * timeline.c's ring: past its bound it keeps a uniform sample of all the
 * samples offered (the reservoir), and threads that offer at once never
 * leave a torn entry; the allocation events' ring keeps the first ones
 * and counts the rest. The rings are read back through their writer, as
 * PROFILE.timeline's records.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../preload/pc.h"
#include "../preload/timeline.h"
#include "unit.h"
#include "unit_marks.h"

struct readback {
	struct pc_tl_head head;
	struct pc_tl_entry v[4096], al[4096];
	size_t n, nal;
	struct pc_tl_allocs allocs;
	int has_allocs;
};

static void
sample_rec(const struct pc_tl_rec *h, const unsigned char *body, void *arg)
{
	struct readback *r = arg;

	if (h->tag == PC_TL_HEAD)
		memcpy(&r->head, body, sizeof(r->head));
	if (h->tag == PC_TL_SAMPLE && r->n < 4096)
		memcpy(&r->v[r->n++], body, sizeof(r->v[0]));
	if (h->tag == PC_TL_ALLOC && r->nal < 4096)
		memcpy(&r->al[r->nal++], body, sizeof(r->al[0]));
	if (h->tag == PC_TL_ALLOCS) {
		ck_assert_uint_eq(h->len, sizeof(r->allocs));
		memcpy(&r->allocs, body, sizeof(r->allocs));
		r->has_allocs = 1;
	}
}

static void
read_back(struct readback *r)
{
	r->n = r->nal = 0;
	r->has_allocs = 0;
	unit_timeline_each(sample_rec, r);
}

START_TEST(test_timeline_keeps_a_uniform_sample_past_its_bound)
{
	static struct readback r;
	size_t quarter[4] = { 0 };

	unit_preload_reset();
	ck_assert_int_eq(pc_timeline_init(64, 0), 0);
	for (uint32_t i = 0; i < 64000; i++)
		pc_timeline_cpu_from_handler(i + 1, 0, 1);
	read_back(&r);
	ck_assert_uint_eq(r.head.seen, 64000);
	ck_assert_uint_eq(r.head.max, 64);
	ck_assert_uint_eq(r.n, 64);
	for (size_t i = 0; i < r.n; i++) {
		ck_assert_uint_eq(r.v[i].kind, PC_TL_CPU);
		quarter[(r.v[i].where - 1) / 16000]++;
	}
	/* 16 expected in each quarter of the run, 4 its deviation */
	for (int q = 0; q < 4; q++)
		ck_assert_msg(quarter[q] >= 4 && quarter[q] <= 28,
			      "quarter %d: %zu", q, quarter[q]);
}
END_TEST

static void *
offer(void *arg)
{
	uint64_t k = (uint64_t)(uintptr_t)arg;

	for (uint32_t i = 1; i <= 50000; i++)
		pc_timeline_cpu_from_handler(k << 32 | i, 0, i & 0xffff);
	return NULL;
}

START_TEST(test_timeline_threads_never_tear_an_entry)
{
	static struct readback r;
	pthread_t t[4];

	unit_preload_reset();
	ck_assert_int_eq(pc_timeline_init(1024, 0), 0);
	for (uintptr_t i = 0; i < 4; i++)
		ck_assert_int_eq(
			pthread_create(&t[i], NULL, offer, (void *)(i + 1)), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	read_back(&r);
	ck_assert_uint_eq(r.head.seen, 200000);
	ck_assert_uint_le(r.n, 1024);
	ck_assert_uint_ge(r.n + r.head.busy, 1000);
	for (size_t i = 0; i < r.n; i++) {
		ck_assert_uint_eq(r.v[i].weight, r.v[i].where & 0xffff);
		ck_assert(r.v[i].where >> 32 >= 1 && r.v[i].where >> 32 <= 4);
	}
}
END_TEST

/* The allocation events: the first max kept, in order, each with its
 * kind, bytes, address and stack; the rest counted as lost. Without
 * allocations asked for, no record of them at all. */
START_TEST(test_timeline_allocation_events_keep_the_first_ones)
{
	static struct readback r;

	unit_preload_reset();
	ck_assert_int_eq(pc_timeline_init(64, 0), 0);
	pc_timeline_alloc(PC_TL_MALLOC, 8, 100, 0x1000);
	read_back(&r);
	ck_assert_int_eq(r.has_allocs, 0);
	ck_assert_uint_eq(r.nal, 0);

	unit_preload_reset();
	ck_assert_int_eq(pc_timeline_init(64, 1), 0);
	for (uint32_t i = 0; i < 100; i++)
		pc_timeline_alloc(i & 1 ? PC_TL_FREE : PC_TL_MALLOC, 8 + i,
				  1000 + i, 0x10000 + 16 * (i / 2));
	read_back(&r);
	ck_assert_int_eq(r.has_allocs, 1);
	ck_assert_uint_eq(r.allocs.seen, 100);
	ck_assert_uint_eq(r.allocs.max, 64);
	ck_assert_uint_eq(r.allocs.lost, 36);
	ck_assert_uint_eq(r.nal, 64);
	for (uint32_t i = 0; i < 64; i++) {
		ck_assert_uint_eq(r.al[i].kind,
				  i & 1 ? PC_TL_FREE : PC_TL_MALLOC);
		ck_assert_uint_eq(r.al[i].where, 1000 + i);
		ck_assert_uint_eq(r.al[i].value, 0x10000 + 16 * (i / 2));
		ck_assert_uint_eq(r.al[i].weight, 8 + i);
		ck_assert_uint_ne(r.al[i].tid, 0);
		ck_assert(i == 0 || r.al[i].t >= r.al[i - 1].t);
	}
}
END_TEST

Suite *
timeline_suite(void)
{
	Suite *s = suite_create("timeline");
	TCase *tc = tcase_create("ring");

	tcase_add_test(tc, test_timeline_keeps_a_uniform_sample_past_its_bound);
	tcase_add_test(tc, test_timeline_threads_never_tear_an_entry);
	tcase_add_test(tc, test_timeline_allocation_events_keep_the_first_ones);
	suite_add_tcase(s, tc);
	return s;
}
