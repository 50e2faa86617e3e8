/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Whole sampled stacks for flame graphs (PC_STACKS): each distinct stack of
 * the program's frames is stored once, with a count, in a preallocated
 * arena indexed by an open-addressing table of offsets.
 *
 * pc_stacks_add_from_handler runs in the signal handler: space is taken
 * from the arena with an atomic add and a stack is published by a
 * compare-and-swap on its index slot, so no lock is held and two threads
 * racing on the same new stack at worst store it twice (pcprof adds them).
 * A full arena or index counts what it drops.
 *
 * Each stack is of one thread: its tid is part of the key. The threads'
 * names are kept in a table of their own, read with PR_GET_NAME at a
 * thread's first sample and every 64th after, so that a name set later
 * (pthread_setname_np, often by the thread's creator) is seen: the file
 * has the last name seen of each tid. A full name table keeps the tids
 * sampled without a name.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "pc.h"
#include "live.h"
#include "banned.h"

#define MAX_PROBE	128
#define ENTRY_WORDS	4	/* hash, count, depth | flags << 32, tid */
#define THREAD_SLOTS	4096	/* threads whose names are kept */
#define NAME_EVERY	64	/* a thread's name is read again each 64 samples */

struct thread_name {
	uint32_t tid;		/* 0: free */
	uint64_t name[2];	/* GMON_THREAD_NAME_SIZE bytes */
};

static uint64_t *arena;		/* entries: ENTRY_WORDS + depth words */
static size_t arena_words;
static uint32_t *index_slots;	/* arena offset + 1, or 0 */
/* What handlers may use of each, backed in the live file and doubled as
 * it fills (livegrow.c): the arena's words ([used, slots) is free, used
 * taken with compare-and-swap), the index's slots (a stack found at
 * another slot after a doubling is stored again; pcprof adds them), and
 * the names (all backed at once). */
static struct pc_grow arena_grow, index_grow, names_grow;
static size_t arena_len, index_len;
static struct thread_name *names;	/* THREAD_SLOTS of them */
/* Each thread's last CPU stack, as arena offset << 32 | tid in one word
 * that the handler stores: where a thread that the wall sampler saw
 * running waited for a CPU when it was preempted. */
#define LAST_SLOTS	4096
static uint64_t last_cpu[LAST_SLOTS];
static PC_TLS uint32_t my_tid;		/* this thread's, once known */
static PC_TLS uint32_t my_samples;

int
pc_stacks_init(size_t megabytes)
{
	size_t slots = 1 << 16;
	struct pc_live_tables *t;
	void *a, *x;

	arena_len = megabytes << 20;
	arena_words = arena_len / sizeof(uint64_t);
	if (arena_words > UINT32_MAX - 1)
		arena_words = UINT32_MAX - 1;
	while (slots < arena_words / 16)
		slots *= 2;
	index_len = slots * sizeof(uint32_t);
	a = pc_live_alloc(arena_len, 0);
	x = pc_live_alloc(index_len, 0);
	names = pc_live_alloc(THREAD_SLOTS * sizeof(*names), 0);
	if (!a || !x || !names) {
		names = NULL;
		return -ENOMEM;
	}
	arena = a;
	index_slots = x;
	t = pc_live_tables();
	t->stacks_arena = a;
	t->stacks_words = arena_words;
	t->stacks_index = x;
	t->stacks_names = names;
	t->stacks_names_len = THREAD_SLOTS * sizeof(*names);
	pc_grow_init(&arena_grow, a, sizeof(uint64_t), 16384, arena_words, NULL);
	pc_grow_init(&index_grow, x, sizeof(uint32_t), 4096, slots, &t->stacks_slots);
	pc_grow_init(&names_grow, names, sizeof(*names), THREAD_SLOTS, THREAD_SLOTS, NULL);
	arena_grow.used = 1;	/* offset 0 would read as an empty slot */
	return 0;
}

int
pc_stacks_recover(const struct pc_live_tables *t)
{
	if (t->stacks_names_len != THREAD_SLOTS * sizeof(*names) ||
	    !t->stacks_slots || (t->stacks_slots & (t->stacks_slots - 1)))
		return -EINVAL;
	arena = t->stacks_arena;
	arena_words = t->stacks_words;
	index_slots = t->stacks_index;
	names = t->stacks_names;
	index_grow.slots = t->stacks_slots;
	return 0;
}

void
pc_stacks_clear(void)
{
	if (!arena)
		return;
	madvise(arena, arena_len, MADV_DONTNEED);
	madvise(index_slots, index_len, MADV_DONTNEED);
	madvise(names, THREAD_SLOTS * sizeof(*names), MADV_DONTNEED);
	memset(last_cpu, 0, sizeof(last_cpu));
	arena_grow.used = 1;
	/* the fork child's one thread has a tid of its own */
	my_tid = 0;
	my_samples = 0;
}

/* n words of the arena's backed part: their offset, or 0 when it has
 * no room (yet: the grower is woken at half). AS-safe. */
static uint64_t
take_from_handler(size_t n)
{
	size_t used = __atomic_load_n(&arena_grow.used, __ATOMIC_RELAXED);

	do {
		if (used + n > pc_grow_slots(&arena_grow))
			return 0;
	} while (!__atomic_compare_exchange_n(&arena_grow.used, &used, used + n, 1,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	pc_grow_took_from_handler(&arena_grow, 0);
	return used;
}

/* Keep thread tid's name as it is now. AS-safe: one prctl, no lock; two
 * threads never share a tid, so a slot once claimed has one writer. */
static void
note_name_from_handler(uint32_t tid)
{
	union {
		char c[GMON_THREAD_NAME_SIZE + 1];
		uint64_t w[3];
	} buf = { .w = { 0, 0, 0 } };

	if (prctl(PR_GET_NAME, buf.c, 0, 0, 0))
		return;
	pc_stacks_note_name(tid, buf.c);
}

/* This thread's tid, its name noted now and then. AS-safe. */
static uint32_t
thread_from_handler(void)
{
	uint32_t tid = my_tid;

	if (!tid)
		tid = my_tid = (uint32_t)syscall(SYS_gettid);
	if (my_samples++ % NAME_EVERY == 0)
		note_name_from_handler(tid);
	return tid;
}

/* Link-time address of frame i (inside the call instruction above frame
 * 0), 0 outside the program; with PC_SCOPE=all, a frame in no object
 * (JIT code) is its runtime address under GMON_OBJ_ANON, which pcprof
 * names from the process's perf map or jitdump. AS-safe. */
static uint64_t
frame_addr(const struct pc_frame *f, int i)
{
	uintptr_t a = f[i].site - (i ? 1 : 0);
	uint64_t link = pc_link_addr(a);

	if (!link && pc_cfg->scope_all && a && a <= PC_OBJ_MASK)
		return (uint64_t)GMON_OBJ_ANON << PC_OBJ_SHIFT | a;
	return link;
}

/* The stack as stored: lead first when it is not 0 (an off-CPU stack's
 * wait), then the program's frames, with each run of frames outside it
 * as one 0, or (enc not NULL) enc[0..n), words stored before. Runs body
 * with w set to each word in turn. */
#define FOR_EACH_WORD(lead, f, enc, n, w, body)			\
	do {								\
		int prev_zero_ = 0;					\
		if (lead) {						\
			uint64_t w = (lead);				\
			body;						\
		}							\
		for (int i_ = 0; i_ < (n); i_++) {			\
			uint64_t w = (enc) ? (enc)[i_] : frame_addr((f), i_); \
			if (!(enc) && !w && prev_zero_)			\
				continue;				\
			prev_zero_ = !w;				\
			body;						\
		}							\
	} while (0)

static int
same_stack(const uint64_t *e, uint64_t lead, const struct pc_frame *f, const uint64_t *enc,
	   int n, uint32_t depth, uint32_t flags, uint32_t tid)
{
	uint32_t k = 0;
	int same = 1;

	if ((uint32_t)e[2] != depth || (uint32_t)(e[2] >> 32) != flags || e[3] != tid)
		return 0;
	FOR_EACH_WORD(lead, f, enc, n, w, { if (same && e[ENTRY_WORDS + k++] != w) same = 0; });
	return same;
}

/* The stack's entry in the index segment [lo, lo + n) (n a power of
 * two), or NULL: probed up to the first empty slot. The index grows in
 * segments as arcs.c's table does: a doubling adds [slots, 2 slots), a
 * hash table of its own, and entries never move. AS-safe. */
static uint64_t *
find_in(size_t lo, size_t n, uint64_t h, uint64_t lead, const struct pc_frame *f,
	const uint64_t *enc, int nf, uint32_t depth, uint32_t flags, uint32_t tid)
{
	for (size_t probe = 0; probe < MAX_PROBE && probe < n; probe++) {
		uint32_t cur = __atomic_load_n(&index_slots[lo + ((h + probe) & (n - 1))],
					       __ATOMIC_ACQUIRE);
		uint64_t *e = arena + (cur - 1);

		if (!cur)
			return NULL;
		if (e[0] == h && same_stack(e, lead, f, enc, nf, depth, flags, tid))
			return e;
	}
	return NULL;
}

/* A new entry e of the arena, before it is published. AS-safe. */
static void
fill(uint64_t *e, uint64_t h, uint64_t weight, uint64_t depth_flags, uint32_t tid,
     uint64_t lead, const struct pc_frame *f, const uint64_t *enc, int n)
{
	uint32_t k = 0;

	e[0] = h;
	e[1] = weight;
	e[2] = depth_flags;
	e[3] = tid;
	FOR_EACH_WORD(lead, f, enc, n, w, { e[ENTRY_WORDS + k++] = w; });
}

/* Count weight for a stack of thread tid; its entry, or NULL when the
 * table is full. AS-safe. */
static uint64_t *
add(uint32_t tid, uint64_t lead, const struct pc_frame *f, const uint64_t *enc, int n,
    uint32_t flags, uint64_t weight)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	uint32_t depth = 0;
	uint64_t off, *e;
	size_t hi, lo, bottom;

	h = (h ^ tid) * 0x100000001b3ULL;
	h = (h ^ flags) * 0x100000001b3ULL;
	FOR_EACH_WORD(lead, f, enc, n, w, { h = (h ^ w) * 0x100000001b3ULL; depth++; });
	h ^= h >> 29;
	off = 0;
	hi = pc_grow_slots(&index_grow);
	lo = hi > index_grow.first ? hi / 2 : 0;
	/* the older segments, from the latest down; then the newest, which
	 * takes new stacks */
	for (size_t top = lo; top; top = bottom) {
		bottom = top > index_grow.first ? top / 2 : 0;
		if ((e = find_in(bottom, top - bottom, h, lead, f, enc, n, depth, flags, tid)))
			goto found;
	}
	for (size_t probe = 0; probe < MAX_PROBE && probe < hi - lo; probe++) {
		uint32_t *slot = &index_slots[lo + ((h + probe) & (hi - lo - 1))];
		uint32_t cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

		if (cur) {
			e = arena + (cur - 1);
			if (e[0] == h && same_stack(e, lead, f, enc, n, depth, flags, tid))
				goto found;
			continue;
		}
		/* a new stack: fill an entry in the arena, then publish it */
		if (!off) {
			if (!(off = take_from_handler(ENTRY_WORDS + depth)))
				break;
			fill(arena + off, h, weight, depth | (uint64_t)flags << 32, tid, lead, f,
			     enc, n);
		}
		if (__atomic_compare_exchange_n(slot, &cur, (uint32_t)(off + 1), 0,
						__ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {
			pc_grow_took_from_handler(&index_grow, 1);
			return arena + off;
		}
		/* another thread took the slot first: if it is this stack,
		 * add to it (our entry stays unused) */
		e = arena + (cur - 1);
		if (e[0] == h && same_stack(e, lead, f, enc, n, depth, flags, tid))
			goto found;
	}
	/* off-CPU time is nanoseconds, not samples: wall.c counts the
	 * samples it lost */
	if (!(flags & GMON_STACK_OFFCPU))
		__atomic_fetch_add(&pc_stats->stacks_dropped, weight, __ATOMIC_RELAXED);
	return NULL;
found:
	__atomic_fetch_add(&e[1], weight, __ATOMIC_RELAXED);
	return e;
}

uint64_t
pc_stacks_add_from_handler(const struct pc_frame *f, int n, int truncated,
			   uint32_t weight)
{
	uint32_t tid;
	uint64_t *e;

	if (!arena || n <= 0)
		return 0;
	tid = thread_from_handler();
	e = add(tid, 0, f, NULL, n, truncated ? GMON_STACK_TRUNCATED : 0, weight);
	if (e && pc_cfg->clock_wall)
		__atomic_store_n(&last_cpu[tid % LAST_SLOTS], (uint64_t)(e - arena) << 32 | tid,
				 __ATOMIC_RELEASE);
	return e ? (uint64_t)(e - arena) : 0;
}

/* An off-CPU entry's ns, on the timeline too (PC_TIMELINE). */
static uint64_t *
on_timeline(uint64_t *e, uint64_t ns)
{
	if (e && pc_cfg->timeline)
		pc_timeline_off((uint32_t)e[3], (uint64_t)(e - arena), ns);
	return e;
}

void
pc_wall_reset(uint64_t hz)
{
	memset(pc_stats->wall, 0, sizeof(pc_stats->wall));
	pc_stats->wall[GMON_WALL_HZ] = pc_stats->wall[GMON_WALL_HZ_LOW] = hz;
}

void
pc_wall_count(int what, uint64_t n)
{
	__atomic_fetch_add(&pc_stats->wall[what], n, __ATOMIC_RELAXED);
}

void
pc_wall_most(int what, uint64_t n)
{
	if (n > __atomic_load_n(&pc_stats->wall[what], __ATOMIC_RELAXED))
		__atomic_store_n(&pc_stats->wall[what], n, __ATOMIC_RELAXED);
}

void
pc_wall_set(int what, uint64_t n)
{
	__atomic_store_n(&pc_stats->wall[what], n, __ATOMIC_RELAXED);
}

void
pc_wall_info(uint64_t out[GMON_WALLINFO_WORDS])
{
	for (int i = 0; i < GMON_WALLINFO_WORDS; i++)
		out[i] = __atomic_load_n(&pc_stats->wall[i], __ATOMIC_RELAXED);
}

uint64_t *
pc_stacks_add_offcpu(uint32_t tid, uint64_t wait, const struct pc_frame *f, int n,
		     uint32_t flags, uint64_t ns)
{
	if (!arena)
		return NULL;
	return on_timeline(add(tid, wait, f, NULL, n, flags | GMON_STACK_OFFCPU, ns), ns);
}

uint64_t *
pc_stacks_add_runqueue(uint32_t tid, const uint64_t *blocked, uint64_t ns)
{
	static const struct pc_frame none[1];	/* frames are not read: enc or n 0 */
	uint64_t wait = GMON_WAIT_WORD(GMON_WAIT_RUNQUEUE, 0, 0);
	uint64_t last;
	uint32_t depth, flags, skip;

	if (!arena)
		return NULL;
	/* not seen blocked: its last CPU sample's stack, if it is its own */
	last = __atomic_load_n(&last_cpu[tid % LAST_SLOTS], __ATOMIC_ACQUIRE);
	if (!blocked && (uint32_t)last == tid && (last >> 32) < arena_words)
		blocked = arena + (last >> 32);
	if (!blocked)
		return on_timeline(add(tid, wait, none, NULL, 0, GMON_STACK_OFFCPU, ns), ns);
	/* its frames under the run queue's wait (an off-CPU stack's own wait
	 * left out) */
	depth = (uint32_t)blocked[2];
	flags = (uint32_t)(blocked[2] >> 32);
	skip = flags & GMON_STACK_OFFCPU ? 1 : 0;
	return on_timeline(add(tid, wait, none, blocked + ENTRY_WORDS + skip,
			       (int)(depth - skip),
			       (flags & ~GMON_STACK_OFFCPU) | GMON_STACK_OFFCPU, ns), ns);
}

void
pc_stacks_add_again(uint64_t *entry, uint64_t ns)
{
	__atomic_fetch_add(&entry[1], ns, __ATOMIC_RELAXED);
	on_timeline(entry, ns);
}

void
pc_stacks_note_name(uint32_t tid, const char name[GMON_THREAD_NAME_SIZE])
{
	uint64_t w[2];

	if (!names)
		return;
	memcpy(w, name, sizeof(w));
	for (uint32_t probe = 0; probe < 64; probe++) {
		struct thread_name *t = &names[(tid * 2654435761u + probe) % THREAD_SLOTS];
		uint32_t cur = __atomic_load_n(&t->tid, __ATOMIC_ACQUIRE);

		if (cur == 0 && __atomic_compare_exchange_n(&t->tid, &cur, tid, 0,
							    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			cur = tid;
		if (cur != tid)
			continue;
		__atomic_store_n(&t->name[0], w[0], __ATOMIC_RELAXED);
		__atomic_store_n(&t->name[1], w[1], __ATOMIC_RELAXED);
		return;
	}
}

/* The entry at index slot value cur, or NULL where it is not whole in the
 * arena (a file pc_recover reads may be damaged). AS-safe. */
static const uint64_t *
entry_at(uint32_t cur)
{
	if (!cur || cur - 1 + (size_t)ENTRY_WORDS > arena_words ||
	    (uint32_t)arena[cur - 1 + 2] > arena_words - (cur - 1) - ENTRY_WORDS)
		return NULL;
	return arena + (cur - 1);
}

void
pc_stacks_write_ids(struct gmon_sink *s, uint32_t tag)
{
	for (size_t i = 0; arena && i < pc_grow_slots(&index_grow) && !s->error; i++) {
		const uint64_t *e = entry_at(__atomic_load_n(&index_slots[i], __ATOMIC_ACQUIRE));
		uint32_t head[2], w[4];
		uint64_t id;

		if (!e)
			continue;
		id = (uint64_t)(e - arena);
		w[0] = (uint32_t)(e[2] >> 32);
		w[1] = (uint32_t)e[3];
		w[2] = (uint32_t)e[2];
		w[3] = 0;
		head[0] = tag;
		head[1] = (uint32_t)(sizeof(id) + sizeof(w) + w[2] * sizeof(uint64_t));
		gmon_sink_bytes(s, head, sizeof(head));
		gmon_sink_bytes(s, &id, sizeof(id));
		gmon_sink_bytes(s, w, sizeof(w));
		gmon_sink_bytes(s, e + ENTRY_WORDS, w[2] * sizeof(uint64_t));
	}
}

int
pc_stacks_write(struct gmon_sink *s)
{
	gmon_sink_stacks_header(s, (uint32_t)pc_cfg->hz, pc_cfg->spare + GMON_BUILDID_OFF,
				(uint32_t)pc->pid, pc_cfg->clock_wall ? GMON_STACKS_WALL : 0);
	for (size_t i = 0; names && i < THREAD_SLOTS && !s->error; i++) {
		uint32_t tid = __atomic_load_n(&names[i].tid, __ATOMIC_ACQUIRE);
		uint64_t w[2];

		if (!tid)
			continue;
		w[0] = __atomic_load_n(&names[i].name[0], __ATOMIC_RELAXED);
		w[1] = __atomic_load_n(&names[i].name[1], __ATOMIC_RELAXED);
		gmon_sink_thread(s, tid, (const char *)w);
	}
	if (pc_cfg->clock_wall) {
		uint64_t info[GMON_WALLINFO_WORDS];

		pc_wall_info(info);
		gmon_sink_stack(s, 0, GMON_STACK_WALLINFO, 0, info, GMON_WALLINFO_WORDS);
	}
	for (size_t i = 0; i < pc_grow_slots(&index_grow) && !s->error; i++) {
		uint32_t cur = __atomic_load_n(&index_slots[i], __ATOMIC_ACQUIRE);
		const uint64_t *e;

		if (!cur)
			continue;
		/* an entry inside the arena, whole (a file pc_recover reads
		 * may be damaged) */
		if (cur - 1 + (size_t)ENTRY_WORDS > arena_words ||
		    (uint32_t)arena[cur - 1 + 2] > arena_words - (cur - 1) - ENTRY_WORDS)
			continue;
		e = arena + (cur - 1);
		gmon_sink_stack(s, __atomic_load_n(&e[1], __ATOMIC_RELAXED),
				(uint32_t)(e[2] >> 32), (uint32_t)e[3], e + ENTRY_WORDS,
				(uint32_t)e[2]);
	}
	return s->error;
}
