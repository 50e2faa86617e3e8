/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How the live file grows (live.c's opening comment has the whole design):
 * a bitmap of the file's pages that are backed, the spill table where a
 * sample waits whose histogram page is not backed yet, the tables that
 * start small and double, and the grower, a thread of libpc's that backs
 * what handlers asked for and folds the spill into it.
 *
 * Backing a page is MADV_POPULATE_WRITE on the mapping (fallocate on the
 * file where the kernel lacks it): it fails with an error where the disk,
 * a tmpfs's size or PC_LIVE_MAX has no room, where a bare store to a hole
 * would kill the program with SIGBUS. Only normal code and the grower back
 * pages; handlers read the bitmap (pc_live_add_from_handler,
 * pc_grow_slots) and never store to a page that is not backed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pc.h"
#include "objects.h"
#include "live.h"
#include "banned.h"

#define MAX_PAGES	(1u << 18)	/* 1 GiB of file at 4 KiB pages */
#define MAX_TABLES	16
#define SPILL_PROBE	32
#define MAX_PATCHES	256		/* pages patched at the last write */

static struct pc_live *hdr;		/* NULL: no live file, all is backed */
static size_t page;
static uint64_t backed_map[MAX_PAGES / 64];	/* the file's pages backed */
static struct pc_grow *tables[MAX_TABLES];
static int ntables;
static uint32_t grow_word;		/* 1: the grower has work (futex) */
static const char *grow_path;		/* the file, absolute */
static uint64_t fd_fallback;		/* backed with fallocate, not madvise */
static uint32_t threaded;		/* 1: the grower thread runs rounds */
static uint32_t round_busy;		/* a round runs: never two at once */
static uint32_t spill_busy;		/* handlers between a look at a page's
					 * bit and their spill store, atomic */

/* The file's page of addr, or -1 outside every chunk. AS-safe. */
static long
file_page(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	uint32_t n;

	if (!hdr)
		return -1;
	n = __atomic_load_n(&hdr->nchunks, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n && i < PC_LIVE_CHUNKS; i++) {
		const struct pc_live_chunk *c = &hdr->chunk[i];

		if (a >= c->va && a - c->va < c->len)
			return (long)((c->off + (a - c->va)) / page);
	}
	return -1;
}

static int
bit(long p)
{
	return (__atomic_load_n(&backed_map[p / 64], __ATOMIC_ACQUIRE) >>
		(p % 64)) &
	       1;
}

int
pc_live_backed(const void *addr)
{
	long p = file_page(addr);

	return p < 0 || bit(p);
}

/* Wake the grower, once until it runs. AS-safe. */
static void
wake(void)
{
	/* a sandbox allows no new system call (sandbox.c) */
	if (!__atomic_exchange_n(&grow_word, 1, __ATOMIC_ACQ_REL) &&
	    !pc_sandboxed())
		syscall(SYS_futex, &grow_word, FUTEX_WAKE_PRIVATE, 1, NULL,
			NULL, 0);
}

/* The file stops growing, for reason err (summary.c says so). */
static int
stop_growing(int err)
{
	if (!hdr->full) {
		hdr->full_errno = err;
		__atomic_store_n(&hdr->full, 1, __ATOMIC_RELEASE);
	}
	return -1;
}

/* Bytes [off, off + len) of the file allocated with fallocate, for
 * kernels without MADV_POPULATE_WRITE (5.14): 0 or an errno. The file is
 * opened by its name for the call: libpc holds no descriptor. */
static int
by_fallocate(uint64_t off, size_t len)
{
	int fd = grow_path && grow_path[0] ?
		 open(grow_path, O_RDWR | O_NOFOLLOW | O_CLOEXEC) : -1, r = 0;

	if (fd < 0)
		return errno;
	if (fallocate(fd, 0, (off_t)off, (off_t)len))
		r = errno;
	close(fd);
	return r;
}

/* The blocks under [a, a + len) mapped (livemap.c): by this thread where
 * it may open the file, else by the grower, waited for up to 200 ms
 * (then here, as a last resort): 0, or why not. Not AS-safe but where
 * this thread may open the file (a round in a handler: one thread). */
static int
map_for(const char *a, size_t len)
{
	struct timespec ms = { 0, 1000000 };
	int r = pc_live_map_for(a, len, 0);

	for (int i = 0; r == PC_LIVE_WAIT && i < 200 &&
			__atomic_load_n(&threaded, __ATOMIC_ACQUIRE); i++) {
		wake();
		nanosleep(&ms, NULL);
		r = pc_live_map_for(a, len, 0);
	}
	return r == PC_LIVE_WAIT ? pc_live_map_for(a, len, 1) : r;
}

/* Back n pages from a (all in one chunk, none backed), file page p. */
static int
back_run(char *a, long p, size_t n)
{
	size_t len = n * page;
	int saved = errno, r = 0;

	if (__atomic_load_n(&hdr->full, __ATOMIC_ACQUIRE))
		return -1;
	if (hdr->cap && hdr->backed + len > hdr->cap)
		return stop_growing(PC_LIVE_CAPPED);
	if (hdr->on_tmpfs && !pc_live_memcg_room(len))
		return stop_growing(ENOMEM);
	if ((r = map_for(a, len))) {
		errno = saved;
		return stop_growing(r);
	}
	if (!fd_fallback && madvise(a, len, MADV_POPULATE_WRITE)) {
		if (errno == EINVAL)
			fd_fallback = 1;
		else
			r = errno == EFAULT ? ENOSPC : errno;
	}
	if (fd_fallback)
		r = by_fallocate((uint64_t)p * page, len);
	errno = saved;
	if (r)
		return stop_growing(r);
	/* seq_cst: spill_free's look at spill_busy comes after */
	for (size_t i = 0; i < n; i++) {
		uint64_t b = 1ull << ((p + (long)i) % 64);

		/* a page backed twice at once (a round in a handler and a
		 * normal call's pc_live_back) is counted once */
		if (!(__atomic_fetch_or(&backed_map[(p + (long)i) / 64], b,
					__ATOMIC_SEQ_CST) &
		      b))
			__atomic_fetch_add(&hdr->backed, page,
					   __ATOMIC_RELAXED);
	}
	return 0;
}

int
pc_live_back(const void *addr, size_t len)
{
	char *a = (char *)((uintptr_t)addr & ~(page - 1));
	const char *end = (const char *)addr + len;

	if (!hdr || !len)
		return 0;
	while (a < end) {
		long p = file_page(a);
		size_t n = 1;

		if (p < 0 || bit(p)) {
			a += page;
			continue;
		}
		while (a + n * page < end &&
		       file_page(a + n * page) == p + (long)n &&
		       !bit(p + (long)n))
			n++;
		if (back_run(a, p, n))
			return -1;
		a += n * page;
	}
	return 0;
}

/* ------------------------------------------------------------ spill */

static int
spill_add(uint64_t key, uint32_t w)
{
	uint64_t h = pc_mix(key);

	for (size_t probe = 0; probe < SPILL_PROBE; probe++) {
		struct pc_spill *s =
			&hdr->spill[(h + probe) & (PC_LIVE_SPILL - 1)];
		uint32_t st;

		if (pc_slot_claim(&s->state, &st)) {
			s->key = key;
			/* release: whoever sees the count sees the key */
			__atomic_store_n(&s->count, w, __ATOMIC_RELEASE);
			pc_slot_publish(&s->state);
			wake();
			return 1;
		}
		if (st == PC_SLOT_READY && s->key == key) {
			__atomic_fetch_add(&s->count, w, __ATOMIC_RELAXED);
			wake();
			return 1;
		}
	}
	return 0;
}

/*
 * A page not backed at the first look: the handler counts itself in
 * spill_busy and looks again (both seq_cst) before it touches the spill.
 * spill_free frees a slot only when it saw spill_busy 0 after the slot's
 * page was backed: a handler that came in before that look is counted,
 * and one that came in after it sees the page backed.
 */
int
pc_live_add_from_handler(uint32_t *counter, uint32_t w)
{
	long p = file_page(counter);
	int r = 1;

	if (p < 0 || bit(p)) {
		__atomic_fetch_add(counter, w, __ATOMIC_RELAXED);
		return 1;
	}
	__atomic_fetch_add(&spill_busy, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&backed_map[p / 64], __ATOMIC_SEQ_CST) >> (p % 64) &
	    1)
		__atomic_fetch_add(counter, w, __ATOMIC_RELAXED);
	else if (!hdr->spill || !spill_add((uint64_t)(uintptr_t)counter, w)) {
		__atomic_fetch_add(&pc_stats->live_unplaced, w,
				   __ATOMIC_RELAXED);
		r = 0;
	}
	__atomic_fetch_sub(&spill_busy, 1, __ATOMIC_SEQ_CST);
	return r;
}

