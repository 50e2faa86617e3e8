/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The wall-clock sampler (PC_CLOCK=wall): where every thread's time goes
 * while it is off the CPU. A thread that runs is sampled by its CPU-time
 * timer as always; a thread that waits is never signalled, because a
 * handler that runs in a thread blocked in nanosleep, poll, select or
 * epoll_wait makes the call fail with EINTR whatever SA_RESTART says.
 * Instead a thread of libpc's looks at every thread from the outside, a
 * round at a time, PC_WALL_HZ rounds a second (100 by default), at
 * jittered intervals so that no round keeps step with a program's own
 * period:
 *  - /proc/self/task/TID/schedstat gives the thread's time on the CPU,
 *    its time waiting on a run queue, and how often it was switched in.
 *    The growth of the run-queue time since the last round is counted as
 *    the wait [off-cpu: runqueue].
 *  - A thread that was not switched in since the last round is where it
 *    was: a blocked one gets this round's time added to the stack it was
 *    blocked at, with no more reading.
 *  - Otherwise /proc/self/task/TID/syscall says whether the thread runs
 *    ("running": its CPU timer samples it) or is blocked, in which call,
 *    with which arguments, at which sp and pc. A blocked thread's stack is
 *    walked from those (wall_unwind.c), and schedstat read again: if the
 *    thread was switched in meanwhile the walk may have read a stack that
 *    changed under it, and the sample is dropped (counted).
 * Each off-CPU sample weighs the time since the thread was last looked at,
 * so that a thread's CPU time, its waits and its run-queue time add up to
 * its life whatever the rounds' jitter or delays.
 *
 * The sampler measures its own CPU time and keeps it under 1 % of one
 * CPU (PC_WALL_BUDGET): a round looks at as many threads as its share of
 * the budget allows, from where the last one stopped, so that with many
 * threads each is looked at less often; listing them all, which a round
 * cannot cut short, spaces the rounds out at thousands of threads. The
 * summary and the stacks file say the rate at which a thread was looked
 * at, on average over the run. Why 100 rounds a second: at 10 ms a sleep or a lock wait of
 * a few tens of milliseconds is seen, and a look costs 2 to 6 us a thread
 * (small /proc reads), so some 20 threads are looked at every round within
 * 1 % of a CPU (docs/benchmarks.md).
 *
 * This thread is not the handler's: it reads files and may allocate. It
 * is started with every signal blocked and no CPU timer, so it appears
 * neither in the program's signals nor in the profile.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "pc.h"
#include "wall.h"

#define MAX_THREADS	32768	/* threads followed; more are counted, not sampled */
#define WALK_MAX	128	/* frames walked of a blocked thread */
#define NAME_EVERY	64	/* rounds between readings of a thread's name */

enum { SEEN_NEW, SEEN_RUNNING, SEEN_BLOCKED };

struct wthread {
	uint32_t tid;
	uint32_t state;		/* SEEN_* */
	uint64_t run_ns, wait_ns, switches;	/* schedstat at the last look */
	uint64_t seen_ns;	/* when it was last looked at */
	uint64_t *entry;	/* the stack it is blocked at, or NULL */
	uint32_t rounds;
};

static struct wthread *cur, *nxt;	/* sorted by tid */
static size_t ncur;
static int task_dir = -1;	/* /proc/self/task, open during a round only */
static int started;
static pthread_t thread;
static uint32_t my_tid;

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

static int
read_schedstat(uint32_t tid, uint64_t v[3])
{
	char buf[96];

	if (read_task(tid, "schedstat", buf, sizeof(buf)) <= 0)
		return -1;
	return sscanf(buf, "%lu %lu %lu", &v[0], &v[1], &v[2]) == 3 ? 0 : -1;
}

/* What thread tid's descriptor fd is, from its link in the thread's own
 * table (this thread's is not the program's). */
static unsigned
fd_kind(uint32_t tid, int fd)
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

/* The calls whose first argument is the descriptor they wait on. */
static int
takes_fd(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_write: case SYS_pread64: case SYS_pwrite64:
	case SYS_readv: case SYS_writev: case SYS_preadv: case SYS_pwritev:
	case SYS_preadv2: case SYS_pwritev2: case SYS_sendto: case SYS_recvfrom:
	case SYS_sendmsg: case SYS_recvmsg: case SYS_sendmmsg: case SYS_recvmmsg:
	case SYS_accept: case SYS_accept4: case SYS_connect: case SYS_fsync:
	case SYS_fdatasync: case SYS_flock: case SYS_ioctl: case SYS_splice:
	case SYS_sync_file_range: case SYS_fallocate: case SYS_ftruncate:
		return 1;
	default:
		return 0;
	}
}

