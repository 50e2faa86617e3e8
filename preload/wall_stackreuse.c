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

struct reuse {
	uintptr_t ip, sp;	/* ip 0: empty */
	int n, how;
	unsigned nw;
	struct pc_frame f[REUSE_FRAMES];
	struct pc_wword w[REUSE_WORDS];
};

static struct reuse *table;	/* REUSE_SLOTS */

int
pc_wall_reuse_map(void)
{
	void *m;

	if (table)
		return 0;
	m = mmap(NULL, REUSE_SLOTS * sizeof(*table), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	(void)madvise(m, REUSE_SLOTS * sizeof(*table), MADV_WIPEONFORK);
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

int
pc_wall_reuse_get(uintptr_t ip, uintptr_t sp, struct pc_frame *f, int max,
		  int *how, const struct pc_wword **w, unsigned *nw)
{
	struct reuse *r;

	if (!table || !ip)
		return 0;
	r = slot(ip, sp);
	if (r->ip != ip || r->sp != sp || r->n > max)
		return 0;
	memcpy(f, r->f, (size_t)r->n * sizeof(*f));
	*how = r->how;
	*w = r->w;
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
	r = slot(ip, sp);
	r->ip = ip;
	r->sp = sp;
	r->n = n;
	r->how = how;
	r->nw = nw;
	memcpy(r->f, f, (size_t)n * sizeof(*f));
	memcpy(r->w, w, nw * sizeof(*w));
}

void
pc_wall_reuse_clear(void)
{
	for (size_t i = 0; table && i < REUSE_SLOTS; i++)
		table[i].ip = 0;
}