/* Fold each spilled count whose counter (*move_key) can take it: how many
 * were; the weight of those that cannot into *left. */
static size_t
fold(struct pc_spill *spill, uint32_t *(*move_key)(uint64_t, void *), void *arg,
     uint64_t *left)
{
	size_t folded = 0;

	*left = 0;
	for (size_t i = 0; i < PC_LIVE_SPILL; i++) {
		struct pc_spill *s = &spill[i];
		uint32_t *c;
		uint64_t n;

		/* acquire: a count seen is the key's read next (a slot
		 * freed and taken again has a count only once its new key
		 * is written) */
		if (!pc_slot_ready(&s->state) ||
		    !__atomic_load_n(&s->count, __ATOMIC_ACQUIRE))
			continue;
		if (!(c = move_key(s->key, arg))) {
			*left += __atomic_load_n(&s->count, __ATOMIC_RELAXED);
			continue;
		}
		/* taken whole first: the grower and a writer may fold at once */
		n = __atomic_exchange_n(&s->count, 0, __ATOMIC_ACQ_REL);
		__atomic_fetch_add(c, (uint32_t)n, __ATOMIC_RELAXED);
		folded++;
	}
	return folded;
}

/*
 * The last write of a file that could not grow: the page of counter c
 * becomes anonymous memory (a hole of the file until now, so nothing is
 * lost), marked backed, for the writer to read. Its samples are in the
 * profile that is written now, not in the file. At most MAX_PATCHES
 * pages: each is a mapping of its own.
 */