/* The wait a blocked thread's syscall line describes. */
static uint64_t
wait_word(uint32_t tid, long nr, const unsigned long *arg)
{
	uint32_t pid = 0;

	if (nr < 0)
		return GMON_WAIT_WORD(GMON_WAIT_NOCALL, 0, 0);
	/* wait4's pid is an int: -1 and 0 (any child, or the group) are
	 * 0xffffffff and 0 here */
	if (nr == SYS_wait4 && (int)arg[0] > 0)
		pid = (uint32_t)arg[0];
	else if (nr == SYS_waitid && arg[0] == P_PID)
		pid = (uint32_t)arg[1];
	return GMON_WAIT_WORD((unsigned)nr & 0xfff,
			      takes_fd(nr) ? fd_kind(tid, (int)arg[0]) : 0, pid);
}

/* Note the name of a thread the CPU timer may never see run. */
static void
note_name(uint32_t tid)
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

/* Where thread tid is blocked: 0, with the call's number (-1: blocked
 * outside any call), its arguments, sp and ip; -1 when it runs or is gone. */
static int
read_syscall(uint32_t tid, long *nr, unsigned long arg[6], unsigned long *sp,
	     unsigned long *ip)
{
	char line[256];

	if (read_task(tid, "syscall", line, sizeof(line)) <= 0 || !strncmp(line, "running", 7))
		return -1;
	if (sscanf(line, "%ld %lx %lx %lx %lx %lx %lx %lx %lx", nr, &arg[0], &arg[1],
		   &arg[2], &arg[3], &arg[4], &arg[5], sp, ip) == 9)
		return 0;
	memset(arg, 0, 6 * sizeof(*arg));
	/* "-1 0x0 0x0": no user state at all, a thread that has exited (a
	 * main thread that called pthread_exit stays listed): not a wait */
	return sscanf(line, "%ld %lx %lx", nr, sp, ip) == 3 && *nr == -1 && (*sp || *ip) ?
		0 : -1;
}

/* Thread w, seen to have run since its last look (schedstat ss), as it
 * is now: blocked (its wait and stack counted, weight ns) or running. */
static void
look_blocked(struct wthread *w, const uint64_t ss[3], uint64_t weight)
{
	static struct pc_frame f[WALK_MAX];
	uint64_t again[3], word;
	long nr;
	unsigned long arg[6], sp, ip;
	int n, how;

	w->run_ns = ss[0];
	w->switches = ss[2];
	w->entry = NULL;
	w->state = SEEN_RUNNING;
	if (read_syscall(w->tid, &nr, arg, &sp, &ip))
		return;
	n = pc_wall_unwind(ip, sp, f, WALK_MAX, &how);
	word = wait_word(w->tid, nr, arg);
	/* switched in during the walk: its stack may have changed under it,
	 * unless the walk holds (wall_unwind.c) */
	if (read_schedstat(w->tid, again) || ((again[2] != ss[2] || again[0] != ss[0]) &&
					      !pc_wall_walk_holds(w->tid, nr, arg, sp, ip))) {
		/* it was blocked when its syscall line was read, so the time
		 * counts, with the wait and the pc that line gave; the frames
		 * are dropped (dropping the time too would undercount the
		 * threads that wait often and briefly, as their waits end
		 * during walks: sqlite3's fdatasyncs by a fifth): the wait alone */
		pc_wall_count(GMON_WALL_NONE, 1);
		pc_stacks_add_offcpu(w->tid, word, f, 1, GMON_STACK_CUT, weight);
		w->state = SEEN_NEW;
		return;
	}
	w->state = SEEN_BLOCKED;
	pc_wall_count(how == PC_WALL_FULL ? GMON_WALL_FULL : n > 1 ? GMON_WALL_CUT : GMON_WALL_NONE, 1);
	w->entry = pc_stacks_add_offcpu(w->tid, word, f, n,
					how == PC_WALL_CUT ? GMON_STACK_CUT :
					how == PC_WALL_TRUNCATED ? GMON_STACK_TRUNCATED : 0,
					weight);
	/* the table is full: this time is lost, and said to be */
	if (!w->entry)
		pc_wall_count(GMON_WALL_DROPPED, 1);
}

/* Look at thread w (old: what the last look saw of it, or NULL); a
 * thread seen for the first time is given age ns of life so far. */
