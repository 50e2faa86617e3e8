/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where the live file is mapped (live.c's opening comment has the whole
 * design). Address space is what mlockall(MCL_CURRENT) weighs against
 * RLIMIT_MEMLOCK, what MCL_FUTURE locks, and what RLIMIT_AS limits: so
 * chunk 0, the file's regions laid out at start-up, is not mapped whole
 * but block by block (PC_LIVE_BLOCK) as its pages are first backed
 * (livegrow.c), at a place chosen with room for all of it. The place is
 * 1 TiB below where the kernel maps now: its mappings go down from there
 * (up from far below, in the legacy layout), the heap is far below, so
 * the room after the first block stays free. Where no such place is had
 * (MAP_FIXED_NOREPLACE unknown, the place taken), chunk 0 is mapped whole,
 * as it was. A block that cannot be mapped (its place taken, RLIMIT_AS,
 * RLIMIT_MEMLOCK, or any time after mlockall(MCL_FUTURE)) stops the
 * file's growth: libpc keeps counting in what it has.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pc.h"
#include "live.h"
#include "banned.h"

/* mmap and munmap as system calls: the program's are interposed
 * (mappings.c), whose growth rounds must not be entered from here */
static void *
sys_mmap(void *a, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, a, len, prot, flags, fd, off);
}

static void
sys_munmap(void *a, size_t len)
{
	syscall(SYS_munmap, a, len);
}

/* 1 TiB: how far below the kernel's next mapping chunk 0 is placed */
#define FAR	(UINT64_C(1) << 40)

