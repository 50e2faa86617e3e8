/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/objfind.c, where the handler finds a PC with
 * PC_SCOPE=all: threads sampling at once into an object's histogram and
 * into the table of PCs in no known object lose and double nothing; a
 * full pending table counts what it drops; PCs and arcs of an object
 * loaded since the last inventory are placed, exactly, once it is known;
 * a lookup racing a republication of the ranges answers right or not at
 * all, never with a torn range; and so does the translation of a PC in a
 * copy of code racing copies added and retired in the same slot.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include "../preload/pc.h"
#include "../preload/objects.h"
#include "unit.h"

#define NBINS	512			/* an object's counters, 2 bytes each */
#define OBJ1	0x500000000000ULL	/* object 1's text, runtime */
#define LINK1	0x2000ULL		/* and link-time */
#define NOWHERE	0x600000000000ULL	/* PCs in no object */
#define LATE	0x700000000000ULL	/* an object loaded after the inventory */
#define LINK2	0x8000ULL

/* Give object obj one text segment seg of NBINS counters at runtime lo,
 * link-time link; its range for publishing into *r. */
static void
object_make(uint32_t obj, uint32_t seg, uint64_t lo, uint64_t link,
	    struct pc_range *r)
{
	struct pc_object *o = &pc_objs->objs[obj];
	struct pc_text *t = &o->text[seg];

	t->prof.buf = calloc(NBINS, sizeof(uint32_t));
	ck_assert_ptr_nonnull(t->prof.buf);
	t->prof.bufsiz = NBINS * sizeof(uint32_t);
	t->prof.offset = lo;
	t->prof.scale = PC_SCALE;
	t->link_low = link;
	o->ntext = (int)seg + 1;
	o->loaded = 1;
	o->bias = lo - link;
	if (pc_objs->nobjs <= (int)obj)
		pc_objs->nobjs = (int)obj + 1;
	*r = (struct pc_range){ lo, lo + 2 * NBINS, lo - link, obj, seg };
}

struct sampler {
	int rounds;
	uintptr_t base;		/* PCs base + 2 j, j < NBINS */
	uint64_t in_some;	/* what the calls returned, summed */
};

static void *
sample(void *arg)
{
	struct sampler *s = arg;

	unit_threads_go();
	for (int r = 0; r < s->rounds; r++)
		for (uint32_t j = 0; j < NBINS; j++)
			s->in_some += (uint64_t)pc_objects_sample_from_handler(
				s->base + 2 * j, j % 3 + 1);
	return NULL;
}

/* Sum of the pending table's counts at ip (duplicates included). */
static uint64_t
pending_at(uintptr_t ip)
{
	uint64_t c = 0;

	for (size_t i = 0; i < PC_PENDING; i++)
		if (pc_objs->pending[i].pc == ip)
			c += pc_objs->pending[i].count;
	return c;
}

/* Four threads in object 1, four in no object, 40 rounds of 512 PCs:
 * each counter and each pending PC has exactly 4 x 40 x its weight. */
START_TEST(test_threads_count_every_sample_exactly)
{
	struct sampler s[8];
	struct pc_range r;
	const struct pc_text *t;
	uint64_t in = 0, out = 0;

	unit_preload_reset();
	unit_objects_init();
	object_make(1, 0, OBJ1, LINK1, &r);
	unit_objects_publish(&r, 1);
	for (int i = 0; i < 8; i++)
		s[i] = (struct sampler){ 40, i % 2 ? NOWHERE : OBJ1, 0 };
	unit_threads(8, sample, s, sizeof(s[0]));
	t = &pc_objs->objs[1].text[0];
	for (uint32_t j = 0; j < NBINS; j++) {
		ck_assert_uint_eq(t->prof.buf[j], 4 * 40 * (j % 3 + 1));
		ck_assert_uint_eq(pending_at(NOWHERE + 2 * j),
				  4 * 40 * (j % 3 + 1));
		in += 4 * 40 * (j % 3 + 1);
	}
	for (int i = 0; i < 8; i++)
		out += s[i].in_some;
	ck_assert_uint_eq(out, 4 * 40 * NBINS);		/* only object 1's */
	ck_assert_uint_eq(pc_objs->objs[1].samples, in);
	ck_assert_uint_eq(pc_objs->pending_samples, in);
	ck_assert_uint_eq(pc_objs->pending_dropped, 0);
	ck_assert_uint_eq(pc_objs->unplaced, 0);
}
END_TEST