static void
look(struct wthread *w, const struct wthread *old, uint64_t now, uint64_t age)
{
	uint64_t ss[3], weight;

	if (read_schedstat(w->tid, ss)) {
		/* gone, or going: as the last look left it */
		if (old)
			*w = *old;
		else
			w->seen_ns = now;
		return;
	}
	weight = old && old->seen_ns ? now - old->seen_ns : age;
	if (!old || old->rounds % NAME_EVERY == 0)
		note_name(w->tid);
	if (old)
		*w = *old;
	w->seen_ns = now;
	w->rounds++;
	/* time waiting for a CPU: a thread last seen blocked waited on
	 * waking from that wait, and it is counted there; one last seen
	 * running was preempted somewhere the sampler did not see */
	if (old && ss[1] > w->wait_ns)
		pc_stacks_add_runqueue(w->tid, w->state == SEEN_BLOCKED ? w->entry : NULL,
				       ss[1] - w->wait_ns);
	w->wait_ns = ss[1];
	/* not switched in since: where it was */
	if (w->state != SEEN_NEW && ss[2] == w->switches && ss[0] == w->run_ns) {
		if (w->state == SEEN_BLOCKED && w->entry)
			pc_stacks_add_again(w->entry, weight);
		return;
	}
	look_blocked(w, ss, weight);
}

static int
by_tid(const void *a, const void *b)
{
	uint32_t x = ((const struct wthread *)a)->tid, y = ((const struct wthread *)b)->tid;

	return x < y ? -1 : x > y;
}

