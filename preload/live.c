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
 * The file is sized at start-up (the executable's text, the arc and stack
 * tables, the objects loaded so far and room for more) and allocated on
 * disk at once with fallocate: a page of a shared mapping that the disk
 * cannot hold would kill the program with SIGBUS when a sample first
 * touched it. Where the file cannot be made (no room, a read-only
 * directory, a file system without fallocate), and for what no longer
 * fits in it, libpc keeps its counters in anonymous memory as it always
 * did, and a killed process leaves nothing of them.
 *
 * A fork child gets a file of its own, mapped over the same addresses:
 * the inventory is copied, the counters start at zero. Files are made
 * with no name (O_TMPFILE; else under a temporary one) and linked as
 * *.live once start-up has written their header, configuration and tables
 * (pc_live_seal), so that pcprof never takes one that is being made for a
 * dead process's, and a process killed before leaves none. Nothing here runs in the signal handler but pc_live_done and
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

/* Bytes of the regions before the counters: what a fork child copies. */
#define STRINGS_BYTES	(256 * 1024)

static size_t
round_page(size_t n)
{
	return (n + page_size - 1) & ~(page_size - 1);
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
			*sum += round_page(ph->p_memsz / pc_profil_bin_bytes(PC_SCALE) *
					   sizeof(uint32_t) + page_size);
	}
	return 0;
}

/* "DIR/.pcprof.PID.live" for the output path "DIR/gmon.out". */
static int
live_name(char *dst, size_t size, const char *out, pid_t pid)
{
	const char *slash = strrchr(out, '/');
	size_t dir = slash ? (size_t)(slash - out) + 1 : 0;
	char num[24];
	struct pc_line l = { dst, size, 0 };

	if (dir + 40 > size)
		return -ENAMETOOLONG;
	memcpy(dst, out, dir);
	l.len = dir;
	pc_decimal(num, (unsigned long)pid);
	pc_line_str(&l, ".pcprof.");
	pc_line_str(&l, num);
	pc_line_str(&l, ".live");
	dst[l.len] = 0;
	return 0;
}

static char making[PATH_MAX + 8];	/* live_path while it is made */
static int pending_fd = -1;		/* the file made, until it is published */

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

/* A new file of len bytes, on disk, that becomes live_path once whole
 * (publish()): until then a SIGKILL leaves no file that pcprof could take
 * for a dead process's, and none at all where it has no name. Its
 * descriptor or -errno. A file over the program's RLIMIT_FSIZE is not
 * made: the kernel would kill the program with SIGXFSZ. */
