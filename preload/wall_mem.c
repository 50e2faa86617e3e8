/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The wall sampler's memory (wall.c, wall_acct.c): its two tables of
 * threads, the starts told of threads not listed yet, and a round's picks
 * of threads to walk. None of it is malloc's: a thread's first malloc
 * gets it an arena of glibc's, 64 MiB of address space (128 MiB while it
 * is made), which RLIMIT_AS limits and mlockall(MCL_CURRENT) weighs
 * against RLIMIT_MEMLOCK; the sampler's thread never calls malloc (the
 * thread list is sorted here, in place), and libunwind is loaded before
 * it starts (wall_unwind.c).
 *
 * The tables start with room for 49 threads and grow with their
 * number, by mremap, a quarter more at a time, to 32768 threads (moved
 * where need be, during a listing: wall.c holds no pointer into the
 * table being listed).
 * After mlockall(MCL_FUTURE) they grow no more, as the live file does not
 * (livemap.c): each new page would be locked and counted against the
 * program's RLIMIT_MEMLOCK. Threads past the room are then not followed,
 * and the summary says how many and why; the program never fails for it.
 * Only the sampler's thread calls these, under its round's lock, but
 * pc_wall_mem_start (pc_wall_start, before the thread starts).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "pc.h"
#include "live.h"
#include "wall.h"
#include "banned.h"

#define FIRST		(16 * 1024)	/* a table's first mapping: 49 threads */
#define STEP		(64 * 1024)	/* growth, at least */
#define MOST		32768		/* threads followed; more are not */
#define BEGINS		4096		/* starts' slots at first */
#define PAGE		4096

/* Starts told of threads not listed yet, by id: a thread's start may be
 * told before a listing shows it, and it may end before one does. A slot
 * by the id's low bits; a clash doubles the table (10,000 threads that
 * start and end between two rounds are there at once), and where it
 * cannot, loses the earlier start (its thread's time is then counted
 * from the round after, or not at all if it ended before). */
static struct begin {
	uint32_t tid;
	uint64_t t_ns;
} *begins;
static size_t nbegins;		/* slots, a power of 2 */

static uint32_t *picks;		/* a round's walks to choose from */
static size_t picks_room;
static size_t unfollowed;	/* the most threads not followed at once */
static int unfollowed_why; /* PC_LIVE_LOCKED, _UNMAPPED or _CAPPED (MOST) */

static void *
sys_mmap(size_t len)
{
	void *m = (void *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return m == MAP_FAILED ? NULL : m;
}

/* The mapping at *p of *len bytes grown to len bytes, its contents kept
 * (moved if need be): 0, or -1 (and why noted) where it cannot be. */
static int
grow(void **p, size_t *len, size_t len_new)
{
	void *m;

	/* the memory is locked (MCL_FUTURE): a new page would count against
	 * the program's RLIMIT_MEMLOCK */
	if (pc_live_map_locked(-1)) {
		unfollowed_why = PC_LIVE_LOCKED;
		return -1;
	}
	m = *p ? (void *)syscall(SYS_mremap, *p, *len, len_new,
				 MREMAP_MAYMOVE) :
		 (void *)syscall(SYS_mmap, NULL, len_new,
				 PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		unfollowed_why = PC_LIVE_UNMAPPED;
		return -1;
	}
	*p = m;
	*len = len_new;
	return 0;
}

/* The two tables, cur and nxt in wall.c's round (which swaps them), and
 * the room each has: found by where it is. */
static struct table {
	struct pc_wthread *t;
	size_t cap;
} tables[2];

int
pc_wall_mem_start(struct pc_wthread **a, struct pc_wthread **b)
{
	if (!begins) {
		if (!(begins = sys_mmap(BEGINS * sizeof(*begins))))
			return -1;
		nbegins = BEGINS;
	}
	/* a page of picks now: the first walks may come after the program
	 * locked its memory */
	if (!pc_wall_picks(PAGE / sizeof(*picks)))
		return -1;
	for (int i = 0; i < 2; i++)
		if (!tables[i].t) {
			size_t len = 0;
			void *p = NULL;

			if (grow(&p, &len, FIRST))
				return -1;
			tables[i].t = p;
			tables[i].cap = len / sizeof(struct pc_wthread);
		}
	*a = tables[0].t;
	*b = tables[1].t;
	return 0;
}

size_t
pc_wall_room_of(const struct pc_wthread *t)
{
	return t == tables[0].t ? tables[0].cap :
	       t == tables[1].t ? tables[1].cap : 0;
}

struct pc_wthread *
pc_wall_room(struct pc_wthread *t, size_t n)
{
	struct table *x = t == tables[0].t ? &tables[0] :
			  t == tables[1].t ? &tables[1] : NULL;
	size_t len, want = (n + 1) * sizeof(*t);
	void *p;

	if (!x)
		return NULL;
	if (n < x->cap)
		return t;
	if (n >= MOST) {
		unfollowed_why = PC_LIVE_CAPPED;
		return NULL;
	}
	/* a quarter more, a step at least, in whole steps */
	len = x->cap * sizeof(*t);
	if (want < len + (len / 4 > STEP ? len / 4 : STEP))
		want = len + (len / 4 > STEP ? len / 4 : STEP);
	want = (want + STEP - 1) / STEP * STEP;
	p = x->t;
	if (grow(&p, &len, want))
		return NULL;
	x->t = p;
	x->cap = len / sizeof(*t);
	return x->t;
}

void
pc_wall_not_followed(size_t n)
{
	if (n > unfollowed)
		unfollowed = n;
}

size_t
pc_wall_unfollowed(int *why)
{
	*why = unfollowed_why;
	return unfollowed;
}

/* Heap sort of tid[0..n), in place: no malloc, as qsort's would be. */
static void
sift(uint32_t *tid, size_t i, size_t n)
{
	uint32_t v = tid[i];

	for (size_t c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && tid[c + 1] > tid[c])
			c++;
		if (v >= tid[c])
			break;
		tid[i] = tid[c];
	}
	tid[i] = v;
}

