/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpc-alloc.so, libpc.so's companion for PC_ALLOC (pcprof run --alloc
 * preloads it beside libpc.so): the interposed malloc family. Every
 * allocation goes to the next definition (glibc's, or the allocator the
 * program is linked with or preloads), and one in about PC_ALLOC_RATE
 * bytes is sampled: libpc.so walks its stack and keeps it (alloc.c,
 * alloc_table.c), reached through pc_alloc_ops_v3, a weak reference. A
 * program profiled without allocations does not load this library, so
 * its malloc calls go straight to the allocator; loaded without libpc.so
 * (a child that kept LD_PRELOAD's companion alone) it only forwards.
 *
 * Each thread keeps a countdown of bytes drawn from an exponential
 * distribution of that mean: an allocation subtracts its size, one
 * thread-local subtraction and a compare, and the one that takes the
 * countdown to zero or below is sampled (a Poisson process over the bytes
 * allocated, so an allocation of s bytes is sampled with probability
 * 1 - exp(-s / rate): alloc_table.c scales by its inverse). A countdown
 * starts at 0, so each thread's first allocation takes the slow path,
 * which draws it; with PC_ALLOC off (or no libpc) the slow path sets it
 * out of reach, once a thread, and the hooks cost one subtraction and a
 * forwarded call.
 *
 * Safety: the next definitions are found with dlsym, which allocates; the
 * thread doing that is served from a static arena meanwhile (its blocks
 * are never freed). A thread inside the slow path (the unwinder, the
 * tables) forwards its own allocations unsampled, so a signal handler
 * that allocates there is not sampled either. Nothing here takes a lock
 * or calls dl_iterate_phdr: the dwarf walk finds unwind tables with
 * glibc's lock-free _dl_find_object (unwind.c). errno is kept.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <malloc.h>

#include "alloc.h"

/* libpc.so's side, where it is loaded (-z now binds it at start-up) */
extern const struct pc_alloc_ops *pc_alloc_ops_v3(void) __attribute__((weak));

/* what libpc.so finds the companion by */
PC_EXPORT const int pc_alloc_hooks_v3 = 1;

static const struct pc_alloc_ops *ops;	/* libpc's, or NULL: forward only */
static const uint8_t nofilter[PC_ALLOC_FILTER];
static const uint8_t *filter = nofilter;	/* libpc's once resolved */
static uint64_t alloc_rate;		/* bytes, once sampling */

static PC_TLS int64_t countdown;	/* bytes until the next sample */
static PC_TLS int seeded;		/* countdown drawn in this thread */
static PC_TLS int busy;			/* in the slow path, or resolving */
static PC_TLS uint64_t rng;

static void free_slow(void *p);
static void free_boot(void *p);
static void *realloc_boot(void *old, size_t n);

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
/* realloc's fast path's: theirs, or realloc_boot once a block of the
 * static arena was given out (as free's) */
static void *(*next_realloc)(void *, size_t);
static void *(*real_realloc)(void *, size_t);	/* the next definition */
/* free's: free_slow until the next definitions are known, then theirs,
 * so that free's fast path needs no test of it; free_boot instead of
 * theirs once a block of the static arena was given out */
static void (*next_free)(void *) = free_slow;
static void (*real_free)(void *);	/* the next definition, once known */
static int (*next_posix_memalign)(void **, size_t, size_t);
static void *(*next_aligned_alloc)(size_t, size_t);
static void *(*next_memalign)(size_t, size_t);
static void *(*next_valloc)(size_t);
static void *(*next_pvalloc)(size_t);

/* what dlsym allocates while it finds them */
#define BOOT_BYTES	(64 * 1024)
static unsigned char boot[BOOT_BYTES] __attribute__((aligned(64)));
static size_t boot_used;
static int boot_given;	/* a block of it was given out (atomic) */

static inline int
in_boot(const void *p)
{
	return (uintptr_t)p - (uintptr_t)boot < BOOT_BYTES;
}

static void *
boot_alloc(size_t n, size_t align)
{
	size_t used = __atomic_load_n(&boot_used, __ATOMIC_RELAXED), at;

	if (align < 16)
		align = 16;
	do {
		at = (used + align - 1) & ~(align - 1);
		if (at + n > BOOT_BYTES || at + n < at)
			return NULL;
	} while (!__atomic_compare_exchange_n(&boot_used, &used, at + n, 1,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	/* before the block is the caller's: its free checks the arena's
	 * bounds from here on (with resolve's stores, sequentially
	 * consistent: one of the two sees the other's) */
	__atomic_store_n(&boot_given, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&next_free, __ATOMIC_SEQ_CST) != free_slow) {
		__atomic_store_n(&next_realloc, realloc_boot, __ATOMIC_SEQ_CST);
		__atomic_store_n(&next_free, free_boot, __ATOMIC_SEQ_CST);
	}
	return boot + at;	/* static memory: zeroed, never reused */
}

/* free's next definition once a block of the arena was given out (glibc
 * 2.34 and later give none: dlsym allocates only for an error). */
static void
free_boot(void *p)
{
	if (!in_boot(p))
		real_free(p);
}

/* free's and realloc's fast paths' next definitions once they are
 * known: theirs, unless a block of the arena was given out (boot_alloc);
 * realloc's first, so that boot_alloc's, which follow free's, come after
 * it. */
static void
set_next_free(void)
{
	int given = __atomic_load_n(&boot_given, __ATOMIC_SEQ_CST);

	__atomic_store_n(&next_realloc, given ? realloc_boot : real_realloc,
			 __ATOMIC_SEQ_CST);
	__atomic_store_n(&next_free, given ? free_boot : real_free,
			 __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&boot_given, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&next_realloc, realloc_boot,
				 __ATOMIC_SEQ_CST);
		__atomic_store_n(&next_free, free_boot, __ATOMIC_SEQ_CST);
	}
}

/* Find the next definitions. Each thread that finds them unset does it
 * (the stores are the same), its own allocations meanwhile from boot. */
static void
resolve(void)
{
	busy++;
	/* ops before filter: a free that finds libpc's filter calls ops */
	if (pc_alloc_ops_v3 && (ops = pc_alloc_ops_v3()))
		__atomic_store_n(&filter, ops->filter, __ATOMIC_RELEASE);
	next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	next_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT,
								      "posix_memalign");
	next_aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
	next_memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
	next_valloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "valloc");
	next_pvalloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "pvalloc");
	real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	/* last: free's fast path takes it from here on */
	if (real_free && real_realloc)
		set_next_free();
	busy--;
}

