/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fsync and fdatasync, timed by the thread that calls them (PC_CLOCK=wall),
 * and unlink, unlinkat and rename (a journal's unlink waits for the disk
 * as much, and was sampled as fsync was):
 * their time off the CPU, exactly, for the wall sampler (wall_acct.c) to
 * charge to the call. Sampling cannot place it: inside fsync the kernel
 * wakes the thread for each I/O, the thread waits for a CPU, runs in the
 * kernel (58 % of sqlite3's fdatasync time here), and /proc reads
 * "running" for it a third of the time, so a look at 1 % of a CPU's
 * budget (15 to 30 looks a second) told fdatasync from unlink with errors
 * of 30 % and more.
 *
 * A thread's slot is found by its id (no allocation, no thread-local
 * storage); a sequence word lets the sampler read it whole. The sampler
 * frees a slot at the thread's end. Not called in a handler by libpc;
 * the interposers are AS-safe, as fsync is.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <link.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "pc.h"
#include "wall.h"
#include "banned.h"

#define IO_SLOTS	4096	/* threads that call fsync, at once */
#define IO_PROBE	64
#define IO_FRAMES	64	/* frames walked of a caller (1 KiB of its stack) */
#define SLOW_NS		50000	/* a call this long is walked: a walk costs 5 to 30 us */

/* What a thread's calls of one kind (PC_IO_SYNC: fsync, fdatasync;
 * PC_IO_NAME: unlink, unlinkat, rename) took. */
struct io_kind {
	uint64_t done_ns;	/* off the CPU in calls that returned */
	uint32_t last_nr;	/* the last call */
	uint32_t slow;		/* it took SLOW_NS or more */
	uint64_t ret;		/* where it was called from */
	uint64_t *entry;	/* its stack (its caller's walk), or NULL */
};

struct io_slot {
	uint32_t tid;
	uint32_t seq;		/* odd while written */
	uint64_t start_ns, start_cpu;	/* of the call under way */
	uint32_t nr, kind;	/* the call under way (0: none), its kind */
	struct io_kind k[PC_IO_KINDS];
};

static struct io_slot *slots; /* IO_SLOTS of them, mapped by pc_wall_io_start */
static int io_on;
static int (*real_fsync)(int), (*real_fdatasync)(int);
static int (*real_unlink)(const char *),
	(*real_unlinkat)(int, const char *, int);
static int (*real_rename)(const char *, const char *);
static int own_range(struct dl_phdr_info *info, size_t size, void *arg);

/* glibc's calls, for every program: a raw system call in their place
 * would not be a cancellation point, as fsync and fdatasync are (a thread
 * cancelled while blocked in one would wait on) */
void
pc_wall_io_resolve(void)
{
	real_fsync = (int (*)(int))pc_next("fsync");
	real_fdatasync = (int (*)(int))pc_next("fdatasync");
	real_unlink = (int (*)(const char *))pc_next("unlink");
	real_unlinkat = (int (*)(int, const char *, int))pc_next("unlinkat");
	real_rename = (int (*)(const char *, const char *))pc_next("rename");
	/* at start-up, never in a handler: (dl_iterate_phdr) passes
	 * banned.h's macro */
	(dl_iterate_phdr)(own_range, (void *)(uintptr_t)pc_wall_io_resolve);
}