void *
pc_live_map_first(int fd, size_t *len, size_t room, size_t *mapped)
{
	size_t page_size = (size_t)sysconf(_SC_PAGESIZE), all = *len + room;
	void *probe = sys_mmap(NULL, page_size, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t at = 0;
	void *m = MAP_FAILED;

	*mapped = PC_LIVE_BLOCK < all ? PC_LIVE_BLOCK : all;
	if (probe != MAP_FAILED) {
		sys_munmap(probe, page_size);
		if ((uintptr_t)probe > 2 * FAR + all)
			at = ((uintptr_t)probe - FAR - all) &
			     ~((uintptr_t)PC_LIVE_BLOCK - 1);
	}
	if (at && all / PC_LIVE_BLOCK < PC_LIVE_MAX_BLOCKS)
		m = sys_mmap((void *)at, *mapped, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_NORESERVE,
			     fd, 0);
	if (m != MAP_FAILED && (uintptr_t)m != at) {
		sys_munmap(m, *mapped);
		m = MAP_FAILED;
	}
	if (m != MAP_FAILED) {
		*len = all;
		return m;
	}
	*mapped = *len;
	return sys_mmap(NULL, *len, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_NORESERVE, fd, 0);
}

/* Chunk 0 where it is mapped block by block (else lazy_base is NULL and
 * whole is its length): which blocks are mapped, and the file's
 * descriptor while start-up or a fork child makes it (else the file is
 * opened by its name, grow_path, for a mapping). */
static char *lazy_base;
static size_t lazy_len;
static uint64_t mapped_map[PC_LIVE_MAX_BLOCKS / 64];
static int lazy_fd = -1;
/* The file is opened by its name for a mapping only where no thread of
 * the program can be between a close and an open that expects the
 * lowest number (the descriptor would take it for a moment): in the
 * grower, whose descriptor table is its own (own_table; where the kernel
 * refused it one, the grower opens the file all the same), or while the
 * process has one thread. A program's thread among others asks the
 * grower for its blocks (want_map) and waits (livegrow.c). */
static PC_TLS int own_table;
static uint64_t want_map[PC_LIVE_MAX_BLOCKS / 64];
static uint32_t lazy_locked;		/* mlockall(MCL_FUTURE) is on */
static size_t whole;
static const char *grow_path;

void
pc_live_map_init(const struct pc_live *h, const char *path, int fd,
		 size_t mapped)
{
	grow_path = path;
	lazy_fd = fd;
	memset(mapped_map, 0, sizeof(mapped_map));
	lazy_base = NULL;
	whole = h->chunk[0].len;
	if (mapped < h->chunk[0].len) {
		lazy_base = (char *)(uintptr_t)h->chunk[0].va;
		lazy_len = h->chunk[0].len;
		for (size_t b = 0; b * PC_LIVE_BLOCK < mapped; b++)
			mapped_map[b / 64] |= 1ull << (b % 64);
	}
}

static int
block_mapped(size_t b)
{
	return (__atomic_load_n(&mapped_map[b / 64], __ATOMIC_ACQUIRE) >>
		(b % 64)) &
	       1;
}

/* Blocks [b, b + n) of chunk 0 mapped at their place: 0, or why not:
 * PC_LIVE_LOCKED after mlockall(MCL_FUTURE), PC_LIVE_UNMAPPED where the
 * place is taken or the kernel refuses (RLIMIT_AS, RLIMIT_MEMLOCK), the
 * errno of the file's open. Raw system calls: the program's mmap is
 * interposed (mappings.c), and a round may run in a handler. */
static int
map_blocks(size_t b, size_t n)
{
	char *at = lazy_base + b * PC_LIVE_BLOCK;
	size_t len = n * PC_LIVE_BLOCK;
	int fd = lazy_fd;
	void *m;

	if (b * PC_LIVE_BLOCK + len > lazy_len)
		len = lazy_len - b * PC_LIVE_BLOCK;
	if (__atomic_load_n(&lazy_locked, __ATOMIC_RELAXED))
		return PC_LIVE_LOCKED;
	/* the file by its name: gone after a chroot, say (an errno) */
	if (fd < 0 && (!grow_path || !grow_path[0]))
		return ENOENT;
	if (fd < 0 &&
	    (fd = open(grow_path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return errno;
	m = sys_mmap(at, len, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_NORESERVE, fd,
		     (off_t)(b * PC_LIVE_BLOCK));
	if (fd != lazy_fd)
		close(fd);
	if (m == MAP_FAILED)
		return PC_LIVE_UNMAPPED;
	if (m != at) {		/* a kernel before 4.17: a hint */
		sys_munmap(m, len);
		return PC_LIVE_UNMAPPED;
	}
	syscall(SYS_madvise, at, len, MADV_RANDOM);
	for (size_t i = b; i < b + n; i++)
		__atomic_fetch_or(&mapped_map[i / 64], 1ull << (i % 64),
				  __ATOMIC_RELEASE);
	return 0;
}

/* Whether this thread may open the file now. AS-safe. */
static int
may_open(void)
{
	return lazy_fd >= 0 || own_table || __libc_single_threaded;
}

void
pc_live_map_own_table(void)
{
	own_table = 1;
}

void
pc_live_map_wanted(void)
{
	for (size_t w = 0; lazy_base && w < PC_LIVE_MAX_BLOCKS / 64; w++) {
		uint64_t bits =
			__atomic_exchange_n(&want_map[w], 0, __ATOMIC_ACQ_REL);

		for (; bits; bits &= bits - 1) {
			size_t b = w * 64 + (size_t)__builtin_ctzll(bits);

			if (!block_mapped(b))
				map_blocks(b, 1);
		}
	}
}

int
pc_live_map_for(const char *a, size_t len, int force)
{
	size_t b, e;

	if (!lazy_base || a < lazy_base || a >= lazy_base + lazy_len)
		return 0;
	b = (size_t)(a - lazy_base) / PC_LIVE_BLOCK;
	e = ((size_t)(a - lazy_base) + len + PC_LIVE_BLOCK - 1) / PC_LIVE_BLOCK;
	while (b < e) {
		size_t n = 1;
		int r;

		if (block_mapped(b)) {
			b++;
			continue;
		}
		while (b + n < e && !block_mapped(b + n))
			n++;
		if (!force && !may_open()) {
			for (size_t i = b; i < b + n; i++)
				__atomic_fetch_or(&want_map[i / 64],
						  1ull << (i % 64),
						  __ATOMIC_RELEASE);
			return PC_LIVE_WAIT;
		}
		if ((r = map_blocks(b, n)))
			return r;
		b += n;
	}
	return 0;
}

size_t
pc_live_mapped_run(uint64_t *at)
{
	size_t b, n = 0;

	if (!lazy_base)
		return *at < whole ? whole - *at : 0;
	for (b = *at / PC_LIVE_BLOCK;
	     b * PC_LIVE_BLOCK < lazy_len && !block_mapped(b); b++)
		;
	*at = b * PC_LIVE_BLOCK;
	while ((b + n) * PC_LIVE_BLOCK < lazy_len && block_mapped(b + n))
		n++;
	if (!n)
		return 0;
	return (b + n) * PC_LIVE_BLOCK > lazy_len ? lazy_len - *at :
						    n * PC_LIVE_BLOCK;
}

int
pc_live_map_locked(int on)
{
	if (on < 0)
		return (int)__atomic_load_n(&lazy_locked, __ATOMIC_RELAXED);
	__atomic_store_n(&lazy_locked, (uint32_t)on, __ATOMIC_RELAXED);
	return on;
}

void
pc_live_map_fd(int fd)
{
	lazy_fd = fd;
}

/* Bytes [at, at + len) of chunk c mapped again from fd at their place:
 * 0, or -1. */
static int
map_again(const struct pc_live_chunk *c, uint64_t at, size_t len, int fd)
{
	void *va = (void *)(uintptr_t)(c->va + at);

	if (sys_mmap(va, len, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd,
		     (off_t)(c->off + at)) != va)
		return -1;
	madvise(va, len, MADV_RANDOM);
	return 0;
}

int
pc_live_map_chunks(const struct pc_live *live, int fd)
{
	for (uint32_t i = 0; i < live->nchunks && i < PC_LIVE_CHUNKS; i++) {
		const struct pc_live_chunk *c = &live->chunk[i];
		uint64_t at = 0;
		size_t n;

		if (i) {
			if (map_again(c, 0, c->len, fd))
				return -1;
			continue;
		}
		while ((n = pc_live_mapped_run(&at)) != 0) {
			if (map_again(c, at, n, fd))
				return -1;
			at += n;
		}
	}
	return 0;
}

