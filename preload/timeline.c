/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The timeline (PC_TIMELINE=1): each CPU sample, and each off-CPU one
 * under the wall clock, kept with its thread, its CLOCK_MONOTONIC time,
 * its weight, the thread's CPU time then, and its stack's id in the
 * stacks table (stacks.c; the pc where stacks are off). It lives in the
 * live file, a region of its own, so that a killed process leaves it for
 * pc_recover; at the end it is written beside the profile as
 * PROFILE.timeline (timeline.h).
 *
 * The ring is bounded (PC_TIMELINE_MAX entries). Past the bound it keeps
 * a uniform sample of the whole run: the n-th sample replaces a slot
 * chosen by a hash of n in [0, n] when that falls inside the ring
 * (reservoir sampling, algorithm R), so every sample of the run is kept
 * with the same chance, max / seen, which the file's header says.
 *
 * With PC_ALLOC too, a third ring keeps the sampled allocations and the
 * frees of the blocks they tracked (alloc_table.c), each with its time,
 * thread, bytes, address and stack: the first PC_TIMELINE_MAX of them,
 * so that a free kept has its allocation kept; the later ones are
 * counted, not kept.
 *
 * Runs in the signal handler: no lock, no allocation, only
 * clock_gettime. A slot is claimed by a compare-and-swap of its sequence
 * word from even to odd and published by storing the next even value; a
 * sample that finds its slot being written is dropped and counted, and the
 * writer reads only slots whose sequence is even and did not change.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pc.h"
#include "live.h"
#include "timeline.h"
#include "banned.h"

/* the counters, in the live file to outlive a kill */
struct tl_state {
	uint64_t seen, busy, unbacked, marks_used, marks_lost;
	uint64_t start_ns, max;
	/* markers are timed by the CPU's counter where it runs at a constant
	 * rate: a third of a clock_gettime here (kvm-clock); mono_ns =
	 * start_ns + (ticks - tick0) * the rate the writer measures */
	uint64_t tick0, ticking;
	size_t ring_slots, marks_slots;	/* backed: pc_grow publishes them */
	/* the allocation events' ring (0: none), last: a file of an
	 * earlier build reads as one with none */
	uint64_t allocs_max, allocs_seen, allocs_lost;
	size_t allocs_slots;
};

static struct tl_state *tl;
static struct pc_tl_entry *ring, *marks, *allocs;
static struct pc_tl_name_slot *names;
static struct pc_grow ring_grow, marks_grow, allocs_grow;
static size_t region_len;
static uint64_t ring_max, allocs_max, ticking;	/* a fork child's, where
							 * its state was not
							 * copied */
static PC_TLS uint32_t my_tid;
static size_t allocs_gave_up;	/* the allocation ring's slots when a wait
				 * for more ran out (alloc_room), atomic */

static size_t
round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TICKS 1
/* The time stamp counter. AS-safe. */
static uint64_t
ticks(void)
{
	return __rdtsc();
}
#elif defined(__aarch64__)
#define HAVE_TICKS 1
static uint64_t
ticks(void)
{
	uint64_t v;

	__asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
	return v;
}
#else
#define HAVE_TICKS 0
static uint64_t
ticks(void)
{
	return 0;
}
#endif

