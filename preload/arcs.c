/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The call graph: each sampled stack's caller->callee edges counted into a
 * bounded open-addressing table, once per sample, at link-time addresses.
 * Frames outside the program's text (libc's qsort calling back into the
 * program, say) are transparent: the program's frames on either side of
 * them are joined, so the program's own edges survive.
 *
 * pc_arcs_add_from_handler runs in the signal handler: lock-free (slots are
 * claimed with compare-and-swap), no allocation, bounded work. A full table
 * counts what it drops.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pc.h"
#include "live.h"
#include "x86call.h"
#include "banned.h"

#define MAX_PROBE 64

/* The table, mapped once at start-up (then only its slots change). */
static struct pc_arc *table;
static size_t table_len;	/* bytes mapped */
/*
 * The slots handlers use: 1024 backed at first, doubled as they fill
 * (livegrow.c). Entries never move, and a doubling adds a segment of its
 * own, [slots, 2 slots), a hash table of its own: an arc is looked for in
 * the older segments, from the latest down, then in the newest, which
 * takes the new ones. One mask
 * for the whole table would pile the old entries and the second entries
 * of their keys into the first slots, until 64 probes found no room at 40
 * % of the table taken (cc1: 2,797 arc samples dropped of 25,360).
 */
static struct pc_grow grow;

int
pc_arcs_init(size_t nslots)
{
	size_t n = 1024;
	void *m;

	while (n < nslots)
		n *= 2;
	table_len = n * sizeof(struct pc_arc);
	m = pc_live_alloc(table_len, 0);
	if (!m)
		return -ENOMEM;
	table = m;
	pc_live_tables()->arcs = m;
	pc_grow_init(&grow, m, sizeof(struct pc_arc), 1024, n,
		     &pc_live_tables()->arcs_slots);
	return 0;
}

int
pc_arcs_recover(const struct pc_live_tables *t)
{
	if (!t->arcs_slots || (t->arcs_slots & (t->arcs_slots - 1)))
		return -EINVAL;
	table = t->arcs;
	table_len = t->arcs_slots * sizeof(struct pc_arc);
	grow.slots = t->arcs_slots;
	return 0;
}

void
pc_arcs_clear(void)
{
	if (table)
		madvise(table, table_len, MADV_DONTNEED);
}

/* The arc's entry in the segment [lo, lo + n) (n a power of two), or
 * NULL: probed up to the first empty slot. AS-safe. */
static struct pc_arc *
arc_find(size_t lo, size_t n, uint64_t h, uint64_t from, uint64_t self)
{
	for (size_t probe = 0; probe < MAX_PROBE && probe < n; probe++) {
		struct pc_arc *a = &table[lo + ((h + probe) & (n - 1))];
		uint32_t st = __atomic_load_n(&a->state, __ATOMIC_ACQUIRE);

		if (st == PC_SLOT_EMPTY)
			return NULL;
		if (st == PC_SLOT_READY && a->from == from && a->self == self)
			return a;
	}
	return NULL;
}

static int
arc_add(struct pc_arc *a, uint32_t w)
{
	if (a)
		__atomic_fetch_add(&a->count, w, __ATOMIC_RELAXED);
	return a != NULL;
}

/* The arc counted in the segment [lo, lo + n), the newest: 1, or 0 when
 * MAX_PROBE slots were all another's. AS-safe. */
static int
arc_claim(size_t lo, size_t n, uint64_t h, uint64_t from, uint64_t self,
	  uint32_t w)
{
	for (size_t probe = 0; probe < MAX_PROBE && probe < n; probe++) {
		struct pc_arc *a = &table[lo + ((h + probe) & (n - 1))];
		uint32_t st;

		if (pc_slot_claim(&a->state, &st)) {
			a->from = from;
			a->self = self;
			a->count = w;
			pc_slot_publish(&a->state);
			pc_grow_took_from_handler(&grow, 1);
			return 1;
		}
		if (st == PC_SLOT_READY && a->from == from && a->self == self)
			return arc_add(a, w);
		/* taken by another arc, or being filled in by another thread
		 * (which may be this very arc: a duplicate entry is harmless,
		 * gprof adds arcs with the same ends) */
	}
	return 0;
}

void
pc_arc_add_from_handler(uint64_t from, uint64_t self, uint32_t w)
{
	uint64_t h = pc_mix(from * 0x9e3779b97f4a7c15ULL ^ self);
	size_t hi = pc_grow_slots(&grow), lo = hi > grow.first ? hi / 2 : 0;

	if (from >> PC_OBJ_SHIFT == PC_OBJ_RAW ||
	    self >> PC_OBJ_SHIFT == PC_OBJ_RAW)
		pc_objects_note_unplaced();
	/* the older segments: a match, up to each one's first empty slot */
	for (size_t top = lo; top; ) {
		size_t bottom = top > grow.first ? top / 2 : 0;

		if (arc_add(arc_find(bottom, top - bottom, h, from, self), w))
			return;
		top = bottom;
	}
	/* the newest: a match, or a slot for a new arc */
	if (hi && arc_claim(lo, hi - lo, h, from, self, w))
		return;
	__atomic_fetch_add(&pc_stats->arcs_dropped, w, __ATOMIC_RELAXED);
}