void
pc_wall_io_start(void)
{
	void *m = mmap(NULL, IO_SLOTS * sizeof(*slots), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return;		/* fsync then not timed: sampled as any call */
	slots = m;
	__atomic_store_n(&io_on, 1, __ATOMIC_RELEASE);
}

/* A bit for each slot at which some thread's search began (set before it
 * takes a slot, never cleared): the sampler looks up every thread at each
 * look, most of which never call fsync, and its first read of a slot's
 * page of the table was a page fault (13 to 30 us here, 58 of the 176 of
 * its faults at 16 threads of tests/progs/wallattr). */
static uint64_t homes[IO_SLOTS / 64];

static struct io_slot *
find_slot(uint32_t tid, int take)
{
	uint32_t home = (tid * 2654435761u) % IO_SLOTS;

	if (take)
		__atomic_fetch_or(&homes[home / 64], 1ULL << (home % 64),
				  __ATOMIC_RELEASE);
	else if (!(__atomic_load_n(&homes[home / 64], __ATOMIC_ACQUIRE) >>
			   (home % 64) &
		   1))
		return NULL;
	for (uint32_t p = 0; p < IO_PROBE; p++) {
		struct io_slot *s = &slots[(tid * 2654435761u + p) % IO_SLOTS];
		uint32_t cur = __atomic_load_n(&s->tid, __ATOMIC_ACQUIRE);

		if (cur == tid)
			return s;
		if (!cur && take &&
		    __atomic_compare_exchange_n(&s->tid, &cur, tid, 0,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return s;
		if (!cur && !take)
			return NULL;
	}
	return NULL;
}

static void
bump(struct io_slot *s)
{
	__atomic_fetch_add(&s->seq, 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* The stack of a call of nr by thread tid from ret, walked in the
 * calling thread (a blocked thread's walk from outside fails inside
 * fsync: the kernel wakes the thread for each I/O), entered in the
 * stacks table with no time yet: the sampler charges the call's time to
 * it. Inlined: the frames start at fsync's caller, not at libpc. */
static inline __attribute__((always_inline)) uint64_t *
walk_caller(uint32_t tid, uint32_t nr, void *real, uint64_t ret)
{
	struct pc_frame f[IO_FRAMES + 1];
	int n;

	f[0].site = f[0].entry = (uintptr_t)real;
	if (!real ||
	    (n = pc_unwind_here((uintptr_t)ret, f + 1, IO_FRAMES)) <= 0)
		return NULL;
	/* counted as the sampler's walks are: the summary's "whole" */
	pc_wall_count(n == IO_FRAMES ? GMON_WALL_CUT : GMON_WALL_FULL, 1);
	return pc_stacks_add_offcpu(
		tid, GMON_WAIT_WORD(nr, pc_wall_io_fd(nr), 0), f, n + 1,
		n == IO_FRAMES ? GMON_STACK_TRUNCATED : 0, 0);
}

/* What a timed call's wait names: fsync's a file; unlink's, a name. */
unsigned
pc_wall_io_fd(uint32_t nr)
{
	return nr == SYS_fsync || nr == SYS_fdatasync ? GMON_FD_FILE :
							GMON_FD_NONE;
}

/* A timed call of nr (of kind) about to be made from ret by the calling
 * thread: its slot, or NULL (the wall clock is off, or no slot is free);
 * *entry, the stack walked before it. Inlined: the stacks read the
 * call, not a frame of libpc's own. */
static inline __attribute__((always_inline)) struct io_slot *
begin_call(uint32_t nr, unsigned kind, void *real, uint64_t ret,
	   uint64_t **entry)
{
	struct io_slot *s = NULL;
	uint32_t tid = 0;
	int saved = errno;

	*entry = NULL;
	if (__atomic_load_n(&io_on, __ATOMIC_ACQUIRE) && pc_on())
		s = find_slot(tid = (uint32_t)syscall(SYS_gettid), 1);
	if (!s)
		return NULL;
	/* walked before the call where the last was slow (a disk's), so that
	 * the sampler has the stack while the call lasts; else after a call
	 * that was slow, for the next look. Calls on tmpfs or a page cache
	 * (a few us) are never walked. */
	if (s->k[kind].slow)
		*entry = walk_caller(tid, nr, real, ret);
	errno = saved;
	bump(s);
	s->start_ns = pc_clock_ns(CLOCK_MONOTONIC);
	s->start_cpu = pc_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	s->nr = s->k[kind].last_nr = nr;
	s->kind = kind;
	s->k[kind].ret = ret;
	s->k[kind].entry = *entry;
	bump(s);
	return s;
}

/* The call begun on slot s returned; errno is the call's. */
static inline __attribute__((always_inline)) void
end_call(struct io_slot *s, uint32_t nr, unsigned kind, void *real,
	 uint64_t ret, uint64_t *entry)
{
	int e = errno;
	uint64_t t = pc_clock_ns(CLOCK_MONOTONIC) - s->start_ns;
	uint64_t c = pc_clock_ns(CLOCK_THREAD_CPUTIME_ID) - s->start_cpu;

	if (!entry && t >= SLOW_NS)
		entry = walk_caller(s->tid, nr, real, ret);
	bump(s);
	s->k[kind].done_ns += t > c ? t - c : 0;
	s->nr = 0;
	s->k[kind].entry = entry;
	s->k[kind].slow = t >= SLOW_NS;
	bump(s);
	errno = e;
}

/*
 * unlink, unlinkat and rename are libpc's own calls too (its files, some
 * in a handler): defined under other names, exported under theirs (so
 * that the files' calls read as glibc's), and a call from libpc's own
 * code goes straight to glibc's, untimed.
 */
int pc_io_unlink(const char *path) __asm__("unlink");
int pc_io_unlinkat(int dir, const char *path, int flags) __asm__("unlinkat");
int pc_io_rename(const char *from, const char *to) __asm__("rename");
static uintptr_t own_lo, own_hi;	/* libpc's own mapping */

static int
own_range(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)arg, lo = ~(uintptr_t)0, hi = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		lo = info->dlpi_addr + ph->p_vaddr < lo ?
			     info->dlpi_addr + ph->p_vaddr :
			     lo;
		hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi ?
			info->dlpi_addr + ph->p_vaddr + ph->p_memsz : hi;
	}
	if (me < lo || me >= hi)
		return 0;
	own_lo = lo;
	own_hi = hi;
	return 1;
}

static int
from_libpc(uint64_t ret)
{
	return ret >= own_lo && ret < own_hi;
}

/* fsync and fdatasync; unlink, unlinkat and rename (sqlite3's journal's
 * unlink waits for the disk too, and was sampled as fsync's was, its time
 * often read "running"). The wrapper of each is inlined: its caller's
 * stack starts at the call. */
#define TIMED(nr, kind, real, call, fallback) \
	do { \
		uint64_t ret_ = (uint64_t)__builtin_return_address(0), \
			 *entry_ = NULL; \
		struct io_slot *s_ = \
			from_libpc(ret_) ? \
				NULL : \
				begin_call(nr, kind, (void *)(real), ret_, \
					   &entry_); \
		int r_ = (real) ? (call) : (int)(fallback); \
\
		if (s_) \
			end_call(s_, nr, kind, (void *)(real), ret_, entry_); \
		return r_; \
	} while (0)

PC_EXPORT int
fsync(int fd)
{
	TIMED(SYS_fsync, PC_IO_SYNC, real_fsync, real_fsync(fd),
	      syscall(SYS_fsync, fd));
}

PC_EXPORT int
fdatasync(int fd)
{
	TIMED(SYS_fdatasync, PC_IO_SYNC, real_fdatasync, real_fdatasync(fd),
	      syscall(SYS_fdatasync, fd));
}

PC_EXPORT int
pc_io_unlink(const char *path)
{
	TIMED(SYS_unlink, PC_IO_NAME, real_unlink, real_unlink(path),
	      syscall(SYS_unlink, path));
}

PC_EXPORT int
pc_io_unlinkat(int dir, const char *path, int flags)
{
	TIMED(SYS_unlinkat, PC_IO_NAME, real_unlinkat,
	      real_unlinkat(dir, path, flags),
	      syscall(SYS_unlinkat, dir, path, flags));
}

PC_EXPORT int
pc_io_rename(const char *from, const char *to)
{
	TIMED(SYS_rename, PC_IO_NAME, real_rename, real_rename(from, to),
	      syscall(SYS_rename, from, to));
}

int
pc_wall_io_read(uint32_t tid, unsigned kind, uint64_t now, uint64_t run_ns,
		int end, uint64_t *total, uint32_t *nr, uint64_t *ret,
		uint64_t **entry)
{
	struct io_slot *s = find_slot(tid, 0), copy;
	uint32_t q;

	if (!s)
		return 0;
	do {
		q = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		copy = *s;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((q & 1) || q != __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE));
	*total = copy.k[kind].done_ns;
	/* a call under way: its time so far, less its CPU (schedstat's and
	 * the thread's CPU clock are the same counter) */
	if (copy.nr && copy.kind == kind && now > copy.start_ns) {
		uint64_t t = now - copy.start_ns,
			 c = run_ns > copy.start_cpu ? run_ns - copy.start_cpu :
						       0;

		*total += t > c ? t - c : 0;
	}
	*nr = copy.k[kind].last_nr;
	*ret = copy.k[kind].ret;
	*entry = copy.k[kind].entry;
	if (end && kind == PC_IO_KINDS - 1)
		__atomic_store_n(&s->tid, 0, __ATOMIC_RELEASE);
	return 1;
}