static int
patch(uint32_t *c)
{
	static int patches;
	char *a = (char *)((uintptr_t)c & ~(page - 1));
	long p = file_page(a);

	if (patches >= MAX_PATCHES ||
	    mmap(a, page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != a)
		return -1;
	patches++;
	__atomic_fetch_or(&backed_map[p / 64], 1ull << (p % 64),
			  __ATOMIC_RELEASE);
	return 0;
}

static uint32_t *
backed_key(uint64_t key, void *arg)
{
	uint32_t *c = (uint32_t *)(uintptr_t)key;
	const int *last = arg;

	if (file_page(c) < 0)
		return NULL;
	if (!pc_live_back(c, sizeof(*c)) || (*last && !patch(c)))
		return c;
	return NULL;
}

void
pc_live_fold(void)
{
	uint64_t left;
	int last;

	if (!hdr || !hdr->spill)
		return;
	last = pc->ending != PC_END_RUNNING;
	fold(hdr->spill, backed_key, &last, &left);
	__atomic_store_n(&pc_stats->live_waiting, left, __ATOMIC_RELAXED);
}

size_t
pc_live_fold_copy(struct pc_spill *spill,
		  uint32_t *(*move_key)(uint64_t, void *), void *arg)
{
	uint64_t left;

	return fold(spill, move_key, arg, &left);
}

/* ------------------------------------------------------------ tables */

void
pc_grow_init(struct pc_grow *g, void *base, size_t unit, size_t first,
	     size_t max, size_t *publish)
{
	g->base = base;
	g->unit = unit;
	g->first = first < max ? first : max;
	g->max = max;
	g->used = 0;
	g->publish = publish;
	if (file_page(base) < 0) {
		g->slots = g->first = max;	/* one segment (arcs.c) */
	} else {
		g->slots = pc_live_back(base, g->first * unit) ? 0 : g->first;
		/* release: a round in a handler sees g whole */
		if (ntables < MAX_TABLES) {
			tables[ntables] = g;
			__atomic_store_n(&ntables, ntables + 1,
					 __ATOMIC_RELEASE);
		}
	}
	if (publish)
		*publish = g->slots;
}

void
pc_grow_took_from_handler(struct pc_grow *g, size_t n)
{
	size_t used = __atomic_add_fetch(&g->used, n, __ATOMIC_RELAXED);
	size_t slots = __atomic_load_n(&g->slots, __ATOMIC_RELAXED);

	if (used * 2 >= slots && slots < g->max)
		wake();
}

/* Double the tables that are half taken, while the file can grow. */
static void
grow_tables(void)
{
	int n = __atomic_load_n(&ntables, __ATOMIC_ACQUIRE);

	for (int i = 0; i < n; i++) {
		struct pc_grow *g = tables[i];
		size_t slots = __atomic_load_n(&g->slots, __ATOMIC_RELAXED),
		       want = slots;
		size_t used = __atomic_load_n(&g->used, __ATOMIC_RELAXED);

		while (want && want < g->max && used * 2 >= want)
			want *= 2;
		if (want > g->max)
			want = g->max;
		if (want == slots || !slots ||
		    pc_live_back(g->base + slots * g->unit,
				 (want - slots) * g->unit))
			continue;
		__atomic_store_n(&g->slots, want, __ATOMIC_RELEASE);
		if (g->publish)
			__atomic_store_n(g->publish, want, __ATOMIC_RELAXED);
	}
}

/* ------------------------------------------------------------ grower */

uint32_t *
pc_live_grow_word(void)
{
	return &grow_word;
}

/*
 * Free the spill's slots whose count was folded and whose page is backed
 * now, so that a big program's first touches of many pages do not use up
 * the spill for good: only in a round (one freer at a time), and only
 * when no handler is between its look at a page's bit and its spill
 * store (spill_busy, read after the pages' bits were set: see
 * pc_live_add_from_handler). No handler adds to a freed slot's count: its
 * page is backed, so every handler adds to the counter itself. A key that
 * probed past a freed slot may take it again, a second entry of the same
 * counter, which every fold adds up.
 */
static void
spill_free(void)
{
	uint64_t done[PC_LIVE_SPILL / 64] = { 0 }; /* folded, page backed */

	for (size_t i = 0; i < PC_LIVE_SPILL; i++) {
		struct pc_spill *s = &hdr->spill[i];
		long p;

		if (!pc_slot_ready(&s->state) ||
		    __atomic_load_n(&s->count, __ATOMIC_ACQUIRE))
			continue;
		p = file_page((const void *)(uintptr_t)s->key);
		if (p < 0 ||
		    (__atomic_load_n(&backed_map[p / 64], __ATOMIC_SEQ_CST) >>
			     (p % 64) &
		     1))
			done[i / 64] |= 1ull << (i % 64);
	}
	/* after the bits were seen set: a handler counted now may still
	 * be on its way to one of these slots */
	if (__atomic_load_n(&spill_busy, __ATOMIC_SEQ_CST))
		return;
	for (size_t i = 0; i < PC_LIVE_SPILL; i++)
		if (done[i / 64] >> (i % 64) & 1 &&
		    !__atomic_load_n(&hdr->spill[i].count, __ATOMIC_ACQUIRE))
			__atomic_store_n(&hdr->spill[i].state, PC_SLOT_EMPTY,
					 __ATOMIC_RELEASE);
}

int
pc_live_grow_round(void)
{
	if (!hdr || __atomic_exchange_n(&round_busy, 1, __ATOMIC_ACQUIRE))
		return -1;
	pc_live_map_wanted();
	grow_tables();
	pc_live_fold();
	if (hdr->spill)
		spill_free();
	__atomic_store_n(&round_busy, 0, __ATOMIC_RELEASE);
	return 0;
}

/* ------------------------------------------------------------ set-up */

static size_t
round_page(size_t n)
{
	return (n + page - 1) & ~(page - 1);
}

/* The executable segments' counters of every object loaded now, for the
 * estimate of PC_SCOPE=all's size. */
static int
sum_objects(struct dl_phdr_info *info, size_t size, void *data)
{
	size_t *sum = data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
			*sum += round_page(
				ph->p_memsz / pc_profil_bin_bytes(PC_SCALE) *
					sizeof(uint32_t) +
				page);
	}
	return 0;
}

