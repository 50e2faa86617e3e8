/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The wall sampler's accounting of one thread (wall.c calls it for every
 * thread, every round): its time since the last look, from the kernel's
 * own counters in /proc/self/task/TID/schedstat, split exactly into time
 * on the CPU (which the CPU timer samples), time waiting for a CPU, and
 * the rest, time off the CPU; and where that went, from the thread's
 * syscall line, and the stack walked from it (wall_unwind.c) when the
 * budget allows. The time is counted at once under the call alone and
 * moved under the walked stack when a walk is made, so that a thread's
 * time is in the stacks table, whole, at every moment.
 *
 * Runs in the wall sampler's thread only (its own descriptor table).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "pc.h"
#include "wall.h"

#define NAME_EVERY	64	/* looks between readings of a thread's name */
/* The look that first reads the name of a thread libpc started, which
 * notes its own at its end (wall_events.c): a short-lived helper costs no
 * read of its comm file, 16 us here, 25 to 40 us with the page of the
 * names' table it writes (tests/progs/wallattr's 16 workers start 80
 * helpers a second). */
#define NAME_TOLD	8

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

/* A new wait of thread tid from its syscall line's fields. */
static void
new_wait(struct pc_wwait *x, uint32_t tid, uint64_t key, long nr,
	 const unsigned long *arg, unsigned long ip)
{
	uint32_t pid = 0;
	unsigned fd = 0;

	memset(x, 0, sizeof(*x));
	x->key = key;
	x->ip = ip;
	if (nr < 0) {
		/* -1: blocked outside a call; -2: no wait seen at all */
		x->word = GMON_WAIT_WORD(nr == -1 ? GMON_WAIT_NOCALL :
						    GMON_WAIT_UNSEEN,
					 0, 0);
		x->io = 1;
		return;
	}
	/* wait4's pid is an int: -1 and 0 (any child, or the group) are
	 * 0xffffffff and 0 here */
	if (nr == SYS_wait4 && (int)arg[0] > 0)
		pid = (uint32_t)arg[0];
	else if (nr == SYS_waitid && arg[0] == P_PID)
		pid = (uint32_t)arg[1];
	if (pc_wall_takes_fd(nr))
		fd = fd_kind(tid, (int)arg[0]);
	x->word = GMON_WAIT_WORD((unsigned)nr & 0xfff, fd, pid);
	x->io = pc_wall_is_io(nr, fd);
}

/* The name of a thread the CPU timer may never see run. */
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

/* Count ns off the CPU for thread tid in wait x: under its walked stack,
 * or under the call alone until a walk moves it; what the table has no
 * room for yet is kept, for pc_wall_place. */
static int unplaced;

/* Brief threads' time the stacks table had no room for yet. */
#define BRIEF_LEFT	16384
static struct brief {
	uint32_t tid;
	uint64_t ns;
} *brief_left;	/* BRIEF_LEFT of them, mapped when first needed */
static size_t nbrief_left;

static void
charge(uint32_t tid, struct pc_wwait *x, uint64_t ns)
{
	struct pc_frame f[1];

	ns += x->unplaced;
	x->unplaced = 0;
	if (!ns)
		return;
	if (!x->key) {
		/* no wait known: a thread not yet seen blocked, or looked
		 * at from its counters alone */
		new_wait(x, tid, 1, -2, NULL, 0);
		x->io = 0;
	}
	if (x->entry) {
		pc_stacks_add_again(x->entry, ns);
		return;
	}
	if (x->alone) {
		pc_stacks_add_again(x->alone, ns);
	} else {
		f[0].site = f[0].entry = (uintptr_t)x->ip;
		x->alone = pc_stacks_add_offcpu(tid, x->word, f, x->ip ? 1 : 0,
						GMON_STACK_CUT, ns);
		if (!x->alone) {
			x->unplaced = ns;
			unplaced = 1;
			return;
		}
	}
	x->pending += ns;
}

/* Count ns thread w waited for a CPU under the stack of entry blocked (or
 * where it was preempted); kept for pc_wall_place when there is no room. */
static void
runqueue(struct pc_wthread *w, const uint64_t *blocked, uint64_t ns)
{
	ns += w->rq_left;
	w->rq_left = 0;
	if (ns && !pc_stacks_add_runqueue(w->tid, blocked, ns)) {
		w->rq_left = ns;
		unplaced = 1;
	}
}

int
pc_wall_unplaced(void)
{
	return unplaced;
}