/*
 * The callee of the direct call that returns to ra (e8 rel32 just before
 * it), when it lies in the program's text; 0 otherwise. Gives the frame
 * walkers that do not know entry points one address per function. Only
 * the main program's text is read: it is mapped for as long as the
 * program runs, where another object's may be unmapped by a dlclose in
 * another thread at any moment (the arc then keeps the call site, which
 * names the same function).
 */
static uint64_t
call_target(uintptr_t ra)
{
	uintptr_t target;

	/* only the e8's five bytes are known to be the program's */
	if (!pc_main_addr(ra - 5) ||
	    pc_call_before(ra, 5, &target) != PC_CALL_DIRECT)
		return 0;
	return pc_link_addr(target);
}

void
pc_arcs_add_from_handler(struct pc_frame *f, int n, uint32_t w)
{
	int m = 0, skipped = 0;

	/* keep the program's frames, in place: site becomes the link-time PC
	 * (inside the call instruction above frame 0, so that a call at the
	 * very end of a function stays in it), entry the function's
	 * link-time entry or 0 */
	for (int i = 0; i < n; i++) {
		uintptr_t raw = f[i].site;
		uint64_t site = pc_link_addr(raw - (i ? 1 : 0));
		uint64_t entry = f[i].entry ? pc_link_addr(f[i].entry) : 0;

		if (!site) {
			skipped = 1;
			continue;
		}
		/* a direct call from this frame names the entry of the one
		 * below it, for walkers that do not know entry points */
		if (m > 0 && !f[m - 1].entry && !skipped)
			f[m - 1].entry = call_target(raw);
		f[m].site = site;
		f[m].entry = entry;
		skipped = 0;
		m++;
	}
	for (int j = 1; j < m; j++) {
		uint64_t caller = f[j].entry ? f[j].entry : f[j].site;
		uint64_t callee =
			f[j - 1].entry ? f[j - 1].entry : f[j - 1].site;
		int seen = 0;

		/* once per sample: recursion puts the same edge on the stack
		 * many times */
		for (int i = 1; i < j && !seen; i++)
			seen = (f[i].entry ? f[i].entry : f[i].site) ==
				       caller &&
			       (f[i - 1].entry ? f[i - 1].entry :
						 f[i - 1].site) == callee;
		if (!seen)
			pc_arc_add_from_handler(f[j].site, callee, w);
	}
}

struct arcs_walk {
	void (*fn)(uint64_t, uint64_t, uint64_t, void *);
	void *arg;
};

static int
arcs_in(size_t lo, size_t hi, void *arg)
{
	const struct arcs_walk *w = arg;

	for (size_t i = lo / sizeof(struct pc_arc);
	     i < hi / sizeof(struct pc_arc); i++) {
		struct pc_arc *a = &table[i];

		if (pc_slot_ready(&a->state))
			w->fn(a->from, a->self,
			      __atomic_load_n(&a->count, __ATOMIC_RELAXED),
			      w->arg);
	}
	return 0;
}

void
pc_arcs_each(void (*fn)(uint64_t, uint64_t, uint64_t, void *), void *arg)
{
	struct arcs_walk w = { fn, arg };

	/* the pages no arc ever touched are skipped (most of a 2 MiB table,
	 * in a short-lived process) */
	if (table)
		pc_live_each_written(
			table, pc_grow_slots(&grow) * sizeof(struct pc_arc),
			arcs_in, &w);
}

struct own_arcs {
	struct gmon_sink *s;
	uint64_t obj;
};

static void
write_own_arc(uint64_t from, uint64_t self, uint64_t c, void *arg)
{
	struct own_arcs *o = arg;

	/* arcs between two objects go in the manifest (objfind.c) */
	if (!c || from >> PC_OBJ_SHIFT != o->obj ||
	    self >> PC_OBJ_SHIFT != o->obj)
		return;
	from &= PC_OBJ_MASK;
	self &= PC_OBJ_MASK;
	/* gprof's arc counts are 32 bits and it adds arcs with the same
	 * ends, so a larger count goes in several records */
	for (; c > UINT32_MAX; c -= UINT32_MAX)
		gmon_sink_arc(o->s, from, self, UINT32_MAX);
	gmon_sink_arc(o->s, from, self, (uint32_t)c);
}

int
pc_arcs_write(struct gmon_sink *s, uint32_t obj)
{
	struct own_arcs o = { s, obj };

	pc_arcs_each(write_own_arc, &o);
	return s->error;
}

void
pc_arcs_place(uint64_t (*place)(uint64_t addr))
{
	if (!table)
		return;
	for (size_t i = 0; i < pc_grow_slots(&grow); i++) {
		struct pc_arc *a = &table[i];
		uint64_t from, self, c;

		if (!pc_slot_ready(&a->state) ||
		    (a->from >> PC_OBJ_SHIFT != PC_OBJ_RAW &&
		     a->self >> PC_OBJ_SHIFT != PC_OBJ_RAW))
			continue;
		from = place(a->from);
		self = place(a->self);
		if (!from || !self || from >> PC_OBJ_SHIFT == PC_OBJ_RAW ||
		    self >> PC_OBJ_SHIFT == PC_OBJ_RAW)
			continue;
		for (c = __atomic_exchange_n(&a->count, 0, __ATOMIC_RELAXED);
		     c > UINT32_MAX; c -= UINT32_MAX)
			pc_arc_add_from_handler(from, self, UINT32_MAX);
		if (c)
			pc_arc_add_from_handler(from, self, (uint32_t)c);
	}
}
