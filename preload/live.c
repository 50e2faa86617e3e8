/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The live file: libpc's state, counts, histograms, arcs, stacks and
 * object inventory live in one shared mapping of a file in the output
 * directory, DIR/.pcprof.PID.live, from before the first sample. Whatever
 * ends the process (exit_group, SIGKILL, the OOM killer, a runtime that
 * replaced libpc's handlers), what was sampled is in the page cache, and
 * pcprof finishes the file into the usual profile with pc_recover()
 * (below), which runs libpc's own writer on it. The normal end writes the
 * profile as before, then removes the file.
 *
 * The file starts small and grows with use (livegrow.c). Only its header
 * is allocated at start-up; the regions after it (the inventory, the
 * spill, the tables, the histograms) are laid out at fixed offsets, a
 * hole until used, in chunk 0, with room at its end for objects loaded
 * later. Chunk 0 is given a place with room for all of it and mapped
 * there in blocks as its pages are backed (livemap.c): address space
 * counts against RLIMIT_AS and, under mlockall, RLIMIT_MEMLOCK; where no
 * such place is had it is mapped whole. An object that finds no room gets
 * a chunk of its own at the file's end, mapped wherever the kernel puts
 * it, and the header lists the chunks for pc_recover. A page is backed
 * (allocated on disk, or in memory on tmpfs) before anything stores to it: a
 * store to a hole would raise SIGBUS where the disk is full. Who backs it:
 *  - in a process of more than one thread, the grower, a thread of
 *    libpc's (livegrower.c), started at start-up where libpc's own wall
 *    or snapshot thread or adopted threads are there
 *    (!__libc_single_threaded), else at the program's first
 *    pthread_create, and in a fork child under the same condition;
 *  - in a process of one thread, no thread: a second one makes glibc
 *    take its stdio and malloc locks in every call (a getc loop over 405
 *    MB ran 5.5 s under libpc with the grower, 0.9 s plain). There the
 *    rounds run from libpc's interposed calls (mmap, munmap, mremap,
 *    dlopen, dlclose, pthread_create: a flag's look), and, since a CPU
 *    loop makes none, from the sampling handler: only while the process
 *    is one thread, with 16 KiB of stack left, never in a sandbox, under
 *    a try-lock that keeps it out of a call's round it interrupted. The
 *    rule was "never from a handler"; this is a deliberate exception,
 *    taken only where no other thread of the process can hold anything
 *    the round needs: it makes system calls (madvise, fallocate, a read
 *    of the memory cgroup's usage from paths found at start-up, an open
 *    of the file by its name and an mmap of a block of it) and charges
 *    the file's pages to the memory cgroup from the handler.
 * What handlers write:
 *  - histograms, sparse and touched at random: a bitmap says which pages
 *    are backed; a sample for another page waits in the spill, a small
 *    lock-free table always backed, keyed by the counter's address, and
 *    asks for a round, which backs the page and folds the spill into it,
 *    then frees the slot (livegrow.c's spill_free says when that is safe);
 *  - hash tables (arcs, pending PCs, the stack index) and the stack
 *    arena: handlers use the first slots, backed, and a round doubles
 *    them when half are taken; the arc table and the stack index grow in
 *    segments, each a hash table of its own, so that an entry never moves
 *    and a key never needs a second one (the pending PCs' may have one,
 *    which the writers add up).
 * Where the file cannot grow (no room, RLIMIT_FSIZE, PC_LIVE_MAX, a
 * memory cgroup near its limit) it stops growing, samples wait in the
 * spill (counted where it is full), and the last write places them in
 * anonymous pages; pc_recover folds what a killed process left there.
 * Where the file cannot be made at all (a read-only directory, a file
 * system without fallocate), and for a region no chunk can take, libpc
 * keeps its counters in anonymous memory as it always did, and a killed
 * process leaves nothing of them.
 *
 * A fork child gets a file of its own, mapped over the same addresses:
 * the inventory is copied, the counters start at zero. Files are made
 * with no name (O_TMPFILE; else under a temporary one) and linked as
 * *.live once start-up has written their header, configuration and tables
 * (pc_live_seal), so that pcprof never takes one that is being made for a
 * dead process's, and a process killed before leaves none. Nothing here
 * runs in the signal handler but pc_live_done, pc_live_io and
 * pc_live_resident, which may run in one (a fatal signal's writer).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>		/* rename */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "pc.h"
#include "objects.h"
#include "live.h"
#include "banned.h"

static struct pc_live *live;		/* the header, at the mapping's start */
static char live_path[PATH_MAX];
static size_t page_size;
/* while a profile is written: the file, for pc_live_resident, and the
 * mapping it stands for (the process's own, or pc_recover's copy) */
static int live_fd = -1;
static const char *span_lo, *span_hi;

/* A chunk mapped for objects loaded after start-up holds 1 MiB of the
 * file at least (address space only, until used): the header has room
 * for 32 chunks. */
#define CHUNK_MIN	(1u << 20)
/* Room at chunk 0's end for objects loaded after start-up, where chunk 0
 * is mapped by blocks (livemap.c): address space only as it is used,
 * where a chunk of their own maps 1 MiB at once (libgcc_s's, which libpc
 * loads itself, under PC_SCOPE=all). */
#define LATE_ROOM	(16u << 20)


static size_t
round_page(size_t n)
{
	return (n + page_size - 1) & ~(page_size - 1);
}

/* The head's pid and start: this process's, from now on (its state as
 * it is), in one change of the head's generation. */
static void
stamp_head(struct pc_live *h)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmon_live_head_write(
		&h->head, __atomic_load_n(&h->head.state, __ATOMIC_RELAXED),
		(int32_t)getpid(),
		(uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
}

static char making[PATH_MAX + 8];	/* live_path while it is made */
static int pending_fd = -1; /* the file made, until it is published */

/* A file with no name (O_TMPFILE) in live_path's directory, or where the
 * file system has none, one at live_path with ".new" added (making); its
 * descriptor or -errno. */
static int
open_unnamed(void)
{
	size_t n = strlen(live_path);
	const char *slash = strrchr(live_path, '/');
	int fd;

	if (n + 5 > sizeof(making))
		return -ENAMETOOLONG;
	memcpy(making, live_path, n + 1);
	if (slash)
		making[slash - live_path + (slash == live_path)] = 0;
	fd = open(slash ? making : ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
	making[0] = 0;
	if (fd >= 0)
		return fd;
	memcpy(making, live_path, n);
	memcpy(making + n, ".new", 5);
	fd = pc_open_new(making, O_RDWR);
	return fd < 0 ? -errno : fd;
}

/* Whether a file of len bytes would pass the program's RLIMIT_FSIZE. */
static int
over_fsize(uint64_t len)
{
	struct rlimit fsize;

	return getrlimit(RLIMIT_FSIZE, &fsize) == 0 &&
	       fsize.rlim_cur != RLIM_INFINITY && (rlim_t)len > fsize.rlim_cur;
}

/* live_path made absolute: the program may change directory. */
static void
absolute_path(void)
{
	char cwd[PATH_MAX];
	size_t c, n = strlen(live_path);

	if (live_path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return;
	c = strlen(cwd);
	if (c + 1 + n + 1 > sizeof(live_path))
		return;
	memmove(live_path + c + 1, live_path, n + 1);
	memcpy(live_path, cwd, c);
	live_path[c] = '/';
}

/* The file at live_path, opened for a growth; -1 when it cannot be. */
static int
open_live(void)
{
	return live_path[0] ? open(live_path, O_RDWR | O_NOFOLLOW | O_CLOEXEC) :
			      -1;
}

/* A new file of len bytes, its first keep bytes on disk, the rest a hole,
 * that becomes live_path once whole (publish()): until then a SIGKILL
 * leaves no file that pcprof could take for a dead process's, and none at
 * all where it has no name. Its descriptor or -errno. A file over the
 * program's RLIMIT_FSIZE is not made: the kernel would kill the program
 * with SIGXFSZ. */
static int
create_file(size_t len, size_t keep)
{
	int fd, r;

	if (over_fsize(len))
		return -EFBIG;
	fd = open_unnamed();
	if (fd < 0)
		return fd;
	if (ftruncate(fd, (off_t)len) ||
	    (keep && fallocate(fd, 0, 0, (off_t)keep))) {
		r = -errno;
		close(fd);
		if (making[0])
			unlink(making);
		return r;
	}
	return fd;
}

/* The file of fd under live_path: a link to the unnamed file, through
 * /proc (linkat's AT_EMPTY_PATH needs a capability), or a rename. */
static int
name_file(int fd)
{
	char proc[40], num[24];
	struct pc_line l = { proc, sizeof(proc), 0 };

	if (making[0])
		return rename(making, live_path);
	pc_decimal(num, (unsigned long)fd);
	pc_line_str(&l, "/proc/self/fd/");
	pc_line_str(&l, num);
	proc[l.len] = 0;
	return linkat(AT_FDCWD, proc, AT_FDCWD, live_path, AT_SYMLINK_FOLLOW);
}

/*
 * The unnamed file, linked, mapped again through its name, so that the
 * process's maps show it as .pcprof.PID.live (pcprof's look at whether a
 * live file's process runs finds it there), not as "#INODE (deleted)".
 * The same pages: nothing moves. Nothing runs on them yet (start-up, or
 * a fork child's handler).
 */
static void
map_by_name(int fd)
{
	int named = open(live_path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	struct stat a, b;

	if (named < 0)
		return;
	if (!fstat(named, &a) && !fstat(fd, &b) && a.st_ino == b.st_ino &&
	    a.st_dev == b.st_dev)
		pc_live_map_chunks(live, named);
	close(named);
}

/*
 * The file made whole, its header, configuration and tables all written:
 * under its own name from here on. A file already there is an earlier
 * image's of this pid that libpc did not see end (an exec through a raw
 * system call): moved aside for pcprof to finish.
 */
static void
publish(int fd)
{
	static char aside[PATH_MAX + 32]; /* static: a fork child's stack */
	struct stat st;

	if (lstat(live_path, &st) == 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		if (gmon_live_aside_name(aside, sizeof(aside), live_path,
					 (unsigned long)ts.tv_nsec) ||
		    rename(live_path, aside))
			unlink(live_path);
	}
	if (name_file(fd)) {
		if (making[0])
			unlink(making);
	} else if (!making[0]) {
		map_by_name(fd);
	}
	making[0] = 0;
}

/* The header of the new mapping m of len bytes, libpc's state moved in. */
static void
fill_header(void *m, size_t len, size_t keep, uint64_t cap)
{
	live = m;
	live_fd = -1;
	gmon_live_head_init(&live->head, sizeof(struct pc_live), 0, 0);
	stamp_head(live);
	live->base = (uint64_t)(uintptr_t)m;
	live->size = len;
	live->used = keep;
	live->cap = cap;
	live->chunk[0] =
		(struct pc_live_chunk){ 0, (uint64_t)(uintptr_t)m, len };
	__atomic_store_n(&live->nchunks, 1, __ATOMIC_RELEASE);
	/* libpc's state moves in: nothing samples yet, no thread reads it */
	live->st = *pc;
	live->stats = *pc_stats;
	live->objs = *pc_objs;
	pc = &live->st;
	pc_stats = &live->stats;
	pc_objs = &live->objs;
}

int
pc_live_open(size_t text_bytes, size_t arcs, size_t stacks_mb, int scope_all,
	     uint64_t cap)
{
	size_t len, keep, mapped, room;
	struct statfs fs;
	int fd, tmpfs;
	void *m;

	page_size = (size_t)sysconf(_SC_PAGESIZE);
	keep = round_page(sizeof(struct pc_live));
	len = pc_live_first_len(text_bytes, arcs, stacks_mb, scope_all);
	if (gmon_live_name(live_path, sizeof(live_path), pc->path, getpid()))
		return -ENAMETOOLONG;
	absolute_path();
	room = over_fsize(len + LATE_ROOM) ? 0 : LATE_ROOM;
	fd = create_file(len + room, keep);
	if (fd < 0)
		return fd;
	m = pc_live_map_first(fd, &len, room, &mapped);
	/* mapped whole: the file without the room */
	if (m != MAP_FAILED && room && mapped == len &&
	    ftruncate(fd, (off_t)len)) {
		munmap(m, mapped);
		m = MAP_FAILED;
	}
	tmpfs = fstatfs(fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC;
	if (m == MAP_FAILED || len / page_size > pc_live_max_pages()) {
		if (m != MAP_FAILED)
			munmap(m, mapped);
		close(fd);
		if (making[0])
			unlink(making);
		return -ENOMEM;
	}
	/* named at pc_live_seal, once start-up has filled it */
	pending_fd = fd;
	/* no read-around: a first touch fills one page of the page cache,
	 * not 32 (24 MiB a process with stacks and every object, measured) */
	madvise(m, mapped, MADV_RANDOM);
	fill_header(m, len, keep, cap);
	live->on_tmpfs = (uint32_t)tmpfs;
	pc_live_grow_open(live, keep, live_path, fd, mapped);
	live->spill = pc_live_alloc(PC_LIVE_SPILL * sizeof(struct pc_spill), 0);
	if (pc_live_back(live->spill, PC_LIVE_SPILL * sizeof(struct pc_spill)))
		live->spill = NULL;
	gmon_live_head_write(&live->head, GMON_LIVE_RUNNING, 0, 0);
	return 0;
}

/* A chunk of n bytes more at the file's end, mapped: its address, or NULL
 * (then the caller takes anonymous memory). Not AS-safe. */
static void *
new_chunk(uint64_t off, size_t n)
{
	uint32_t k = live->nchunks;
	/* during start-up the file has no name yet: its descriptor */
	int fd = pending_fd, grown;
	void *m;

	if (k >= PC_LIVE_CHUNKS ||
	    (off + n) / page_size > pc_live_max_pages() ||
	    over_fsize(off + n) || (fd < 0 && (fd = open_live()) < 0))
		return NULL;
	grown = (uint64_t)lseek(fd, 0, SEEK_END) >= off + n ||
		!ftruncate(fd, (off_t)(off + n));
	m = grown ? mmap(NULL, n, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_NORESERVE, fd, (off_t)off) :
		    MAP_FAILED;
	if (fd != pending_fd)
		close(fd);
	if (m == MAP_FAILED)
		return NULL;
	madvise(m, n, MADV_RANDOM);
	live->chunk[k] =
		(struct pc_live_chunk){ off, (uint64_t)(uintptr_t)m, n };
	if (off + n > live->size)
		live->size = off + n;
	__atomic_store_n(&live->nchunks, k + 1, __ATOMIC_RELEASE);
	return m;
}

/* Bytes [off, off + n) of the file where the last chunk maps them; NULL
 * past its end. */
static char *
in_last_chunk(uint64_t off, size_t n)
{
	const struct pc_live_chunk *c = &live->chunk[live->nchunks - 1];

	if (off < c->off || off + n > c->off + c->len)
		return NULL;
	return (char *)(uintptr_t)(c->va + (off - c->off));
}

void *
pc_live_alloc(size_t len, int meta)
{
	size_t n = round_page(len);
	uint64_t off;
	char *m = NULL;

	if (live) {
		/* regions are taken at start-up and at scans, one thread
		 * at a time */
		off = live->used;
		m = in_last_chunk(off, n);
		if (!m)
			m = new_chunk(off, n > CHUNK_MIN ? n : CHUNK_MIN);
		if (m) {
			live->used = off + n;
			if (meta && live->nmeta < 16) {
				live->meta_off[live->nmeta] = off;
				live->meta_len[live->nmeta] = n;
				live->nmeta++;
			}
			return m;
		}
		__atomic_fetch_add(&pc_stats->live_overflow, 1,
				   __ATOMIC_RELAXED);
	}
	if (!page_size)
		page_size = (size_t)sysconf(_SC_PAGESIZE);
	m = mmap(NULL, n, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return m == MAP_FAILED ? NULL : m;
}

/* A copy of s in the live file's string region (or anonymous memory):
 * never freed, never malloc'ed (a leak checker has nothing to say). */
char *
pc_live_strdup(const char *s)
{
	static char *area;
	static size_t used, size;
	size_t n = strlen(s) + 1;

	if (!area || used + n > size) {
		size = n > PC_LIVE_STRINGS ? round_page(n) : PC_LIVE_STRINGS;
		area = pc_live_alloc(size, 1);
		used = 0;
		if (!area)
			return NULL;
	}
	if (pc_live_back(area + used, n))
		return NULL;
	memcpy(area + used, s, n);
	used += n;
	return area + used - n;
}

void
pc_live_seal(const struct pc_config *c)
{
	if (live)
		live->config = *c;
	if (pending_fd >= 0) {
		if (live)
			publish(pending_fd);
		pc_live_map_fd(-1);
		close(pending_fd);
		pending_fd = -1;
	}
}

struct pc_live_tables *
pc_live_tables(void)
{
	static struct pc_live_tables none;

	return live ? &live->tables : &none;
}

int
pc_live_active(void)
{
	return live != NULL;
}

void
pc_live_done(void)
{
	if (!live || getpid() != pc->pid)
		return;
	gmon_live_head_write(&live->head, GMON_LIVE_DONE, 0, 0);
	unlink(live_path);
}

/*
 * Which pages of [addr, addr + len) a sample touched, as mincore(2) puts
 * it (bit 0 of each byte of vec): the writer skips the others without
 * reading them. For anonymous memory that is mincore itself; for the live
 * file it is not (a page written back and dropped from the page cache is
 * still counts): there the file system says which parts hold data, with
 * SEEK_DATA and SEEK_HOLE (an allocated but never written extent is a
 * hole; one a page of which was written, or that is in the page cache, is
 * data). Where it cannot say, every page is read. AS-safe.
 */
void
pc_live_span(const void *lo, size_t len, int fd)
{
	span_lo = lo;
	span_hi = lo ? (const char *)lo + len : NULL;
	live_fd = fd;
}

void
pc_live_io(int begin)
{
	if (!live)
		return;		/* pc_recover sets its own span */
	if (begin)
		pc_live_fold();	/* the samples that wait for a page */
	if (begin && live_path[0]) {
		live_fd = open(live_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		span_lo = (const char *)live;
		span_hi = span_lo + live->size;
	} else if (!begin && live_fd >= 0) {
		close(live_fd);
		live_fd = -1;
	}
}

/* Whether a is in one of the live file's chunks. AS-safe. */
static int
is_live(const char *a)
{
	uint32_t n = __atomic_load_n(&live->nchunks, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i < n && i < PC_LIVE_CHUNKS; i++)
		if ((uintptr_t)a >= live->chunk[i].va &&
		    (uintptr_t)a - live->chunk[i].va < live->chunk[i].len)
			return 1;
	return 0;
}

void
pc_live_resident(const void *addr, size_t len, unsigned char *vec)
{
	const char *a = addr;
	size_t page = (size_t)sysconf(_SC_PAGESIZE),
	       npages = (len + page - 1) / page;
	off_t pos, end, d, h;

	/* the live file's own pages: those backed (livegrow.c), the only
	 * ones a sample may have written; the others are holes, which a
	 * read would fill with a page of the file on tmpfs */
	if (live && is_live(a)) {
		for (size_t i = 0; i < npages; i++)
			vec[i] = (unsigned char)pc_live_backed(a + i * page);
		return;
	}
	if (!(span_lo && a >= span_lo && a < span_hi)) {
		if (mincore((void *)addr, len, vec))
			memset(vec, 1, npages);
		return;
	}
	if (live_fd < 0) {
		memset(vec, 1, npages);
		return;
	}
	memset(vec, 0, npages);
	pos = a - span_lo;
	end = pos + (off_t)len;
	while (pos < end) {
		d = lseek(live_fd, pos, SEEK_DATA);
		if (d < 0 || d >= end)
			break;
		h = lseek(live_fd, d, SEEK_HOLE);
		if (h < 0 || h > end)
			h = end;
		for (off_t p = d; p < h; p += (off_t)page)
			vec[(size_t)(p - (a - span_lo)) / page] = 1;
		pos = h > d ? h : d + (off_t)page;
	}
}

/* The pages a fork child keeps of the chunk c, backed ones only: into fd
 * (fd >= 0), or into the copy m of the chunk. */
static int
copy_kept(const struct pc_live_chunk *c, int fd, char *m)
{
	for (uint64_t p = 0; p < c->len; p += page_size) {
		const char *a = (const char *)(uintptr_t)(c->va + p);

		if (!pc_live_kept(live, c->off + p) || !pc_live_backed(a))
			continue;
		if (fd < 0)
			memcpy(m + p, a, page_size);
		else if (pwrite(fd, a, page_size, (off_t)(c->off + p)) !=
			 (ssize_t)page_size)
			return -1;
	}
	return 0;
}

/*
 * No file of its own for a fork child: it must not count into its
 * parent's. A private copy of each chunk of the mapping, made in place,
 * keeps every address; the counters are zeroed after this by the fork
 * handler. -1 when even that cannot be had.
 */
static int
detach_private(void)
{
	struct pc_live_chunk ch[PC_LIVE_CHUNKS];
	uint32_t n = live->nchunks;

	memcpy(ch, live->chunk, sizeof(ch));
	for (uint32_t i = 0; i < n && i < PC_LIVE_CHUNKS; i++) {
		void *m = mmap(NULL, ch[i].len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			       0);

		if (m == MAP_FAILED)
			goto detached;
		copy_kept(&ch[i], -1, m);
		if (mremap(m, ch[i].len, ch[i].len,
			   MREMAP_MAYMOVE | MREMAP_FIXED,
			   (void *)(uintptr_t)ch[i].va) == MAP_FAILED) {
			munmap(m, ch[i].len);
			goto detached;
		}
	}
	live->st.writer = 0;
	pc_live_grow_forked(live, 1);
	live_path[0] = 0;
	live = NULL;
	return 0;
detached:
	/* still the parent's mapping: this child must not count or write */
	pc_live_grow_forked(live, 1);
	live_path[0] = 0;
	live = NULL;
	return -1;
}

int
pc_live_forked(void)
{
	int fd;

	if (!live)
		return 0;
	if (gmon_live_name(live_path, sizeof(live_path), pc->path, getpid()))
		goto anonymous;
	absolute_path();
	if ((fd = create_file(live->size, 0)) < 0)
		goto anonymous;
	/* the header and the inventory, as the parent has them; the
	 * counters start at zero, in holes */
	for (uint32_t i = 0; i < live->nchunks && i < PC_LIVE_CHUNKS; i++)
		if (copy_kept(&live->chunk[i], fd, NULL))
			goto failed;
	/* each chunk's mapped part onto the same place of the child's
	 * file; MAP_FIXED failed: a chunk is still the parent's */
	if (pc_live_map_chunks(live, fd))
		goto failed;
	stamp_head(live);
	live->st.writer = 0;	/* a write of the parent's is not the child's */
	pc_live_map_fd(fd);
	pc_live_grow_forked(live, 0);
	gmon_live_head_write(&live->head, GMON_LIVE_RUNNING, 0, 0);
	publish(fd);
	pc_live_map_fd(-1);
	close(fd);
	return 0;
failed:
	close(fd);
	if (making[0])
		unlink(making);
anonymous:
	return detach_private();
}
