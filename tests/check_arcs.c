/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/arcs.c, the call graph's lock-free table: threads
 * counting the same arcs at once lose and double nothing (an arc two
 * threads claim together may take two slots, whose counts add up); a full
 * table keeps whole arcs and counts what it drops; a sampled stack gives
 * each edge once, joining the program's frames across others, and a
 * direct call names its callee for walkers that know no entry points.
 */
#include <stdlib.h>
#include <string.h>

#include "../preload/pc.h"
#include "unit.h"

#define SELF_OFF	0x100000	/* self = from + SELF_OFF in these tests */

/* What pc_arcs_each saw: counts summed by arc (from = FROM0 + 16 i),
 * and anything that is not one of ours. */
#define FROM0		0x2000
struct seen {
	uint64_t *count;	/* by arc */
	size_t narcs;
	size_t entries;		/* slots in use */
	size_t strangers;	/* slots that are no arc of ours */
	uint64_t total;
};

static void
see(uint64_t from, uint64_t self, uint64_t count, void *arg)
{
	struct seen *s = arg;
	uint64_t i = (from - FROM0) / 16;

	s->entries++;
	s->total += count;
	if (from < FROM0 || (from - FROM0) % 16 || i >= s->narcs ||
	    self != from + SELF_OFF) {
		s->strangers++;
		return;
	}
	s->count[i] += count;
}

static void
collect(struct seen *s, size_t narcs)
{
	memset(s, 0, sizeof(*s));
	s->narcs = narcs;
	s->count = calloc(narcs, sizeof(*s->count));
	ck_assert_ptr_nonnull(s->count);
	pc_arcs_each(see, s);
}

struct adder {
	size_t first, n;	/* arcs first .. first + n - 1 */
	int rounds;
};

static void *
add_arcs(void *arg)
{
	const struct adder *a = arg;

	unit_threads_go();
	for (int r = 0; r < a->rounds; r++)
		for (size_t i = a->first; i < a->first + a->n; i++) {
			uint64_t from = FROM0 + 16 * i;

			pc_arc_add_from_handler(from, from + SELF_OFF,
						(uint32_t)(i % 3 + 1));
		}
	return NULL;
}

/* Eight threads count the same 16 arcs 5000 times each, all claiming
 * them at once and then adding to the same few slots: every arc's count
 * is exactly 8 x 5000 x its weight, and nothing was dropped. */
START_TEST(test_threads_count_every_arc_exactly)
{
	struct adder a[8];
	struct seen s;

	unit_preload_reset();
	ck_assert_int_eq(pc_arcs_init(PC_DEFAULT_ARCS), 0);
	for (int t = 0; t < 8; t++)
		a[t] = (struct adder){ 0, 16, 5000 };
	unit_threads(8, add_arcs, a, sizeof(a[0]));
	collect(&s, 16);
	ck_assert_uint_eq(s.strangers, 0);
	for (size_t i = 0; i < 16; i++)
		ck_assert_uint_eq(s.count[i], 8 * 5000 * (i % 3 + 1));
	ck_assert_uint_eq(pc_stats->arcs_dropped, 0);
	/* a race on a new arc leaves at most one extra slot a thread */
	ck_assert(s.entries >= 16 && s.entries <= 16 * 8);
	free(s.count);
}
END_TEST

/* 4000 distinct arcs from four threads into 1024 slots: what is kept is
 * whole, and kept plus dropped is every count added, to the unit. */
START_TEST(test_full_table_drops_and_counts_without_corruption)
{
	struct adder a[4];
	struct seen s;
	uint64_t want = 0;

	unit_preload_reset();
	ck_assert_int_eq(pc_arcs_init(1024), 0);
	for (int t = 0; t < 4; t++)
		a[t] = (struct adder){ (size_t)t * 1000, 1000, 2 };
	unit_threads(4, add_arcs, a, sizeof(a[0]));
	for (size_t i = 0; i < 4000; i++)
		want += 2 * (i % 3 + 1);
	collect(&s, 4000);
	ck_assert_uint_eq(s.strangers, 0);
	ck_assert(s.entries <= 1024);
	ck_assert(pc_stats->arcs_dropped > 0);
	ck_assert_uint_eq(s.total + pc_stats->arcs_dropped, want);
	for (size_t i = 0; i < 4000; i++)
		ck_assert(s.count[i] <= 2 * (i % 3 + 1) &&
			  s.count[i] % (i % 3 + 1) == 0);
	free(s.count);
}
END_TEST

