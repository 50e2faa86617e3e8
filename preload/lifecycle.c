/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ends of a profiled process's life, interposed: exit, _exit and _Exit,
 * the exec family, fork (through pthread_atfork) and libpc's destructor.
 * The profile is written once (finish.c): from the destructor at exit
 * (after the program's own atexit handlers and destructors, which are
 * sampled too), from _exit and _Exit, before an exec replaces the image,
 * and from the fatal-signal handlers of signals.c. A forked child starts
 * over with a live file, empty counters, a timer and a name of its own. A
 * vfork child shares its parent's memory, so it must touch nothing: every
 * path here first checks that the calling process owns the state.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pc.h"
#include "alloc.h"
#include "live.h"
#include "banned.h"



__attribute__((destructor)) static void
pc_stop(void)
{
	/* place what code loaded since the last inventory took; not on the
	 * other paths to pc_finish, which may be in a signal handler */
	pc_objects_scan();
	pc_finish();
}

/*
 * In the child of fork(): the counters are a copy of the parent's, which
 * the parent will write itself, and POSIX timers are not inherited. Drop the
 * copy (MADV_DONTNEED gives zero pages back), take a name of our own and arm
 * the only thread there is.
 *
 * fork is on signal-safety(7)'s list, so this may run in a child forked
 * from the program's signal handler. What it calls is safe there in
 * practice, though not all on the list: system calls (open, mmap, pwrite,
 * madvise, getrlimit, perf_event_open, fcntl, ioctl), glibc's
 * pthread_getcpuclockid (arithmetic on the thread's id) and timer_create,
 * which for SIGEV_THREAD_ID is the system call alone (no lock, no malloc:
 * only SIGEV_THREAD starts a helper); the task-clock refusal's getenv was
 * read at start-up (taskclock.h). Not safe: pc_thread_arm's
 * pthread_getattr_np (malloc, the thread's lock) when the forking thread
 * is one libpc adopted at start-up (pc_threads_adopt), whose stack bounds
 * were never taken; and, with PC_SNAPSHOT_SIGNAL or PC_SNAPSHOT_INTERVAL,
 * snapshot.c's child handler, which starts the snapshot thread again
 * (pthread_create allocates its stack and TLS). glibc's own fork takes
 * malloc's and stdio's locks in a process of several threads, so a fork
 * from a handler that interrupted malloc hangs before this runs anyway.
 */
static int exit_caller;		/* the thread id of exit()'s first caller */

static void
after_fork_child(void)
{
	exit_caller = 0;
	/* the one thread here holds no write: a snapshot that another
	 * thread was writing at the fork never ends in this copy (with a
	 * live file, pc_live_forked frees the file's word as well) */
	__atomic_store_n(&pc->writer, 0, __ATOMIC_RELEASE);
	pc_threads_forked();
	if (!pc_on())
		return;
	/* a file of its own before anything is written: until then pc is
	 * the parent's, in a mapping the two share (a child that cannot
	 * part from it does not sample, and writes nothing) */
	if (pc_live_forked()) {
		/* nor does it count its allocations into the parent's */
		pc_alloc_stop();
		return;
	}
	pc_signals_forked();
	for (int i = 0; i < pc->ntext; i++)
		madvise(pc->text[i].prof.buf, pc->text[i].map_len,
			MADV_DONTNEED);
	pc_sample_forked();
	pc_arcs_clear();
	pc_stacks_clear();
	pc_timeline_clear();
	pc_markers_forked();
	pc_alloc_table_clear();
	pc_objects_clear();
	memset(pc_stats, 0, sizeof(*pc_stats));
	pc_names_forked();
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &pc->cpu_start);
	__atomic_store_n(&pc->cpu_stop_ns, 0, __ATOMIC_RELEASE);
	if (pc->stacks_path[0]) {
		char pid[24];
		size_t k = strlen(pc->stacks_path);

		pid[0] = '.';
		pc_decimal(pid + 1, (unsigned long)getpid());
		if (k + strlen(pid) < sizeof(pc->stacks_path))
			strcpy(pc->stacks_path + k, pid);
	}
	pc_thread_forget();
	pc_thread_arm();
	pc_live_grower_start();
}

