/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpc's live file (live.h): its name and head, built and read here only,
 * and whether the process that made one still runs, from kill(pid, 0),
 * /proc/PID/stat and /proc/PID/maps, read with plain system calls: libpc
 * uses no stdio, and pcprof links this file too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "live.h"

#define NS		1000000000ull
#define START_SLACK	NS	/* clock ticks, and a clock set since */

/* "/proc/PID/" + leaf into buf. */
static void
proc_path(char *buf, size_t size, pid_t pid, const char *leaf)
{
	char digits[16];
	size_t n = 0, k = 0;
	unsigned v = (unsigned)pid;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < sizeof(digits));
	memcpy(buf, "/proc/", 6);
	k = 6;
	while (n && k < size - 1)
		buf[k++] = digits[--n];
	if (k < size - 1)
		buf[k++] = '/';
	for (; *leaf && k < size - 1; leaf++)
		buf[k++] = *leaf;
	buf[k] = 0;
}

static uint64_t
clock_ns(clockid_t c)
{
	struct timespec ts;

	if (clock_gettime(c, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* The decimal number at p, past it into *end. */
static uint64_t
number(const char *p, const char **end)
{
	uint64_t v = 0;

	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	*end = p;
	return v;
}

/*
 * What /proc/PID/stat says of pid: -1 ended (a zombie), 0 cannot tell,
 * 1 it started at *start (CLOCK_REALTIME ns), 2 the same, but its main
 * thread has ended (pthread_exit) while others run: a zombie leader, whose
 * maps are empty. The start time is in clock ticks since boot
 * (CLOCK_BOOTTIME), field 22, and the threads field 20, after the
 * command's name in parentheses, which may hold anything but ends at the
 * last ')'.
 */
char *
gmon_proc_stat_fields(const char *path, char *buf, size_t size)
{
	char *p;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || size < 2)
		return NULL;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = 0;
	if (!(p = strrchr(buf, ')')) || p[1] != ' ')
		return NULL;
	return p + 2;
}

static int
stat_of(pid_t pid, uint64_t *start)
{
	char path[32], buf[1024], *p, state;
	const char *q;
	uint64_t ticks = 0, threads = 0, boot, real;
	long hz = sysconf(_SC_CLK_TCK);
	int field;

	/* no /proc/PID where kill found the pid: a /proc mounted with
	 * hidepid, which hides another user's processes (cannot tell) */
	proc_path(path, sizeof(path), pid, "stat");
	if (!(p = gmon_proc_stat_fields(path, buf, sizeof(buf))))
		return 0;
	state = *p;
	/* field 3 is the state, 20 the threads, 22 the start */
	for (field = 3; *p && field < 22; p++)
		if (*p == ' ' && ++field == 20)
			threads = number(p + 1, &q);
	if (state == 'Z' || state == 'X' || state == 'x') {
		if (threads <= 1)
			return -1;
		state = 'L';
	}
	if (field != 22 || *p < '0' || *p > '9' || hz <= 0)
		return state == 'L' ? 2 : 0;
	ticks = number(p, &q) * (NS / (uint64_t)hz);
	boot = clock_ns(CLOCK_BOOTTIME);
	real = clock_ns(CLOCK_REALTIME);
	if (!boot || !real || ticks > boot || boot - ticks > real)
		return state == 'L' ? 2 : 0;
	*start = real - (boot - ticks);
	return state == 'L' ? 2 : 1;
}

/* Whether the /proc/PID/maps line [s, e) maps inode ino of a live file. */
static int
maps_line_is(const char *s, const char *e, ino_t ino)
{
	unsigned long long v = 0;
	int digits = 0;

	/* start-end perms offset dev inode path: past four fields */
	for (int f = 0; f < 4; f++) {
		while (s < e && *s != ' ')
			s++;
		while (s < e && *s == ' ')
			s++;
	}
	for (; s < e && *s >= '0' && *s <= '9'; s++, digits++)
		v = v * 10 + (unsigned long long)(*s - '0');
	if (!digits || v != (unsigned long long)ino)
		return 0;
	return memmem(s, (size_t)(e - s), GMON_LIVE_SUFFIX,
		      strlen(GMON_LIVE_SUFFIX)) != NULL;
}

/* What /proc/PID/maps says: 1 it maps the live file ino, 0 it does not,
 * -1 it cannot be read. */
static int
maps_has(pid_t pid, ino_t ino)
{
	char path[32], buf[PATH_MAX + 512];
	size_t len = 0;
	int fd, found = 0, skip = 0;

	proc_path(path, sizeof(path), pid, "maps");
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	while (!found) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - len);
		char *s = buf, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			return -1; /* a non-dumpable process's, to another user */
		}
		if (n == 0)
			break;
		len += (size_t)n;
		for (;
		     !found && (nl = memchr(s, '\n', len - (size_t)(s - buf)));
		     s = nl + 1) {
			if (!skip)
				found = maps_line_is(s, nl, ino);
			skip = 0;
		}
		len -= (size_t)(s - buf);
		memmove(buf, s, len);
		if (len == sizeof(buf)) { /* a line longer than any path */
			found = !skip && maps_line_is(buf, buf + len, ino);
			len = 0;
			skip = 1;
		}
	}
	close(fd);
	return found;
}

