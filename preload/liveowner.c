/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Whether a live file's process still runs (liveowner.h), from kill(2)
 * and /proc: the check before a live file is finished, one function for
 * pc_recover and pcprof alike.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/sysmacros.h>

#include "liveowner.h"

/* "/proc/PID/what" into buf (64 bytes). */
static void
proc_path(char *buf, pid_t pid, const char *what)
{
	char num[24];
	int n = 0;
	unsigned long v = (unsigned long)pid;

	do
		num[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < 23);
	strcpy(buf, "/proc/");
	for (size_t k = strlen(buf); n; )
		buf[k++] = num[--n], buf[k] = 0;
	strcat(buf, "/");
	strcat(buf, what);
}

/* The process's start, in CLOCK_REALTIME nanoseconds; 0 where unknown. */
static uint64_t
started_ns(pid_t pid)
{
	char path[64], buf[1024];
	const char *p;
	struct timespec rt, boot;
	unsigned long long ticks;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd, field;

	proc_path(path, pid, "stat");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || hz <= 0)
		return 0;
	buf[n] = 0;
	/* after the name in parentheses, which may hold anything: field 3
	 * on; the start is field 22 */
	if (!(p = strrchr(buf, ')')))
		return 0;
	for (field = 2; *p && field < 21; p++)
		if (*p == ' ')
			field++;
	if (field != 21)
		return 0;
	ticks = strtoull(p, NULL, 10);
	/* ticks since boot, boot as CLOCK_BOOTTIME counts it */
	if (clock_gettime(CLOCK_REALTIME, &rt) || clock_gettime(CLOCK_BOOTTIME, &boot))
		return 0;
	return (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec -
	       ((uint64_t)boot.tv_sec * 1000000000u + (uint64_t)boot.tv_nsec) +
	       ticks * (1000000000u / (uint64_t)hz);
}

/* Whether a line of /proc/PID/maps maps the file st describes: its
 * device and inode, whatever name the line shows. */
static int
maps_line(const char *line, size_t len, const struct stat *st)
{
	const char *p = line, *end = line + len;
	unsigned long maj, mnt;
	char *q;

	/* address perms offset dev inode path */
	for (int f = 0; f < 3; f++) {
		while (p < end && *p != ' ')
			p++;
		while (p < end && *p == ' ')
			p++;
	}
	if (end - p < 8)
		return 0;
	maj = strtoul(p, &q, 16);
	if (*q != ':')
		return 0;
	mnt = strtoul(q + 1, &q, 16);
	if (*q != ' ' || maj != major(st->st_dev) || mnt != minor(st->st_dev))
		return 0;
	return strtoull(q, NULL, 10) == (unsigned long long)st->st_ino;
}

/* 1 maps it, 0 does not, -1 cannot be read. */
static int
maps_file(pid_t pid, const struct stat *st)
{
	char path[64], buf[8192 + 1];
	size_t have = 0;
	int fd, found = 0;

	proc_path(path, pid, "maps");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		size_t start = 0;

		if (n < 0) {
			found = -1;
			break;
		}
		have += (size_t)n;
		buf[have] = 0;
		for (size_t i = 0; i < have && !found; i++)
			if (buf[i] == '\n') {
				found = maps_line(buf + start, i - start, st);
				start = i + 1;
			}
		if (found)
			break;
		/* a line longer than the buffer (a long path) is cut: its
		 * start holds the device and the inode; the rest is skipped
		 * as a line of its own */
		if (start == 0 && have == sizeof(buf) - 1) {
			found = maps_line(buf, have, st);
			have = 0;
			continue;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		if (n == 0)
			break;
	}
	if (found == 0 && have)
		found = maps_line(buf, have, st);
	close(fd);
	return found;
}

int
pc_live_owner_runs(pid_t pid, const struct stat *st)
{
	int saved = errno, runs = 0, m;
	uint64_t start, changed;

	if (pid <= 0)
		goto out;
	if (kill(pid, 0) && errno != EPERM)
		goto out;
	runs = 1;
	start = started_ns(pid);
	changed = (uint64_t)st->st_ctim.tv_sec * 1000000000u + (uint64_t)st->st_ctim.tv_nsec;
	if (start && start > changed + 1000000000u) {
		runs = 0;	/* the pid is another process's now */
		goto out;
	}
	m = maps_file(pid, st);
	if (m == 0)
		runs = 0;
out:
	errno = saved;
	return runs;
}
