/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One sample, recorded: the bottom of the handler's path (handler.c decides
 * what a signal is and what it weighs). It runs on every tick of a thread's
 * CPU-time timer, at any instruction of the host program, and calls only
 * the handler's path below it: objfind, unwind, stacks and arcs.
 *
 * Rules for everything in this file:
 *  - only async-signal-safe calls (signal-safety(7)); no malloc, no stdio,
 *    no locks: banned.h turns the common ones into compile errors;
 *  - all memory was mapped at start-up; counters are bumped with relaxed
 *    atomics because every thread's timer runs this handler concurrently;
 *  - errno is saved and restored;
 *  - the same signal is blocked while the handler runs (no SA_NODEFER), so
 *    it never nests in one thread.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "pc.h"
#include "unwind.h"
#include "live.h"
#include "banned.h"

/* The interrupted program counter. AS-safe. */
static uintptr_t
interrupted_pc_from_handler(const ucontext_t *uc)
{
#if defined(__x86_64__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__i386__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_EIP];
#elif defined(__aarch64__)
	return (uintptr_t)uc->uc_mcontext.pc;
#else
#error "libpc: no program counter in ucontext for this architecture"
#endif
}

size_t
pc_stack_room_from_handler(const void *ucv)
{
	const ucontext_t *uc = ucv;
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uintptr_t lo = (uintptr_t)uc->uc_stack.ss_sp;

	/* the kernel saved the thread's alternate stack in the context */
	if (!(uc->uc_stack.ss_flags & SS_DISABLE) && uc->uc_stack.ss_size &&
	    sp > lo && sp - lo <= uc->uc_stack.ss_size)
		return sp - lo;
	if (pc_stack_lo && sp > pc_stack_lo && sp <= pc_stack_hi)
		return sp - pc_stack_lo;
	return 0; /* a stack libpc does not know (a coroutine's): no room */
}

/*
 * The frames of the samples being walked: a pool of buffers claimed with
 * a compare-and-swap on a bit, so that a buffer of PC_MAX_DEPTH frames
 * (4 KiB) never sits on the stack the handler runs on, which may be an
 * alternate stack of 8 KiB. Handlers run one at a time in a thread, so
 * FRAME_BUFS buffers serve as many threads inside the handler at once; a
 * sample that finds none free keeps its PC, counted as one without room.
 * Two a CPU, 64 at least and FRAME_BUFS at most: the pool is address
 * space that a locked (mlockall) or limited (ulimit -v) program counts,
 * 1 MiB at 256 (64 and 256 KiB on a machine of 2 CPUs).
 */
#define FRAME_BUFS	256
static struct pc_frame (*frame_bufs)[PC_MAX_DEPTH];
static uint64_t frame_busy[FRAME_BUFS / 64];
static int frame_words;		/* words of frame_busy in use */

