/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Walks kept for reuse (wall_unwind.c): a blocked thread found at a pc and
 * sp where a walk went before, with every stack word that walk read the
 * same now, has the same frames, since a walk reads nothing else that
 * changes (the objects' unwind tables and code stay). Checking the words
 * costs one or two page reads (3 to 6 us here); a walk, 30 to 90 us. A
 * thread's stack is reused by the next thread glibc starts (its cache of
 * stacks), and a server's threads wait at the same few sites again and
 * again, each seen anew once it has been elsewhere.
 *
 * A walk is kept by its pc alone too, for another thread blocked at the
 * same pc at another sp: a pool's threads wait in the same call from the
 * same frames, each on a stack of its own. Its words are read at the same
 * offsets from the new sp, and a word that pointed into the old stack
 * (within STACK_SPAN above the old sp: a saved frame pointer) must point
 * as far into the new one; any other word (a return address) must be the
 * same. A walk reads nothing but these words and what stays, and a word
 * it follows as an address is one of them, shifted alike: it would read
 * the same frames. At 1,000 threads in one wait, a thread's first look
 * walked it (30 to 60 us; 600 walks a run of 3.5 s); checked instead,
 * 3 to 6 us.
 *
 * Runs in the wall sampler's thread only. The table is mapped at the
 * unwinder's load, wiped in a child of fork (shared with a child, every
 * page written after a fork was copied, 30 to 50 us a page here).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>
#include <sys/mman.h>

#include "pc.h"
#include "wall.h"

#define REUSE_SLOTS	32
#define REUSE_FRAMES	32
#define REUSE_WORDS	64
#define STACK_SPAN	((uintptr_t)8 << 20)	/* wall_unwind.c's */

struct reuse {
	uintptr_t ip, sp;	/* ip 0: empty */
	int n, how;
	unsigned nw;
	struct pc_frame f[REUSE_FRAMES];
	struct pc_wword w[REUSE_WORDS];
};

/* REUSE_SLOTS by pc and sp, REUSE_SLOTS by pc alone, and one for the
 * words of a walk found by its pc alone, shifted to the new sp */
static struct reuse *table;
#define BY_PC		(table + REUSE_SLOTS)
#define SHIFTED		(table + 2 * REUSE_SLOTS)
#define TABLE_BYTES	((2 * REUSE_SLOTS + 1) * sizeof(struct reuse))

int
pc_wall_reuse_map(void)
{
	void *m;

	if (table)
		return 0;
	m = mmap(NULL, TABLE_BYTES, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	(void)madvise(m, TABLE_BYTES, MADV_WIPEONFORK);
	table = m;
	return 0;
}

static struct reuse *
slot(uintptr_t ip, uintptr_t sp)
{
	return &table[((ip ^ sp * 0x9e3779b97f4a7c15ULL) *
		       0x9e3779b97f4a7c15ULL) >>
		      59];
}

static struct reuse *
slot_by_pc(uintptr_t ip)
{
	return &BY_PC[(ip * 0x9e3779b97f4a7c15ULL) >> 59];
}

/* Walk r's words as another thread's stack at sp would hold them. */
static const struct pc_wword *
shifted(const struct reuse *r, uintptr_t sp)
{
	struct pc_wword *w = SHIFTED->w;
	uintptr_t d = sp - r->sp;

	for (unsigned i = 0; i < r->nw; i++) {
		uintptr_t v = r->w[i].val;

		w[i].addr = r->w[i].addr + d;
		w[i].val = v - r->sp < STACK_SPAN ? v + d : v;
	}
	return w;
}

int
pc_wall_reuse_get(uintptr_t ip, uintptr_t sp, struct pc_frame *f, int max,
		  int *how, const struct pc_wword **w, unsigned *nw)
{
	struct reuse *r;

	if (!table || !ip)
		return 0;
	r = slot(ip, sp);
	if (r->ip != ip || r->sp != sp)
		r = slot_by_pc(ip);
	if (r->ip != ip || r->n > max)
		return 0;
	memcpy(f, r->f, (size_t)r->n * sizeof(*f));
	*how = r->how;
	*w = r->sp == sp ? r->w : shifted(r, sp);
	*nw = r->nw;
	return r->n;
}

void
pc_wall_reuse_put(uintptr_t ip, uintptr_t sp, const struct pc_frame *f, int n,
		  int how, const struct pc_wword *w, unsigned nw)
{
	struct reuse *r;

	if (!table || !ip || n > REUSE_FRAMES || nw > REUSE_WORDS)
		return;
	for (int k = 0; k < 2; k++) {
		r = k ? slot_by_pc(ip) : slot(ip, sp);
		r->ip = ip;
		r->sp = sp;
		r->n = n;
		r->how = how;
		r->nw = nw;
		memcpy(r->f, f, (size_t)n * sizeof(*f));
		memcpy(r->w, w, nw * sizeof(*w));
	}
}

void
pc_wall_reuse_clear(void)
{
	for (size_t i = 0; table && i < 2 * REUSE_SLOTS; i++)
		table[i].ip = 0;
}
