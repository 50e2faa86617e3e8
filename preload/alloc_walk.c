/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The stack of a sampled allocation (alloc.c), with a cache of walks.
 *
 * libgcc's dwarf walk (unwind.c) costs some 15,000 instructions for the
 * 8 frames of a loop's malloc, most of it finding and running each
 * frame's call frame information. A program samples its allocations from
 * few places, each at few depths, so the walk is kept, keyed by the
 * allocator's return address and its caller's stack pointer (the hook's
 * CFA), with where each return address lay on the stack. A later sample
 * with the same key takes the kept walk if every kept return address is
 * still in its slot: on x86-64 a frame's CFA follows from its pc and the
 * CFA of the frame it called, so with the same pc and CFA at the bottom
 * and the same return addresses in those slots the chain is the same (a
 * frame that finds its CFA from rbp, after an alloca or a realignment,
 * breaks that rule only where the frames between also changed their
 * sizes to leave the same pc and CFA at the bottom: not seen). The slots
 * are read only between the hook's CFA and the top of the thread's
 * stack, which are mapped; a walk from elsewhere (a signal stack) is not
 * kept.
 *
 * The cache is one table for all threads, its entries written under a
 * sequence count (odd while written; a reader that sees it odd or
 * changed walks afresh): no lock, no allocation, errno untouched. It is
 * mapped at the start of sampling (pc_alloc_walk_init) and a fork child
 * keeps it: the same stacks, the same addresses.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/mman.h>

#include "alloc.h"
#include "unwind.h"
#include "banned.h"

#define WALK_SLOTS	512		/* entries, a power of 2 */

struct walk {
	uint64_t seq;			/* odd while written (atomic) */
	uintptr_t ra, cfa;		/* the key */
	uint64_t n;			/* frames kept, 0: none */
	uintptr_t site[PC_ALLOC_DEPTH];	/* return addresses */
	uintptr_t slot[PC_ALLOC_DEPTH];	/* where each lay */
};

static struct walk *walks;		/* WALK_SLOTS of them, or NULL */

int
pc_alloc_walk_init(void)
{
	void *p;

	if (walks)
		return 0;
	p = mmap(NULL, WALK_SLOTS * sizeof(struct walk), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	walks = p;
	return 0;
}

static struct walk *
walk_entry(uintptr_t ra, uintptr_t cfa)
{
	return &walks[pc_mix(ra ^ (cfa << 17)) & (WALK_SLOTS - 1)];
}

/* The kept walk of (ra, cfa), if its slots hold its return addresses
 * still: its frames into f (their entries 0: the allocation profile
 * keeps return addresses only), how many; 0 otherwise. cfa is on this
 * thread's stack, below its top (hi): the slots' words are mapped. An
 * entry left odd (a fork while another thread wrote it) is never taken. */
static int
walk_cached(uintptr_t ra, uintptr_t cfa, uintptr_t hi, struct pc_frame *f,
	    int max)
{
	struct walk *w = walk_entry(ra, cfa);
	uint64_t s = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
	uintptr_t at[PC_ALLOC_DEPTH];
	int n;

	if ((s & 1) || __atomic_load_n(&w->ra, __ATOMIC_RELAXED) != ra ||
	    __atomic_load_n(&w->cfa, __ATOMIC_RELAXED) != cfa)
		return 0;
	n = (int)__atomic_load_n(&w->n, __ATOMIC_RELAXED);
	if (n <= 0 || n > max)
		return 0;
	for (int i = 0; i < n; i++) {
		at[i] = __atomic_load_n(&w->slot[i], __ATOMIC_RELAXED);
		f[i].site = __atomic_load_n(&w->site[i], __ATOMIC_RELAXED);
		f[i].entry = 0;
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&w->seq, __ATOMIC_RELAXED) != s)
		return 0;
	for (int i = 0; i < n; i++)
		/* the slots climb the stack from the hook's CFA */
		if (at[i] < cfa - 8 || at[i] + 8 > hi || (at[i] & 7) ||
		    *(const uintptr_t *)at[i] != f[i].site)
			return 0;
	return n;
}

