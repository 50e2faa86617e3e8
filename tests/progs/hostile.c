/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A hostile host for libpc.so: each case does one thing a program may do
 * with its signals, stacks, descriptors, limits, exec or exit that a
 * profiler must not disturb. It prints what it saw, in lines that are the
 * same on every run of the unprofiled program (a count that a profiler may
 * lower is on a line of its own, named below), and exits 0 when it saw what
 * an unprofiled run sees, 1 when it did not. tests/e2e/test_host.py runs
 * every case plain and under libpc.so and compares the two.
 *
 * Every case burns CPU in hostile_burn() (work varied as truth.h varies it,
 * so that nothing runs with a period that could stay in phase with the
 * kernel's tick), so that a profile of it holds samples. A wait that the
 * unprofiled program leaves at once is bounded by a watchdog (SIGALRM,
 * without SA_RESTART) that cuts it short after 5 s and says so.
 *
 * Usage: hostile CASE [ARGS]; hostile with no arguments lists the cases.
 * HOSTILE_SCALE: a factor on every CPU burn (1): a run whose profile is
 * not read, or that only needs some samples, burns less.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <malloc.h>
#include <poll.h>
#include <setjmp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "truth.h"

static volatile uint64_t sink;

/* ------------------------------------------------------------ helpers */

static void
say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static const char *
yes(int b)
{
	return b ? "yes" : "no";
}

static const char *
errname(int e)
{
	const char *s = e ? strerrorname_np(e) : "0";

	return s ? s : "unknown errno";
}

static double
wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* A unit of the program's CPU work, about 60 us, varied. AS-safe. */
static __attribute__((noinline)) uint64_t
burn_unit(uint64_t x)
{
	return spin(x, SPIN_UNIT / 4);
}

static double burn_scale = 1.0;	/* HOSTILE_SCALE, set before any burn */

/* About `seconds` (times HOSTILE_SCALE) of this thread's CPU time, in a
 * call chain of two. AS-safe: the signal handlers of the stack cases burn
 * too. */
static __attribute__((noinline)) void
hostile_burn(double seconds)
{
	double t0 = thread_cpu();
	uint64_t x = sink;

	seconds *= burn_scale;
	while (thread_cpu() - t0 < seconds)
		for (int i = 0; i < 4; i++)
			x = burn_unit(x);
	sink = x;
}

static volatile sig_atomic_t watchdog_fired;

static void
on_alarm(int sig)
{
	(void)sig;
	watchdog_fired = 1;
}

/* SIGALRM after `seconds`: no SA_RESTART, so that it cuts a wait short
 * where the unprofiled program would not have waited at all. */
static void
watchdog(unsigned seconds)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	watchdog_fired = 0;
	alarm(seconds);
}

/* The signals 1..64 in set, as numbers, or "none". */
static const char *
sigset_list(const sigset_t *set, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int sig = 1; sig <= 64 && n + 4 < size; sig++)
		if (sigismember(set, sig) == 1)
			n += (size_t)snprintf(buf + n, size - n, "%s%d", n ? " " : "", sig);
	return n ? buf : "none";
}

/* The state letter of thread tid of process pid (its stat's third
 * field), or 0 when it cannot be read. */
static char
task_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Whether thread tid of process pid sleeps (state S in its stat). */
static int
task_sleeping(pid_t pid, pid_t tid)
{
	return task_state(pid, tid) == 'S';
}

/* Waits (up to 5 s) until the thread sleeps, then 20 ms more, so that it
 * is inside the blocking call it was about to make. */
static void
wait_until_sleeping(pid_t pid, pid_t tid)
{
	for (int i = 0; i < 5000 && !task_sleeping(pid, tid); i++)
		sleep_ms(1);
	sleep_ms(20);
}

/* ------------------------------------------------------------ SIGPROF */

static volatile sig_atomic_t prof_ran, prof_code, prof_from_self;

static void
on_prof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	prof_ran++;
	prof_code = si->si_code;
	prof_from_self = si->si_pid == getpid();
}

/* Installs the program's own SIGPROF handler, with flags besides
 * SA_SIGINFO (no SA_RESTART unless asked). */
static void
own_prof(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | flags;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
}

static const char *
code_name(int code)
{
	switch (code) {
	case SI_USER: return "SI_USER";
	case SI_TKILL: return "SI_TKILL";
	case SI_QUEUE: return "SI_QUEUE";
	case SI_TIMER: return "SI_TIMER";
	}
	return "another code";
}

/* ------------------------------------------------------------ case 1 */

/*
 * The program blocks SIGPROF, sends itself one, and waits for it in one of
 * the calls that install a mask of their own or take a blocked signal:
 * unprofiled, each returns at once.
 */
static int got_signo, got_code, got_self;

static int
wait_sigsuspend(const sigset_t *old, const sigset_t *prof)
{
	(void)prof;
	return sigsuspend(old);
}

static int
wait_ppoll(const sigset_t *old, const sigset_t *prof)
{
	(void)prof;
	return ppoll(NULL, 0, NULL, old);
}

static int
wait_pselect(const sigset_t *old, const sigset_t *prof)
{
	(void)prof;
	return pselect(0, NULL, NULL, NULL, NULL, old);
}