void
pc_wall_place(struct pc_wthread *t, size_t n)
{
	size_t k = nbrief_left;

	unplaced = 0;
	nbrief_left = 0;
	for (size_t i = 0; i < k; i++)
		pc_wall_brief(brief_left[i].tid, brief_left[i].ns, 0);
	for (size_t i = 0; i < n; i++) {
		charge(t[i].tid, &t[i].cur, 0);
		charge(t[i].tid, &t[i].prev, 0);
		charge(t[i].tid, &t[i].iow, 0);
		runqueue(&t[i], NULL, 0);
	}
}

/*
 * Count drq, the time thread w waited for a CPU since its last look, once,
 * to what it was about to run: the wait it woke from (was_blocked, in the
 * wait keyed key_before), or where it was preempted (its last CPU sample).
 * In a disk wait (fsync) the kernel wakes the thread for each I/O, and it
 * waits for a CPU inside the call: that is the call's time. A thread that
 * waits for a CPU reads "running" whatever call it is in, so after a disk
 * wait, run-queue time waits for the look that finds the thread blocked
 * again: in the same call (the call's) or elsewhere (the run queue's,
 * under the disk wait). r: found blocked
 * (1) or running (0); k: times switched in since the last look; last:
 * nothing is kept for later.
 */
static void
runqueue_time(struct pc_wthread *w, int was_blocked, uint64_t key_before, int r,
	      uint64_t drq, uint64_t k, int last)
{
	struct pc_wwait *from =
		w->cur.key != key_before && w->prev.key == key_before ?
			&w->prev :
			&w->cur;

	if (from->io) {
		if (r == 1 && w->cur.key == key_before) {
			charge(w->tid, &w->cur, drq + w->rq_io_ns);
			w->rq_io_ns = 0;
			return;
		}
		if (r == 0 && !last) {
			w->rq_io_ns += drq;
			return;
		}
	}
	/*
	 * Of k switch-ins since a look that found it blocked, the first
	 * ended the wake from that wait; the others ended a preemption, or
	 * the wake from a wait never seen, in what it ran after: their share
	 * is where it is found running (its last CPU sample). All of it to
	 * the wait, four 0.3 s naps each followed by a 0.6 s loop beside two
	 * CPU hogs on its CPU (looks at 5 Hz) read 3 to 58 ms high, 26 on
	 * average over 6 runs (0 to 25, 9, split). A thread found in the
	 * same wait again woke from it each time (a poll loop): all of it
	 * stays there.
	 */
	if (was_blocked && !from->io && !w->rq_io_ns && k > 1 &&
	    !(r == 1 && w->cur.key == key_before)) {
		runqueue(w, NULL, drq - drq / k);
		drq /= k;
	}
	if (w->rq_io_ns || from->io)
		was_blocked = 1;
	drq += w->rq_io_ns;
	w->rq_io_ns = 0;
	if (drq)
		runqueue(w,
			 !was_blocked ? NULL :
			 from->entry  ? from->entry :
					from->alone,
			 drq);
}

static uint32_t ending_tid;

void
pc_wall_acct_ending(uint32_t tid)
{
	ending_tid = tid;
}

/* Thread w is blocked in the wait its syscall line hashes to key: the
 * same as at its last look, the one before, or a new one. */
static void
now_in(struct pc_wthread *w, uint64_t key, long nr, const unsigned long *arg,
       unsigned long ip)
{
	struct pc_wwait t;

	if (key == w->cur.key)
		return;
	t = w->prev;
	w->prev = w->cur;
	if (key == t.key)
		w->cur = t;
	else if (pc_wall_settle(&t), 1)
		new_wait(&w->cur, w->tid, key, nr, arg, ip);
}

/*
 * Where a thread that ran since its last look is now: 1 blocked (w->cur
 * its wait), 0 running, -1 gone. The kernel says "running" for a thread
 * whose state changes while it reads: one inside fsync, woken by each
 * I/O, often does (18 % of looks at sqlite3) while its state says D; read
 * again, up to three times. Taken for the last wait seen instead, the
 * time went to the most frequent (fdatasync), not unlink's.
 */
static int
where_now(struct pc_wthread *w)
{
	unsigned long arg[6], sp, ip;
	uint64_t key;
	long nr;
	int r = pc_wall_read_syscall(w, &key, &nr, arg, &sp, &ip);
	char st;

	for (int k = 0;
	     k < 3 && r == 0 && ((st = read_state(w->tid)) == 'D' || st == 'S');
	     k++)
		r = pc_wall_read_syscall(w, &key, &nr, arg, &sp, &ip);
	if (r == 1)
		now_in(w, key, nr, arg, ip);
	return r;
}

