/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpc.so's side of allocation profiling (PC_ALLOC): the start and stop
 * of sampling, and the walk of a sampled allocation's stack. The hooks
 * are libpc-alloc.so's (alloc_hooks.c), which pcprof run --alloc preloads
 * beside libpc.so; they reach this file through pc_alloc_ops_v3, so that
 * a program profiled without allocations has no malloc hooks at all.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "live.h"
#include "banned.h"

/* the companion's mark, where it is preloaded (-z now binds it at
 * start-up) */
extern const int pc_alloc_hooks_v3 __attribute__((weak));

static int alloc_state;			/* PC_ALLOC_* (atomic) */
static uint64_t alloc_rate;		/* bytes, once PC_ALLOC_ON */

/* AS-safe: an atomic load. */
static int
alloc_state_now(uint64_t *rate)
{
	int st = __atomic_load_n(&alloc_state, __ATOMIC_ACQUIRE);

	if (st == PC_ALLOC_ON)
		*rate = alloc_rate;
	return st;
}

/* Record p, of n bytes, allocated by the call that returns to ra, from
 * a stack pointer of cfa: the companion's slow path, which forwards the
 * allocations of the walk and of the tables' growth unsampled.
 * Lock-free, allocation-free. */
static void
alloc_sample(void *p, size_t n, uintptr_t ra, uintptr_t cfa)
{
	struct pc_frame f[PC_ALLOC_DEPTH];
	int saved = errno, k;

	k = pc_alloc_walk(ra, cfa, f, PC_ALLOC_DEPTH);
	if (k <= 0) {
		f[0].site = ra;
		f[0].entry = 0;
		k = 1;
	}
	pc_alloc_record(p, n, f, k);
	/* where no grower thread runs (a process of one thread), the
	 * tables' growth this sample asked for: a flag's look otherwise */
	pc_live_grow_now();
	errno = saved;
}

static const struct pc_alloc_ops alloc_ops = {
	.filter = pc_alloc_filter,
	.state = alloc_state_now,
	.sample = alloc_sample,
	.forget = pc_alloc_forget,
	.restore = pc_alloc_restore,
};

const struct pc_alloc_ops *
pc_alloc_ops_v3(void)
{
	return &alloc_ops;
}

void
pc_alloc_stop(void)
{
	__atomic_store_n(&alloc_state, PC_ALLOC_OFF, __ATOMIC_RELEASE);
	pc_alloc_table_detach();
}

/* The object whose malloc the program's calls reach, where it is not
 * the companion's (an allocator the loader searches first: AddressSanitizer's
 * runtime, which must come first in the search order, or one preloaded
 * before libpc-alloc.so by hand): its file's base name, else NULL. */
static const char *
alloc_other_malloc(void)
{
	Dl_info mine, theirs;
	/* at start-up, never in a hook: (dlsym) passes banned.h's macro */
	void *m = (dlsym)(RTLD_DEFAULT, "malloc");
	const char *base;

	if (!m || !dladdr(&pc_alloc_hooks_v3, &mine) || !dladdr(m, &theirs) ||
	    mine.dli_fbase == theirs.dli_fbase || !theirs.dli_fname)
		return NULL;
	base = strrchr(theirs.dli_fname, '/');
	return base ? base + 1 : theirs.dli_fname;
}

void
pc_alloc_start(int on, uint64_t rate)
{
	const char *other;
	int saved = errno;

	if (!on) {
		__atomic_store_n(&alloc_state, PC_ALLOC_OFF, __ATOMIC_RELEASE);
		return;
	}
	if (!&pc_alloc_hooks_v3) {
		pc_say("PC_ALLOC needs libpc-alloc.so in LD_PRELOAD beside libpc.so "
		       "(pcprof run --alloc preloads it); allocations are not profiled",
		       "", "");
		__atomic_store_n(&alloc_state, PC_ALLOC_OFF, __ATOMIC_RELEASE);
		errno = saved;
		return;
	}
	if ((other = alloc_other_malloc()))
		/* its calls never reach the hooks: the profile stays empty (a
		 * report of none, where pcprof run --alloc reads it), and this
		 * line says why */
		pc_say("the program's malloc is ", other,
		       !strncmp(other, "libasan.so", 10) ||
				       !strncmp(other, "libclang_rt.asan", 16) ?
			       "'s (AddressSanitizer's, which comes before libpc-alloc.so); "
			       "allocations are not profiled" :
			       "'s, found before libpc-alloc.so's; allocations are not profiled");
	alloc_rate = rate;
	pc_alloc_walk_init();	/* without it, every sample is walked */
	if (pc_alloc_table_init(alloc_rate)) {
		pc_say("cannot map memory for allocation samples; allocations are not profiled",
		       "", "");
		__atomic_store_n(&alloc_state, PC_ALLOC_OFF, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&alloc_state, PC_ALLOC_ON, __ATOMIC_RELEASE);
	}
	errno = saved;
}
