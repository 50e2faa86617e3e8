/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What PC_ALLOC's samples are kept in, lock-free and allocation-free, for
 * alloc.c's hooks, and the file they are written to at the end.
 *
 * Stacks: each distinct stack of a sampled allocation is stored once in
 * an arena (an atomic add takes its words), found through an
 * open-addressing index of offsets published by compare-and-swap (two
 * threads racing on a new stack may store it twice: pcprof adds them).
 * An entry holds the stack's counts: its samples and frees, and their
 * estimates, in fixed point so that a free subtracts exactly what its
 * allocation added. The arena and the index live in the live file
 * (live.c), so that a process killed by SIGKILL leaves its allocation
 * profile for pc_recover: both start small and double as they fill
 * (livegrow.c's tables; a stack found at another slot after the index
 * doubled is stored again, and its entries add up), and a sample with no
 * backed room yet is dropped and counted. A fork child counts into a
 * file of its own from libpc's fork handler on (lifecycle.c), which
 * pthread_atfork runs before the handlers registered after libpc's
 * constructor; one that cannot have a file stops (pc_alloc_stop).
 *
 * Blocks: each sampled block's address, size and stack, until its free,
 * in an open-addressing table of segments: 4096 slots at first, each new
 * segment twice the last, mapped when the last is half full, at most
 * PC_ALLOC_MAX_BLOCKS slots in all (24 bytes each). A slot is claimed by
 * compare-and-swap of its address word, freed to a tombstone that later
 * claims reuse. A free looks up only while some block is tracked.
 *
 * With PC_TIMELINE too, each sampled allocation and each free of a
 * tracked block is an event of the timeline's (timeline.c), timed there:
 * the sampled path's cost, never the hooks' fast path's. Its stack is
 * its arena offset; the stacks are written into PROFILE.timeline by that
 * id (pc_alloc_timeline_stacks).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "alloc.h"
#include "live.h"
#include "timeline.h"
#include "banned.h"

#define MAX_PROBE	64
#define INDEX_SLOTS	(1u << 16)
#define INDEX_FIRST	4096		/* index slots backed at first */
#define ARENA_FIRST	8192		/* and arena words (64 KiB) */
#define FIXED		65536.0		/* objects: in 1/65536ths */

enum {
	E_HASH,
	E_DEPTH,
	E_NALLOC,
	E_OBJ,
	E_BYTES,
	E_NFREE,
	E_FOBJ,
	E_FBYTES,
	E_FRAMES
};

#define EMPTY		0
#define TOMB		1
#define SEG0		4096u
#define MAX_SEGS	12

struct block {
	uint64_t addr;		/* EMPTY, TOMB, or the block's (atomic) */
	uint64_t size;
	uint32_t stack;		/* arena offset of its stack */
	uint32_t spare;
};

struct segment {
	struct block *slot;	/* SEG0 << k of them */
	size_t fresh;		/* empty slots claimed (atomic) */
};

static uint64_t rate;
static uint64_t *arena;
static size_t arena_words;
static uint32_t *index_slots;
/* what may be used of each, backed in the live file (livegrow.c): the
 * arena's words [used, slots) free, the index's slots */
static struct pc_grow arena_grow, index_grow;
static struct segment segs[MAX_SEGS];
static int nsegs;			/* atomic */
static int growing;			/* a segment is being mapped (atomic) */
static long tracked;			/* blocks in the table (atomic) */
static uint64_t dropped;		/* samples with no room (atomic) */
uint8_t pc_alloc_filter[PC_ALLOC_FILTER];

/* One more (1) or one less (-1) tracked block in p's bucket; a full
 * bucket stays full. */