static int
create_file(size_t len)
{
	struct rlimit fsize;
	int fd, r;

	if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY &&
	    (rlim_t)len > fsize.rlim_cur)
		return -EFBIG;
	fd = open_unnamed();
	if (fd < 0)
		return fd;
	if (ftruncate(fd, (off_t)len) || fallocate(fd, 0, 0, (off_t)len)) {
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
	if (!fstat(named, &a) && !fstat(fd, &b) && a.st_ino == b.st_ino && a.st_dev == b.st_dev &&
	    mmap(live, live->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE,
		 named, 0) == (void *)live)
		madvise(live, live->size, MADV_RANDOM);
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
	static char aside[PATH_MAX + 32];	/* static: a fork child's stack */
	struct stat st;

	if (lstat(live_path, &st) == 0) {
		struct timespec ts;
		char num[24];
		struct pc_line l = { aside, sizeof(aside), 0 };

		clock_gettime(CLOCK_REALTIME, &ts);
		pc_decimal(num, (unsigned long)ts.tv_nsec);
		pc_line_str(&l, live_path);
		pc_line_str(&l, ".");
		pc_line_str(&l, num);
		pc_line_str(&l, ".live");
		aside[l.len] = 0;
		if (rename(live_path, aside))
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

int
pc_live_open(size_t text_bytes, size_t arcs, size_t stacks_mb, int scope_all)
{
	size_t len = round_page(sizeof(struct pc_live)), extra = 0;
	int fd;
	void *m;

	page_size = (size_t)sysconf(_SC_PAGESIZE);
	len = round_page(sizeof(struct pc_live));
	if (scope_all) {
		len += round_page(PC_MAX_OBJECTS * sizeof(struct pc_object)) +
		       2 * round_page(PC_MAX_RANGES * sizeof(struct pc_range)) +
		       STRINGS_BYTES;
		dl_iterate_phdr(sum_objects, &extra);
		/* room for as much again loaded later, and 16 MiB more */
		extra = extra * 2 + (16u << 20) +
			round_page(PC_PENDING * sizeof(struct pc_pending));
	}
	len += round_page(text_bytes) + extra;
	if (arcs)
		len += round_page(arcs * sizeof(struct pc_arc)) + page_size;
	if (stacks_mb)
		len += (stacks_mb << 20) + (stacks_mb << 20) / 16 + (1u << 20);
	if (live_name(live_path, sizeof(live_path), pc->path, getpid()))
		return -ENAMETOOLONG;
	fd = create_file(len);
	if (fd < 0)
		return fd;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
	if (m == MAP_FAILED) {
		close(fd);
		if (making[0])
			unlink(making);
		return -ENOMEM;
	}
	/* named at pc_live_seal, once start-up has filled it */
	pending_fd = fd;
	/* no read-around: a first touch fills one page of the page cache,
	 * not 32 (24 MiB a process with stacks and every object, measured),
	 * and mincore then tells the writer the pages samples touched */
	madvise(m, len, MADV_RANDOM);
	live = m;
	live_fd = -1;
	memcpy(live->magic, PC_LIVE_MAGIC, sizeof(PC_LIVE_MAGIC));
	live->hdr_size = sizeof(struct pc_live);
	live->pid = (int32_t)getpid();
	live->base = (uint64_t)(uintptr_t)m;
	live->size = len;
	live->used = round_page(sizeof(struct pc_live));
	/* libpc's state moves in: nothing samples yet, no thread reads it */
	live->st = *pc;
	live->stats = *pc_stats;
	live->objs = *pc_objs;
	pc = &live->st;
	pc_stats = &live->stats;
	pc_objs = &live->objs;
	__atomic_store_n(&live->state, PC_LIVE_RUNNING, __ATOMIC_RELEASE);
	return 0;
}

void *
pc_live_alloc(size_t len, int meta)
{
	size_t n = round_page(len);
	uint64_t off;
	void *m;

	if (live) {
		off = __atomic_fetch_add(&live->used, n, __ATOMIC_RELAXED);
		if (off + n <= live->size) {
			/* meta regions are taken at start-up and at scans,
			 * one thread at a time */
			if (meta && live->nmeta < 16) {
				live->meta_off[live->nmeta] = off;
				live->meta_len[live->nmeta] = n;
				live->nmeta++;
			}
			return (char *)live + off;
		}
		__atomic_fetch_add(&pc_stats->live_overflow, 1, __ATOMIC_RELAXED);
	}
	if (!page_size)
		page_size = (size_t)sysconf(_SC_PAGESIZE);
	m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
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
		size = n > STRINGS_BYTES ? round_page(n) : STRINGS_BYTES;
		area = pc_live_alloc(size, 1);
		used = 0;
		if (!area)
			return NULL;
	}
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
	__atomic_store_n(&live->state, PC_LIVE_DONE, __ATOMIC_RELEASE);
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
	if (begin && live_path[0]) {
		live_fd = open(live_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		span_lo = (const char *)live;
		span_hi = span_lo + live->size;
	} else if (!begin && live_fd >= 0) {
		close(live_fd);
		live_fd = -1;
	}
}

void
pc_live_resident(const void *addr, size_t len, unsigned char *vec)
{
	const char *a = addr;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), npages = (len + page - 1) / page;
	off_t pos, end, d, h;

	if (!(live && a >= (const char *)live && a < (const char *)live + live->size) &&
	    !(span_lo && a >= span_lo && a < span_hi)) {
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

/* Bytes [off, off + len) of the mapping into the same place of fd. */
static int
copy_region(int fd, uint64_t off, uint64_t len)
{
	for (uint64_t done = 0; done < len; ) {
		ssize_t k = pwrite(fd, (char *)live + off + done, (size_t)(len - done),
				   (off_t)(off + done));

		if (k <= 0)
			return -1;
		done += (uint64_t)k;
	}
	return 0;
}

/*
 * No file of its own for a fork child: it must not count into its
 * parent's. A private copy of the whole mapping, made in place, keeps
 * every address; the counters are zeroed after this by the fork handler.
 * -1 when even that cannot be had.
 */
static int
detach_private(void)
{
	void *m = mmap(NULL, live->size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (m == MAP_FAILED)
		goto detached;
	memcpy(m, live, sizeof(struct pc_live));
	for (uint32_t i = 0; i < live->nmeta && i < 16; i++)
		memcpy((char *)m + live->meta_off[i], (char *)live + live->meta_off[i],
		       live->meta_len[i]);
	if (mremap(m, live->size, live->size, MREMAP_MAYMOVE | MREMAP_FIXED, live) == MAP_FAILED) {
		munmap(m, live->size);
		goto detached;
	}
	live->st.writer = 0;
	live_path[0] = 0;
	live = NULL;
	return 0;
detached:
	/* still the parent's mapping: this child must not count or write */
	live_path[0] = 0;
	live = NULL;
	return -1;
}

int
pc_live_forked(void)
{
	void *m;
	int fd;

	if (!live)
		return 0;
	if (live_name(live_path, sizeof(live_path), pc->path, getpid()) ||
	    (fd = create_file(live->size)) < 0)
		goto anonymous;
	/* the header and the inventory, as the parent has them; the
	 * counters start at zero */
	if (copy_region(fd, 0, round_page(sizeof(struct pc_live))))
		goto failed;
	for (uint32_t i = 0; i < live->nmeta && i < 16; i++)
		if (copy_region(fd, live->meta_off[i], live->meta_len[i]))
			goto failed;
	m = mmap(live, live->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE,
		 fd, 0);
	if (m != live) {
		/* MAP_FIXED failed: the parent's mapping is still there */
		goto failed;
	}
	madvise(m, live->size, MADV_RANDOM);
	live->pid = (int32_t)getpid();
	live->st.writer = 0;	/* a write of the parent's is not the child's */
	__atomic_store_n(&live->state, PC_LIVE_RUNNING, __ATOMIC_RELEASE);
	publish(fd);
	close(fd);
	return 0;
failed:
	close(fd);
	if (making[0])
		unlink(making);
anonymous:
	return detach_private();
}