struct spreader {
	uintptr_t first;
	int n;
};

static void *
spread(void *arg)
{
	const struct spreader *s = arg;

	unit_threads_go();
	for (int i = 0; i < s->n; i++)
		pc_objects_sample_from_handler(s->first + 16 * (uintptr_t)i, 1);
	return NULL;
}

/* 80000 distinct PCs in no object from two threads, into 65536 slots:
 * every slot kept is one of them, once, and kept plus dropped is all. */
START_TEST(test_full_pending_table_drops_and_counts)
{
	struct spreader s[2] = { { NOWHERE, 40000 },
				 { NOWHERE + 16 * 40000, 40000 } };
	uint64_t kept = 0;

	unit_preload_reset();
	unit_objects_init();
	unit_threads(2, spread, s, sizeof(s[0]));
	for (size_t i = 0; i < PC_PENDING; i++) {
		const struct pc_pending *p = &pc_objs->pending[i];

		if (!p->count)
			continue;
		ck_assert_uint_eq(p->count, 1);
		ck_assert(p->pc >= NOWHERE && p->pc < NOWHERE + 16 * 80000 &&
			  (p->pc - NOWHERE) % 16 == 0);
		kept++;
	}
	ck_assert(pc_objs->pending_dropped > 0);
	ck_assert_uint_eq(kept, pc_objs->pending_samples);
	ck_assert_uint_eq(kept + pc_objs->pending_dropped, 80000);
}
END_TEST

/* glibc's _dl_find_object, for an object at LATE that the inventory has
 * not seen yet: 0 there, -1 elsewhere. */
static int
find_late(void *ip, void *result)
{
	return (uintptr_t)ip >= LATE && (uintptr_t)ip < LATE + 2 * NBINS ? 0 :
									   -1;
}

/* The late object's arc, as pc_arcs_each gives it: placed, or left. */
struct late_arc {
	uint64_t placed, left;
};

static void
see_late_arc(uint64_t from, uint64_t self, uint64_t count, void *arg)
{
	struct late_arc *a = arg;

	ck_assert_uint_eq(from, UNIT_TEXT_LINK + 0x10);
	if (self == ((uint64_t)2 << PC_OBJ_SHIFT | (LINK2 + 4)))
		a->placed += count;
	else
		a->left += count;
}

/*
 * Samples and an arc in an object loaded since the last inventory wait at
 * their runtime addresses (marked PC_OBJ_RAW in the arc); once the object
 * is published as object 2, placing moves every sample into its counters
 * and the arc to its link-time end, exactly, and the next placement has
 * nothing to do.
 */
START_TEST(test_late_object_is_placed_exactly)
{
	struct sampler s[4];
	struct pc_range r[2];
	uint64_t raw = (uint64_t)PC_OBJ_RAW << PC_OBJ_SHIFT | (LATE + 4);
	struct late_arc arc = { 0, 0 };

	unit_preload_reset();
	unit_objects_init();
	ck_assert_int_eq(pc_arcs_init(1024), 0);
	pc_objs->find_object = (void *)find_late;
	object_make(1, 0, OBJ1, LINK1, &r[0]);
	unit_objects_publish(r, 1);
	ck_assert_uint_eq(pc_link_addr(LATE + 4), raw);
	ck_assert_uint_eq(pc_link_addr(OBJ1 + 4),
			  (uint64_t)1 << PC_OBJ_SHIFT | (LINK1 + 4));
	for (int i = 0; i < 4; i++)
		s[i] = (struct sampler){ 10, LATE, 0 };
	unit_threads(4, sample, s, sizeof(s[0]));
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(s[i].in_some, 10 * NBINS);
	pc_arc_add_from_handler(UNIT_TEXT_LINK + 0x10, raw, 7);

	object_make(2, 0, LATE, LINK2, &r[1]);
	unit_objects_publish(r, 2);
	ck_assert_int_eq(pc_objects_place_pending(), 1);
	for (uint32_t j = 0; j < NBINS; j++)
		ck_assert_uint_eq(pc_objs->objs[2].text[0].prof.buf[j],
				  4 * 10 * (j % 3 + 1));
	ck_assert_uint_eq(pc_objs->pending_samples, 0);
	ck_assert_uint_eq(pc_objs->no_object, 0);
	ck_assert_int_eq(pc_objects_place_pending(), 0);
	pc_arcs_place(pc_object_place);
	pc_arcs_each(see_late_arc, &arc);
	ck_assert_uint_eq(arc.placed, 7);
	ck_assert_uint_eq(arc.left, 0);
}
END_TEST

