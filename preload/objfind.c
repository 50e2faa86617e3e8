/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where a PC is, for the signal handler: the main program's text, or with
 * PC_SCOPE=all the object whose published range holds it (found without a
 * lock), with the sample counted in that object's histogram; PCs of objects
 * the inventory has not seen yet are kept until a scan places them.
 * Everything here except pc_objects_place_pending is async-signal-safe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>		/* _dl_find_object */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pc.h"
#include "objects.h"
#include "live.h"
#include "banned.h"

uint64_t
pc_main_addr(uintptr_t a)
{
	for (int i = 0; i < pc->ntext; i++)
		if (pc_profil_index(&pc->text[i].prof, a) != (size_t)-1)
			return a - pc_cfg->bias;
	return 0;
}

uint64_t
pc_link_addr(uintptr_t a)
{
	uint64_t link;
	uint32_t obj, seg;

	a = pc_copy_original_from_handler(a);
	if ((link = pc_main_addr(a)))
		return link;
	if (!pc_cfg->scope_all)
		return 0;
	if ((obj = pc_object_find_from_handler(a, &link, &seg)))
		return (uint64_t)obj << PC_OBJ_SHIFT | link;
	/* loaded since the last inventory: kept as is until it is taken */
	if (a <= PC_OBJ_MASK && pc_object_unplaced_from_handler(a))
		return (uint64_t)PC_OBJ_RAW << PC_OBJ_SHIFT | a;
	return 0;
}

uint32_t
pc_object_find_from_handler(uintptr_t a, uint64_t *link, uint32_t *seg)
{
	for (int tries = 0; tries < 3; tries++) {
		int c = __atomic_load_n(&pc_objs->range_cur, __ATOMIC_ACQUIRE);
		uint32_t s0 = __atomic_load_n(&pc_objs->range_seq[c],
					      __ATOMIC_ACQUIRE);
		const volatile struct pc_range *r = pc_objs->ranges[c];
		uint32_t n =
			__atomic_load_n(&pc_objs->nranges[c], __ATOMIC_RELAXED);
		size_t lo = 0, hi;
		struct pc_range got = { 0, 0, 0, 0, 0 };

		if (s0 & 1)
			continue;
		hi = n < PC_MAX_RANGES ? n : PC_MAX_RANGES;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (r[mid].lo <= a)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo) {
			got.lo = r[lo - 1].lo;
			got.hi = r[lo - 1].hi;
			got.bias = r[lo - 1].bias;
			got.obj = r[lo - 1].obj;
			got.seg = r[lo - 1].seg;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&pc_objs->range_seq[c], __ATOMIC_RELAXED) !=
		    s0)
			continue;	/* rewritten under us: look again */
		if (!lo || a < got.lo || a >= got.hi || got.obj == 0 ||
		    got.obj >= PC_MAX_OBJECTS || got.seg >= PC_OBJ_TEXT)
			return 0;
		*link = a - got.bias;
		*seg = got.seg;
		return got.obj;
	}
	return 0;
}

int
pc_object_unplaced_from_handler(uintptr_t ip)
{
	struct dl_find_object r;
	int (*find)(void *, struct dl_find_object *) =
		(int (*)(void *, struct dl_find_object *))pc_objs->find_object;

	return find && find((void *)ip, &r) == 0;
}

/* Credit w samples at link-time address link of segment seg. AS-safe. */
static int
count_in(uint32_t obj, uint32_t seg, uint64_t link, uint64_t w)
{
	struct pc_object *o = &pc_objs->objs[obj];
	struct pc_text *t = &o->text[seg];
	unsigned bin = pc_profil_bin_bytes(t->prof.scale);
	uint64_t k;

	if (seg >= (uint32_t)o->ntext || link < t->link_low)
		return 0;
	k = (link - t->link_low) / bin;
	if (k >= t->prof.bufsiz / sizeof(uint32_t))
		return 0;
	/* 32-bit counters, as the main program's; the writer carries */
	pc_live_add_from_handler(&t->prof.buf[k], (uint32_t)w);
	__atomic_fetch_add(&o->samples, w, __ATOMIC_RELAXED);
	return 1;
}

/* The pending table's slots that handlers use: 1024 backed at first,
 * doubled as they fill (livegrow.c). */
static struct pc_grow pending_grow;

void
pc_objects_pending_init(void)
{
	pc_grow_init(&pending_grow, pc_objs->pending, sizeof(struct pc_pending),
		     1024, PC_PENDING, NULL);
}