static uint64_t
now_ns(clockid_t c)
{
	struct timespec ts;

	if (clock_gettime(c, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define HEAD_LEN	round_up(sizeof(struct tl_state), 4096)
#define NAMES_LEN	round_up(PC_TL_NAMES * sizeof(struct pc_tl_name_slot), 4096)

/* The rings' bytes for max samples and amax allocation events. */
static size_t
rings_size(uint64_t max, uint64_t amax)
{
	return (max + PC_TL_MARKS + amax) * sizeof(struct pc_tl_entry);
}

/* The parts of the two regions: at h the state and the names (copied
 * into a fork child's file, as the inventory is: the names' pointers are
 * the child's too), at r the samples' ring, the markers' and the
 * allocation events'. */
static void
lay_out(char *h, char *r, uint64_t max, uint64_t amax)
{
	tl = (struct tl_state *)h;
	names = (struct pc_tl_name_slot *)(h + HEAD_LEN);
	ring = (struct pc_tl_entry *)r;
	marks = ring + max;
	allocs = amax ? marks + PC_TL_MARKS : NULL;
	region_len = rings_size(max, amax);
}

/* Whether the counter runs at one rate on every CPU, through sleeps
 * (x86's constant_tsc and nonstop_tsc; always on aarch64). Start-up. */
static int
steady_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	static char buf[8192];
	int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strstr(buf, " constant_tsc") && strstr(buf, " nonstop_tsc");
#else
	return HAVE_TICKS;
#endif
}

/* The ticks' start and rate from now: the time of a marker. */
static void
start_ticks(void)
{
	tl->start_ns = now_ns(CLOCK_MONOTONIC);
	tl->tick0 = tl->ticking ? ticks() : 0;
}

int
pc_timeline_init(uint64_t max, int with_allocs)
{
	struct pc_live_tables *t = pc_live_tables();
	uint64_t p2 = 64, amax;
	char *h, *r;

	/* a power of two, as the file's tables grow (livegrow.c) */
	while (p2 < max)
		p2 *= 2;
	max = p2;
	amax = with_allocs ? max : 0;
	h = pc_live_alloc(HEAD_LEN + NAMES_LEN, 1);
	r = pc_live_alloc(rings_size(max, amax), 0);
	if (!h || !r || pc_live_back(h, HEAD_LEN + NAMES_LEN))
		return -ENOMEM;
	lay_out(h, r, max, amax);
	ring_max = max;
	allocs_max = amax;
	t->timeline = h;
	t->timeline_len = HEAD_LEN + NAMES_LEN;
	t->timeline_rings = r;
	t->timeline_rings_len = region_len;
	tl->max = max;
	tl->allocs_max = amax;
	tl->ticking = ticking = (uint64_t)steady_ticks();
	start_ticks();
	pc_grow_init(&ring_grow, ring, sizeof(*ring), 4096, max,
		     &tl->ring_slots);
	pc_grow_init(&marks_grow, marks, sizeof(*marks), 4096, PC_TL_MARKS,
		     &tl->marks_slots);
	if (amax)
		pc_grow_init(&allocs_grow, allocs, sizeof(*allocs), 4096, amax,
			     &tl->allocs_slots);
	return 0;
}

int
pc_timeline_recover(const struct pc_live_tables *t)
{
	const struct tl_state *s = t->timeline;

	if (!s || t->timeline_len != HEAD_LEN + NAMES_LEN || s->max < 1 ||
	    s->max > (1u << 26) || s->allocs_max > (1u << 26))
		return -EINVAL;
	lay_out(t->timeline, t->timeline_rings, s->max, s->allocs_max);
	if (region_len != t->timeline_rings_len || tl->ring_slots > tl->max ||
	    tl->marks_slots > PC_TL_MARKS ||
	    tl->allocs_slots > tl->allocs_max)
		return -EINVAL;
	ring_grow.slots = tl->ring_slots;
	marks_grow.slots = tl->marks_slots;
	allocs_grow.slots = tl->allocs_slots;
	return 0;
}

void
pc_timeline_clear(void)
{
	if (!tl)
		return;
	/* a fork child's: its own counts from zero, its own start; its
	 * state is the parent's copy, or (the inventory's room full) a page
	 * backed again */
	if (pc_live_back(tl, HEAD_LEN + NAMES_LEN)) {
		tl = NULL;
		return;
	}
	tl->max = ring_max;
	tl->allocs_max = allocs_max;
	tl->ticking = ticking;
	madvise(ring, (size_t)tl->max * sizeof(*ring), MADV_DONTNEED);
	madvise(marks, PC_TL_MARKS * sizeof(*marks), MADV_DONTNEED);
	if (allocs)
		madvise(allocs, (size_t)allocs_max * sizeof(*allocs),
			MADV_DONTNEED);
	tl->seen = tl->busy = tl->unbacked = tl->marks_used = tl->marks_lost =
		0;
	tl->allocs_seen = tl->allocs_lost = 0;
	allocs_gave_up = 0;
	start_ticks();
	my_tid = 0;
}

/* A hash of n, for the reservoir's choice (splitmix64). AS-safe. */
static uint64_t
mix(uint64_t n)
{
	n += 0x9e3779b97f4a7c15ULL;
	n = (n ^ (n >> 30)) * 0xbf58476d1ce4e5b9ULL;
	n = (n ^ (n >> 27)) * 0x94d049bb133111ebULL;
	return n ^ (n >> 31);
}

/* Fill slot e, unless another thread writes it now: 1 if filled.
 * AS-safe. */
static int
put_from_handler(struct pc_tl_entry *e, const struct pc_tl_entry *v)
{
	uint32_t seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);

	if ((seq & 1) ||
	    !__atomic_compare_exchange_n(&e->seq, &seq, seq + 1, 0,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return 0;
	e->t = v->t;
	e->where = v->where;
	e->value = v->value;
	e->tid = v->tid;
	e->weight = v->weight;
	e->kind = v->kind;
	__atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
	return 1;
}

/* Offer one sample to the ring. AS-safe. */
static void
offer_from_handler(const struct pc_tl_entry *v)
{
	uint64_t n = __atomic_fetch_add(&tl->seen, 1, __ATOMIC_RELAXED);
	uint64_t slot = n;

	if (n >= tl->max) {
		slot = mix(n ^ tl->start_ns) % (n + 1);
		if (slot >= tl->max)
			return;
	}
	if (slot >= pc_grow_slots(&ring_grow)) {
		__atomic_fetch_add(&tl->unbacked, 1, __ATOMIC_RELAXED);
		return;
	}
	if (n < tl->max)
		pc_grow_took_from_handler(&ring_grow, 1);
	if (!put_from_handler(&ring[slot], v))
		__atomic_fetch_add(&tl->busy, 1, __ATOMIC_RELAXED);
}

void
pc_timeline_cpu_from_handler(uint64_t stack, uint64_t at, uint32_t weight)
{
	struct pc_tl_entry v = { 0 };
	uint32_t tid = my_tid;

	if (!tl)
		return;
	if (!tid)
		tid = my_tid = (uint32_t)syscall(SYS_gettid);
	v.t = now_ns(CLOCK_MONOTONIC);
	v.where = stack ? stack : at;
	v.kind = stack ? PC_TL_CPU : PC_TL_PC;
	v.value = now_ns(CLOCK_THREAD_CPUTIME_ID);
	v.tid = tid;
	v.weight = weight;
	offer_from_handler(&v);
}

void
pc_timeline_off(uint32_t tid, uint64_t stack, uint64_t ns)
{
	struct pc_tl_entry v = { 0 };

	if (!tl || !ns)
		return;
	v.t = now_ns(CLOCK_MONOTONIC);
	v.where = stack;
	v.kind = PC_TL_OFF;
	v.value = ns;
	v.tid = tid;
	v.weight = 1;
	offer_from_handler(&v);
}

void
pc_timeline_mark_at(uint32_t kind, uint32_t tid, uint64_t name, uint64_t value,
		    uint64_t at)
{
	struct pc_tl_entry v = { 0 };
	uint64_t n;

	if (!tl)
		return;
	/* markers are kept from the first: an end without its beginning
	 * would draw nothing (those past the ring are counted by marks_used) */
	n = __atomic_fetch_add(&tl->marks_used, 1, __ATOMIC_RELAXED);
	if (n >= PC_TL_MARKS)
		return;
	v.t = at ? at : tl->ticking ? ticks() : now_ns(CLOCK_MONOTONIC);
	v.where = name;
	v.value = value;
	v.tid = tid;
	v.kind = kind | (at ? PC_TL_AT_NS : 0);
	if (n >= pc_grow_slots(&marks_grow) ||
	    !put_from_handler(&marks[n], &v)) {
		__atomic_fetch_add(&tl->marks_lost, 1, __ATOMIC_RELAXED);
		return;
	}
	pc_grow_took_from_handler(&marks_grow, 1);
}

/* Whether event n of the allocation ring has a backed slot. Where it
 * has none yet, its growth first: a round here in a process of one
 * thread (pc_live_grow_now), else waits of 20 us for the grower thread,
 * which pc_grow_took_from_handler woke, 2,000 at most; a wait that runs
 * out gives up until the ring has grown (the file full, or the grower
 * starved). Threads allocating at once outrun the grower: 4 threads of
 * tests/progs/alloc39 at PC_ALLOC_RATE=1 kept 4,096 of their 90,064
 * events without the wait, all of them with it. The sampled path of an
 * allocation or free alone. errno kept. */
static int
alloc_room(uint64_t n)
{
	struct timespec us20 = { 0, 20000 };
	int saved = errno, tries = 0;
	size_t slots;

	while (n >= (slots = pc_grow_slots(&allocs_grow)) &&
	       slots != __atomic_load_n(&allocs_gave_up, __ATOMIC_RELAXED) &&
	       pc->ending == PC_END_RUNNING && !pc_sandboxed()) {
		pc_live_grow_now();
		if (n < pc_grow_slots(&allocs_grow))
			break;
		if (__libc_single_threaded || tries++ == 2000) {
			/* no room the round could take, or no grower */
			__atomic_store_n(&allocs_gave_up, slots,
					 __ATOMIC_RELAXED);
			break;
		}
		nanosleep(&us20, NULL);
	}
	errno = saved;
	return n < pc_grow_slots(&allocs_grow);
}

void
pc_timeline_alloc(uint32_t kind, uint32_t stack, uint64_t size, uint64_t addr)
{
	struct pc_tl_entry v = { 0 };
	uint32_t tid = my_tid;
	uint64_t n;

	if (!tl || !allocs)
		return;
	/* the first ones kept: a free kept finds its allocation kept (those
	 * past the ring are counted by allocs_seen) */
	n = __atomic_fetch_add(&tl->allocs_seen, 1, __ATOMIC_RELAXED);
	if (n >= tl->allocs_max)
		return;
	if (!tid)
		tid = my_tid = (uint32_t)syscall(SYS_gettid);
	v.t = now_ns(CLOCK_MONOTONIC);
	v.where = size;
	v.value = addr;
	v.tid = tid;
	v.weight = stack;
	v.kind = kind;
	/* slot n taken, backed or not: the table grows to the indices
	 * claimed, which a burst of threads takes past its backed slots */
	pc_grow_took_from_handler(&allocs_grow, 1);
	if (!alloc_room(n) || !put_from_handler(&allocs[n], &v))
		__atomic_fetch_add(&tl->allocs_lost, 1, __ATOMIC_RELAXED);
}

void
pc_timeline_mark_lost(void)
{
	if (tl)
		__atomic_fetch_add(&tl->marks_lost, 1, __ATOMIC_RELAXED);
}

struct pc_tl_name_slot *
pc_timeline_names(void)
{
	return names;
}

/* One record's head. AS-safe. */
static void
rec(struct gmon_sink *s, uint32_t tag, size_t len)
{
	struct pc_tl_rec r = { tag, (uint32_t)len };

	gmon_sink_bytes(s, &r, sizeof(r));
}

/* The entries of t[0, n) that are whole, as records of tag; with a
 * rate (ns a tick), their times ticks to be made nanoseconds. AS-safe. */
static void
write_entries(struct gmon_sink *s, const struct pc_tl_entry *t, size_t n,
	      uint32_t tag, double rate)
{
	for (size_t i = 0; i < n && !s->error; i++) {
		uint32_t seq = __atomic_load_n(&t[i].seq, __ATOMIC_ACQUIRE);
		struct pc_tl_entry e = t[i];

		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (!seq || (seq & 1) ||
		    __atomic_load_n(&t[i].seq, __ATOMIC_RELAXED) != seq)
			continue;
		if (rate > 0 && !(e.kind & PC_TL_AT_NS))
			e.t = tl->start_ns +
			      (uint64_t)((double)(e.t - tl->tick0) * rate);
		rec(s, tag, sizeof(e));
		gmon_sink_bytes(s, &e, sizeof(e));
	}
}

/* The time of the latest sample kept: where a killed process's run
 * ended, as pc_recover writes it long after. AS-safe. */
static uint64_t
last_sample(void)
{
	uint64_t last = tl->start_ns;
	size_t n = pc_grow_slots(&ring_grow);

	for (size_t i = 0; i < n; i++)
		if (ring[i].seq && !(ring[i].seq & 1) && ring[i].t > last)
			last = ring[i].t;
	return last;
}

int
pc_timeline_write(struct gmon_sink *s)
{
	struct pc_tl_head h;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, PC_TL_MAGIC, sizeof(h.magic));
	h.pid = (uint32_t)pc->pid;
	h.hz = (uint32_t)pc_cfg->hz;
	h.start_ns = tl->start_ns;
	h.end_ns = pc->ending == PC_END_KILLED ? last_sample() :
						 now_ns(CLOCK_MONOTONIC);
	h.interval_ns = (uint64_t)pc_cfg->interval_ns;
	h.max = tl->max;
	h.seen = __atomic_load_n(&tl->seen, __ATOMIC_RELAXED);
	h.busy = __atomic_load_n(&tl->busy, __ATOMIC_RELAXED);
	h.unbacked = __atomic_load_n(&tl->unbacked, __ATOMIC_RELAXED);
	h.marks = __atomic_load_n(&tl->marks_used, __ATOMIC_RELAXED);
	h.marks_lost = __atomic_load_n(&tl->marks_lost, __ATOMIC_RELAXED) +
		       (h.marks > PC_TL_MARKS ? h.marks - PC_TL_MARKS : 0);
	rec(s, PC_TL_HEAD, sizeof(h));
	gmon_sink_bytes(s, &h, sizeof(h));
	for (size_t i = 0; i < PC_TL_NAMES && !s->error; i++) {
		const struct pc_tl_name_slot *k = &names[i];
		uint64_t id = i + 1;
		size_t len;

		if (!pc_slot_ready(&k->state))
			continue;
		len = strnlen(k->name, sizeof(k->name));
		rec(s, PC_TL_NAME, sizeof(id) + len);
		gmon_sink_bytes(s, &id, sizeof(id));
		gmon_sink_bytes(s, k->name, len);
	}
	return s->error;
}

/* The allocation events' counts, then those kept. AS-safe. */
static void
write_allocs(struct gmon_sink *s)
{
	struct pc_tl_allocs a;
	size_t slots = pc_grow_slots(&allocs_grow);

	a.seen = __atomic_load_n(&tl->allocs_seen, __ATOMIC_RELAXED);
	a.max = tl->allocs_max;
	a.lost = __atomic_load_n(&tl->allocs_lost, __ATOMIC_RELAXED) +
		 (a.seen > a.max ? a.seen - a.max : 0);
	rec(s, PC_TL_ALLOCS, sizeof(a));
	gmon_sink_bytes(s, &a, sizeof(a));
	write_entries(s, allocs, a.seen < slots ? a.seen : slots, PC_TL_ALLOC,
		      0);
}

int
pc_timeline_write_rings(struct gmon_sink *s)
{
	/* the ticks' rate, from start to now: the same boot, and a counter
	 * of one rate, even where this is pc_recover's process; the two
	 * read together (with the samples written between them, their time
	 * shrank every marker: 230 to 2,300 ppm beside two CPU hogs) */
	uint64_t used, end_ns = now_ns(CLOCK_MONOTONIC),
		       tick1 = tl->ticking ? ticks() : 0;
	uint64_t marks_used =
		__atomic_load_n(&tl->marks_used, __ATOMIC_RELAXED);

	write_entries(s, ring, pc_grow_slots(&ring_grow), PC_TL_SAMPLE, 0);
	used = marks_used < pc_grow_slots(&marks_grow) ?
		       marks_used :
		       pc_grow_slots(&marks_grow);
	write_entries(s, marks, used, PC_TL_MARK,
		      tl->ticking && tick1 > tl->tick0 ?
			      (double)(end_ns - tl->start_ns) /
				      (double)(tick1 - tl->tick0) :
			      0);
	if (allocs)
		write_allocs(s);
	rec(s, PC_TL_LAST, 0);
	return s->error;
}

int
pc_timeline_on(void)
{
	return tl != NULL;
}

void
pc_timeline_kept(uint64_t out[4])
{
	size_t n = pc_grow_slots(&ring_grow);

	out[0] = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t seq = __atomic_load_n(&ring[i].seq, __ATOMIC_RELAXED);

		out[0] += seq && !(seq & 1);
	}
	out[1] = __atomic_load_n(&tl->seen, __ATOMIC_RELAXED);
	out[2] = tl->max;
	out[3] = __atomic_load_n(&tl->marks_used, __ATOMIC_RELAXED);
	if (out[3] > PC_TL_MARKS)
		out[3] = PC_TL_MARKS;
}