/* ------------------------------------------------------------ exit */

typedef void (*exit_fn)(int);
typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[],
			   int);

/*
 * The functions interposed here, as the next library defines them.
 * Resolved at start-up (pc_lifecycle_resolve), because a program may call
 * _exit, execve, execl, execle, execv and fexecve from a signal handler or
 * a vfork child (signal-safety(7)), where dlsym could deadlock on the
 * loader's lock or allocate; looked up on a first call only when a
 * library's constructor calls one before libpc's constructor has run.
 */
static void *next_exit, *next__exit, *next_execve, *next_execvpe, *next_fexecve,
	    *next_execveat;

static void *
real_fn(void **next, const char *name)
{
	void *f = __atomic_load_n(next, __ATOMIC_ACQUIRE);

	if (!f) {
		f = pc_next(name);
		__atomic_store_n(next, f, __ATOMIC_RELEASE);
	}
	return f;
}

void
pc_lifecycle_resolve(void)
{
	real_fn(&next_exit, "exit");
	real_fn(&next__exit, "_exit");
	real_fn(&next_execve, "execve");
	real_fn(&next_execvpe, "execvpe");
	real_fn(&next_fexecve, "fexecve");
	real_fn(&next_execveat, "execveat");
}

void
pc_lifecycle_init(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}

/*
 * exit(), interposed so that a second thread's exit cannot end the
 * process while the first writes the profile from libpc's destructor:
 * each caller after the first finishes the profile itself first, which
 * waits for a write under way (the writer's lock) and else writes it, and
 * then goes on into exit as it would have. A return from main reaches
 * glibc's exit without passing here, and ends in the destructor.
 */
