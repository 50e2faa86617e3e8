/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The wall sampler's reading of a thread's /proc/self/task/TID files (its
 * schedstat, syscall line, state, name and descriptors' links), kept open
 * where that is cheaper, for wall_acct.c's looks.
 *
 * Runs in the wall sampler's thread only (its own descriptor table).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include "pc.h"
#include "wall.h"

static int task_dir = -1;

void
pc_wall_acct_dir(int dir)
{
	task_dir = dir;
}

/* /proc/self/task/TID/FILE into buf (NUL-terminated); its length, or -1. */
static ssize_t
read_task(uint32_t tid, const char *file, char *buf, size_t size)
{
	char name[48];
	ssize_t n;
	int fd;

	snprintf(name, sizeof(name), "%u/%s", tid, file);
	if ((fd = openat(task_dir, name, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

/*
 * Descriptors kept open on threads' schedstat and syscall files, in this
 * thread's own table: a pread costs 2.6 us a thread here, an open, read
 * and close 8 us (1,000 threads); the syscall file's 2.1 and 6.2 us (a
 * look at each thread that ran since the last). Each costs the kernel a
 * page once read (the file's buffer), so at most KEEP are kept; more
 * threads are opened each look.
 */
#define KEEP 1024
static int kept;

/* How many may be kept: KEEP, and room left under RLIMIT_NOFILE for the
 * files opened each look; a syscall file is kept only in the first half
 * (at 1,000 threads, their schedstat files are). */
static int
keep_max(int syscall_file)
{
	static int room;
	struct rlimit r;

	if (!room)
		room = getrlimit(RLIMIT_NOFILE, &r) || r.rlim_cur > KEEP + 64 ?
			       KEEP :
		       r.rlim_cur > 128 ? (int)r.rlim_cur - 64 :
					  64;
	return syscall_file ? room / 2 : room;
}

static void
forget_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		kept--;
	}
	*fd = -1;
}

void
pc_wall_forget(struct pc_wthread *w)
{
	int s = w->sfd1 - 1;

	forget_fd(&w->fd);
	forget_fd(&s);
	w->sfd1 = 0;
}

void
pc_wall_forget_all(struct pc_wthread *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		t[i].fd = -1, t[i].sfd1 = 0;
	kept = 0;
}

/* Thread w's FILE into buf (NUL-terminated), through *fd kept open; its
 * length, or -1. */
static ssize_t
read_kept(struct pc_wthread *w, int *fd, const char *file, char *buf,
	  size_t size)
{
	char name[48];
	ssize_t n;

	if (*fd >= 0) {
		if ((n = pread(*fd, buf, size - 1, 0)) > 0) {
			buf[n] = 0;
			return n;
		}
		/* ended (another thread may have its id now: opened again) */
		forget_fd(fd);
	}
	if (kept >= keep_max(fd != &w->fd))
		return read_task(w->tid, file, buf, size);
	snprintf(name, sizeof(name), "%u/%s", w->tid, file);
	if ((*fd = openat(task_dir, name, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	kept++;
	if ((n = pread(*fd, buf, size - 1, 0)) <= 0)
		return -1;
	buf[n] = 0;
	return n;
}

int
pc_wall_read_schedstat(struct pc_wthread *w, uint64_t v[3])
{
	char buf[96];

	if (read_kept(w, &w->fd, "schedstat", buf, sizeof(buf)) <= 0)
		return -1;
	return pc_wall_parse_schedstat(buf, v);
}

/* Thread tid's state letter from its stat file (R, S, D, ...), or 0. */
static char
read_state(uint32_t tid)
{
	char buf[256];
	const char *p;

	if (read_task(tid, "stat", buf, sizeof(buf)) <= 0 ||
	    !(p = strrchr(buf, ')')))
		return 0;
	return p[1] == ' ' ? p[2] : 0;
}

/* What thread tid's descriptor fd is, from its link in the thread's own
 * table (this thread's is not the program's). */
unsigned
pc_wall_fd_kind(uint32_t tid, int fd)
{
	char name[48], link[64];
	ssize_t n;

	if (fd < 0)
		return GMON_FD_NONE;
	snprintf(name, sizeof(name), "%u/fd/%d", tid, fd);
	if ((n = readlinkat(task_dir, name, link, sizeof(link) - 1)) <= 0)
		return GMON_FD_NONE;
	link[n] = 0;
	if (!strncmp(link, "pipe:", 5))
		return GMON_FD_PIPE;
	if (!strncmp(link, "socket:", 7))
		return GMON_FD_SOCKET;
	if (!strcmp(link, "anon_inode:[eventfd]"))
		return GMON_FD_EVENTFD;
	if (!strncmp(link, "/dev/pts/", 9) || !strncmp(link, "/dev/tty", 8) ||
	    !strcmp(link, "/dev/console"))
		return GMON_FD_TTY;
	return link[0] == '/' ? GMON_FD_FILE : GMON_FD_OTHER;
}

void
pc_wall_note_name(uint32_t tid)
{
	char buf[GMON_THREAD_NAME_SIZE + 8];
	char name[GMON_THREAD_NAME_SIZE];
	ssize_t n = read_task(tid, "comm", buf, sizeof(buf));

	if (n <= 0)
		return;
	if (buf[n - 1] == '\n')
		buf[--n] = 0;
	memset(name, 0, sizeof(name));
	memcpy(name, buf, (size_t)n < sizeof(name) ? (size_t)n : sizeof(name));
	pc_stacks_note_name(tid, name);
}

/*
 * Where thread tid is blocked: 1, with the call's number (-1: blocked
 * outside any call), its arguments, sp and ip, and the line's hash in
 * *key; 0 when it runs; -1 when it is gone.
 */
int
pc_wall_read_syscall(struct pc_wthread *w, uint64_t *key, long *nr,
		     unsigned long arg[6], unsigned long *sp, unsigned long *ip)
{
	char line[256];
	uint64_t h = 0xcbf29ce484222325ULL;
	int fd = w->sfd1 - 1, k;
	ssize_t n = read_kept(w, &fd, "syscall", line, sizeof(line));

	w->sfd1 = fd + 1;
	if (n <= 0)
		return -1;
	if (!strncmp(line, "running", 7))
		return 0;
	for (const char *p = line; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	*key = h | 1;
	if ((k = pc_wall_parse_syscall(line, nr, arg, sp, ip)) == 9)
		return 1;
	*sp = arg[0], *ip = arg[1];
	memset(arg, 0, 6 * sizeof(*arg));
	/* "-1 0x0 0x0": no user state at all, a thread that has exited (a
	 * main thread that called pthread_exit stays listed): not a wait */
	return k == 3 && *nr == -1 && (*sp || *ip) ? 1 : 0;
}

/*
 * Where a thread that ran since its last look is now (its syscall line
 * into *f): 1 blocked, 0 running, -1 gone. The kernel says "running" for
 * a thread whose state changes while it reads: one inside fsync, woken by
 * each I/O, often does (18 % of looks at sqlite3) while its state says D;
 * read again, up to three times. Taken for the last wait seen instead,
 * the time went to the most frequent (fdatasync), not unlink's.
 */
int
pc_wall_where_now(struct pc_wthread *w, struct pc_wfound *f)
{
	unsigned long sp;
	int r = pc_wall_read_syscall(w, &f->key, &f->nr, f->arg, &sp, &f->ip);
	char st;

	for (int k = 0;
	     k < 3 && r == 0 && ((st = read_state(w->tid)) == 'D' || st == 'S');
	     k++)
		r = pc_wall_read_syscall(w, &f->key, &f->nr, f->arg, &sp,
					 &f->ip);
	return r;
}