static int
wait_epoll_pwait(const sigset_t *old, const sigset_t *prof)
{
	struct epoll_event ev;
	int ep = epoll_create1(EPOLL_CLOEXEC), r, e;

	(void)prof;
	r = epoll_pwait(ep, &ev, 1, -1, old);
	e = errno;
	close(ep);
	errno = e;
	return r;
}

static int
wait_sigwaitinfo(const sigset_t *old, const sigset_t *prof)
{
	siginfo_t si;
	int r;

	(void)old;
	r = sigwaitinfo(prof, &si);
	if (r > 0) {
		got_signo = si.si_signo;
		got_code = si.si_code;
		got_self = si.si_pid == getpid();
	}
	return r;
}

static int
wait_signalfd(const sigset_t *old, const sigset_t *prof)
{
	struct signalfd_siginfo ssi;
	int fd = signalfd(-1, prof, SFD_CLOEXEC), e;
	ssize_t n;

	(void)old;
	if (fd < 0)
		return -1;
	n = read(fd, &ssi, sizeof(ssi));
	e = errno;
	close(fd);
	errno = e;
	if (n != (ssize_t)sizeof(ssi))
		return -1;
	got_signo = (int)ssi.ssi_signo;
	got_code = ssi.ssi_code;
	got_self = (pid_t)ssi.ssi_pid == getpid();
	return got_signo;
}

static const struct {
	const char *name;
	int (*wait)(const sigset_t *old, const sigset_t *prof);
	int takes;	/* returns the signal rather than running the handler */
} waits[] = {
	{ "sigsuspend", wait_sigsuspend, 0 },
	{ "ppoll", wait_ppoll, 0 },
	{ "pselect", wait_pselect, 0 },
	{ "epoll_pwait", wait_epoll_pwait, 0 },
	{ "sigwaitinfo", wait_sigwaitinfo, 1 },
	{ "signalfd", wait_signalfd, 1 },
};

static int
report_wait(const char *name, int takes, int r, int e, double waited)
{
	int ran = prof_ran, ok;

	if (takes)
		say("%s: returned %s, %s, from this process: %s", name,
		    r == SIGPROF ? "SIGPROF" : r < 0 ? errname(e) : "another signal",
		    r > 0 ? code_name(got_code) : "-", yes(r > 0 && got_self));
	else
		say("%s: returned %d %s", name, r, errname(r < 0 ? e : 0));
	say("handler ran during the wait: %d (%s, from this process: %s)", ran,
	    ran ? code_name(prof_code) : "-", yes(ran && prof_from_self));
	say("watchdog fired: %s", yes(watchdog_fired));
	say("returned within 2 s: %s", yes(waited < 2.0));
	if (takes)
		ok = r == SIGPROF && got_code == SI_USER && got_self && !ran;
	else
		ok = r == -1 && e == EINTR && ran == 1 && prof_code == SI_USER;
	return ok && !watchdog_fired;
}

static int
case_wait(int argc, char **argv)
{
	sigset_t prof, old, pend;
	size_t i;
	double t0;
	int r, e, ok;

	for (i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
		if (!strcmp(argv[1], waits[i].name))
			break;
	if (i == sizeof(waits) / sizeof(waits[0]))
		return 2;
	hostile_burn(0.3);
	own_prof(0);
	sigemptyset(&prof);
	sigaddset(&prof, SIGPROF);
	sigprocmask(SIG_BLOCK, &prof, &old);
	kill(getpid(), SIGPROF);
	sigpending(&pend);
	say("handler ran before the wait: %d", prof_ran);
	say("SIGPROF pending before the wait: %s", yes(sigismember(&pend, SIGPROF)));
	watchdog(5);
	t0 = wall();
	r = waits[i].wait(&old, &prof);
	e = errno;
	alarm(0);
	ok = report_wait(waits[i].name, waits[i].takes, r, e, wall() - t0);
	prof_ran = 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	say("handler ran after unblocking: %d", prof_ran);
	hostile_burn(0.2);
	(void)argc;
	return ok && !prof_ran ? 0 : 1;
}

/* ------------------------------------------------------------ case 2 */

/* About 1 KiB of this thread's stack a call, depth calls deep, then the
 * CPU work at the bottom: about 4 KiB of the stack in use under it. */
static __attribute__((noinline)) int
stack_chain(int depth, double seconds)
{
	volatile char frame[1000];
	int r = 0;

	for (size_t i = 0; i < sizeof(frame); i++)
		frame[i] = (char)(depth + i);
	if (depth > 1)
		r = stack_chain(depth - 1, seconds);
	else
		hostile_burn(seconds);
	return r + frame[0] + frame[sizeof(frame) - 1];
}

static void *
small_thread(void *arg)
{
	stack_chain(4, 0.5);
	return arg;
}

static int
case_smallstack(int argc, char **argv)
{
	pthread_attr_t attr;
	pthread_t t;
	int r_size, r_create, r_join = -1;

	(void)argc;
	(void)argv;
	fprintf(stderr, "hostile: PTHREAD_STACK_MIN is %ld\n", (long)PTHREAD_STACK_MIN);
	pthread_attr_init(&attr);
	r_size = pthread_attr_setstacksize(&attr, 16384);
	r_create = pthread_create(&t, &attr, small_thread, NULL);
	if (!r_create)
		r_join = pthread_join(t, NULL);
	pthread_attr_destroy(&attr);
	say("16 KiB stack size set: %s", errname(r_size));
	say("thread created: %s", errname(r_create));
	say("thread joined: %s", errname(r_join));
	return r_size || r_create || r_join;
}

static volatile sig_atomic_t alt_on, alt_done;

static void
on_usr1_burn(int sig)
{
	stack_t cur;

	(void)sig;
	if (sigaltstack(NULL, &cur) == 0)
		alt_on = (cur.ss_flags & SS_ONSTACK) != 0;
	hostile_burn(0.5);
	alt_done = 1;
}

static int
case_altstack(int argc, char **argv)
{
	struct sigaction sa;
	stack_t ss, after;
	char *base;

	(void)argc;
	(void)argv;
	/* 8 KiB with a page of nothing below it: running off the end is a
	 * SIGSEGV, never a write into something else */
	base = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED || mprotect(base, 4096, PROT_NONE))
		return 2;
	ss.ss_sp = base + 4096;
	ss.ss_size = 8192;
	ss.ss_flags = 0;
	say("8 KiB sigaltstack set: %s", errname(sigaltstack(&ss, NULL) ? errno : 0));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1_burn;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	hostile_burn(0.1);
	raise(SIGUSR1);
	sigaltstack(NULL, &after);
	say("handler ran on the alternate stack: %s", yes(alt_on));
	say("handler finished: %s", yes(alt_done));
	say("alternate stack after: %zu bytes, in use: %s", after.ss_size,
	    yes(after.ss_flags & SS_ONSTACK));
	return !(alt_on && alt_done);
}