/*
 * Keep a sample at a PC of an object not in the inventory yet (unplaced:
 * the next inventory will place it), or of code in no object at all (JIT
 * code in anonymous memory: written as it is, for pcprof to name from the
 * process's /tmp/perf-PID.map). AS-safe.
 */
static void
pending_add(uintptr_t ip, uint32_t w, int unplaced)
{
	uint64_t h = pc_mix(ip);
	size_t mask = pc_grow_slots(&pending_grow) - 1;

	for (size_t probe = 0; probe < 64 && mask != (size_t)-1; probe++) {
		struct pc_pending *p = &pc_objs->pending[(h + probe) & mask];
		uint32_t st;

		if (pc_slot_claim(&p->state, &st)) {
			/* the total first: placing subtracts what it takes
			 * from a count, which must never exceed the total */
			__atomic_fetch_add(&pc_objs->pending_samples, w,
					   __ATOMIC_RELAXED);
			p->pc = ip;
			p->count = w;
			pc_slot_publish(&p->state);
			pc_grow_took_from_handler(&pending_grow, 1);
			if (unplaced)
				__atomic_fetch_add(&pc_objs->unplaced, 1,
						   __ATOMIC_RELAXED);
			return;
		}
		if (st == PC_SLOT_READY && p->pc == ip) {
			__atomic_fetch_add(&pc_objs->pending_samples, w,
					   __ATOMIC_RELAXED);
			__atomic_fetch_add(&p->count, w, __ATOMIC_RELAXED);
			if (unplaced)
				__atomic_fetch_add(&pc_objs->unplaced, 1,
						   __ATOMIC_RELAXED);
			return;
		}
	}
	__atomic_fetch_add(&pc_objs->pending_dropped, w, __ATOMIC_RELAXED);
}

int
pc_objects_sample_from_handler(uintptr_t ip, uint32_t w)
{
	uint64_t link;
	uint32_t seg, obj = pc_object_find_from_handler(ip, &link, &seg);

	if (obj && count_in(obj, seg, link, w))
		return 1;
	if (pc_object_unplaced_from_handler(ip)) {
		pending_add(ip, w, 1);
		return 1;
	}
	pending_add(ip, w, 0);
	return 0;
}

uint64_t
pc_object_place(uint64_t v)
{
	uint64_t link;
	uint32_t seg, obj;

	if (v >> PC_OBJ_SHIFT != PC_OBJ_RAW)
		return v;
	if (!(obj = pc_object_find_from_handler((uintptr_t)(v & PC_OBJ_MASK),
						&link, &seg)))
		return v;
	return (uint64_t)obj << PC_OBJ_SHIFT | link;
}

int
pc_objects_place_pending(void)
{
	/* most inventories find nothing to place: skip the tables then */
	if (!__atomic_exchange_n(&pc_objs->unplaced, 0, __ATOMIC_ACQ_REL))
		return 0;
	for (size_t i = 0; i < pc_grow_slots(&pending_grow); i++) {
		struct pc_pending *p = &pc_objs->pending[i];
		uint64_t link, c;
		uint32_t seg, obj;

		if (!pc_slot_ready(&p->state) ||
		    !__atomic_load_n(&p->count, __ATOMIC_RELAXED))
			continue;
		if (!(obj = pc_object_find_from_handler(p->pc, &link, &seg)))
			continue;
		c = __atomic_exchange_n(&p->count, 0, __ATOMIC_RELAXED);
		__atomic_fetch_sub(&pc_objs->pending_samples, c,
				   __ATOMIC_RELAXED);
		if (c && !count_in(obj, seg, link, c))
			__atomic_fetch_add(&pc_objs->no_object, c,
					   __ATOMIC_RELAXED);
	}
	return 1;
}

void
pc_objects_note_unplaced(void)
{
	__atomic_fetch_add(&pc_objs->unplaced, 1, __ATOMIC_RELAXED);
}

int
pc_object_bias_of_file(dev_t dev, ino_t ino, uintptr_t *bias)
{
	int n = __atomic_load_n(&pc_objs->nobjs, __ATOMIC_ACQUIRE);
	struct stat sb;

	/* by path, each time: a copy is mapped rarely (once per V8
	 * isolate); stat is async-signal-safe */
	for (int i = 1; i < n; i++) {
		const struct pc_object *o = &pc_objs->objs[i];

		if (o->loaded && !o->vdso && o->path[0] == '/' &&
		    stat(o->path, &sb) == 0 && sb.st_dev == dev &&
		    sb.st_ino == ino) {
			*bias = o->bias;
			return 0;
		}
	}
	return -1;
}