int
gmon_live_owner_runs(pid_t pid, ino_t ino, uint64_t start_ns)
{
	int saved = errno, r = 0, st, m;
	uint64_t began = 0;

	/* by the system call: libpc's kill (sigcalls.c) is the program's */
	if (pid <= 0 || (syscall(SYS_kill, pid, 0) && errno != EPERM))
		goto out;
	if ((st = stat_of(pid, &began)) < 0)
		goto out;
	/* a process that began after this one started is a later one */
	if (st > 0 && began && start_ns && began > start_ns + START_SLACK)
		goto out;
	if (st == 2) {		/* its leader's maps are empty */
		r = 1;
		goto out;
	}
	m = maps_has(pid, ino);
	r = m != 0;
out:
	errno = saved;
	return r;
}

int
gmon_live_runs(const struct gmon_live_head *h, ino_t ino)
{
	/* the start's second: the check's second of slack covers the rest */
	return gmon_live_owner_runs((pid_t)h->pid, ino,
				    (uint64_t)h->start_s * NS);
}

/* s into buf at *k, if it fits with a NUL after it: 0, or -1. */
static int
put(char *buf, size_t size, size_t *k, const char *s, size_t n)
{
	if (n >= size - *k)
		return -1;
	memcpy(buf + *k, s, n);
	*k += n;
	buf[*k] = 0;
	return 0;
}

static int
put_str(char *buf, size_t size, size_t *k, const char *s)
{
	return put(buf, size, k, s, strlen(s));
}

static int
put_decimal(char *buf, size_t size, size_t *k, unsigned long v)
{
	char digits[24];
	size_t n = sizeof(digits);

	do
		digits[--n] = (char)('0' + v % 10);
	while ((v /= 10) && n);
	return put(buf, size, k, digits + n, sizeof(digits) - n);
}

/* What the put calls made of buf: 0, or -ENAMETOOLONG with buf "". */
static int
name_done(char *buf, size_t size, int failed)
{
	if (!failed)
		return 0;
	if (size)
		buf[0] = 0;
	return -ENAMETOOLONG;
}

int
gmon_live_name(char *buf, size_t size, const char *profile, long pid)
{
	const char *slash = strrchr(profile, '/');
	size_t k = 0, dir = slash ? (size_t)(slash - profile) + 1 : 0;

	return name_done(buf, size, !size ||
			 put(buf, size, &k, profile, dir) ||
			 put_str(buf, size, &k, GMON_LIVE_PREFIX) ||
			 put_decimal(buf, size, &k, (unsigned long)pid) ||
			 put_str(buf, size, &k, GMON_LIVE_SUFFIX));
}

int
gmon_live_aside_name(char *buf, size_t size, const char *live, unsigned long n)
{
	size_t k = 0;

	return name_done(buf, size, !size || put_str(buf, size, &k, live) ||
			 put_str(buf, size, &k, ".") ||
			 put_decimal(buf, size, &k, n) ||
			 put_str(buf, size, &k, GMON_LIVE_SUFFIX));
}