/* The next definitions are known (or this thread is finding them: 0). */
static int
ready(void)
{
	if (__atomic_load_n(&next_free, __ATOMIC_ACQUIRE) != free_slow)
		return 1;
	if (busy)
		return 0;
	resolve();
	return next_free != free_slow;
}

/* The next countdown: exponential of mean alloc_rate (0 at rate 1: every
 * allocation is sampled), from this thread's generator, seeded at its
 * first draw (alloc_draw.c draws). */
static int64_t
draw(void)
{
	if (alloc_rate <= 1)
		return 0;
	if (!rng) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		rng = (uint64_t)(uintptr_t)&countdown ^
		      pc_mix((uint64_t)ts.tv_nsec + 1) ^ (uint64_t)ts.tv_sec;
		if (!rng)
			rng = 1;
	}
	return pc_alloc_draw(&rng, alloc_rate);
}

/* The countdown went to 0 or below for an allocation of n bytes: whether
 * it is sampled, the countdown set again. */
static int
take(size_t n)
{
	uint64_t rate = 0;
	int st = ops ? ops->state(&rate) : PC_ALLOC_OFF;

	if (st != PC_ALLOC_ON) {
		countdown = st == PC_ALLOC_OFF ? INT64_MAX : 0;
		return 0;
	}
	alloc_rate = rate;	/* the same in every thread */
	if (!seeded) {
		seeded = 1;
		countdown = draw() - (int64_t)n;
		if (countdown > 0)
			return 0;
	}
	countdown = draw();
	return 1;
}

/* Record p, of n bytes, allocated by the call that returns to ra, whose
 * stack pointer was cfa (in libpc.so: take found it loaded). */
static void
sample(void *p, size_t n, uintptr_t ra, uintptr_t cfa)
{
	busy++;
	ops->sample(p, n, ra, cfa);
	busy--;
}

