/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Allocation profiling (PC_ALLOC): alloc_hooks.c, the companion library
 * libpc-alloc.so, interposes the malloc family and samples allocations
 * by bytes; alloc.c, in libpc.so, walks a sampled allocation's stack;
 * alloc_table.c keeps the sampled stacks with their counts, the sampled
 * blocks by address until their free, and writes the allocation profile,
 * PROFILE.alloc (gmon.h). A program preloaded without the companion has
 * no malloc hooks at all.
 */
#ifndef PC_ALLOC_H
#define PC_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "pc.h"

#define PC_ALLOC_DEPTH		64		/* frames kept per allocation */
#define PC_ALLOC_STACKS_MB	8		/* the stacks' arena */
#define PC_ALLOC_MAX_BLOCKS	(1u << 24)	/* sampled blocks tracked at once */

/*
 * The companion's way into libpc.so: libpc exports pc_alloc_ops_v3, which
 * libpc-alloc.so references weakly (loaded without libpc.so, it finds
 * none and only forwards each call); libpc finds the companion by its
 * pc_alloc_hooks_v3, which it references weakly too (PC_ALLOC without
 * the companion: one line, and no allocation profile). The number in the
 * names is the interface's: a companion of another version finds none.
 */
enum { PC_ALLOC_BEFORE, PC_ALLOC_ON, PC_ALLOC_OFF };
struct pc_alloc_ops {
	/* pc_alloc_filter, read by every free */
	const uint8_t *filter;
	/* PC_ALLOC_*: before pc_alloc_start, sampling, or never; the rate
	 * in *rate when on. AS-safe. */
	int (*state)(uint64_t *rate);
	/* record p, of n bytes, allocated by the call that returns to ra,
	 * whose caller's stack pointer was cfa (the hook's CFA): its stack
	 * walked from there. Lock-free, allocation-free; errno kept. */
	void (*sample)(void *p, size_t n, uintptr_t ra, uintptr_t cfa);
	int (*forget)(void *p, size_t *size, uint32_t *stack);
	void (*restore)(void *p, size_t size, uint32_t stack);
};
/* alloc.c: libpc's side, for the companion (exported). AS-safe. */
PC_EXPORT const struct pc_alloc_ops *pc_alloc_ops_v3(void);
/* alloc_hooks.c: the companion's mark, 1 (exported there; alloc.c
 * declares it weak). */
extern const int pc_alloc_hooks_v3;

/* alloc.c: read PC_ALLOC and PC_ALLOC_RATE and start sampling when asked
 * (the constructor, once the configuration is sealed). Not AS-safe. */
void pc_alloc_start(int on, uint64_t rate) PC_HIDDEN;

/* alloc.c: sample no more, and match no free (a fork child whose tables
 * are still its parent's, in the parent's live file). Not AS-safe. */
void pc_alloc_stop(void) PC_HIDDEN;
/* alloc_table.c: forget every tracked block, the tables left as they
 * are (pc_alloc_stop). */
void pc_alloc_table_detach(void) PC_HIDDEN;
/* alloc_table.c: map the tables; 0 or -errno. Not AS-safe. */
int pc_alloc_table_init(uint64_t rate) PC_HIDDEN;
/* alloc_walk.c: map the cache of walks; 0 or -1 (walks are not kept).
 * Not AS-safe. */
int pc_alloc_walk_init(void) PC_HIDDEN;
/* alloc_walk.c: the stack of an allocation by the call that returns to
 * ra, its caller's stack pointer cfa, into f[0..max) (the caller first):
 * a kept walk where its return addresses are still on the stack, else
 * libgcc's, kept. How many frames. Lock-free, allocation-free. */
int pc_alloc_walk(uintptr_t ra, uintptr_t cfa, struct pc_frame *f,
		  int max) PC_HIDDEN;
/* alloc_table.c: a sampled allocation of size bytes at p, with the
 * stack f[0..n) (return addresses, the caller of the allocator first).
 * Lock-free, allocation-free. */
void pc_alloc_record(void *p, size_t size, const struct pc_frame *f,
		     int n) PC_HIDDEN;