int
pc_sample_init(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	int words = cpus > 0 ? (int)((2 * cpus + 63) / 64) : FRAME_BUFS / 64;
	void *m;

	if (words > FRAME_BUFS / 64)
		words = FRAME_BUFS / 64;
	m = mmap(NULL, (size_t)words * 64 * sizeof(*frame_bufs),
		 PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	frame_bufs = m;
	frame_words = words;
	return 0;
}

void
pc_sample_forked(void)
{
	/* buffers held by threads the child does not have */
	memset(frame_busy, 0, sizeof(frame_busy));
}

static int
frames_claim_from_handler(void)
{
	for (int i = 0; i < frame_words; i++) {
		uint64_t w = __atomic_load_n(&frame_busy[i], __ATOMIC_RELAXED);

		while (~w) {
			int bit = __builtin_ctzll(~w);

			if (__atomic_compare_exchange_n(
				    &frame_busy[i], &w,
				    w | (UINT64_C(1) << bit), 0,
				    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				return i * 64 + bit;
		}
	}
	return -1;
}

static void
frames_release_from_handler(int k)
{
	__atomic_fetch_and(&frame_busy[k / 64], ~(UINT64_C(1) << (k % 64)),
			   __ATOMIC_RELEASE);
}

/* The room the walk needs (pc.h). AS-safe. */
static size_t
walk_budget(void)
{
	switch (pc_cfg->unwinder) {
	case PC_UNWIND_FP:
		return PC_WALK_STACK_FP;
	case PC_UNWIND_LIBUNWIND:
		return PC_WALK_STACK_LIBUNWIND;
	default:
		return PC_WALK_STACK_DWARF;
	}
}

/* The call chain of one sample into buffer k: stacks and arcs; its
 * stack's id, or 0. AS-safe. */
static uint64_t
walk_from_handler(void *ucv, uintptr_t ip, int in_text, uint32_t weight, int k)
{
	struct pc_frame *f = frame_bufs[k];
	int n = pc_unwind_from_handler(ucv, ip, f, pc_cfg->depth);
	uint64_t id = 0;

	__atomic_fetch_add(&pc_stats->stacks_walked, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&pc_stats->frames, (uint64_t)n, __ATOMIC_RELAXED);
	if (pc_cfg->stacks)
		id = pc_stacks_add_from_handler(f, n, n >= pc_cfg->depth,
						weight);
	/* arcs only for samples a histogram holds, so that a function's
	 * callees never add up to more time than the flat profile has;
	 * stacks keep library time as well */
	if (in_text)
		pc_arcs_add_from_handler(f, n, weight);
	return id;
}

/*
 * Record one sample of the given weight at the interrupted PC: the
 * histogram of the text or object holding it, and with call graphs on the
 * stack walked from there (stacks and arcs), where the stack the handler
 * runs on has room for the walk (PC_WALK_STACK); a sample without that
 * room keeps its PC and is counted. AS-safe.
 */
static void
sample(void *ucv, uint32_t weight)
{
	uintptr_t raw, ip;
	int in_text = 0, buf;
	uint64_t id = 0;

	if (!pc_on())
		return;
	/* code run from a copy counts where its file's code is; the walk
	 * starts from the PC the unwinder will see (the copy's), and every
	 * frame it finds is translated when it is recorded (pc_link_addr) */
	raw = interrupted_pc_from_handler(ucv);
	ip = pc_copy_original_from_handler(raw);
	__atomic_fetch_add(&pc_stats->signals, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&pc_stats->samples, weight, __ATOMIC_RELAXED);
	for (int i = 0; i < pc->ntext; i++) {
		size_t k = pc_profil_index(&pc->text[i].prof, ip);

		if (k != (size_t)-1) {
			/* where its page is not backed yet, the grower
			 * places it (livegrow.c) */
			pc_live_add_from_handler(&pc->text[i].prof.buf[k],
						 weight);
			in_text = 1;
			goto walk;
		}
	}
	__atomic_fetch_add(&pc_stats->outside, weight, __ATOMIC_RELAXED);
	if (pc_cfg->scope_all)
		in_text = pc_objects_sample_from_handler(ip, weight);
walk:
	if (!pc_cfg->callgraph) {
	} else if (pc_stack_room_from_handler(ucv) < walk_budget() ||
		   (buf = frames_claim_from_handler()) < 0) {
		__atomic_fetch_add(&pc_stats->no_room, weight,
				   __ATOMIC_RELAXED);
	} else {
		id = walk_from_handler(ucv, raw, in_text, weight, buf);
		frames_release_from_handler(buf);
	}
	if (pc_cfg->timeline)
		pc_timeline_cpu_from_handler(id, id ? 0 : pc_link_addr(ip),
					     weight);
}

/* One sample; then, in a process of one thread, the live file's growth
 * it may have asked for (livegrower.c: a CPU loop makes no call that
 * would). AS-safe. */
void
pc_sample_from_handler(void *ucv, uint32_t weight)
{
	sample(ucv, weight);
	if (pc_live_grow_wanted())
		pc_live_grow_from_handler(pc_stack_room_from_handler(ucv));
}