/*
 * Two layouts the writer switches between without end: A holds objects 1
 * and 2, B the same with object 3 between them, so that object 2's range
 * moves from index 1 to 2 and index 1 changes hands. A lookup of object
 * 2's 0x38000 must give object 2, segment 1, link 0xd000, or nothing (it
 * gave up retrying); one of 0x28000 object 3, link 0x8000, or nothing.
 */
static const struct pc_range layout_a[] = {
	{ 0x10000, 0x20000, 0x10000 - 0x1000, 1, 0 },
	{ 0x30000, 0x40000, 0x30000 - 0x5000, 2, 1 },
};
static const struct pc_range layout_b[] = {
	{ 0x10000, 0x20000, 0x10000 - 0x1000, 1, 0 },
	{ 0x20000, 0x30000, 0x20000, 3, 0 },
	{ 0x30000, 0x40000, 0x30000 - 0x5000, 2, 1 },
};

struct racer {
	int writer;
	int *readers_left;
	uint64_t right, none, wrong;
};

static void
look(struct racer *r, uintptr_t a, uint32_t want_obj, uint64_t want_link,
     uint32_t want_seg)
{
	uint64_t link = 0;
	uint32_t seg = 0, obj = pc_object_find_from_handler(a, &link, &seg);

	if (!obj)
		r->none++;
	else if (obj == want_obj && link == want_link && seg == want_seg)
		r->right++;
	else
		r->wrong++;
}

static void *
race(void *arg)
{
	struct racer *r = arg;

	unit_threads_go();
	if (r->writer) {
		while (__atomic_load_n(r->readers_left, __ATOMIC_ACQUIRE)) {
			unit_objects_publish(layout_a, 2);
			unit_objects_publish(layout_b, 3);
		}
		return NULL;
	}
	for (int i = 0; i < 100000; i++) {
		look(r, 0x38000, 2, 0xd000, 1);
		look(r, 0x28000, 3, 0x8000, 0);
	}
	__atomic_fetch_sub(r->readers_left, 1, __ATOMIC_RELEASE);
	return NULL;
}

START_TEST(test_lookup_racing_a_republication_is_never_torn)
{
	int left = 3;
	struct racer r[4];
	uint64_t right = 0;

	unit_preload_reset();
	unit_objects_init();
	unit_objects_publish(layout_a, 2);
	for (int i = 0; i < 4; i++)
		r[i] = (struct racer){ i == 0, &left, 0, 0, 0 };
	unit_threads(4, race, r, sizeof(r[0]));
	for (int i = 1; i < 4; i++) {
		ck_assert_uint_eq(r[i].wrong, 0);
		ck_assert_uint_eq(r[i].right + r[i].none, 200000);
		right += r[i].right;
	}
	/* object 2 is in both layouts: most lookups of it succeed */
	ck_assert(right > 0);
}
END_TEST