/* Keep the walk f[0..n) of (ra, cfa), its slots in at[], unless another
 * thread is writing that entry. */
static void
walk_keep(uintptr_t ra, uintptr_t cfa, const struct pc_frame *f,
	  const uintptr_t *at, int n)
{
	struct walk *w = walk_entry(ra, cfa);
	uint64_t s = __atomic_load_n(&w->seq, __ATOMIC_RELAXED);

	if ((s & 1) || !__atomic_compare_exchange_n(&w->seq, &s, s + 1, 0,
						    __ATOMIC_ACQUIRE,
						    __ATOMIC_RELAXED))
		return;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&w->ra, ra, __ATOMIC_RELAXED);
	__atomic_store_n(&w->cfa, cfa, __ATOMIC_RELAXED);
	__atomic_store_n(&w->n, (uint64_t)n, __ATOMIC_RELAXED);
	for (int i = 0; i < n; i++) {
		__atomic_store_n(&w->site[i], f[i].site, __ATOMIC_RELAXED);
		__atomic_store_n(&w->slot[i], at[i], __ATOMIC_RELAXED);
	}
	__atomic_store_n(&w->seq, s + 2, __ATOMIC_RELEASE);
}

struct alloc_walk {
	uintptr_t ra, cfa, hi;
	int started;		/* reached the frame of ra */
	int keep;		/* every slot found where it should be */
	int n, max;
	struct pc_frame *f;
	uintptr_t *at;
};

static int
alloc_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct alloc_walk *w = arg;
	int before = 0;
	uintptr_t ip = pc_gcc_get_ip_info(ctx, &before);
	/* where ip was read from: its callee's CFA, less the slot's 8 */
	uintptr_t at = pc_gcc_get_cfa(ctx) - 8;

	/* the first frames are libpc's and the hooks' own */
	if (!w->started) {
		if (ip != w->ra)
			return w->n++ > 64 ? URC_NORMAL_STOP : URC_NO_REASON;
		w->started = 1;
		w->n = 0;
		w->keep = at + 8 == w->cfa;
	}
	if (w->n >= w->max || !ip)
		return URC_NORMAL_STOP;
	if ((at & 7) || at < w->cfa - 8 || at + 8 > w->hi ||
	    (w->n && at <= w->at[w->n - 1]) || *(const uintptr_t *)at != ip)
		w->keep = 0;
	w->f[w->n].site = ip;
	w->f[w->n].entry = pc_gcc_get_region_start(ctx);
	w->at[w->n] = at;
	w->n++;
	return URC_NO_REASON;
}

int
pc_alloc_walk(uintptr_t ra, uintptr_t cfa, struct pc_frame *f, int max)
{
	uintptr_t at[PC_ALLOC_DEPTH], lo = pc_stack_lo, hi = pc_stack_hi;
	struct alloc_walk w = { ra, cfa, hi, 0, 0, 0, max, f, at };
	char here;
	int n, own;

	/* the dwarf walker's contexts take some 2 KiB: a thread whose stack
	 * has less than 16 KiB left below this frame is not walked */
	if (!pc_gcc_backtrace || !pc_gcc_get_cfa || !lo ||
	    (uintptr_t)&here < lo + 16384)
		return pc_unwind_here(ra, f, max);
	if (max > PC_ALLOC_DEPTH)
		max = w.max = PC_ALLOC_DEPTH;
	/* a walk is kept only from the thread's own stack, above this frame */
	own = walks && (uintptr_t)&here < hi && cfa > (uintptr_t)&here &&
	      cfa < hi;
	if (own && (n = walk_cached(ra, cfa, hi, f, max)) > 0)
		return n;
	if (!own)
		w.cfa = w.hi = 0;	/* no slot passes: nothing kept */
	pc_gcc_backtrace(alloc_frame, &w);
	if (!w.started)
		return 0;
	if (own && w.keep && w.n > 0)
		walk_keep(ra, cfa, f, at, w.n);
	return w.n;
}
