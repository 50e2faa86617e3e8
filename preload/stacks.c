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
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "pc.h"
#include "banned.h"

#define MAX_PROBE	128
#define ENTRY_WORDS	3	/* hash, count, depth | flags << 32 */

static uint64_t *arena;		/* entries: ENTRY_WORDS + depth words */
static size_t arena_words;
static uint64_t arena_used;	/* words handed out, atomically */
static uint32_t *index_slots;	/* arena offset + 1, or 0 */
static size_t index_mask;
static size_t arena_len, index_len;

int
pc_stacks_init(size_t megabytes)
{
	size_t slots = 1 << 16;
	void *a, *x;

	arena_len = megabytes << 20;
	arena_words = arena_len / sizeof(uint64_t);
	if (arena_words > UINT32_MAX - 1)
		arena_words = UINT32_MAX - 1;
	while (slots < arena_words / 16)
		slots *= 2;
	index_len = slots * sizeof(uint32_t);
	a = mmap(NULL, arena_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a == MAP_FAILED)
		return -errno;
	x = mmap(NULL, index_len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (x == MAP_FAILED) {
		munmap(a, arena_len);
		return -errno;
	}
	arena = a;
	index_slots = x;
	index_mask = slots - 1;
	arena_used = 1;		/* offset 0 would read as an empty slot */
	return 0;
}

void
pc_stacks_clear(void)
{
	if (!arena)
		return;
	madvise(arena, arena_len, MADV_DONTNEED);
	madvise(index_slots, index_len, MADV_DONTNEED);
	arena_used = 1;
}

/* Link-time address of frame i (inside the call instruction above frame
 * 0), 0 outside the program. AS-safe. */
static uint64_t
frame_addr(const struct pc_frame *f, int i)
{
	return pc_link_addr(f[i].site - (i ? 1 : 0));
}

/* The stack as stored: the program's frames, with each run of frames
 * outside it as one 0. Calls fn on each word; returns the depth. */
#define FOR_EACH_WORD(f, n, w, body)					\
	do {								\
		int prev_zero_ = 0;					\
		for (int i_ = 0; i_ < (n); i_++) {			\
			uint64_t w = frame_addr((f), i_);		\
			if (!w && prev_zero_)				\
				continue;				\
			prev_zero_ = !w;				\
			body;						\
		}							\
	} while (0)

static int
same_from_handler(const uint64_t *e, const struct pc_frame *f, int n,
		  uint32_t depth, uint32_t flags)
{
	uint32_t k = 0;
	int same = 1;

	if ((uint32_t)e[2] != depth || (uint32_t)(e[2] >> 32) != flags)
		return 0;
	FOR_EACH_WORD(f, n, w, { if (same && e[ENTRY_WORDS + k++] != w) same = 0; });
	return same;
}

void
pc_stacks_add_from_handler(const struct pc_frame *f, int n, int truncated,
			   uint32_t weight)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	uint32_t depth = 0, flags = truncated ? GMON_STACK_TRUNCATED : 0;
	uint64_t off, *e;

	if (!arena || n <= 0)
		return;
	FOR_EACH_WORD(f, n, w, { h = (h ^ w) * 0x100000001b3ULL; depth++; });
	h ^= h >> 29;
	off = 0;
	for (size_t probe = 0; probe < MAX_PROBE; probe++) {
		uint32_t *slot = &index_slots[(h + probe) & index_mask];
		uint32_t cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

		if (cur) {
			e = arena + (cur - 1);
			if (e[0] == h && same_from_handler(e, f, n, depth, flags)) {
				__atomic_fetch_add(&e[1], weight, __ATOMIC_RELAXED);
				return;
			}
			continue;
		}
		/* a new stack: fill an entry in the arena, then publish it */
		if (!off) {
			off = __atomic_fetch_add(&arena_used, ENTRY_WORDS + depth,
						 __ATOMIC_RELAXED);
			if (off + ENTRY_WORDS + depth > arena_words)
				break;
			e = arena + off;
			e[0] = h;
			e[1] = weight;
			e[2] = depth | (uint64_t)flags << 32;
			{
				uint32_t k = 0;

				FOR_EACH_WORD(f, n, w, { e[ENTRY_WORDS + k++] = w; });
			}
		}
		if (__atomic_compare_exchange_n(slot, &cur, (uint32_t)(off + 1), 0,
						__ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
			return;
		/* another thread took the slot first: if it is this stack,
		 * add to it (our entry stays unused) */
		e = arena + (cur - 1);
		if (e[0] == h && same_from_handler(e, f, n, depth, flags)) {
			__atomic_fetch_add(&e[1], weight, __ATOMIC_RELAXED);
			return;
		}
	}
	__atomic_fetch_add(&pc_stats.stacks_dropped, weight, __ATOMIC_RELAXED);
}

int
pc_stacks_write(struct gmon_sink *s)
{
	gmon_sink_stacks_header(s, (uint32_t)pc_cfg->hz, pc_cfg->spare + GMON_BUILDID_OFF,
				(uint32_t)getpid());
	for (size_t i = 0; i <= index_mask && !s->error; i++) {
		uint32_t cur = __atomic_load_n(&index_slots[i], __ATOMIC_ACQUIRE);
		const uint64_t *e;

		if (!cur)
			continue;
		e = arena + (cur - 1);
		gmon_sink_stack(s, __atomic_load_n(&e[1], __ATOMIC_RELAXED),
				(uint32_t)(e[2] >> 32), e + ENTRY_WORDS, (uint32_t)e[2]);
	}
	return s->error;
}
