/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a task-clock sample costs on this machine, measured at start-up for
 * PC_TIMER=auto: the same fixed work is timed with no event, then with a
 * task-clock event that overflows every PROBE_PERIOD_NS of the thread's
 * CPU time, three times each, alternately; the cheapest of each is kept,
 * and the difference over the overflows is one sample's cost: in a
 * virtual machine, where every timer interrupt exits to the hypervisor,
 * 13 to 21 us on the one the benchmarks ran on (bare metal, said to cost
 * a few, was not at hand). About 4 ms in all. The event sends no signal
 * (the overflow's interrupt is what costs; a signal's delivery, the same
 * for either timer, is not counted), so the probe touches nothing of the
 * program's. Runs in the constructor only.
 *
 * The cost is kept for the rest of the boot in /dev/shm/pcprof-timer-cost.UID
 * ("BOOT-ID NS"), so that the processes of a build or a script pay the 4 ms
 * once: read only when it is a regular file of this user that no one else
 * may write, never through a symlink, and replaced atomically; kept only
 * when every round agreed (a round preempted by another task would not).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>		/* rename */
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pc.h"
#include "procread.h"
#include "taskclock.h"

#define PROBE_PERIOD_NS	50000	/* 20 kHz: the overflows outnumber the noise */
#define PROBE_WORK_NS	400000	/* each timing's work, about */
#define PROBE_ROUNDS	3

/* where the work's result goes, so that it is done */
static volatile uint64_t probe_sink;

/* A fixed amount of work the compiler cannot drop. */
static uint64_t
work(long n, uint64_t x)
{
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

#define CACHE_DIR	"/dev/shm"

/* This boot's id (36 characters) into id[37]; 0, or -1. */
static int
boot_id(char id[37])
{
	/* 36 characters and a newline, the newline left unread */
	ssize_t n = pc_read_small("/proc/sys/kernel/random/boot_id", 0, id, 37,
				  NULL);

	id[n == 36 ? 36 : 0] = 0;
	return n == 36 ? 0 : -1;
}

static void
cache_path(char *path, size_t size, const char *suffix)
{
	struct pc_line l = { path, size, 0 };

	pc_line_str(&l, CACHE_DIR "/pcprof-timer-cost.");
	pc_line_u64(&l, (uint64_t)geteuid());
	pc_line_str(&l, suffix);
	path[l.len < size ? l.len : size - 1] = 0;
}

/* The cost measured earlier in this boot, or -1. */
static long
cache_read(const char *id)
{
	char path[128], buf[64];
	const char *p = buf + 37;
	struct stat sb;
	ssize_t n;
	uint64_t v;

	cache_path(path, sizeof(path), "");
	/* a regular file of this user's that no one else may write */
	n = pc_read_small(path, O_NOFOLLOW | O_NONBLOCK, buf, sizeof(buf), &sb);
	if (n < 39 || sb.st_uid != geteuid() || (sb.st_mode & 022) ||
	    memcmp(buf, id, 36) || buf[36] != ' ')
		return -1;
	if (pc_parse_u64(&p, 1000000000, &v) || (*p && *p != '\n'))
		return -1;
	return (long)v;
}

static void
cache_write(const char *id, long cost)
{
	char path[128], tmp[160], buf[64];
	struct pc_line l = { buf, sizeof(buf), 0 };
	int fd, ok;

	cache_path(path, sizeof(path), "");
	cache_path(tmp, sizeof(tmp), ".");
	{
		struct pc_line t = { tmp, sizeof(tmp), strlen(tmp) };

		pc_line_u64(&t, (uint64_t)getpid());
		tmp[t.len < sizeof(tmp) ? t.len : sizeof(tmp) - 1] = 0;
	}
	pc_line_str(&l, id);
	pc_line_str(&l, " ");
	pc_line_u64(&l, (uint64_t)cost);
	pc_line_str(&l, "\n");
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return;
	ok = write(fd, buf, l.len) == (ssize_t)l.len;
	if (close(fd) || !ok || rename(tmp, path))
		unlink(tmp);
}

/* The time of n steps of work, with the event counting into *count if
 * fd >= 0; 0 if an ioctl fails. */
static uint64_t
timed(int fd, long n, uint64_t *x, uint64_t *count)
{
	uint64_t t;

	if (fd >= 0 && (ioctl(fd, PERF_EVENT_IOC_RESET, 0) ||
			ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)))
		return 0;
	t = pc_clock_ns(CLOCK_MONOTONIC);
	*x = work(n, *x);
	t = pc_clock_ns(CLOCK_MONOTONIC) - t;
	if (fd >= 0 && (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) ||
			read(fd, count, sizeof(*count)) != sizeof(*count)))
		return 0;
	return t ? t : 1;
}

/*
 * The measurement itself: the cost in ns, or -errno. *sure is set when
 * every round had overflows enough and came to the same side of the
 * threshold: only such a cost is kept for the boot.
 */
static long
measure(int fd, int *sure)
{
	uint64_t bare = UINT64_MAX, with[PROBE_ROUNDS], fires[PROBE_ROUNDS],
		 cal = UINT64_MAX;
	uint64_t x = 1, count = 0;
	long n, cost = 0;
	int best = 0, cheap = 0;

	/* how much work PROBE_WORK_NS is, from the quickest of three timings */
	for (int r = 0; r < 3; r++) {
		uint64_t t = timed(-1, 20000, &x, &count);

		cal = t < cal ? t : cal;
	}
	n = (long)(20000.0 * PROBE_WORK_NS / (double)cal);
	for (int r = 0; r < PROBE_ROUNDS; r++) {
		uint64_t t = timed(-1, n, &x, &count);

		bare = t < bare ? t : bare;
		errno = 0;
		if (!(with[r] = timed(fd, n, &x, &count)))
			return errno ? -errno : -EIO;	/* a short read: EIO */
		fires[r] = count / PROBE_PERIOD_NS;
		if (with[r] < with[best])
			best = r;
	}
	probe_sink = x;
	*sure = 1;
	for (int r = 0; r < PROBE_ROUNDS; r++) {
		long c = with[r] > bare && fires[r] ?
				 (long)((with[r] - bare) / fires[r]) :
				 0;

		if (r == best)
			cost = c;
		if (fires[r] < 4 || (r && (c < PC_TASKCLOCK_CHEAP_NS) != cheap))
			*sure = 0;
		cheap = c < PC_TASKCLOCK_CHEAP_NS;
	}
	return cost;
}

long
pc_taskclock_cost_ns(int *earlier, const char *fake)
{
	char id[37];
	long cost;
	int fd, saved = errno, have_id;

	*earlier = 0;
	if ((fd = pc_taskclock_open(PROBE_PERIOD_NS)) < 0)
		return fd;
	if (fake && *fake) {
		/* the test suite's stand-in for a machine's cost, in ns */
		close(fd);
		cost = strtol(fake, NULL, 10);
		errno = saved;
		return cost < 0 ? 0 : cost;
	}
	have_id = boot_id(id) == 0;
	if (have_id && (cost = cache_read(id)) >= 0) {
		*earlier = 1;
	} else {
		int sure = 0;

		cost = measure(fd, &sure);
		if (have_id && sure && cost >= 0)
			cache_write(id, cost);
	}
	close(fd);
	errno = saved;
	return cost;
}