void
pc_wall_sort_tids(uint32_t *tid, size_t n)
{
	size_t i;

	/* a listing is mostly in order already */
	for (i = 1; i < n && tid[i - 1] <= tid[i]; i++)
		;
	if (i >= n)
		return;
	for (i = n / 2; i-- > 0;)
		sift(tid, i, n);
	for (i = n; i-- > 1;) {
		uint32_t v = tid[0];

		tid[0] = tid[i];
		tid[i] = v;
		sift(tid, 0, i);
	}
}

void
pc_wall_spread(struct pc_wthread *t, size_t n)
{
	const uint32_t *tid = (const uint32_t *)t;

	pc_wall_sort_tids((uint32_t *)t, n);
	/* from the last: entry i covers no tid before the i-th but its own */
	for (size_t i = n; i-- > 0;) {
		uint32_t id = tid[i];

		memset(&t[i], 0, sizeof(t[i]));
		t[i].fd = -1;
		t[i].tid = id;
	}
}

/* The starts' table doubled: an entry in slot i moves to i + n where
 * its id says so, a slot that is empty (two ids in one slot of the
 * doubled table shared one before, which cannot be). 0, or -1. */
static int
begins_double(void)
{
	size_t len = nbegins * sizeof(*begins), n = nbegins;
	void *p = begins;

	if (nbegins >= MOST || grow(&p, &len, 2 * len))
		return -1;
	begins = p;
	nbegins = 2 * n;
	for (size_t i = 0; i < n; i++)
		if (begins[i].tid && (begins[i].tid & (nbegins - 1)) != i) {
			begins[i + n] = begins[i];
			begins[i].tid = 0;
		}
	return 0;
}

void
pc_wall_begin(uint32_t tid, uint64_t t_ns)
{
	struct begin *b = &begins[tid & (nbegins - 1)];

	while (b->tid && b->tid != tid && begins_double() == 0)
		b = &begins[tid & (nbegins - 1)];
	b->tid = tid;
	b->t_ns = t_ns;
}

uint64_t
pc_wall_begun(uint32_t tid)
{
	struct begin *b = &begins[tid & (nbegins - 1)];
	uint64_t t = b->tid == tid ? b->t_ns : 0;

	if (b->tid == tid)
		b->tid = 0;
	return t;
}

uint32_t *
pc_wall_picks(size_t n)
{
	size_t len = picks_room * sizeof(*picks);
	void *p = picks;

	if (n <= picks_room)
		return picks;
	if (grow(&p, &len, (n * sizeof(*picks) + PAGE - 1) / PAGE * PAGE))
		return NULL;
	picks = p;
	picks_room = len / sizeof(*picks);
	return picks;
}
