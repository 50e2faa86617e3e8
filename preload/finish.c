/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writing the profile at the end, and snapshots: one writer at a time
 * (the writer lock, pc->writer), on a stack of libpc's own. pc_finish is
 * the one end of sampling, reached from exit, _exit, the fatal-signal
 * handlers and the forwarder of handler.c; pc_snapshot from libpc's
 * snapshot thread. Everything here is AS-safe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "pc.h"
#include "banned.h"

/*
 * Take the right to write, holding the thread's id in pc->writer; a
 * snapshot in another thread may hold it for as long as it takes to write
 * its files. AS-safe.
 */
void
pc_write_lock(void)
{
	int self = (int)syscall(SYS_gettid);
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 30000; i++) {
		int holder = 0;

		if (__atomic_compare_exchange_n(&pc->writer, &holder, self, 0,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		/* a write interrupted in this very thread (a crash inside
		 * it) will never finish: go on */
		if (holder == self)
			return;
		if (i < 100)
			sched_yield();
		else
			nanosleep(&ms, NULL);
	}
	/* 30 s: a writer that cannot finish (a full, stalled disk) */
}

void
pc_write_unlock(void)
{
	__atomic_store_n(&pc->writer, 0, __ATOMIC_RELEASE);
}

/*
 * The writer runs on a stack of libpc's own, whatever called it: a thread
 * of the program may have a small stack, and a fatal signal's handler may
 * run on a small alternate stack, where writing the files (about 31 KiB of
 * stack with PC_SCOPE=all and stacks, measured) would overflow it. Writes
 * are serialized by the writer lock, so one stack serves them all; its
 * pages are touched only when a write happens. AS-safe: makecontext and
 * swapcontext touch no lock.
 */
#define WRITER_STACK (128 * 1024)
static char writer_stack[WRITER_STACK] __attribute__((aligned(64)));
static ucontext_t writer_caller, writer_ctx;
static const char *writer_path;
static int writer_flags, writer_result;
static char other[PATH_MAX];

static int
path_refused(int r)
{
	return r == -ELOOP || r == -EISDIR || r == -ENAMETOOLONG;
}

/* What the writer does, all of it on its own stack (the buffers of the
 * name and of the summary line too): the name, the files, the live
 * file's end, the summary. */
static int
write_job(const char *path, int flags)
{
	int r;

	/* gmon.out written while we ran by a process started under us (or
	 * by glibc's -pg writer) is not ours to replace */
	if ((flags & PC_WRITE_FINAL) && pc->root && pc_name_taken(path) &&
	    pc_name(other, sizeof(other), PC_NAME_OTHER) == 0)
		path = other;
	r = pc_dump(path);
	/* written: the live file goes. Not written: it is the profile,
	 * for pcprof to finish (a full disk, RLIMIT_FSIZE, a descriptor
	 * table or RLIMIT_NOFILE with no room, a setuid or chroot that took
	 * the directory away), but where the path itself is refused (a
	 * symbolic link, a directory, too long a name), as pcprof would
	 * refuse it too */
	if ((flags & PC_WRITE_FINAL) && (r == 0 || path_refused(r)))
		pc_live_done();
	if (flags & PC_WRITE_SAY)
		pc_dump_summary(path, r);
	return r;
}

static void
writer_run(void)
{
	writer_result = write_job(writer_path, writer_flags);
}

/* swapcontext as the C library defines it, not as a library before
 * libpc interposes it: AddressSanitizer's prints a warning on its first
 * call (its shadow of the new stack; libpc's code is not instrumented and
 * the stack is libpc's own), a line on the stderr of a program that never
 * switches context. Resolved at start-up (dlsym is not AS-safe). */
typedef int (*swap_fn)(ucontext_t *, const ucontext_t *);
static swap_fn swap_next;

void
pc_finish_resolve(void)
{
	swap_next = (swap_fn)pc_next("swapcontext");
}

int
pc_write_on_own_stack(const char *path, int flags)
{
	swap_fn swap = swap_next ? swap_next : swapcontext;
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	uintptr_t lo = (uintptr_t)writer_stack;

	/* already on it (a fatal signal inside a write of this thread), not
	 * the lock's holder (a lock given up on after 30 s: the stack may
	 * be in use), or no context to be had: here, then */
	if ((here >= lo && here < lo + sizeof(writer_stack)) ||
	    __atomic_load_n(&pc->writer, __ATOMIC_RELAXED) !=
		    (int)syscall(SYS_gettid) ||
	    getcontext(&writer_ctx))
		return write_job(path, flags);
	writer_path = path;
	writer_flags = flags;
	writer_result = -EINVAL;
	writer_ctx.uc_stack.ss_sp = writer_stack;
	writer_ctx.uc_stack.ss_size = sizeof(writer_stack);
	writer_ctx.uc_link = &writer_caller;
	makecontext(&writer_ctx, writer_run, 0);
	if (swap(&writer_caller, &writer_ctx))
		return write_job(path, flags);
	return writer_result;
}

void
pc_finish(void)
{
	pc_finish_signal(0);
}

void
pc_finish_signal(int sig)
{
	int saved = errno;

	if (getpid() != pc->pid || !pc->ntext)
		goto out;
	/* every thread's wall time up to the end (PC_CLOCK=wall) */
	pc_wall_final();
	/* the writer's lock first, then the phase: a thread that ends the
	 * process (_exit, exit_group through here) while another writes
	 * waits in the lock until that write is whole */
	pc_write_lock();
	/* freeze: other threads may still be running; their ticks are
	 * dropped from here on, so the file is one consistent snapshot */
	if (!pc_phase_move(PC_ON, PC_DONE)) {
		pc_write_unlock();
		goto out;
	}
	pc_note_cpu_stop();
	pc_thread_disarm();
	pc->ending = sig ? PC_END_SIGNAL : PC_END_EXIT;
	pc->end_signal = sig;
	pc_write_on_own_stack(pc->path, PC_WRITE_FINAL | PC_WRITE_SAY);
	pc_write_unlock();
out:
	errno = saved;
}

void
pc_snapshot(void)
{
	int saved = errno;

	if (getpid() != pc->pid || !pc_on())
		goto out;
	if (!__atomic_compare_exchange_n(&pc->writer, &(int){ 0 },
					 (int)syscall(SYS_gettid), 0,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		goto out;	/* one is being written right now */
	if (!(pc->root && pc_name_taken(pc->path)) &&
	    pc_write_on_own_stack(pc->path, 0) == 0) {
		pc->wrote_own = 1;
		__atomic_fetch_add(&pc_stats->snapshots, 1, __ATOMIC_RELAXED);
	}
	pc_write_unlock();
out:
	errno = saved;
}