START_TEST(test_copies_translate_retire_and_fill)
{
	unit_preload_reset();
	ck_assert_uint_eq(pc_copy_original_from_handler(0x1100), 0x1100);
	ck_assert_int_eq(pc_copy_add(0x1000, 0x2000, 0x10000), 0);
	ck_assert_uint_eq(pc_copy_original_from_handler(0x1000), 0x11000);
	ck_assert_uint_eq(pc_copy_original_from_handler(0x1fff), 0x11fff);
	ck_assert_uint_eq(pc_copy_original_from_handler(0x2000), 0x2000);
	/* a delta that takes the PC down, modulo the word */
	ck_assert_int_eq(pc_copy_add(0x9000, 0xa000, (uintptr_t)-0x8000), 0);
	ck_assert_uint_eq(pc_copy_original_from_handler(0x9010), 0x1010);
	/* an munmap of one byte of it, or a mapping over its last page */
	pc_copies_retire(0x1fff, 1);
	ck_assert_uint_eq(pc_copy_original_from_handler(0x1100), 0x1100);
	pc_copies_retire(0x8000, 0x1000);	/* ends where it starts */
	ck_assert_uint_eq(pc_copy_original_from_handler(0x9010), 0x1010);
	pc_copies_retire(0x9fff, 0x1000);
	ck_assert_uint_eq(pc_copy_original_from_handler(0x9010), 0x9010);
	for (int i = 0; i < PC_MAX_COPIES; i++)
		ck_assert_int_eq(pc_copy_add(0x100000 + 0x1000 * (uintptr_t)i,
					     0x101000 + 0x1000 * (uintptr_t)i,
					     1),
				 0);
	ck_assert_int_eq(pc_copy_add(0x1000, 0x2000, 1), -1);
	ck_assert_uint_eq(pc_copy_original_from_handler(0x100000 + 0x1000 * 63),
			  0x13f001);
	pc_copies_retire(0x100000, 0x1000 * PC_MAX_COPIES);
	ck_assert_int_eq(pc_copy_add(0x1000, 0x2000, 1), 0);
}
END_TEST

/* One writer puts A = [0x1000, 0x2000) +0x10000 and B = [0x1800,
 * 0x2800) +0x20000 in turn into the same slot; readers translate 0x1100
 * (A's only) and 0x2700 (B's only): each answer is the copy's or the PC
 * itself, never one copy's range with the other's delta. */
static void *
copy_race(void *arg)
{
	struct racer *r = arg;

	unit_threads_go();
	if (r->writer) {
		while (__atomic_load_n(r->readers_left, __ATOMIC_ACQUIRE)) {
			ck_assert_int_eq(pc_copy_add(0x1000, 0x2000, 0x10000),
					 0);
			pc_copies_retire(0x1000, 0x1000);
			ck_assert_int_eq(pc_copy_add(0x1800, 0x2800, 0x20000),
					 0);
			pc_copies_retire(0x1800, 0x1000);
		}
		return NULL;
	}
	for (int i = 0; i < 100000; i++) {
		uintptr_t a = pc_copy_original_from_handler(0x1100);
		uintptr_t b = pc_copy_original_from_handler(0x2700);

		r->right += (a == 0x11100) + (b == 0x22700);
		r->none += (a == 0x1100) + (b == 0x2700);
		r->wrong += (a != 0x11100 && a != 0x1100) +
			    (b != 0x22700 && b != 0x2700);
	}
	__atomic_fetch_sub(r->readers_left, 1, __ATOMIC_RELEASE);
	return NULL;
}

START_TEST(test_copy_lookup_racing_its_slot_reused_is_never_torn)
{
	int left = 3;
	struct racer r[4];

	unit_preload_reset();
	for (int i = 0; i < 4; i++)
		r[i] = (struct racer){ i == 0, &left, 0, 0, 0 };
	unit_threads(4, copy_race, r, sizeof(r[0]));
	for (int i = 1; i < 4; i++) {
		ck_assert_uint_eq(r[i].wrong, 0);
		ck_assert_uint_eq(r[i].right + r[i].none, 200000);
	}
}
END_TEST

Suite *
objfind_suite(void)
{
	Suite *s = suite_create("objfind");
	TCase *t = tcase_create("core");

	/* a fixed amount of work, which a busy machine may take long over */
	tcase_set_timeout(t, 60);
	tcase_add_test(t, test_threads_count_every_sample_exactly);
	tcase_add_test(t, test_full_pending_table_drops_and_counts);
	tcase_add_test(t, test_late_object_is_placed_exactly);
	tcase_add_test(t, test_lookup_racing_a_republication_is_never_torn);
	tcase_add_test(t, test_copies_translate_retire_and_fill);
	tcase_add_test(t,
		       test_copy_lookup_racing_its_slot_reused_is_never_torn);
	suite_add_tcase(s, t);
	return s;
}