static int
timed_call(const struct pc_wwait *x)
{
	return pc_wall_timed_call(GMON_WAIT_CALL(x->word));
}

/* Where thread w's time not placed yet goes: its last wait not timed. */
static struct pc_wwait *
untimed(struct pc_wthread *w)
{
	if (!timed_call(&w->cur))
		return &w->cur;
	if (w->prev.key && !timed_call(&w->prev))
		return &w->prev;
	pc_wall_settle(&w->iow);
	memset(&w->iow, 0, sizeof(w->iow));
	return &w->iow;
}

/* Thread w's run-queue and off-CPU time since its last look (from its
 * CPU clock alone where clock is set); -1: gone. */
static int
deltas(struct pc_wthread *w, uint64_t ss[3], uint64_t *dcpu_out, uint64_t *drq,
       uint64_t *off, int clock)
{
	uint64_t now, dcpu;
	int64_t rest;

	if (clock ? pc_wall_read_cpuclock(w, ss) :
		    pc_wall_read_schedstat(w, ss)) {
		/* gone since its exit hook: its end as the hook told it */
		if (w->exit_ns)
			pc_wall_ended(w, w->exit_ns, w->exit_cpu);
		return -1;	/* gone: wall.c counts its end */
	}
	/* now, at the counters: a round that is preempted (a busy machine)
	 * must not count a thread's time to the round's start */
	now = pc_clock_ns(CLOCK_MONOTONIC);
	dcpu = ss[0] - w->run_ns;
	*drq = ss[1] - w->rq_ns;
	/* run_delay grows when a thread that waited for a CPU gets one:
	 * time counted off the CPU at the last look may turn out to have
	 * been the run queue's; it is taken from what follows */
	rest = (int64_t)(now - w->seen_ns) - (int64_t)(dcpu + *drq) +
	       w->carry_ns;
	/* first from the time a look that found it running kept for later
	 * (unknown_ns): that time was the run queue's. Taken from the waits
	 * that follow alone, a thread that waited long for a CPU after every
	 * nap (load 12 on 2 CPUs) ended with up to 83 ms counted twice */
	if (rest < 0 && w->unknown_ns) {
		uint64_t take = (uint64_t)-rest < w->unknown_ns ?
					(uint64_t)-rest :
					w->unknown_ns;

		w->unknown_ns -= take;
		rest += (int64_t)take;
	}
	/* at a first look nothing was counted ahead: where its start was
	 * guessed, more is time before seen_ns (a thread older than libpc),
	 * not the waits that follow */
	w->carry_ns = rest < 0 && (w->rounds || !w->guessed) ? rest : 0;
	*off = rest > 0 ? (uint64_t)rest : 0;
	*dcpu_out = dcpu;
	w->seen_ns = now;
	w->run_ns = ss[0];
	w->rq_ns = ss[1];
	pc_wall_io_time(w, now, off, drq, 0, charge);
	return 0;
}

static uint64_t moved;	/* looks that found a thread switched in since */

uint64_t
pc_wall_moved(void)
{
	return moved;
}

/* A thread in the wait keyed key_before at its last look (blocked, or
 * running since) and found in a call it times itself (fsync): that wait
 * ended before the call, whose own time is taken out exactly
 * (wall_iotime.c); the rest off the CPU since is that wait's tail, all
 * of it. Kept for the next wait found, it went to the wait after the
 * call: a condition variable's before an fsync loop read 0.7 to 2.6
 * points low, an accept after it high, at 16 threads (waits of 0.4 s, 10
 * looks a second). A thread found running keeps its time for the next
 * wait found (given half, a frame-pointer build's sparse looks put a
 * whole phase under the wait before). */
static uint64_t
tail(struct pc_wthread *w, uint64_t key_before, int r, uint64_t off)
{
	struct pc_wwait *x = w->prev.key == key_before ? &w->prev : NULL;

	if (r != 1 || !x || !key_before || w->cur.key == key_before ||
	    timed_call(x))
		return off;
	charge(w->tid, x, off + w->unknown_ns);
	w->unknown_ns = 0;
	return 0;
}