/* Whether p may be a sampled block (libpc's filter; 0: it is not). */
static inline int
maybe(const void *p)
{
	const uint8_t *f = __atomic_load_n(&filter, __ATOMIC_ACQUIRE);

	return __atomic_load_n(&f[pc_alloc_bucket(p)], __ATOMIC_RELAXED) != 0;
}

/* The hook's caller: the return address and its stack pointer then (the
 * hook's CFA), for the walk's cache (alloc_walk.c); computed on the slow
 * path only. */
#define CALLER	(uintptr_t)__builtin_return_address(0), \
		(uintptr_t)__builtin_dwarf_cfa()

/* The countdown of one allocation of n bytes: 1 when it is sampled. On
 * x86-64 one subtraction from the thread's word and a jump on its flags
 * (signed: countdown <= n), where the compiler loads, subtracts, stores
 * and tests: 3 instructions fewer a call. */
#if defined(__x86_64__) && defined(__GNUC__)
static inline __attribute__((always_inline)) int
crosses(size_t n)
{
	/* countdown as an input, changed: the memory clobber says so (an
	 * output of asm goto miscompiles in GCC 12) */
	__asm__ goto("subq %1, %0\n\tjle %l[yes]"
		     :
		     : "m"(countdown), "r"((int64_t)n)
		     : "cc", "memory"
		     : yes);
	return 0;
yes:
	return 1;
}
#define CROSSES(n)	__builtin_expect(crosses(n), 0)

/* maybe(p) on free's fast path: the filter's byte compared in memory and
 * a jump, where the compiler loads it, then tests it (a relaxed atomic
 * load: a byte's load is atomic on x86-64). */
static inline __attribute__((always_inline)) int
marked(const void *p)
{
	const uint8_t *f = __atomic_load_n(&filter, __ATOMIC_ACQUIRE);

	__asm__ goto("cmpb $0, %0\n\tjne %l[yes]"
		     :
		     : "m"(f[pc_alloc_bucket(p)])
		     : "cc"
		     : yes);
	return 0;
yes:
	return 1;
}
#define MARKED(p)	__builtin_expect(marked(p), 0)
#else
#define CROSSES(n)	__builtin_expect((countdown -= (int64_t)(n)) <= 0, 0)
#define MARKED(p)	__builtin_expect(maybe(p), 0)
#endif

static __attribute__((noinline)) void *
malloc_slow(size_t n, uintptr_t ra, uintptr_t cfa)
{
	void *p;

	if (!ready())
		return boot_alloc(n, 16);
	if (busy || !take(n))
		return next_malloc(n);
	if ((p = next_malloc(n)))
		sample(p, n, ra, cfa);
	return p;
}

PC_EXPORT void *
malloc(size_t n)
{
	if (CROSSES(n))
		return malloc_slow(n, CALLER);
	return next_malloc(n);
}

static __attribute__((noinline)) void *
calloc_slow(size_t a, size_t b, uintptr_t ra, uintptr_t cfa)
{
	size_t n;
	void *p;

	if (!ready())
		return __builtin_mul_overflow(a, b, &n) ? NULL :
							  boot_alloc(n, 16);
	if (busy || __builtin_mul_overflow(a, b, &n) || !take(n))
		return next_calloc(a, b);
	if ((p = next_calloc(a, b)))
		sample(p, n, ra, cfa);
	return p;
}

PC_EXPORT void *
calloc(size_t a, size_t b)
{
	size_t n;

	/* a countdown above 0 means the next definitions are known */
	if (!__builtin_mul_overflow(a, b, &n) && !CROSSES(n))
		return next_calloc(a, b);
	return calloc_slow(a, b, CALLER);
}

/* p is freed (or moved by realloc): its sample's free counted. */
static void
forget(void *p)
{
	size_t size;
	uint32_t stack;

	if (maybe(p))
		ops->forget(p, &size, &stack);
}

/* A block that may be sampled (libpc's filter), of the static arena, or
 * any before the next definitions are known. */
static __attribute__((noinline)) void
free_slow(void *p)
{
	if (!p || in_boot(p))
		return;
	forget(p);
	if (ready())
		real_free(p);
}

/* The fast path: the filter's byte, then the next definition (free_slow
 * until it is known, free_boot where the arena gave a block), a tail
 * call. */
PC_EXPORT void
free(void *p)
{
	if (MARKED(p)) {
		free_slow(p);
		return;
	}
	__atomic_load_n(&next_free, __ATOMIC_RELAXED)(p);
}