/* For the writer, which may run in a fatal-signal handler. */
void
pc_objects_counts(struct pc_object_counts *n)
{
	n->others = pc_objs->nobjs > 1 ? (uint64_t)(pc_objs->nobjs - 1) : 0;
	n->in_none =
		pc_objs->pending_dropped + pc_objs->no_object +
		__atomic_load_n(&pc_objs->pending_samples, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------- copies */

/*
 * Copies of a known object's code mapped from its file (mappings.c learns
 * them). One copy: runtime [lo, hi), delta (original = pc + delta). Written
 * under a sequence count, odd while a writer changes it; state says who
 * may write: COPY_FREE, COPY_BUSY (one writer), COPY_LIVE.
 */
struct copy {
	uintptr_t lo, hi, delta;
	uint32_t seq, state;
};

enum { COPY_FREE, COPY_BUSY, COPY_LIVE };

#define MAX_COPIES	PC_MAX_COPIES

static struct copy copies[MAX_COPIES];
static uint32_t used;		/* slots ever used: the handler's bound */
static uint32_t live;		/* live copies: 0 spares the overlap check */

/* The original of a PC in a copy, or the PC itself. AS-safe. */
uintptr_t
pc_copy_original_from_handler(uintptr_t at)
{
	uint32_t n = __atomic_load_n(&used, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < n; i++) {
		struct copy *c = &copies[i];
		uint32_t s = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
		uintptr_t lo, hi, delta;

		if (s & 1)
			continue; /* being written: no copy to run from yet */
		lo = __atomic_load_n(&c->lo, __ATOMIC_RELAXED);
		hi = __atomic_load_n(&c->hi, __ATOMIC_RELAXED);
		delta = __atomic_load_n(&c->delta, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&c->seq, __ATOMIC_RELAXED) != s)
			continue;
		if (at >= lo && at < hi)
			return at + delta;
	}
	return at;
}

static void
copy_set(struct copy *c, uintptr_t lo, uintptr_t hi, uintptr_t delta)
{
	__atomic_fetch_add(&c->seq, 1, __ATOMIC_RELEASE);	/* odd */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&c->lo, lo, __ATOMIC_RELAXED);
	__atomic_store_n(&c->hi, hi, __ATOMIC_RELAXED);
	__atomic_store_n(&c->delta, delta, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->seq, 1, __ATOMIC_RELEASE);	/* even */
}

int
pc_copy_add(uintptr_t lo, uintptr_t hi, uintptr_t delta)
{
	for (uint32_t i = 0; i < MAX_COPIES; i++) {
		struct copy *c = &copies[i];
		uint32_t st = COPY_FREE, n;

		if (!__atomic_compare_exchange_n(&c->state, &st, COPY_BUSY, 0,
						 __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		copy_set(c, lo, hi, delta);
		__atomic_store_n(&c->state, COPY_LIVE, __ATOMIC_RELEASE);
		__atomic_fetch_add(&live, 1, __ATOMIC_RELAXED);
		n = __atomic_load_n(&used, __ATOMIC_RELAXED);
		while (n < i + 1 && !__atomic_compare_exchange_n(
					    &used, &n, i + 1, 0,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
		return 0;
	}
	return -1;
}

void
pc_copies_retire(uintptr_t a, size_t len)
{
	/* munmap, mremap and MAP_FIXED act on whole pages, and a copy need not
	 * start on one (a segment's file offset need not be page-aligned) */
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uint32_t n;

	if (!__atomic_load_n(&live, __ATOMIC_RELAXED))
		return;
	len = (size_t)(((a + len + page - 1) & ~(page - 1)) -
		       (a & ~(page - 1)));
	a &= ~(page - 1);
	n = __atomic_load_n(&used, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++) {
		struct copy *c = &copies[i];
		uint32_t st = COPY_LIVE;

		if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != COPY_LIVE ||
		    !(c->lo < a + len && a < c->hi) ||
		    !__atomic_compare_exchange_n(&c->state, &st, COPY_BUSY, 0,
						 __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		copy_set(c, 0, 0, 0);
		__atomic_fetch_sub(&live, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&c->state, COPY_FREE, __ATOMIC_RELEASE);
	}
}