PC_EXPORT void
exit(int status)
{
	exit_fn real;
	int self = (int)syscall(SYS_gettid), first = 0;

	/* not in a vfork child, which shares this word with its parent */
	if (getpid() == pc->pid &&
	    !__atomic_compare_exchange_n(&exit_caller, &first, self, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
	    first != self)
		pc_finish();
	real = (exit_fn)real_fn(&next_exit, "exit");
	if (real)
		real(status);
	syscall(SYS_exit_group, status);
	for (;;)
		;
}

/* _exit and _Exit skip atexit and destructors: write the profile here
 * (or wait for the thread writing it). */
PC_EXPORT void
_exit(int status)
{
	exit_fn real;

	pc_finish();
	real = (exit_fn)real_fn(&next__exit, "_exit");
	if (real)
		real(status);
	syscall(SYS_exit_group, status);
	for (;;)
		;
}

PC_EXPORT void
_Exit(int status)
{
	_exit(status);
}

/* ------------------------------------------------------------ exec */

static char exec_path[PATH_MAX];

/*
 * Before the image is replaced: write what this image sampled under the
 * name BASE.prog.pid, leaving the usual name to the next image (which loads
 * libpc again through the environment and has the same pid). Nothing is
 * written for an image that took no sample (a fork child about to exec).
 */
static int
before_exec(void)
{
	int r;

	if (getpid() != pc->pid) {
		pc_signals_before_exec(1);	/* a vfork child */
		return 0;
	}
	/* as pc_finish: a write under way in another thread ends first */
	pc_write_lock();
	if (!pc_phase_move(PC_ON, PC_DONE)) {
		pc_write_unlock();
		return 0;
	}
	pc_note_cpu_stop();
	/* this thread's task-clock event stops here: a signal of it must
	 * not reach the next image before it has a handler (the exec ends
	 * the other threads and their events, and closes this one) */
	pc_thread_hold(1);
	pc_signals_before_exec(0);
	exec_path[0] = 0;
	if (!pc_stats->samples) {
		pc_live_done();
		pc_write_unlock();
		return 1;
	}
	if (pc_name(exec_path, sizeof(exec_path), PC_NAME_OTHER) == 0) {
		pc->ending = PC_END_EXEC;
		r = pc_write_on_own_stack(exec_path, PC_WRITE_SAY);
		if (r)
			exec_path[0] = 0;
	}
	/* the live file goes now, whatever the next image is (one that
	 * does not load libpc would leave it); an exec that fails goes on
	 * counting into the mapping, which outlives the name, and writes
	 * at its end as ever */
	pc_live_done();
	pc_write_unlock();
	return 1;
}

/* The exec failed and this image runs on: take the file back and resume. */
static void
exec_failed(int stopped)
{
	int saved = errno;

	if (!stopped)
		return;
	pc_signals_exec_failed();
	if (exec_path[0]) {
		char sp[PATH_MAX + sizeof(GMON_STACKS_SUFFIX)];

		unlink(exec_path);
		if (pc_cfg->stacks && !pc->stacks_path[0] &&
		    gmon_stacks_name(sp, sizeof(sp), exec_path) == 0)
			unlink(sp);
		pc_objects_unlink(exec_path);
	}
	exec_path[0] = 0;
	__atomic_store_n(&pc->cpu_stop_ns, 0, __ATOMIC_RELEASE);
	pc->ending = PC_END_RUNNING;
	/* sampling resumes; from here another thread's exit may finish the
	 * profile again */
	pc_phase_move(PC_DONE, PC_ON);
	pc_thread_hold(0);
	errno = saved;
}

/* The next definition of name, as a function of type, in real_##name; an
 * exec family interposer fails with ENOSYS where there is none. */
#define REAL(name, type)						\
	type real_##name = (type)real_fn(&next_##name, #name);		\
	if (!real_##name) {						\
		errno = ENOSYS;						\
		return -1;						\
	}

PC_EXPORT int
execve(const char *path, char *const argv[], char *const envp[])
{
	int stopped, r;
	REAL(execve, execve_fn)

	stopped = before_exec();
	r = real_execve(path, argv, envp);
	exec_failed(stopped);
	return r;
}

PC_EXPORT int
execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

PC_EXPORT int
execvpe(const char *file, char *const argv[], char *const envp[])
{
	int stopped, r;
	REAL(execvpe, execvpe_fn)

	stopped = before_exec();
	r = real_execvpe(file, argv, envp);
	exec_failed(stopped);
	return r;
}

PC_EXPORT int
execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

PC_EXPORT int
fexecve(int fd, char *const argv[], char *const envp[])
{
	int stopped, r;
	REAL(fexecve, fexecve_fn)

	stopped = before_exec();
	r = real_fexecve(fd, argv, envp);
	exec_failed(stopped);
	return r;
}

PC_EXPORT int
execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
	 int flags)
{
	int stopped, r;
	REAL(execveat, execveat_fn)

	stopped = before_exec();
	r = real_execveat(dirfd, path, argv, envp, flags);
	exec_failed(stopped);
	return r;
}

/* The execl family: the arguments gathered into an array on the stack. */
#define GATHER(arg0, ap, argv, extra)					\
	size_t n_ = 1;							\
	va_list cp_;							\
	va_copy(cp_, ap);						\
	while (va_arg(cp_, char *))					\
		n_++;							\
	va_end(cp_);							\
	char **argv = __builtin_alloca((n_ + 1) * sizeof(char *));	\
	argv[0] = (char *)(arg0);					\
	for (size_t i_ = 1; i_ <= n_; i_++)				\
		argv[i_] = va_arg(ap, char *);				\
	extra

PC_EXPORT int
execl(const char *path, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	GATHER(arg, ap, argv, ;);
	va_end(ap);
	return execve(path, argv, environ);
}

PC_EXPORT int
execlp(const char *file, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	GATHER(arg, ap, argv, ;);
	va_end(ap);
	return execvpe(file, argv, environ);
}

PC_EXPORT int
execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char **envp;

	va_start(ap, arg);
	GATHER(arg, ap, argv, envp = va_arg(ap, char **););
	va_end(ap);
	return execve(path, argv, envp);
}