long
gmon_live_name_pid(const char *path)
{
	const char *s = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = strlen(s), p = strlen(GMON_LIVE_PREFIX);
	size_t e = strlen(GMON_LIVE_SUFFIX);
	const char *end;
	uint64_t pid;

	if (n <= p + e || strncmp(s, GMON_LIVE_PREFIX, p) ||
	    strcmp(s + n - e, GMON_LIVE_SUFFIX))
		return 0;
	pid = number(s + p, &end);
	/* the pid's digits, then .live or an aside name's .N.live */
	if (end == s + p || end - s > 10 + (long)p || *end != '.' ||
	    pid > INT32_MAX)
		return 0;
	return (long)pid;
}

void
gmon_live_head_init(struct gmon_live_head *h, uint32_t hdr_size, int32_t pid,
		    uint64_t start_ns)
{
	size_t k = 0;

	memset(h, 0, sizeof(*h));
	put_str(h->magic, sizeof(h->magic), &k, GMON_LIVE_MAGIC);
	put_decimal(h->magic, sizeof(h->magic), &k, GMON_LIVE_VERSION);
	put_str(h->magic, sizeof(h->magic), &k, "\n");
	h->hdr_size = hdr_size;
	h->pid = pid;
	h->start_s = (uint32_t)(start_ns / NS);
	h->gen = 0;
}

int
gmon_live_head_read(const void *buf, size_t n, struct gmon_live_head *h,
		    uint32_t *version)
{
	size_t m = strlen(GMON_LIVE_MAGIC);
	char magic[GMON_LIVE_MAGIC_SIZE + 1];
	const char *end;
	uint64_t v;

	*version = 0;
	if (n < sizeof(*h) || memcmp(buf, GMON_LIVE_MAGIC, m))
		return -EINVAL;
	memcpy(h, buf, sizeof(*h));
	/* a string of its own: the number stops at the magic's end */
	memcpy(magic, h->magic, GMON_LIVE_MAGIC_SIZE);
	magic[GMON_LIVE_MAGIC_SIZE] = 0;
	v = number(magic + m, &end);
	if (end == magic + m || end - magic > 12 + 9 || *end != '\n')
		return -EPROTO;
	*version = v > UINT32_MAX ? 0 : (uint32_t)v;
	return v == GMON_LIVE_VERSION ? 0 : -EPROTO;
}

void
gmon_live_head_write(struct gmon_live_head *h, uint32_t state, int32_t pid,
		     uint64_t start_ns)
{
	uint32_t g = __atomic_load_n(&h->gen, __ATOMIC_RELAXED);

	/* odd first: the fence keeps the stores below after it */
	__atomic_store_n(&h->gen, g | 1u, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (pid) {
		__atomic_store_n(&h->pid, pid, __ATOMIC_RELAXED);
		__atomic_store_n(&h->start_s, (uint32_t)(start_ns / NS),
				 __ATOMIC_RELAXED);
	}
	__atomic_store_n(&h->state, state, __ATOMIC_RELAXED);
	/* even after: the release keeps the stores above before it */
	__atomic_store_n(&h->gen, (g | 1u) + 1u, __ATOMIC_RELEASE);
}

int
gmon_live_head_load(long (*rd)(void *ctx, void *buf, size_t n), void *ctx,
		    struct gmon_live_head *h, uint32_t *version)
{
	struct gmon_live_head first, again;
	long n;
	int r = -EAGAIN;

	for (int i = 0; i < GMON_LIVE_TRIES; i++) {
		n = rd(ctx, &first, sizeof(first));
		if ((r = gmon_live_head_read(&first, n > 0 ? (size_t)n : 0, h,
					     version)))
			return r;
		/* a generation that moved (or is odd) is a write under the read
		 */
		r = -EAGAIN;
		if (!(h->gen & 1u) && rd(ctx, &again, sizeof(again)) == n &&
		    !memcmp(&first, &again, sizeof(first)))
			return 0;
	}
	return r;
}

long
gmon_live_pread(void *ctx, void *buf, size_t n)
{
	return (long)pread(*(const int *)ctx, buf, n, 0);
}