/* ------------------------------------------------------------ case 3 */

static pthread_t main_thread;
static pid_t main_tid;

static void *
eintr_sender(void *arg)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGALRM);		/* the watchdog is for the reader */
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	hostile_burn(0.2);
	wait_until_sleeping(getpid(), main_tid);
	pthread_kill(main_thread, SIGPROF);
	return arg;
}

/* Starts what sends SIGPROF once the main thread blocks in read(): a
 * thread (pthread_kill) or a child process (kill of the whole process). */
static pid_t
start_sender(int child, pthread_t *t)
{
	pid_t parent = getpid(), pid;

	main_thread = pthread_self();
	main_tid = (pid_t)syscall(SYS_gettid);
	if (!child)
		return pthread_create(t, NULL, eintr_sender, NULL) ? -1 : 0;
	pid = fork();
	if (pid == 0) {
		wait_until_sleeping(parent, parent);
		kill(parent, SIGPROF);
		_exit(0);
	}
	return pid;
}

static int
case_eintr(int argc, char **argv)
{
	int child = !strcmp(argv[1], "eintr-child"), p[2], r, e, st = 0;
	pthread_t t;
	pid_t pid;
	char c;

	(void)argc;
	hostile_burn(0.3);
	own_prof(0);	/* no SA_RESTART: read() must fail with EINTR */
	if (pipe(p))
		return 2;
	pid = start_sender(child, &t);
	if (pid < 0)
		return 2;
	watchdog(5);
	r = (int)read(p[0], &c, 1);
	e = errno;
	alarm(0);
	if (child)
		waitpid(pid, &st, 0);
	else
		pthread_join(t, NULL);
	say("read from an empty pipe: %d %s", r, errname(r < 0 ? e : 0));
	say("SIGPROF handler ran: %d (%s)", prof_ran, prof_ran ? code_name(prof_code) : "-");
	say("watchdog fired: %s", yes(watchdog_fired));
	hostile_burn(0.2);
	return !(r == -1 && e == EINTR && prof_ran == 1 && !watchdog_fired);
}

/* Many times over: a slice of CPU (5 to 15 ms, varied), then a child
 * sends SIGPROF once the process sleeps in read(). With libpc's timer
 * running, a sample sometimes comes out of the kernel with the signal
 * (the timer expired on a tick that found the thread in the kernel); its
 * SA_RESTART must not restart the read past the program's handler. */
static int
case_eintr_many(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 200, cut = 0, late = 0;
	pid_t parent = getpid();
	uint64_t x = 88172645463325252ull;

	own_prof(0);
	for (int i = 0; i < n; i++) {
		int p[2], r, e;
		pid_t pid;
		char c;

		if (pipe(p))
			return 2;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		hostile_burn(0.005 + (double)(x % 1000) / 1e5);
		pid = fork();
		if (pid == 0) {
			for (int k = 0; k < 5000 && !task_sleeping(parent, parent); k++)
				sleep_ms(1);
			sleep_ms(2 + (long)(x % 5));
			kill(parent, SIGPROF);
			_exit(0);
		}
		if (pid < 0)
			return 2;
		watchdog(2);
		r = (int)read(p[0], &c, 1);
		e = errno;
		alarm(0);
		waitpid(pid, NULL, 0);
		cut += r == -1 && e == EINTR && !watchdog_fired;
		late += watchdog_fired;
		close(p[0]);
		close(p[1]);
	}
	say("reads cut short by SIGPROF: %d of %d", cut, n);
	say("reads that waited for the watchdog instead: %d", late);
	say("SIGPROF handler ran: %d", (int)prof_ran);
	return cut != n || prof_ran != n;
}