static __attribute__((noinline)) void *
realloc_slow(void *old, size_t n, int crossed, uintptr_t ra,
	     uintptr_t cfa)
{
	size_t size = 0;
	uint32_t stack = 0;
	int had, sampled;
	void *p;

	if (!ready() || in_boot(old)) {
		/* dlsym's, or a block of the static arena grown */
		size_t room = old ? (size_t)(boot + BOOT_BYTES -
					     (unsigned char *)old) :
				    0;

		p = ready() ? next_malloc(n) : boot_alloc(n, 16);
		if (p && old)
			memcpy(p, old, n < room ? n : room);
		return p;
	}
	had = old && maybe(old) && ops->forget(old, &size, &stack);
	sampled = crossed && !busy && take(n);
	p = real_realloc(old, n);
	if (!p && n && had)
		ops->restore(old, size, stack);	/* old stays the program's */
	else if (p && sampled)
		sample(p, n, ra, cfa);
	return p;
}

/* realloc's next definition once a block of the arena was given out:
 * such a block is copied into one of theirs. */
static void *
realloc_boot(void *old, size_t n)
{
	if (in_boot(old))
		return realloc_slow(old, n, 0, 0, 0);
	return real_realloc(old, n);
}

/* The fast path: the countdown, the filter's byte, then the next
 * definition (realloc_boot where the arena gave a block): a countdown
 * above 0 means the next definitions are known (take). */
PC_EXPORT void *
realloc(void *old, size_t n)
{
	int crossed = CROSSES(n);

	if (!crossed && !MARKED(old))
		return next_realloc(old, n);
	return realloc_slow(old, n, crossed,
			    CALLER);
}

PC_EXPORT void *
reallocarray(void *old, size_t a, size_t b)
{
	size_t n;
	int crossed;

	if (__builtin_mul_overflow(a, b, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	/* not through realloc(): its return address would be this one */
	crossed = CROSSES(n);
	if (!crossed && !MARKED(old))
		return next_realloc(old, n);
	return realloc_slow(old, n, crossed,
			    CALLER);
}

/* The aligned forms: kind 0 memalign, 1 aligned_alloc, 2 valloc, 3
 * pvalloc. */
static __attribute__((noinline)) void *
aligned_slow(int kind, size_t align, size_t n, uintptr_t ra,
	     uintptr_t cfa)
{
	void *p;
	int s;

	if (!ready())
		return boot_alloc(n, kind >= 2 ? 4096 : align);
	s = !busy && take(n);
	p = kind == 0 ? next_memalign(align, n) :
	    kind == 1 ? next_aligned_alloc(align, n) :
	    kind == 2 ? next_valloc(n) :
			next_pvalloc(n);
	if (p && s)
		sample(p, n, ra, cfa);
	return p;
}

PC_EXPORT void *
memalign(size_t align, size_t n)
{
	if (CROSSES(n))
		return aligned_slow(0, align, n,
				    CALLER);
	return next_memalign(align, n);
}

PC_EXPORT void *
aligned_alloc(size_t align, size_t n)
{
	if (CROSSES(n))
		return aligned_slow(1, align, n,
				    CALLER);
	return next_aligned_alloc(align, n);
}

PC_EXPORT void *
valloc(size_t n)
{
	if (CROSSES(n))
		return aligned_slow(2, 0, n,
				    CALLER);
	return next_valloc(n);
}

PC_EXPORT void *
pvalloc(size_t n)
{
	if (CROSSES(n))
		return aligned_slow(3, 0, n,
				    CALLER);
	return next_pvalloc(n);
}

static __attribute__((noinline)) int
posix_memalign_slow(void **out, size_t align, size_t n, uintptr_t ra,
		    uintptr_t cfa)
{
	int r, s;

	if (!ready()) {
		*out = boot_alloc(n, align);
		return *out ? 0 : ENOMEM;
	}
	s = !busy && take(n);
	r = next_posix_memalign(out, align, n);
	if (!r && s)
		sample(*out, n, ra, cfa);
	return r;
}

PC_EXPORT int
posix_memalign(void **out, size_t align, size_t n)
{
	if (CROSSES(n))
		return posix_memalign_slow(
			out, align, n, CALLER);
	return next_posix_memalign(out, align, n);
}