static uint64_t
link_of(size_t off)
{
	return UNIT_TEXT_LINK + off;
}

/* What pc_arcs_each saw, as (from, self, count) triples. */
struct triples {
	uint64_t v[16][3];
	int n;
};

static void
keep(uint64_t from, uint64_t self, uint64_t count, void *arg)
{
	struct triples *t = arg;

	ck_assert(t->n < 16);
	t->v[t->n][0] = from;
	t->v[t->n][1] = self;
	t->v[t->n++][2] = count;
}

static uint64_t
count_of(const struct triples *t, uint64_t from, uint64_t self)
{
	uint64_t c = 0;

	for (int i = 0; i < t->n; i++)
		if (t->v[i][0] == from && t->v[i][1] == self)
			c += t->v[i][2];
	return c;
}

/*
 * A stack, leaf first: leaf L (entry 0x80) called from B at 0x210 (B's
 * entry 0x200), B from B at 0x210 twice more (recursion), B from a frame
 * outside the program (qsort in libc), that from A at 0x310 (entry 0x300).
 * Edges, once per sample each: B's call site -> L, B -> B, and A's call
 * site -> B across the outside frame. Two samples, of weights 1 and 2.
 */
START_TEST(test_stack_edges_count_once_and_join_across_outside_frames)
{
	const uintptr_t outside = 0x1000; /* no program text is in page 1 */
	struct pc_frame f[6];
	struct triples t = { .n = 0 };

	unit_preload_reset();
	ck_assert_int_eq(pc_arcs_init(1024), 0);
	for (uint32_t w = 1; w <= 2; w++) {
		f[0] = (struct pc_frame){ unit_text_at(0x90),
					  unit_text_at(0x80) };
		f[1] = (struct pc_frame){ unit_text_at(0x210),
					  unit_text_at(0x200) };
		f[2] = f[1];
		f[3] = f[1];
		f[4] = (struct pc_frame){ outside, 0 };
		f[5] = (struct pc_frame){ unit_text_at(0x310),
					  unit_text_at(0x300) };
		pc_arcs_add_from_handler(f, 6, w);
	}
	pc_arcs_each(keep, &t);
	ck_assert_int_eq(t.n, 3);
	ck_assert_uint_eq(count_of(&t, link_of(0x20f), link_of(0x80)), 3);
	ck_assert_uint_eq(count_of(&t, link_of(0x20f), link_of(0x200)), 3);
	ck_assert_uint_eq(count_of(&t, link_of(0x30f), link_of(0x200)), 3);
	ck_assert_uint_eq(pc_stats->arcs_dropped, 0);
}
END_TEST

#if defined(__x86_64__)
/* A walker that knows no entry points (frame pointers): the call at 0x400
 * (e8 rel32, returning to 0x405) to 0x80 names the callee's entry, not
 * the PC inside it at 0x90. */
START_TEST(test_direct_call_names_the_callee)
{
	int32_t rel = (int32_t)(0x80 - 0x405);
	struct pc_frame f[2];
	struct triples t = { .n = 0 };

	unit_preload_reset();
	ck_assert_int_eq(pc_arcs_init(1024), 0);
	*unit_text_bytes(0x400) = 0xe8;
	memcpy(unit_text_bytes(0x401), &rel, 4);
	f[0] = (struct pc_frame){ unit_text_at(0x90), 0 };
	f[1] = (struct pc_frame){ unit_text_at(0x405), 0 };
	pc_arcs_add_from_handler(f, 2, 1);
	pc_arcs_each(keep, &t);
	ck_assert_int_eq(t.n, 1);
	ck_assert_uint_eq(count_of(&t, link_of(0x404), link_of(0x80)), 1);
}
END_TEST
#endif

Suite *
arcs_suite(void)
{
	Suite *s = suite_create("arcs");
	TCase *t = tcase_create("core");

	/* a fixed amount of work, which a busy machine may take long over */
	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_threads_count_every_arc_exactly);
	tcase_add_test(t, test_full_table_drops_and_counts_without_corruption);
	tcase_add_test(
		t, test_stack_edges_count_once_and_join_across_outside_frames);
#if defined(__x86_64__)
	tcase_add_test(t, test_direct_call_names_the_callee);
#endif
	suite_add_tcase(s, t);
	return s;
}
