/*
 * The ends of a profiled process's life: the profile is written when the
 * program exits (from libpc's destructor, so the program's own atexit
 * handlers and destructors are still sampled), and a forked child starts
 * over with empty counters, a timer of its own and a file of its own.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pc.h"

void pc_thread_forget(void) PC_HIDDEN;

static int written;

__attribute__((destructor)) static void
pc_stop(void)
{
	int saved = errno;
	int r;

	if (!pc.running || written)
		goto out;
	/* freeze: other threads may still be running, and their ticks are
	 * dropped from here on so the file is a consistent snapshot */
	pc.running = 0;
	written = 1;
	pc_thread_disarm();
	r = pc_dump(pc.path);
	pc_dump_summary(pc.path, r);
out:
	errno = saved;
}

/* path + "." + pid, or GMON_OUT_PREFIX + "." + pid */
static void
child_path(void)
{
	char pid[24], t[24];
	const char *base = pc.prefix[0] ? pc.prefix : pc.path;
	size_t n = 0, k;
	long v = (long)getpid();

	pid[0] = '.';
	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	for (k = 0; k < n; k++)
		pid[1 + k] = t[n - 1 - k];
	pid[1 + n] = 0;
	k = strlen(base);
	if (k + strlen(pid) < sizeof(pc.path)) {
		memmove(pc.path, base, k);
		strcpy(pc.path + k, pid);
	}
	k = strlen(pc.stacks_path);
	if (k && k + strlen(pid) < sizeof(pc.stacks_path))
		strcpy(pc.stacks_path + k, pid);
}

/*
 * In the child of fork(): the counters are a copy of the parent's, which
 * the parent will write itself, and POSIX timers are not inherited. Drop the
 * copy (MADV_DONTNEED gives zero pages back), take a name of our own and arm
 * the only thread there is.
 */
static void
after_fork_child(void)
{
	if (!pc.running)
		return;
	for (int i = 0; i < pc.ntext; i++)
		madvise(pc.text[i].prof.buf, pc.text[i].map_len, MADV_DONTNEED);
	pc_arcs_clear();
	pc_stacks_clear();
	pc.stacks_walked = pc.frames = pc.arcs_dropped = pc.stacks_dropped = 0;
	pc.signals = pc.samples = pc.outside = pc.foreign = 0;
	pc.threads = pc.timer_failures = 0;
	child_path();
	pc_thread_forget();
	pc_thread_arm();
}

void
pc_lifecycle_init(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}