static const char *
disposition(int sig, char *buf, size_t size)
{
	struct sigaction sa;

	if (sigaction(sig, NULL, &sa))
		return errname(errno);
	/* sa_handler and sa_sigaction share their storage, and the kernel
	 * leaves SA_SIGINFO set when SA_RESETHAND puts SIG_DFL back */
	if (sa.sa_handler == SIG_DFL)
		return "default";
	if (sa.sa_handler == SIG_IGN)
		return "ignored";
	snprintf(buf, size, "handled, flags%s%s%s%s",
		 sa.sa_flags & SA_RESTART ? " SA_RESTART" : "",
		 sa.sa_flags & SA_RESETHAND ? " SA_RESETHAND" : "",
		 sa.sa_flags & SA_NODEFER ? " SA_NODEFER" : "",
		 sa.sa_flags & SA_ONSTACK ? " SA_ONSTACK" : "");
	return buf;
}

static int
case_resethand(int argc, char **argv)
{
	char buf[128];

	(void)argc;
	(void)argv;
	own_prof(SA_RESETHAND);
	say("SIGPROF: %s", disposition(SIGPROF, buf, sizeof(buf)));
	hostile_burn(0.3);
	raise(SIGPROF);
	say("first SIGPROF: handler ran %d", prof_ran);
	say("SIGPROF after it: %s", disposition(SIGPROF, buf, sizeof(buf)));
	hostile_burn(0.2);
	say("raising the second");
	raise(SIGPROF);
	say("survived the second SIGPROF: handler ran %d", prof_ran);
	return 1;
}

static sigset_t mask_seen;
static volatile sig_atomic_t depth, nested, usr1_ran, usr1_at_once, nested_at_once;
static volatile sig_atomic_t mask_runs;
static int nodefer;

static void
on_usr1_count(int sig)
{
	(void)sig;
	usr1_ran++;
}

/* The program's handler looks at its own mask, and tries a signal outside
 * it (SIGUSR1, which must run at once, nested) and, with SA_NODEFER,
 * SIGPROF itself (which must too). */
static void
on_prof_mask(int sig, siginfo_t *si, void *uc)
{
	int before;

	(void)si;
	(void)uc;
	mask_runs++;
	if (++depth > 1) {
		nested++;
		depth--;
		return;
	}
	sigprocmask(SIG_BLOCK, NULL, &mask_seen);
	before = usr1_ran;
	raise(SIGUSR1);
	usr1_at_once = usr1_ran > before;
	if (nodefer) {
		before = nested;
		raise(sig);
		nested_at_once = nested > before;
	}
	depth--;
}

static int
mask_round(int flags, const char *what)
{
	struct sigaction sa;
	char buf[256];
	int want_prof = !(flags & SA_NODEFER), ok;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_prof_mask;
	sa.sa_flags = SA_SIGINFO | flags;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	sigaction(SIGPROF, &sa, NULL);
	nodefer = (flags & SA_NODEFER) != 0;
	usr1_at_once = nested_at_once = mask_runs = 0;
	raise(SIGPROF);
	say("handler (sa_mask SIGUSR2%s): blocked %s", what,
	    sigset_list(&mask_seen, buf, sizeof(buf)));
	say("  SIGUSR1 raised inside ran at once: %s", yes(usr1_at_once));
	if (nodefer)
		say("  SIGPROF raised inside ran at once: %s", yes(nested_at_once));
	say("  handler ran %d times", (int)mask_runs);
	ok = mask_runs == 1 + nodefer && sigismember(&mask_seen, SIGUSR2) == 1 &&
	     sigismember(&mask_seen, SIGPROF) == want_prof && usr1_at_once &&
	     (!nodefer || nested_at_once);
	for (int s = 1; s <= 64; s++)
		if (s != SIGUSR2 && s != SIGPROF && sigismember(&mask_seen, s) == 1)
			ok = 0;
	return ok;
}

static int
case_handler_mask(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t now;
	char buf[256];
	int ok;

	(void)argc;
	(void)argv;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1_count;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	hostile_burn(0.3);
	ok = mask_round(0, "");
	ok &= mask_round(SA_NODEFER, ", SA_NODEFER");
	sigprocmask(SIG_BLOCK, NULL, &now);
	say("blocked outside the handler: %s", sigset_list(&now, buf, sizeof(buf)));
	hostile_burn(0.2);
	return !ok;
}

/* ------------------------------------------------------------ case 4 */

/* The kernel's own view of this thread's signals, on stderr (not
 * compared: libpc's handlers show there), for whoever reads a failure. */