/* alloc_table.c: p is being freed: if it was sampled, count its free and
 * forget it; 1 then, with what it was in *size and *stack (for
 * pc_alloc_restore), else 0. Lock-free, allocation-free. */
int pc_alloc_forget(void *p, size_t *size, uint32_t *stack) PC_HIDDEN;
/* alloc_table.c: a realloc that failed keeps p: track it again, its free
 * not counted. */
void pc_alloc_restore(void *p, size_t size, uint32_t stack) PC_HIDDEN;
/* alloc_table.c: whether any block is tracked (frees look up only then).
 * Lock-free. */
int pc_alloc_tracking(void) PC_HIDDEN;
/*
 * alloc_table.c: a filter of the tracked blocks that a free reads before
 * it looks one up: a count of the tracked blocks whose address falls in
 * each of its PC_ALLOC_FILTER buckets (255 sticks: always looked up), 4
 * KiB that stay in the cache where the table would not. Relaxed atomics.
 */
#define PC_ALLOC_FILTER	4096	/* pc_alloc_bucket gives 12 bits */
extern uint8_t pc_alloc_filter[PC_ALLOC_FILTER] PC_HIDDEN;

/* Fibonacci hashing of the address's bits 4 to 31 (a multiplication and
 * a shift: free's fast path computes it, 2 instructions); the bucket's 12
 * bits are the product's top ones. A block's low 4 bits are 0, so the
 * multiplier is the golden ratio's 2^32 / 16: p = 16 x gives x times
 * 0x9E3779B0. A change of it is a change of the interface's version (the
 * companion reads the filter). */
static inline size_t
pc_alloc_bucket(const void *p)
{
	return (size_t)(((uint32_t)(uintptr_t)p * 0x09E3779Bu) >> 20);
}

/* Whether p may be a tracked block (0: it is not). */
static inline int
pc_alloc_maybe(const void *p)
{
	return __atomic_load_n(&pc_alloc_filter[pc_alloc_bucket(p)],
			       __ATOMIC_RELAXED) != 0;
}

/* alloc_table.c: take the tables a live file records (pc_recover; NULL
 * or a file without them: none); 0, or -EINVAL for tables that cannot be
 * theirs. Not AS-safe. */
struct pc_live_tables;
int pc_alloc_recover(const struct pc_live_tables *t) PC_HIDDEN;
/* alloc_table.c: forget everything (a fork child). */
void pc_alloc_table_clear(void) PC_HIDDEN;
/* alloc_table.c: each stack of the tables as a PROFILE.timeline record,
 * its id PC_TL_ALLOC_STACK | its offset (timeline.h), for the
 * allocation events'. AS-safe. */
struct gmon_sink;
void pc_alloc_timeline_stacks(struct gmon_sink *s) PC_HIDDEN;
/* alloc_table.c: write PROFILE.alloc beside the profile at path. AS-safe. */
int pc_alloc_dump(const char *path) PC_HIDDEN;

/* alloc_table.c: the estimated number of allocations one sampled
 * allocation of size bytes stands for, at rate (bytes): 1 / (1 -
 * exp(-size / rate)), as pprof's heap profiles scale; 1 at rate 1.
 * AS-safe (no libm). */
double pc_alloc_weight(uint64_t size, uint64_t rate) PC_HIDDEN;
/* alloc_draw.c: -log(u) for a normal u in (0, 1], without libm (745 for
 * u <= 0; a subnormal u reads as if its exponent were 2^-1023's: the
 * draws' u is 2^-53 or more). AS-safe. */
double pc_alloc_neglog(double u) PC_HIDDEN;
/* alloc_draw.c: the next countdown, in bytes, of a sampler of mean rate
 * (bytes; 0 at rate 1 or less: every allocation is sampled): rate x
 * -log(1 - U), U uniform in [0, 1) from the xorshift64* generator *rng
 * (not 0), which it advances; at most 2^62. AS-safe. */
int64_t pc_alloc_draw(uint64_t *rng, uint64_t rate) PC_HIDDEN;

#endif