/* Bytes of the mapping made at start-up: the header, the inventory, the
 * spill and the counters start-up asks for (objects loaded later get
 * chunks of their own: pc_live_alloc). Only the header is backed yet. */
size_t
pc_live_first_len(size_t text_bytes, size_t arcs, size_t stacks_mb,
		  int scope_all)
{
	size_t len, extra = 0;

	page = (size_t)sysconf(_SC_PAGESIZE);
	len = round_page(sizeof(struct pc_live));
	len += round_page(PC_LIVE_SPILL * sizeof(struct pc_spill));
	if (scope_all) {
		len += round_page(PC_MAX_OBJECTS * sizeof(struct pc_object)) +
		       2 * round_page(PC_MAX_RANGES * sizeof(struct pc_range)) +
		       PC_LIVE_STRINGS;
		/* start-up's, never a handler's: (dl_iterate_phdr)
		 * passes banned.h's macro */
		(dl_iterate_phdr)(sum_objects, &extra);
		extra += round_page(PC_PENDING * sizeof(struct pc_pending)) +
			 (64u << 10);
	}
	len += round_page(text_bytes) + extra;
	if (arcs)
		len += round_page(arcs * sizeof(struct pc_arc)) + page;
	if (stacks_mb)
		len += (stacks_mb << 20) + (stacks_mb << 20) / 16 + (1u << 20);
	return len;
}