static void
kernel_view(void)
{
	char buf[4096], *line;
	ssize_t n;
	int fd = open("/proc/thread-self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		if (!strncmp(line, "Sig", 3) || !strncmp(line, "ShdPnd", 6))
			fprintf(stderr, "hostile: kernel %s\n", line);
}

static int
case_show_signals(int argc, char **argv)
{
	sigset_t mask, pend;
	char buf[128];

	(void)argc;
	(void)argv;
	sigprocmask(SIG_BLOCK, NULL, &mask);
	sigpending(&pend);
	for (int sig = 1; sig <= 64; sig++)
		say("signal %d: %s%s%s", sig, disposition(sig, buf, sizeof(buf)),
		    sigismember(&mask, sig) == 1 ? ", blocked" : "",
		    sigismember(&pend, sig) == 1 ? ", pending" : "");
	kernel_view();
	hostile_burn(0.3);
	return 0;
}

/* exec-plain, exec-ign, exec-block, exec-ign-block: set SIGPROF so, then
 * exec this program's show-signals. */
static int
case_exec(int argc, char **argv)
{
	const char *how = argv[1];
	sigset_t prof;

	(void)argc;
	hostile_burn(0.2);
	if (strstr(how, "ign"))
		signal(SIGPROF, SIG_IGN);
	if (strstr(how, "block")) {
		sigemptyset(&prof);
		sigaddset(&prof, SIGPROF);
		sigprocmask(SIG_BLOCK, &prof, NULL);
	}
	say("%s: exec show-signals", how);
	execl("/proc/self/exe", argv[0], "show-signals", (char *)NULL);
	say("exec failed: %s", errname(errno));
	return 1;
}

static int
case_raise_prof(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	hostile_burn(0.3);
	raise(SIGPROF);
	say("survived");
	return 0;
}

/* ------------------------------------------------------------ case 5 */

static volatile int stop;
static int quiet[2], feed[2];

struct waiter {
	const char *name;
	void (*call)(struct waiter *w);
	long calls, eintr, other;
	pthread_t t;
};

/* A wait of 1.5 to 2.5 ms, varied: no period to lock onto. */
static long
wait_us(void)
{
	return vary(2000);
}

static void
count(struct waiter *w, int r)
{
	w->calls++;
	if (r < 0 && errno == EINTR)
		w->eintr++;
	else if (r < 0)
		w->other++;
}

static void
call_nanosleep(struct waiter *w)
{
	struct timespec ts = { 0, wait_us() * 1000 };

	count(w, nanosleep(&ts, NULL));
}

static void
call_poll(struct waiter *w)
{
	struct pollfd pfd = { quiet[0], POLLIN, 0 };

	count(w, poll(&pfd, 1, (int)(wait_us() / 1000)));
}

static void
call_select(struct waiter *w)
{
	struct timeval tv = { 0, wait_us() };
	fd_set r;

	FD_ZERO(&r);
	FD_SET(quiet[0], &r);
	count(w, select(quiet[0] + 1, &r, NULL, NULL, &tv));
}

static void
call_read(struct waiter *w)
{
	char c;

	count(w, (int)read(feed[0], &c, 1));
}

/* Feeds the reader a byte every 1.5 to 2.5 ms; its own waits count too. */
static void
call_feed(struct waiter *w)
{
	call_nanosleep(w);
	if (write(feed[1], "x", 1) != 1)
		w->other++;
}

static void *
waiter_loop(void *arg)
{
	struct waiter *w = arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		w->call(w);
	return NULL;
}

static void *
snapshot_burner(void *arg)
{
	hostile_burn(*(double *)arg);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	/* wake the readers */
	for (int i = 0; i < 8; i++)
		if (write(feed[1], "x", 1) != 1)
			break;
	return NULL;
}

static int
say_waiters(const char *who, struct waiter *w, size_t n)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		say("%s %s: EINTR %ld, other errors %ld, more than 20 calls: %s",
		    who, w[i].name, w[i].eintr, w[i].other, yes(w[i].calls > 20));
		bad |= w[i].eintr || w[i].other || w[i].calls <= 20;
	}
	return bad;
}

/*
 * snapshot-eintr [SECONDS]: a thread burns SECONDS of CPU while the others
 * wait in short blocking calls and count EINTR. The kernel gives a signal
 * meant for the whole process to the main thread whenever it can take it,
 * so the main thread makes every kind of call in turn; one thread more
 * for each kind makes it too.
 */
static int
case_snapshot_eintr(int argc, char **argv)
{
	struct waiter m[] = {
		{ "nanosleep", call_nanosleep, 0, 0, 0, 0 },
		{ "poll", call_poll, 0, 0, 0, 0 },
		{ "select", call_select, 0, 0, 0, 0 },
		{ "read", call_read, 0, 0, 0, 0 },
	}, w[] = {
		{ "poll", call_poll, 0, 0, 0, 0 },
		{ "select", call_select, 0, 0, 0, 0 },
		{ "read", call_read, 0, 0, 0, 0 },
		{ "nanosleep, then write", call_feed, 0, 0, 0, 0 },
	};
	size_t n = sizeof(w) / sizeof(w[0]);
	double seconds = argc > 2 ? atof(argv[2]) : 2.0;
	pthread_t burner;
	int bad;

	if (pipe(quiet) || pipe(feed))
		return 2;
	for (size_t i = 0; i < n; i++)
		pthread_create(&w[i].t, NULL, waiter_loop, &w[i]);
	pthread_create(&burner, NULL, snapshot_burner, &seconds);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
			m[i].call(&m[i]);
	pthread_join(burner, NULL);
	for (size_t i = 0; i < n; i++)
		pthread_join(w[i].t, NULL);
	bad = say_waiters("main thread", m, sizeof(m) / sizeof(m[0]));
	bad |= say_waiters("thread", w, n);
	return bad;
}

/* ------------------------------------------------------------ cases 6, 7 */

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int ready, go;
} herd = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };

/* A thread that burns a little CPU (so that it is sampled, and a profiler
 * has set up whatever it sets up for a thread) and stays alive. */