void
pc_wall_look(struct pc_wthread *w, int how)
{
	int cheap = how & PC_LOOK_CHEAP;
	uint64_t ss[3], dcpu, drq, off, k;
	uint64_t key_before = w->cur.key;
	int was_blocked = w->state == PC_W_BLOCKED, r;

	if (deltas(w, ss, &dcpu, &drq, &off, cheap && !w->rounds))
		return;
	/* at its second look (NAME_TOLD-th), every NAME_EVERY after, at the
	 * last if never */
	if (!cheap && (w->rounds % NAME_EVERY == (w->told ? NAME_TOLD : 1) ||
		       (!w->rounds && how & PC_LOOK_LAST)))
		note_name(w->tid);
	w->rounds++;
	/* not switched in since: where it was */
	if (was_blocked && ss[2] == w->switches && !dcpu) {
		if (timed_call(&w->cur))
			w->unknown_ns += off + drq;
		else
			charge(w->tid, &w->cur, off + drq);
		return;
	}
	moved++, k = ss[2] - w->switches, w->switches = ss[2];
	/* the thread that ends the process waits for this round: running */
	r = cheap || w->tid == ending_tid ?
		    (was_blocked && w->tid != ending_tid) :
		    where_now(w);
	if (r < 0)
		r = 0;
	w->state = r == 1 ? PC_W_BLOCKED : PC_W_RUNNING;
	runqueue_time(w, was_blocked, key_before, r, drq, k,
		      how & PC_LOOK_LAST);
	/*
	 * Off the CPU: the wait it is found in. A thread found running has
	 * no wait to show: its time waits for the next look that finds it
	 * blocked (an unbiased sample of where it waits). Given to its last
	 * wait instead, it went to the wait it spends most time in, on the
	 * CPU too: sqlite3's fdatasync (58 % on the CPU, in the kernel) got
	 * 0.37 s where perf saw 0.23 s off the CPU in it.
	 */
	if ((r != 1 || timed_call(&w->cur)) && !(how & PC_LOOK_LAST)) {
		off = tail(w, key_before, r, off);
		w->unknown_ns += off;
		return;
	}
	off += w->unknown_ns;
	w->unknown_ns = 0;
	/* found in another wait than at the last look: it left that one at
	 * some time between, on average halfway (charged whole to the new
	 * one, a 0.3 s phase read 0 when rounds were far apart); a thread
	 * never seen blocked before had no wait to leave (its empty one took
	 * half as "[off-cpu: unknown]": a late first look lost it) */
	if (r == 1 && key_before && w->cur.key != key_before &&
	    w->prev.key == key_before && !timed_call(&w->prev)) {
		charge(w->tid, &w->prev, off / 2);
		off -= off / 2;
	}
	charge(w->tid, untimed(w), off);
}

void
pc_wall_ended(struct pc_wthread *w, uint64_t end_ns, uint64_t cpu_ns)
{
	uint64_t elapsed = end_ns > w->seen_ns ? end_ns - w->seen_ns : 0, off,
		 none = 0;
	int64_t rest;

	if (w->state == PC_W_ENDED)
		return;
	if (cpu_ns == ~0ULL) {
		/* its end not known: on average halfway */
		elapsed /= 2;
		cpu_ns = w->run_ns;
	}
	cpu_ns = cpu_ns > w->run_ns ? cpu_ns - w->run_ns : 0;
	/* its last wait, the one it ran from to its end (a run queue's
	 * wait on waking from it is in it: schedstat is not readable at the
	 * end) */
	/* less what earlier looks counted ahead of run_delay (deltas) */
	rest = (int64_t)elapsed - (int64_t)cpu_ns + w->carry_ns +
	       (int64_t)w->unknown_ns;
	off = rest > 0 ? (uint64_t)rest : 0;
	pc_wall_io_time(w, end_ns, &off, &none, 1, charge);
	charge(w->tid, untimed(w), off);
	w->unknown_ns = 0;
	w->carry_ns = 0;
	if (w->rq_io_ns)
		runqueue(w, w->cur.entry ? w->cur.entry : w->cur.alone,
			 w->rq_io_ns);
	w->rq_io_ns = 0;
	w->seen_ns = end_ns;
	w->state = PC_W_ENDED;
	pc_wall_settle(&w->cur), pc_wall_settle(&w->prev),
		pc_wall_settle(&w->iow);
}

void
pc_wall_brief(uint32_t tid, uint64_t life_ns, uint64_t cpu_ns)
{
	struct pc_wwait x;

	memset(&x, 0, sizeof(x));
	charge(tid, &x, life_ns > cpu_ns ? life_ns - cpu_ns : 0);
	if (x.unplaced && !brief_left &&
	    (brief_left = mmap(NULL, BRIEF_LEFT * sizeof(*brief_left),
			       PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) ==
		    MAP_FAILED)
		brief_left = NULL;
	if (x.unplaced && brief_left && nbrief_left < BRIEF_LEFT) {
		brief_left[nbrief_left].tid = tid;
		brief_left[nbrief_left++].ns = x.unplaced;
	}
}