static void
filter_add(uint64_t p, int d)
{
	uint8_t *b =
		&pc_alloc_filter[pc_alloc_bucket((const void *)(uintptr_t)p)];
	uint8_t cur = __atomic_load_n(b, __ATOMIC_RELAXED);

	do {
		if (cur == 255 || (d < 0 && cur == 0))
			return;
	} while (!__atomic_compare_exchange_n(b, &cur, (uint8_t)(cur + d), 1,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
}

static void *
map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int
pc_alloc_table_init(uint64_t r)
{
	struct pc_live_tables *t = pc_live_tables();
	uint64_t *a;
	uint32_t *x;

	rate = r;
	arena_words = ((size_t)PC_ALLOC_STACKS_MB << 20) / sizeof(uint64_t);
	/* the live file's regions, or anonymous memory without one */
	a = pc_live_alloc(arena_words * sizeof(uint64_t), 0);
	x = pc_live_alloc(INDEX_SLOTS * sizeof(uint32_t), 0);
	segs[0].slot = map(SEG0 * sizeof(struct block));
	if (!a || !x || !segs[0].slot)
		return -ENOMEM;
	pc_grow_init(&arena_grow, a, sizeof(uint64_t), ARENA_FIRST, arena_words,
		     NULL);
	pc_grow_init(&index_grow, x, sizeof(uint32_t), INDEX_FIRST, INDEX_SLOTS,
		     &t->alloc_slots);
	if (!pc_grow_slots(&arena_grow) || !pc_grow_slots(&index_grow))
		return -ENOMEM;	/* the file could not back their first pages */
	arena_grow.used = 1;	/* offset 0 reads as an empty index slot */
	arena = a;
	index_slots = x;
	nsegs = 1;
	t->alloc_arena = a;
	t->alloc_words = arena_words;
	t->alloc_index = x;
	t->alloc_rate = r;
	return 0;
}

int
pc_alloc_recover(const struct pc_live_tables *t)
{
	arena = NULL;
	if (!t || !t->alloc_arena)
		return 0;
	if (!t->alloc_slots || t->alloc_slots > INDEX_SLOTS ||
	    (t->alloc_slots & (t->alloc_slots - 1)) ||
	    t->alloc_words > UINT32_MAX || !t->alloc_rate)
		return -EINVAL;
	arena = t->alloc_arena;
	arena_words = t->alloc_words;
	index_slots = t->alloc_index;
	index_grow.slots = t->alloc_slots;
	rate = t->alloc_rate;
	return 0;
}

void
pc_alloc_table_clear(void)
{
	if (!arena)
		return;
	/* zero pages where the tables are anonymous memory; the child's own
	 * live file, where it has one, has them as holes already, and
	 * pc_live_grow_forked took the tables back to their first slots */
	madvise(arena, arena_words * sizeof(uint64_t), MADV_DONTNEED);
	madvise(index_slots, INDEX_SLOTS * sizeof(uint32_t), MADV_DONTNEED);
	for (int k = 0; k < nsegs; k++) {
		madvise(segs[k].slot, (SEG0 << k) * sizeof(struct block),
			MADV_DONTNEED);
		segs[k].fresh = 0;
	}
	arena_grow.used = 1;
	tracked = 0;
	dropped = 0;
	memset(pc_alloc_filter, 0, sizeof(pc_alloc_filter));
}

void
pc_alloc_table_detach(void)
{
	/* the filter empty: no free looks a block up */
	memset(pc_alloc_filter, 0, sizeof(pc_alloc_filter));
	tracked = 0;
	arena = NULL;	/* and nothing is written */
}

/* 1 - exp(-x) = x - x^2 / 2! + x^3 / 3! - ...: the coefficients, for
 * Horner's rule (no division: a sample computes it twice, at its
 * allocation and at its free); 17 terms, 6e-22 short at x = 0.5. */
static const double expm_coef[] = {
	1.0, -1.0 / 2, 1.0 / 6, -1.0 / 24, 1.0 / 120, -1.0 / 720,
	1.0 / 5040, -1.0 / 40320, 1.0 / 362880, -1.0 / 3628800,
	1.0 / 39916800, -1.0 / 479001600, 1.0 / 6227020800.0,
	-1.0 / 87178291200.0, 1.0 / 1307674368000.0,
	-1.0 / 20922789888000.0, 1.0 / 355687428096000.0,
};
#define EXPM_TERMS	(int)(sizeof(expm_coef) / sizeof(expm_coef[0]))

/* 1 - exp(-x) for x in [0, 0.5] */
static double
one_minus_exp_small(double x)
{
	double p = expm_coef[EXPM_TERMS - 1];

#pragma GCC unroll 20
	for (int k = EXPM_TERMS - 2; k >= 0; k--)
		p = p * x + expm_coef[k];
	return p * x;
}

/* 1 - exp(-x), x >= 0, without libm: the series where it is small, else
 * exp(-x) as (exp(-x / 2^m))^(2^m). */
static double
one_minus_exp_neg(double x)
{
	double e;
	int m = 0;

	if (x > 40)
		return 1;
	if (x <= 0.5)
		return one_minus_exp_small(x);
	while (x > 0.5) {
		x *= 0.5;
		m++;
	}
	e = 1 - one_minus_exp_small(x);
	while (m--)
		e *= e;
	return 1 - e;
}

double
pc_alloc_weight(uint64_t size, uint64_t r)
{
	if (r <= 1)
		return 1;
	return 1 / one_minus_exp_neg((double)(size ? size : 1) / (double)r);
}

/* The stack's frames as the file has them: link-time addresses of the
 * calls (a return address less one), each run of frames outside what is
 * profiled as one 0; how many into w. */
static int
encode(const struct pc_frame *f, int n, uint64_t *w)
{
	int k = 0;

	for (int i = 0; i < n; i++) {
		uintptr_t a = f[i].site - 1;
		uint64_t link = pc_link_addr(a);

		if (!link && pc_cfg->scope_all && a && a <= PC_OBJ_MASK)
			link = (uint64_t)GMON_OBJ_ANON << PC_OBJ_SHIFT | a;
		if (!link && k && !w[k - 1])
			continue;
		w[k++] = link;
	}
	return k;
}

/* need words of the arena's backed part: their offset, or 0 when it
 * has no room (yet: the grower is woken at half). */
static size_t
take_words(size_t need)
{
	size_t used = __atomic_load_n(&arena_grow.used, __ATOMIC_RELAXED);

	do {
		if (used + need > pc_grow_slots(&arena_grow) ||
		    used + need > UINT32_MAX)
			return 0;
	} while (!__atomic_compare_exchange_n(&arena_grow.used, &used,
					      used + need, 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	pc_grow_took_from_handler(&arena_grow, 0);
	return used;
}

/* Whether entry e is the stack w[0..n) of depth word dw and hash h. */
static int
same_stack(const uint64_t *e, uint64_t h, uint64_t dw, const uint64_t *w, int n)
{
	return e[E_HASH] == h && e[E_DEPTH] == dw &&
	       !memcmp(e + E_FRAMES, w, (size_t)n * sizeof(*w));
}

/* The arena offset of the stack w[0..n) (depth word dw), stored now if
 * new; 0 when there is no room. */
static uint32_t
stack_id(const uint64_t *w, int n, uint64_t dw)
{
	uint64_t h = dw;
	size_t need = E_FRAMES + (size_t)n, off,
	       slots = pc_grow_slots(&index_grow);

	for (int i = 0; i < n; i++)
		h = pc_mix(h ^ w[i]) + (uint64_t)i;
	h |= 1;
	for (uint32_t probe = 0; probe < MAX_PROBE; probe++) {
		uint32_t *slot = &index_slots[(h + probe) & (slots - 1)];
		uint32_t cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
		uint64_t *e;

		if (cur) {
			if (same_stack(arena + cur, h, dw, w, n))
				return cur;
			continue;
		}
		if (!(off = take_words(need)))
			return 0;
		e = arena + off;
		e[E_HASH] = h;
		e[E_DEPTH] = dw;
		memcpy(e + E_FRAMES, w, (size_t)n * sizeof(*w));
		if (__atomic_compare_exchange_n(slot, &cur, (uint32_t)off, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			pc_grow_took_from_handler(&index_grow, 1);
			return (uint32_t)off;
		}
		/* another thread published a stack here first: compare it
		 * (this entry's words stay unused) */
		if (same_stack(arena + cur, h, dw, w, n))
			return cur;
	}
	return 0;
}

/* Add (sign 1) or take back (the free's words) one block of size bytes
 * to its stack's counts. */
static void
count(uint32_t stack, uint64_t size, int freed)
{
	uint64_t *e = arena + stack;
	double w = pc_alloc_weight(size, rate);
	uint64_t obj = (uint64_t)(w * FIXED + 0.5),
		 bytes = (uint64_t)(w * (double)size + 0.5);

	if (rate <= 1)
		obj = (uint64_t)FIXED, bytes = size;
	__atomic_fetch_add(&e[freed ? E_NFREE : E_NALLOC], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&e[freed ? E_FOBJ : E_OBJ], obj, __ATOMIC_RELAXED);
	__atomic_fetch_add(&e[freed ? E_FBYTES : E_BYTES], bytes,
			   __ATOMIC_RELAXED);
}

static size_t
slot_of(uint64_t addr, size_t n)
{
	return (size_t)pc_mix(addr >> 4) & (n - 1);
}

/* Map segment k (the next) unless another thread does. */
static void
grow(int k)
{
	int no = 0;
	void *p;

	if (k >= MAX_SEGS || (SEG0 << k) * 2 - SEG0 > PC_ALLOC_MAX_BLOCKS ||
	    !__atomic_compare_exchange_n(&growing, &no, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return;
	if (__atomic_load_n(&nsegs, __ATOMIC_ACQUIRE) == k &&
	    (p = map((SEG0 << k) * sizeof(struct block)))) {
		segs[k].slot = p;
		segs[k].fresh = 0;
		__atomic_store_n(&nsegs, k + 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&growing, 0, __ATOMIC_RELEASE);
}

/* Put p in the newest segment; 0, or -1 when it has no room. */
static int
insert(uint64_t p, uint64_t size, uint32_t stack)
{
	int k = __atomic_load_n(&nsegs, __ATOMIC_ACQUIRE) - 1;
	size_t n = SEG0 << k, at = slot_of(p, n);
	struct segment *g = &segs[k];

	for (size_t probe = 0; probe < MAX_PROBE; probe++) {
		struct block *b = &g->slot[(at + probe) & (n - 1)];
		uint64_t cur = __atomic_load_n(&b->addr, __ATOMIC_RELAXED);

		if ((cur == EMPTY || cur == TOMB) &&
		    __atomic_compare_exchange_n(&b->addr, &cur, p, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			b->size = size;
			b->stack = stack;
			filter_add(p, 1);
			__atomic_fetch_add(&tracked, 1, __ATOMIC_RELAXED);
			if (cur == EMPTY &&
			    __atomic_add_fetch(&g->fresh, 1, __ATOMIC_RELAXED) >
				    n / 2)
				grow(k + 1);
			return 0;
		}
	}
	grow(k + 1);
	return -1;
}

void
pc_alloc_record(void *p, size_t size, const struct pc_frame *f, int n)
{
	uint64_t w[PC_ALLOC_DEPTH];
	int k = encode(f, n, w);
	uint64_t dw = (uint64_t)k |
		      (uint64_t)(n >= PC_ALLOC_DEPTH ? GMON_STACK_TRUNCATED : 0)
			      << 32;
	uint32_t stack = stack_id(w, k, dw);

	/* its event before the block can be found: its free's comes after
	 * it, in time too */
	if (stack)
		pc_timeline_alloc(PC_TL_MALLOC, stack, size,
				  (uint64_t)(uintptr_t)p);
	if (!stack || insert((uint64_t)(uintptr_t)p, size, stack)) {
		__atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
		if (!stack)
			return;
	}
	count(stack, size, 0);
}

int
pc_alloc_tracking(void)
{
	return __atomic_load_n(&tracked, __ATOMIC_RELAXED) > 0;
}

int
pc_alloc_forget(void *p, size_t *size, uint32_t *stack)
{
	uint64_t a = (uint64_t)(uintptr_t)p;
	int k = __atomic_load_n(&nsegs, __ATOMIC_ACQUIRE);

	/* the newest segment first: new blocks go there */
	while (k-- > 0) {
		size_t n = SEG0 << k, at = slot_of(a, n);

		for (size_t probe = 0; probe < MAX_PROBE; probe++) {
			struct block *b = &segs[k].slot[(at + probe) & (n - 1)];
			uint64_t cur =
				__atomic_load_n(&b->addr, __ATOMIC_ACQUIRE);

			if (cur == EMPTY)
				break;
			if (cur != a)
				continue;
			*size = b->size;
			*stack = b->stack;
			if (!__atomic_compare_exchange_n(&b->addr, &cur, TOMB,
							 0, __ATOMIC_ACQ_REL,
							 __ATOMIC_RELAXED))
				return 0;
			__atomic_fetch_sub(&tracked, 1, __ATOMIC_RELAXED);
			filter_add(a, -1);
			count(*stack, *size, 1);
			pc_timeline_alloc(PC_TL_FREE, *stack, *size, a);
			return 1;
		}
	}
	return 0;
}

void
pc_alloc_restore(void *p, size_t size, uint32_t stack)
{
	/* its free taken back: the block is the program's still */
	uint64_t *e = arena + stack;
	double w = pc_alloc_weight(size, rate);
	uint64_t obj =
		rate <= 1 ? (uint64_t)FIXED : (uint64_t)(w * FIXED + 0.5);
	uint64_t bytes = rate <= 1 ? size : (uint64_t)(w * (double)size + 0.5);

	__atomic_fetch_sub(&e[E_NFREE], 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&e[E_FOBJ], obj, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&e[E_FBYTES], bytes, __ATOMIC_RELAXED);
	pc_timeline_alloc(PC_TL_UNFREE, stack, size, (uint64_t)(uintptr_t)p);
	if (insert((uint64_t)(uintptr_t)p, size, stack))
		__atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
}

/* One record of stack entry e: kind's count, when not 0. */
static void
put(struct gmon_sink *s, const uint64_t *e, int kind, uint64_t c)
{
	if (c)
		gmon_sink_stack(s, c,
				GMON_STACK_ALLOC |
					(uint32_t)kind
						<< GMON_ALLOC_KIND_SHIFT |
					(uint32_t)(e[E_DEPTH] >> 32),
				0, e + E_FRAMES, (uint32_t)e[E_DEPTH]);
}

static int
write_alloc(struct gmon_sink *s)
{
	gmon_sink_stacks_header(s, (uint32_t)rate,
				pc_cfg->spare + GMON_BUILDID_OFF,
				(uint32_t)pc->pid, 0);
	for (size_t i = 0; i < pc_grow_slots(&index_grow) && !s->error; i++) {
		uint32_t cur =
			__atomic_load_n(&index_slots[i], __ATOMIC_ACQUIRE);
		uint64_t v[E_FRAMES];
		const uint64_t *e;

		/* a recovered file's entries are checked to lie in the arena */
		if (!cur || cur + (size_t)E_FRAMES > arena_words)
			continue;
		e = arena + cur;
		if ((uint32_t)e[E_DEPTH] > PC_ALLOC_DEPTH ||
		    cur + (size_t)E_FRAMES + (uint32_t)e[E_DEPTH] > arena_words)
			continue;
		for (int k = E_NALLOC; k < E_FRAMES; k++)
			v[k] = __atomic_load_n(&e[k], __ATOMIC_RELAXED);
		put(s, e, GMON_ALLOC_OBJECTS,
		    (uint64_t)((double)v[E_OBJ] / FIXED + 0.5));
		put(s, e, GMON_ALLOC_BYTES, v[E_BYTES]);
		put(s, e, GMON_INUSE_OBJECTS,
		    (uint64_t)((double)(v[E_OBJ] - v[E_FOBJ]) / FIXED + 0.5));
		put(s, e, GMON_INUSE_BYTES, v[E_BYTES] - v[E_FBYTES]);
		put(s, e, GMON_ALLOC_SAMPLES, v[E_NALLOC]);
		put(s, e, GMON_INUSE_SAMPLES, v[E_NALLOC] - v[E_NFREE]);
	}
	return s->error;
}

void
pc_alloc_timeline_stacks(struct gmon_sink *s)
{
	if (!arena)
		return;
	for (size_t i = 0; i < pc_grow_slots(&index_grow) && !s->error; i++) {
		uint32_t cur =
			__atomic_load_n(&index_slots[i], __ATOMIC_ACQUIRE);
		const uint64_t *e = arena + cur;
		uint32_t depth, w[4] = { 0 };
		uint64_t id = PC_TL_ALLOC_STACK | cur;
		struct pc_tl_rec r = { PC_TL_STACK, 0 };

		if (!cur || cur + (size_t)E_FRAMES > arena_words)
			continue;
		depth = (uint32_t)e[E_DEPTH];
		if (depth > PC_ALLOC_DEPTH ||
		    cur + (size_t)E_FRAMES + depth > arena_words)
			continue;
		/* flags, tid (none), depth, 0, then the frames (timeline.h) */
		w[0] = GMON_STACK_ALLOC | (uint32_t)(e[E_DEPTH] >> 32);
		w[2] = depth;
		r.len = (uint32_t)(sizeof(id) + sizeof(w) + depth * 8u);
		gmon_sink_bytes(s, &r, sizeof(r));
		gmon_sink_bytes(s, &id, sizeof(id));
		gmon_sink_bytes(s, w, sizeof(w));
		gmon_sink_bytes(s, e + E_FRAMES, depth * 8u);
	}
}

int
pc_alloc_dump(const char *path)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);
	int r;

	if (!arena)	/* PC_ALLOC off, or its tables not mapped */
		return 0;
	if (n + sizeof(GMON_ALLOC_SUFFIX) > sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n);
	memcpy(buf + n, GMON_ALLOC_SUFFIX, sizeof(GMON_ALLOC_SUFFIX));
	if ((r = pc_dump_file(buf, write_alloc)))
		pc_dump_summary(buf, r);
	return r;
}
