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
 * The tables start with room for a few threads and grow with their
 * number, by mremap, a quarter more at a time (32768 threads at most).
 * After mlockall(MCL_FUTURE) they grow no more, as the live file does not
 * (livemap.c): each new page would be locked and counted against the
 * program's RLIMIT_MEMLOCK. Threads past the room are then not followed,
 * and the summary says how many and why; the program never fails for it.
 * Only the sampler's thread calls these, under its round's lock.
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

#define FIRST		(16 * 1024)	/* a table's first mapping: 58 threads */
#define STEP		(64 * 1024)	/* growth, at least */
#define MOST		32768		/* threads followed; more are not */
#define BEGINS		4096		/* starts told of threads not listed yet */
#define PAGE		4096

/* Starts told of threads not listed yet, by id: a thread's start may be
 * told before a listing shows it, and it may end before one does. Few at
 * once (those told between a round's listing and its reading of the
 * events, and those that start and end between two rounds, each taken
 * at its end), so a slot by the id's low bits; a clash loses a start,
 * which is then taken as halfway since the last round. */
static struct begin {
	uint32_t tid;
	uint64_t t_ns;
} *begins;

static uint32_t *picks;		/* a round's walks to choose from */
static size_t picks_room;
static size_t unfollowed;	/* the most threads not followed at once */
static int unfollowed_why;	/* PC_LIVE_LOCKED, _UNMAPPED or _CAPPED (MOST) */

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
	m = *p ? (void *)syscall(SYS_mremap, *p, *len, len_new, MREMAP_MAYMOVE) :
		 (void *)syscall(SYS_mmap, NULL, len_new, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		unfollowed_why = PC_LIVE_UNMAPPED;
		return -1;
	}
	*p = m;
	*len = len_new;
	return 0;
}

int
pc_wall_mem_start(struct pc_wtable *a, struct pc_wtable *b)
{
	struct pc_wtable *t[2] = { a, b };

	if (!begins && !(begins = sys_mmap(BEGINS * sizeof(*begins))))
		return -1;
	/* a page of picks now: the first walks may come after the program
	 * locked its memory */
	if (!pc_wall_picks(PAGE / sizeof(*picks)))
		return -1;
	for (int i = 0; i < 2; i++)
		if (!t[i]->t) {
			size_t len = 0;
			void *p = NULL;

			if (grow(&p, &len, FIRST))
				return -1;
			t[i]->t = p;
			t[i]->cap = len / sizeof(struct pc_wthread);
		}
	return 0;
}

int
pc_wall_room(struct pc_wtable *t, size_t n)
{
	size_t len = t->cap * sizeof(*t->t), want = (n + 1) * sizeof(*t->t);
	void *p = t->t;

	if (n < t->cap)
		return 0;
	if (n >= MOST) {
		unfollowed_why = PC_LIVE_CAPPED;
		return -1;
	}
	/* a quarter more, a step at least, in whole steps */
	if (want < len + (len / 4 > STEP ? len / 4 : STEP))
		want = len + (len / 4 > STEP ? len / 4 : STEP);
	want = (want + STEP - 1) / STEP * STEP;
	if (grow(&p, &len, want))
		return -1;
	t->t = p;
	t->cap = len / sizeof(*t->t);
	return 0;
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

void
pc_wall_begin(uint32_t tid, uint64_t t_ns)
{
	begins[tid % BEGINS].tid = tid;
	begins[tid % BEGINS].t_ns = t_ns;
}

uint64_t
pc_wall_begun(uint32_t tid)
{
	struct begin *b = &begins[tid % BEGINS];
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