/* The threads of the process now, into nxt; their number. */
static size_t
list_threads(void)
{
	static char buf[32768];
	size_t n = 0;
	long got;

	while ((got = syscall(SYS_getdents64, task_dir, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < got;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			unsigned long tid = strtoul(d->d_name, NULL, 10);

			off += d->d_reclen;
			if (!tid || tid == my_tid || tid == pc_snapshot_tid() ||
			    pc_own_is((uint32_t)tid))
				continue;
			if (n == MAX_THREADS)
				goto sort;
			memset(&nxt[n], 0, sizeof(nxt[n]));
			nxt[n++].tid = (uint32_t)tid;
		}
	}
sort:
	/* sorted: the next round finds each thread's last look by bsearch */
	qsort(nxt, n, sizeof(*nxt), by_tid);
	return n;
}

static uint64_t last_round;	/* when the last round began (or libpc did) */
static int first_round = 1;
static pthread_mutex_t round_lock = PTHREAD_MUTEX_INITIALIZER;	/* held for a round */
static uint32_t stop_word;	/* 1: the thread is to end (pc_wall_pause) */
static uint64_t cpu_before;	/* CPU of the sampler's earlier threads */

static size_t cursor;		/* where the next round's looks begin */

/*
 * Every thread of the program has ended but a main thread that called
 * pthread_exit, which stays listed as a zombie: glibc's last thread calls
 * exit(0) when it ends, but libpc's threads count as threads and keep the
 * process alive with no thread of the program's. n threads were listed.
 */
static int
program_ended(size_t n)
{
	char buf[256];
	const char *state;

	if (n != 1 || nxt[0].tid != (uint32_t)getpid() ||
	    read_task(nxt[0].tid, "stat", buf, sizeof(buf)) <= 0 ||
	    !(state = strrchr(buf, ')')))
		return 0;
	return state[1] == ' ' && (state[2] == 'Z' || state[2] == 'X');
}

static int
cmp_tid(const void *key, const void *e)
{
	uint32_t x = *(const uint32_t *)key, y = ((const struct wthread *)e)->tid;

	return x < y ? -1 : x > y;
}

/*
 * One round: the threads listed, and as many looked at as slice_ns of this
 * thread's CPU allows, from where the last round stopped, so that no round
 * costs more than its share of the budget however many threads there are
 * (10,000 new threads walked at once took 0.4 s). A thread not looked at
 * keeps what the last look saw, and its time since: the next look weighs
 * it all. Returns the threads looked at; *listed, those listed.
 */
static size_t
round_all(uint64_t slice_ns, size_t *listed)
{
	uint64_t now = pc_clock_ns(CLOCK_MONOTONIC), age, c0 = pc_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	size_t n, looked = 0, start;
	int over = 0;
	struct wthread *t;

	/* in this thread's own table (wall_thread) */
	*listed = 0;
	if ((task_dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return 0;
	n = *listed = list_threads();
	if (program_ended(n)) {
		/* what glibc's last thread does, which this one kept it from */
		close(task_dir);
		pc_own_end_process();
	}
	/* a thread not there at the last round began, on average, halfway
	 * since; at the first, the threads are as old as libpc */
	age = first_round ? now - last_round : (now - last_round) / 2;
	first_round = 0;
	last_round = now;
	start = n ? cursor % n : 0;
	for (size_t k = 0; k < n; k++) {
		size_t i = (start + k) % n;
		const struct wthread *old = bsearch(&nxt[i].tid, cur, ncur, sizeof(*cur), cmp_tid);

		/* sampling stopped (an exec under way, which may fail and go
		 * on): every thread keeps its last look, none is left empty */
		if (!pc_on())
			over = 1;
		if (over) {
			/* not this round: as the last look left it, or, new,
			 * born about age ago */
			if (old) {
				nxt[i] = *old;
			} else {
				nxt[i].state = SEEN_NEW;
				nxt[i].seen_ns = now - age;
			}
			continue;
		}
		look(&nxt[i], old, now, age);
		if (++looked % 4 == 0 && pc_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0 > slice_ns)
			over = 1;
	}
	cursor = start + looked;
	pc_wall_most(GMON_WALL_THREADS, n);
	close(task_dir);
	task_dir = -1;
	t = cur;
	cur = nxt;
	nxt = t;
	ncur = n;
	pc_wall_count(GMON_WALL_TICKS, 1);
	return looked;
}

/*
 * Descriptors of its own: the files this thread opens must never take a
 * number the program is about to get (a daemon that closes 0, 1 and 2 and
 * opens /dev/null expects 0), nor be closed or replaced by the program's
 * close or dup2. The copy of the program's table unshare makes is closed
 * at once, so that no file of the program's is held open here (a pipe's
 * write end would keep its reader from seeing the end). 0 or -1.
 */
static int
own_descriptors(void)
{
	return syscall(SYS_unshare, CLONE_FILES) || syscall(SYS_close_range, 0U, ~0U, 0U) ? -1 : 0;
}

/* Sleep until the next round: *next moved on by interval, jittered
 * uniformly within [interval/2, 3*interval/2), so the mean stays. */
static void
sleep_round(uint64_t *next, uint64_t interval, uint64_t *seed)
{
	struct timespec at;

	*seed ^= *seed << 13;
	*seed ^= *seed >> 7;
	*seed ^= *seed << 17;
	*next += interval / 2 + *seed % interval;
	at.tv_sec = (time_t)(*next / 1000000000u);
	at.tv_nsec = (long)(*next % 1000000000u);
	/* a futex on the stop word, so that pc_wall_pause wakes it at once;
	 * FUTEX_WAIT_BITSET's timeout is absolute, on CLOCK_MONOTONIC */
	while (!__atomic_load_n(&stop_word, __ATOMIC_ACQUIRE) &&
	       !(syscall(SYS_futex, &stop_word, FUTEX_WAIT_BITSET_PRIVATE, 0, &at, NULL,
			 FUTEX_BITSET_MATCH_ANY) == -1 && errno == ETIMEDOUT))
		;
}

/*
 * In the sampler's thread, in its own table, not in the constructor:
 * loading libunwind opens its file, and its first use opens a pipe it
 * keeps (its check of local memory, which remote walks never use), which
 * would be two descriptors of the program's for good. Under the round's
 * lock: a fork waits for the loader to be done.
 */
static void
load_unwinder(void)
{
	pthread_mutex_lock(&round_lock);
	if (pc_wall_unwind_init())
		pc_say("cannot load libunwind's remote unwinder (libunwind-x86_64.so.8); "
		       "off-CPU samples without their stacks", "", "");
	pthread_mutex_unlock(&round_lock);
}

static void *
wall_thread(void *arg)
{
	const uint64_t base = 1000000000u / (uint64_t)pc_cfg->wall_hz;
	const double budget = pc_cfg->wall_budget / 100.0;	/* of one CPU */
	uint64_t interval = base, next = pc_clock_ns(CLOCK_MONOTONIC), seed, prev = next;
	double listing = 0, looks = 0, thread_ns = 0;

	(void)arg;
	/* first: pc_wall_pause reads it once it has joined the thread */
	__atomic_store_n(&my_tid, (uint32_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	prctl(PR_SET_NAME, "pc-wall", 0, 0, 0);
	if (own_descriptors()) {
		pc_say("cannot give the wall sampler descriptors of its own; CPU time only",
		       "", "");
		return NULL;
	}
	load_unwinder();
	pc_own_enter();
	seed = next ^ (uint64_t)getpid() << 32;
	for (;;) {
		uint64_t c0, c1, slice, t;
		size_t looked, listed;

		sleep_round(&next, interval, &seed);
		if (__atomic_load_n(&stop_word, __ATOMIC_ACQUIRE)) {
			pc_own_leave();
			return NULL;
		}
		if (!pc_on())
			continue;
		/* the budget's share of this round, less what listing the
		 * threads costs, for the looks (at least a few) */
		slice = (uint64_t)(budget * (double)interval);
		slice = slice > (uint64_t)listing * 2 ? slice - (uint64_t)listing : slice / 2;
		c0 = pc_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		pthread_mutex_lock(&round_lock);
		looked = round_all(slice, &listed);
		pthread_mutex_unlock(&round_lock);
		c1 = pc_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		__atomic_store_n(&pc_stats->wall_cpu_ns, cpu_before + c1, __ATOMIC_RELAXED);
		/* listing every thread is the part a round cannot cut short:
		 * with very many threads, rounds are spaced so that it takes
		 * half the budget at most */
		listing = listing * 0.9 + (double)(c1 - c0 > slice ? c1 - c0 - slice : 0) * 0.1;
		interval = listing / (budget / 2) > (double)base ?
			(uint64_t)(listing / (budget / 2)) : base;
		/* the rate at which a thread is looked at, on average over
		 * the run: looks over threads' seconds */
		t = pc_clock_ns(CLOCK_MONOTONIC);
		looks += (double)looked;
		thread_ns += (double)listed * (double)(t - prev);
		prev = t;
		if (thread_ns > 0)
			pc_wall_set(GMON_WALL_HZ_LOW, (uint64_t)(looks / thread_ns * 1e9 + 0.5));
		/* behind (a busy machine): start again from now */
		if (pc_clock_ns(CLOCK_MONOTONIC) > next + interval)
			next = pc_clock_ns(CLOCK_MONOTONIC);
	}
	return NULL;
}

static void
start_thread(void)
{
	/* joinable: pc_wall_pause joins it */
	if (pc_own_thread(&thread, 1, wall_thread))
		pc_say("cannot start the wall-clock sampler's thread; CPU time only", "", "");
	else
		started = 1;
}

/* A fork waits for a round under way to end: the child gets a copy of
 * memory in which this thread holds no lock (libunwind's caches, malloc's). */
static void
before_fork(void)
{
	if (started)
		pthread_mutex_lock(&round_lock);
}

static void
after_fork_parent(void)
{
	if (started)
		pthread_mutex_unlock(&round_lock);
}

/* A fork child has one thread, and none of libpc's: start again. */
static void
forked(void)
{
	if (!started)
		return;
	pthread_mutex_unlock(&round_lock);
	if (!pc_on())
		return;
	ncur = 0;
	my_tid = 0;
	first_round = 1;
	last_round = pc_clock_ns(CLOCK_MONOTONIC);
	pc_wall_reset((uint64_t)pc_cfg->wall_hz);
	start_thread();
}

void
pc_wall_start(void)
{
	size_t len = 2 * MAX_THREADS * sizeof(struct wthread);
	void *m;

	if (!pc_cfg->clock_wall || !pc_cfg->stacks)
		return;
	pc_wall_reset((uint64_t)pc_cfg->wall_hz);
	last_round = pc_clock_ns(CLOCK_MONOTONIC);
	if (access("/proc/self/task", R_OK)) {
		pc_say("cannot read /proc/self/task; CPU time only", "", "");
		return;
	}
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		pc_say("cannot map memory for the wall sampler; CPU time only", "", "");
		return;
	}
	cur = m;
	nxt = cur + MAX_THREADS;
	start_thread();
	pthread_atfork(before_fork, after_fork_parent, forked);
}

int
pc_wall_pause(void)
{
	char name[48];
	uint32_t tid;

	/* a vfork child shares this memory but not the thread: leave it */
	if (!started || getpid() != pc->pid)
		return 0;
	__atomic_store_n(&stop_word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &stop_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	pthread_join(thread, NULL);
	/* read after the join, which the thread's first store precedes: read
	 * before it, a pause at the top of main found no id yet, waited for
	 * nothing, and unshare(CLONE_NEWUSER) saw two threads (EINVAL, once
	 * in make check under load) */
	tid = __atomic_load_n(&my_tid, __ATOMIC_SEQ_CST);
	started = 0;
	cpu_before = __atomic_load_n(&pc_stats->wall_cpu_ns, __ATOMIC_RELAXED);
	/* the kernel takes an ended thread out of its group a moment after
	 * pthread_join returns: wait for that, 100 ms at most */
	snprintf(name, sizeof(name), "/proc/self/task/%u", tid);
	for (int i = 0; tid && i < 1000 && access(name, F_OK) == 0; i++) {
		struct timespec t = { 0, 100000 };

		nanosleep(&t, NULL);
	}
	return 1;
}

void
pc_wall_resume(void)
{
	__atomic_store_n(&stop_word, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&my_tid, 0, __ATOMIC_RELAXED);
	start_thread();
}