static void *
herd_thread(void *arg)
{
	hostile_burn(0.001);
	pthread_mutex_lock(&herd.mu);
	herd.ready++;
	pthread_cond_broadcast(&herd.cv);
	while (!herd.go)
		pthread_cond_wait(&herd.cv, &herd.mu);
	pthread_mutex_unlock(&herd.mu);
	return arg;
}

/* Starts n herd threads and waits until every one has burned; returns
 * how many started. */
static int
herd_start(int n, pthread_t *t)
{
	pthread_attr_t attr;
	int started = 0;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	while (started < n && !pthread_create(&t[started], &attr, herd_thread, NULL))
		started++;
	pthread_attr_destroy(&attr);
	pthread_mutex_lock(&herd.mu);
	while (herd.ready < started)
		pthread_cond_wait(&herd.cv, &herd.mu);
	pthread_mutex_unlock(&herd.mu);
	return started;
}

static void
herd_release(int n, pthread_t *t)
{
	pthread_mutex_lock(&herd.mu);
	herd.go = 1;
	pthread_cond_broadcast(&herd.cv);
	pthread_mutex_unlock(&herd.mu);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* How many descriptors can still be opened (then closed again). */
static int
count_open(void)
{
	int fds[4096], n = 0, fd;

	while (n < 4096 && (fd = open("/dev/null", O_RDONLY)) >= 0)
		fds[n++] = fd;
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return n;
}

/* fds N: N threads alive, then /dev/null opened until it fails. The line
 * "descriptors opened: N" is the count a profiler may lower. */
static int
case_fds(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 900, started, opened, e;
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	struct rlimit rl;

	hostile_burn(0.2);
	started = herd_start(n, t);
	getrlimit(RLIMIT_NOFILE, &rl);
	opened = count_open();
	e = errno;
	say("threads alive: %d", started);
	say("RLIMIT_NOFILE: %ld", (long)rl.rlim_cur);
	say("open failed with: %s", errname(e));
	say("descriptors opened: %d", opened);
	herd_release(started, t);
	free(t);
	return started != n || e != EMFILE;
}

/* timers N: N threads alive, then POSIX timers created until it fails.
 * The line "timers created: N" is the count a profiler may lower. */
static int
case_timers(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 150, started, made = 0, e;
	enum { CAP = 20000 };
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	timer_t *ids = calloc(CAP, sizeof(*ids));
	struct sigevent sev;
	struct rlimit rl;

	hostile_burn(0.2);
	started = herd_start(n, t);
	getrlimit(RLIMIT_SIGPENDING, &rl);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR2;
	while (made < CAP && !timer_create(CLOCK_MONOTONIC, &sev, &ids[made]))
		made++;
	e = errno;
	for (int i = 0; i < made; i++)
		timer_delete(ids[i]);
	say("threads alive: %d", started);
	say("RLIMIT_SIGPENDING: %ld", (long)rl.rlim_cur);
	say("timer_create failed with: %s", errname(e));
	say("timers created: %d", made);
	herd_release(started, t);
	free(ids);
	free(t);
	return started != n || e != EAGAIN;
}

/* Whether this kernel lets a process open a task-clock event on itself. */
static int
case_perf_ok(int argc, char **argv)
{
	struct perf_event_attr a;
	long fd;

	(void)argc;
	(void)argv;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = 1000000;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		say("task-clock: refused (%s)", errname(errno));
		return 1;
	}
	close((int)fd);
	say("task-clock: ok");
	return 0;
}

/* ------------------------------------------------------------ case 8 */

static void *
asan_thread(void *arg)
{
	char *p = malloc(4096);

	memset(p, 1, 4096);
	hostile_burn(0.2);
	free(p);
	return arg;
}

/* Built with -fsanitize=address: work, a thread, memory freed, exit(3). */
static int
case_asan_exit(int argc, char **argv)
{
	pthread_t t;
	char *blocks[64];

	(void)argc;
	(void)argv;
	for (int i = 0; i < 64; i++)
		blocks[i] = malloc((size_t)(i + 1) * 100);
	pthread_create(&t, NULL, asan_thread, NULL);
	hostile_burn(0.3);
	pthread_join(t, NULL);
	for (int i = 0; i < 64; i++)
		free(blocks[i]);
	say("asan case done");
	exit(3);
}

/* ------------------------------------------------------------ case 9 */

/*
 * 512 KiB of code in 256 functions: CPU work that spreads samples over
 * many pages of counters, so that writing the profile takes a while.
 */
#define SLED_1K __asm__ volatile(".rept 1024\n\tnop\n\t.endr")
#define SLED(id) static __attribute__((noinline, used)) void \
	sled_##id(void) { SLED_1K; SLED_1K; }