int
pc_live_grow_open(struct pc_live *h, size_t keep, const char *path, int fd,
		  size_t mapped)
{
	grow_path = path;
	page = (size_t)sysconf(_SC_PAGESIZE);
	if (h->size / page > MAX_PAGES)
		return -EFBIG;
	hdr = h;
	pc_live_map_init(h, path, fd, mapped);
	pc_live_memcg_find();
	/* the bitmap's pages now, not at a handler's first look */
	memset(backed_map, 0, sizeof(backed_map));
	for (size_t p = 0; p < keep / page; p++)
		backed_map[p / 64] |= 1ull << (p % 64);
	h->backed = keep;
	return 0;
}

uint64_t
pc_live_footprint(int *why)
{
	*why = hdr && hdr->full ? hdr->full_errno : 0;
	return hdr ? hdr->backed : 0;
}

size_t
pc_live_max_pages(void)
{
	return MAX_PAGES;
}

/* The pages a fork child keeps: the header's and the inventory's that
 * are backed; the rest of its file is a hole. */
int
pc_live_kept(const struct pc_live *h, uint64_t off)
{
	if (off < h->meta_off[0] || !h->nmeta)
		return off < page * ((sizeof(*h) + page - 1) / page);
	for (uint32_t i = 0; i < h->nmeta && i < 16; i++)
		if (off >= h->meta_off[i] &&
		    off < h->meta_off[i] + h->meta_len[i])
			return 1;
	return 0;
}

void
pc_live_grow_forked(struct pc_live *h, int detached)
{
	grow_word = 0;
	if (detached) {
		hdr = NULL;
		for (int i = 0; i < ntables; i++)
			tables[i]->slots = tables[i]->max;
		ntables = 0;
		return;
	}
	h->backed = 0;
	h->full = 0;
	for (long p = 0; p < (long)(h->size / page); p++) {
		if (!bit(p))
			continue;
		if (pc_live_kept(h, (uint64_t)p * page))
			h->backed += page;
		else
			backed_map[p / 64] &= ~(1ull << (p % 64));
	}
	if (h->spill)
		pc_live_back(h->spill, PC_LIVE_SPILL * sizeof(*h->spill));
	for (int i = 0; i < ntables; i++) {
		struct pc_grow *g = tables[i];

		g->used = 0;
		g->slots = pc_live_back(g->base, g->first * g->unit) ? 0 :
								       g->first;
		if (g->publish)
			*g->publish = g->slots;
	}
}

/* ------------------------------------------------------------ no thread */

void
pc_live_grow_threaded(int on)
{
	__atomic_store_n(&threaded, (uint32_t)on, __ATOMIC_RELEASE);
}

int
pc_live_grow_wanted(void)
{
	return __atomic_load_n(&grow_word, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&threaded, __ATOMIC_RELAXED);
}

/* One round where a handler asked for one. AS-safe. */
static void
round_now(void)
{
	int saved = errno;

	if (__atomic_exchange_n(&grow_word, 0, __ATOMIC_ACQ_REL) &&
	    pc_live_grow_round())
		__atomic_store_n(&grow_word, 1,
				 __ATOMIC_RELEASE); /* one ran: later */
	errno = saved;
}

void
pc_live_grow_now(void)
{
	if (pc_live_grow_wanted() && !pc_sandboxed())
		round_now();
}

/* Stack a round needs in a handler, with a wide margin: it is a few
 * hundred bytes (memcg_room reads files whose paths start-up found). */
#define ROUND_STACK	(16u << 10)

void
pc_live_grow_from_handler(size_t room)
{
	if (pc_live_grow_wanted() && __libc_single_threaded &&
	    room >= ROUND_STACK && pc->ending == PC_END_RUNNING &&
	    !pc_sandboxed())
		round_now();
}