#define SLEDS16(p) SLED(p##0) SLED(p##1) SLED(p##2) SLED(p##3) SLED(p##4) \
	SLED(p##5) SLED(p##6) SLED(p##7) SLED(p##8) SLED(p##9) SLED(p##a) \
	SLED(p##b) SLED(p##c) SLED(p##d) SLED(p##e) SLED(p##f)
SLEDS16(0) SLEDS16(1) SLEDS16(2) SLEDS16(3) SLEDS16(4) SLEDS16(5) SLEDS16(6)
SLEDS16(7) SLEDS16(8) SLEDS16(9) SLEDS16(a) SLEDS16(b) SLEDS16(c) SLEDS16(d)
SLEDS16(e) SLEDS16(f)
#define SLEDP(id) sled_##id,
#define SLEDPS16(p) SLEDP(p##0) SLEDP(p##1) SLEDP(p##2) SLEDP(p##3) SLEDP(p##4) \
	SLEDP(p##5) SLEDP(p##6) SLEDP(p##7) SLEDP(p##8) SLEDP(p##9) SLEDP(p##a) \
	SLEDP(p##b) SLEDP(p##c) SLEDP(p##d) SLEDP(p##e) SLEDP(p##f)
static void (*const sleds[256])(void) = {
	SLEDPS16(0) SLEDPS16(1) SLEDPS16(2) SLEDPS16(3) SLEDPS16(4) SLEDPS16(5)
	SLEDPS16(6) SLEDPS16(7) SLEDPS16(8) SLEDPS16(9) SLEDPS16(a) SLEDPS16(b)
	SLEDPS16(c) SLEDPS16(d) SLEDPS16(e) SLEDPS16(f)
};

static __attribute__((noinline)) void
sled_burn(double seconds)
{
	double t0 = thread_cpu();

	while (thread_cpu() - t0 < seconds)
		for (int i = 0; i < 256; i++)
			sleds[(vary(128) * 7 + i) & 255]();
}

static pthread_barrier_t exit_barrier;

struct exiter {
	double seconds;
	int how;	/* 0: exit(5), 1: _exit(6), 2: exit(4) after sleds, 3: sleds */
};

/* Whether thread tid of this process is on a CPU or in the disk's wait. */
static int
task_busy(pid_t tid)
{
	char c = task_state(getpid(), tid);

	return c == 'R' || c == 'D';
}

/* The thread of this process named name (its comm), or 0. */
static pid_t
thread_named(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	pid_t found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		char path[300], comm[32];
		ssize_t n;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (n > 0 && comm[n - 1] == '\n')
			n--;
		comm[n > 0 ? n : 0] = '\0';
		if (!strcmp(comm, name))
			found = (pid_t)atoi(e->d_name);
	}
	closedir(d);
	return found;
}

/*
 * libpc writes its snapshots in a thread of its own, pc-snapshot, which
 * sleeps between two: exit as soon as it is seen on a CPU or in the
 * disk's wait, that is while it writes one, or after 3 s without that.
 * Without such a thread (plain, or a profiler that writes its snapshots
 * elsewhere), exit at once.
 */
static void
exit_during_snapshot(void)
{
	pid_t writer = thread_named("pc-snapshot");
	double t0 = wall();
	int busy = 0;

	while (writer && wall() - t0 < 3.0 && !(busy = task_busy(writer)))
		;
	fprintf(stderr, "hostile: exit while the snapshot writer ran: %s (%.3f s)\n",
		yes(busy), wall() - t0);
	exit(4);
}

static void *
exiter(void *arg)
{
	struct exiter *x = arg;

	if (x->how >= 2) {
		sled_burn(x->seconds);
		if (x->how == 2)
			exit_during_snapshot();
		for (;;)
			sled_burn(1.0);
	}
	hostile_burn(x->seconds);
	pthread_barrier_wait(&exit_barrier);
	if (x->how == 1)
		_exit(6);
	exit(5);
}

/* exit-race N [SECONDS]: N threads burn SECONDS of CPU (0.05), each next
 * one a fifth of it more, meet at a barrier and all call exit(5).
 * exit-vs-_exit: two threads meet, one calls exit(5), the other _exit(6).
 * exit-snapshot SECONDS: three threads burn through the sleds and the
 * first calls exit(4) after SECONDS, while libpc's thread writes one of
 * PC_SNAPSHOT_INTERVAL's snapshots. */
static int
case_exits(int argc, char **argv)
{
	int snap = !strcmp(argv[1], "exit-snapshot");
	int mixed = !strcmp(argv[1], "exit-vs-_exit");
	int n = snap ? 3 : mixed ? 2 : argc > 2 ? atoi(argv[2]) : 6;
	double burn = !snap && !mixed && argc > 3 ? atof(argv[3]) : 0.05;
	struct exiter x[64];
	pthread_t t[64];

	if (n < 1 || n > 64 || !(burn > 0))
		return 2;
	pthread_barrier_init(&exit_barrier, NULL, (unsigned)n);
	main_tid = (pid_t)syscall(SYS_gettid);
	say("%s: %d threads", argv[1], n);
	for (int i = 0; i < n; i++) {
		x[i].seconds = snap ? (argc > 2 ? atof(argv[2]) : 1.0) : burn + burn / 5 * i;
		x[i].how = snap ? (i ? 3 : 2) : mixed ? i : 0;
		pthread_create(&t[i], NULL, exiter, &x[i]);
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 1;	/* not reached: a thread ends the process */
}

/* ------------------------------------------------------------ case 10 */

static int
case_burn(int argc, char **argv)
{
	hostile_burn(argc > 2 ? atof(argv[2]) : 1.0);
	say("done");
	return 0;
}

/* ------------------------------------------------------------ case 11 */

static jmp_buf blocked_jump;

static void
jump_out(int sig)
{
	(void)sig;
	longjmp(blocked_jump, 1);	/* not siglongjmp: the mask stays */
}

/* Real-time signals queued to this process and thread, taken one by one
 * with the raw system call (so that no interposed sigtimedwait leaves any
 * out). */
static long
drain_realtime(void)
{
	long n = 0;

	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) {
		uint64_t set = 1ull << (sig - 1);
		struct timespec zero = { 0, 0 };
		siginfo_t si;

		while (syscall(SYS_rt_sigtimedwait, &set, &si, &zero, sizeof(set)) == sig)
			n++;
	}
	return n;
}

/* blocked-burn SECONDS: a SIGUSR1 handler whose mask holds every signal
 * jumps out with longjmp, which leaves them all blocked; the thread then
 * burns SECONDS of CPU, and counts the real-time signals queued for it.
 * Unprofiled: none. The count goes on its own line. */
static int
case_blocked_burn(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t now;
	long queued;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = jump_out;
	sigfillset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	if (!setjmp(blocked_jump))
		raise(SIGUSR1);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &now, sizeof(uint64_t));
	say("after the jump, SIGRTMAX blocked: %s", yes(sigismember(&now, SIGRTMAX)));
	hostile_burn(argc > 2 ? atof(argv[2]) : 1.0);
	queued = drain_realtime();
	say("real-time signals queued: %ld", queued);
	return 0;
}

/* arenas [N]: N threads burn 0.05 s of CPU each and never allocate; then
 * the number of malloc arenas (malloc_info's heaps). Unprofiled: 1, the
 * main thread's. A thread's first malloc or free gives it an arena of its
 * own, and past eight glibc opens a file to size them, which takes the
 * lowest free descriptor under a program that expects it. */
static void *
arena_burner(void *arg)
{
	(void)arg;
	hostile_burn(0.05);
	return NULL;
}

static int
case_arenas(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 12, heaps = 0;
	pthread_t t[64];
	char *xml = NULL, *p;
	size_t len = 0;
	FILE *f;

	if (n < 1 || n > 64)
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, arena_burner, NULL))
			return 2;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	if (!(f = open_memstream(&xml, &len)) || malloc_info(0, f) || fclose(f))
		return 2;
	for (p = xml; (p = strstr(p, "<heap nr=")); p++)
		heaps++;
	free(xml);
	say("malloc arenas: %d", heaps);
	return 0;
}

/* ------------------------------------------------------------ main */

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
} cases[] = {
	{ "sigsuspend", case_wait, "blocked SIGPROF sent to self, sigsuspend(old)" },
	{ "ppoll", case_wait, "the same with ppoll(old)" },
	{ "pselect", case_wait, "the same with pselect(old)" },
	{ "epoll_pwait", case_wait, "the same with epoll_pwait(old)" },
	{ "sigwaitinfo", case_wait, "the same taken with sigwaitinfo" },
	{ "signalfd", case_wait, "the same read from a signalfd" },
	{ "smallstack", case_smallstack, "a thread on a 16 KiB stack burns 0.5 s" },
	{ "altstack", case_altstack, "a handler on an 8 KiB sigaltstack burns 0.5 s" },
	{ "eintr-thread", case_eintr, "read() cut short by SIGPROF from a thread" },
	{ "eintr-child", case_eintr, "read() cut short by SIGPROF from a child" },
	{ "eintr-many", case_eintr_many, "[N] eintr-child N times, after varied CPU" },
	{ "resethand", case_resethand, "SA_RESETHAND: the second SIGPROF kills" },
	{ "handler-mask", case_handler_mask, "the mask inside the SIGPROF handler" },
	{ "show-signals", case_show_signals, "every signal's disposition and mask" },
	{ "exec-plain", case_exec, "exec show-signals" },
	{ "exec-ign", case_exec, "SIGPROF ignored, exec show-signals" },
	{ "exec-block", case_exec, "SIGPROF blocked, exec show-signals" },
	{ "exec-ign-block", case_exec, "both, exec show-signals" },
	{ "raise-prof", case_raise_prof, "raise(SIGPROF), then say survived" },
	{ "snapshot-eintr", case_snapshot_eintr, "[SECONDS] blocking calls count EINTR" },
	{ "fds", case_fds, "[N] N threads, then open until EMFILE" },
	{ "timers", case_timers, "[N] N threads, then timer_create until it fails" },
	{ "perf-ok", case_perf_ok, "whether a task-clock event may be opened" },
	{ "asan-exit", case_asan_exit, "(the -fsanitize=address build) exit(3)" },
	{ "exit-race", case_exits, "[N [SECONDS]] N threads call exit(5) at once" },
	{ "exit-vs-_exit", case_exits, "exit(5) and _exit(6) at once" },
	{ "exit-snapshot", case_exits, "[SECONDS] exit(4) among busy threads" },
	{ "burn", case_burn, "[SECONDS] burn CPU, say done" },
	{ "arenas", case_arenas, "[N] N threads that never allocate, then count malloc arenas" },
	{ "blocked-burn", case_blocked_burn, "[SECONDS] every signal left blocked by a longjmp "
	  "out of a handler, burn, count queued real-time signals" },
};

int
main(int argc, char **argv)
{
	if (getenv("HOSTILE_SCALE"))
		burn_scale = atof(getenv("HOSTILE_SCALE"));
	if (argc > 1)
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			if (!strcmp(argv[1], cases[i].name))
				return cases[i].run(argc, argv);
	fprintf(stderr, "usage: hostile CASE [ARGS]\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		fprintf(stderr, "  %-15s %s\n", cases[i].name, cases[i].help);
	return 2;
}
