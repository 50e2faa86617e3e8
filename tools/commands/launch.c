/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one launcher of pcprof's commands: a command found and run as a
 * shell runs it (PATH, 127: nothing to run; 126: found but not runnable;
 * a script with no #! line run by /bin/sh), libpc.so preloaded, a process
 * group of its own, the signals that ask pcprof to stop passed on to it
 * (or made to end it) and, for run, every other signal passed on, waited
 * for with its resource usage. run.c runs its
 * command here, compare_runs.c each run, annotate.c objdump.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcprof.h"
#include "commands/launch.h"

/* Whether path can be run: 0, or what execve would say (ENOENT, EACCES;
 * EISDIR for a directory, which execve calls EACCES and bash names). */
static int
runnable(const char *path)
{
	struct stat sb;

	if (stat(path, &sb))
		return errno == ENOTDIR ? ENOENT : errno;
	if (S_ISDIR(sb.st_mode))
		return EISDIR;
	return access(path, X_OK) ? errno : 0;
}

/* The file a shell runs for cmd, into out: 0, or why there is none to run
 * (ENOENT; EACCES or EISDIR for a file found that cannot be run). */
int
launch_find(const char *cmd, char *out, size_t size)
{
	const char *path = getenv("PATH");
	char found[PATH_MAX] = "";
	int r;

	if (strchr(cmd, '/')) {
		snprintf(out, size, "%s", cmd);
		return runnable(out);
	}
	for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin";;
	     p++) {
		const char *end = strchr(p, ':');
		size_t k = end ? (size_t)(end - p) : strlen(p);

		/* an empty entry is the current directory */
		snprintf(out, size, "%.*s%s%s", (int)k, p, k ? "/" : "", cmd);
		if (!(r = runnable(out)))
			return 0;
		/* as bash and execvp: directories are passed over, and a file
		 * that is not executable is what is refused when no later
		 * entry has one that is */
		if (r == EACCES && !found[0])
			snprintf(found, sizeof(found), "%s", out);
		if (!end)
			break;
		p = end;
	}
	if (!found[0])
		return ENOENT;
	snprintf(out, size, "%s", found);
	return EACCES;
}

int
launch_not_found(const char *cmd, const char *file, int err)
{
	if (err == ENOENT && !strchr(cmd, '/'))
		pc_warn("'%s': command not found", cmd);
	else
		pc_warn("'%s': %s", err == ENOENT ? cmd : file, strerror(err));
	return err == ENOENT ? 127 : 126;
}

/* ------------------------------------------------------- environment */

/* Why LD_PRELOAD would do nothing for this program, or NULL. */
const char *
launch_why_unprofilable(const char *path)
{
	struct stat sb;

	if (stat(path, &sb))
		return NULL;
	if (((sb.st_mode & S_ISUID) && sb.st_uid != geteuid()) ||
	    ((sb.st_mode & S_ISGID) && sb.st_gid != getegid()))
		return "it is setuid or setgid, and the dynamic linker ignores LD_PRELOAD for such programs";
	if (elf_probe_dynamic(path) == 0)
		return "it is statically linked, so there is no dynamic linker to load libpc.so";
	return NULL;
}

/* The ASan runtime that exe links (a soname), malloc'ed, or NULL. */
static char *
asan_runtime(const char *exe)
{
	char *needed = elf_needed(exe), *found = NULL;

	for (char *p = needed; p && *p && !found; p += strlen(p) + 1)
		if (!strncmp(p, "libasan.so.", 11) ||
		    !strncmp(p, "libclang_rt.asan", 16))
			found = p;
	if (found && !(found = strdup(found)))
		pc_fatal("out of memory");
	free(needed);
	return found;
}

/* lib after what is preloaded already, and before all of it the ASan
 * runtime that exe links, unless it is first already. ASan refuses to
 * start ("ASan runtime does not come first in initial library list")
 * when another library comes before it; the dynamic linker finds a bare
 * soname as it finds a DT_NEEDED one. */
int
launch_preload(const char *lib, const char *exe)
{
	const char *preload = getenv("LD_PRELOAD"), *base;
	char *asan = exe ? asan_runtime(exe) : NULL, *v;
	size_t first;
	int r;

	if (!preload)
		preload = "";
	first = strcspn(preload, ": ");
	for (base = preload + first; base > preload && base[-1] != '/'; base--)
		;
	if (asan && (size_t)(preload + first - base) == strlen(asan) &&
	    !strncmp(base, asan, strlen(asan))) {
		free(asan);
		asan = NULL;	/* the user preloads it first already */
	}
	if (asprintf(&v, "%s%s%s%s%s", asan ? asan : "", asan ? ":" : "",
		     preload, *preload ? ":" : "", lib) < 0)
		pc_fatal("out of memory");
	r = setenv("LD_PRELOAD", v, 1);
	free(v);
	free(asan);
	return r;
}

void
launch_itt(const char *lib)
{
	const char *tl = getenv("PC_TIMELINE"), *slash = strrchr(lib, '/');
	char *itt;

	if (!tl || strcmp(tl, "1") || getenv("INTEL_LIBITTNOTIFY64"))
		return;
	if (asprintf(&itt, "%.*slibpc-itt.so",
		     slash ? (int)(slash - lib + 1) : 0, lib) < 0)
		pc_fatal("out of memory");
	if (!access(itt, R_OK))
		setenv("INTEL_LIBITTNOTIFY64", itt, 1);
	free(itt);
}

/* Whether the first entry of preload (up to ':' or ' ') is an ASan
 * runtime, which must stay first. */
static size_t
asan_first(const char *preload)
{
	size_t first = strcspn(preload, ": ");
	const char *base = preload + first;

	while (base > preload && base[-1] != '/')
		base--;
	if (!strncmp(base, "libasan.so.", 11) ||
	    !strncmp(base, "libclang_rt.asan", 16))
		return first;
	return 0;
}

void
launch_alloc(const char *lib)
{
	const char *on = getenv("PC_ALLOC"), *preload = getenv("LD_PRELOAD");
	const char *slash = strrchr(lib, '/');
	size_t keep;
	char *hooks, *v;

	if (!on || !*on || !strcmp(on, "0"))
		return;
	if (asprintf(&hooks, "%.*slibpc-alloc.so",
		     slash ? (int)(slash - lib + 1) : 0, lib) < 0)
		pc_fatal("out of memory");
	/* none beside lib: libpc says in one line why nothing is profiled */
	if (access(hooks, R_OK)) {
		free(hooks);
		return;
	}
	if (!preload)
		preload = "";
	keep = asan_first(preload);
	if (asprintf(&v, "%.*s%s%s%s%s", (int)keep, preload, keep ? ":" : "",
		     hooks, preload[keep] ? ":" : "",
		     preload + keep + (keep && preload[keep])) < 0)
		pc_fatal("out of memory");
	if (setenv("LD_PRELOAD", v, 1))
		pc_fatal("cannot set LD_PRELOAD: %s", strerror(errno));
	free(v);
	free(hooks);
}

/* ----------------------------------------------------------- signals */

/* SIGPIPE as pcprof found it, for the command: compare ignores it (a
 * closed output fails its write instead of killing it) */
static struct sigaction pipe_as_found;
static int pipe_ignored;

static volatile sig_atomic_t stops_end;	/* LAUNCH_STOPS_END's handler */
static volatile sig_atomic_t cmd_pid;	/* while it can take a signal */
static volatile sig_atomic_t cmd_group; /* 1: cmd_pid leads a group of its own */
static volatile sig_atomic_t end_sig;	/* what pcprof ends by, once done */

/* Whether sig asks pcprof to stop (SIGINT, SIGTERM, SIGHUP): passed on
 * to the command, or made to end it. AS-safe. */
static int
is_stop(int sig)
{
	return sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
}

/* Whether sig stops or continues a job: it goes to the command's whole
 * group, as a shell's job control sends it. AS-safe. */
static int
is_job_control(int sig)
{
	return sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU ||
	       sig == SIGCONT;
}

/* Whether sig, with code, is a fault of pcprof's own code. AS-safe. */
static int
is_fault(int sig, int code)
{
	return code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE ||
			    sig == SIGILL || sig == SIGTRAP || sig == SIGSYS);
}

/*
 * A signal sent to pcprof while its command runs. A stop (SIGINT,
 * SIGTERM, SIGHUP) passed on (run): to the command's group, whose end
 * (and the report) pcprof waits for before it ends by the same signal; a
 * second one is passed on too and loses nothing. Made to end (compare):
 * the command's group gets SIGTERM, SIGKILL at the second asking, from
 * here (no wake-up to lose). Any other signal (run): to the command, its
 * value with it when it was queued; SIGTSTP, SIGTTIN and SIGTTOU then stop
 * pcprof too, and SIGCONT, like them, goes to the group. A fault of
 * pcprof's own is its default action when it comes again. AS-safe.
 */
static void
on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	pid_t pid = (pid_t)cmd_pid;

	(void)uc;
	if (is_fault(sig, si->si_code)) {
		signal(sig, SIG_DFL);
		errno = saved;
		return;
	}
	/* the terminal's ^C, ^\, ^Z and hang-up went to its whole foreground
	 * group, the command with pcprof: it has it already, and pcprof ends
	 * as it chooses to (bash's rule for a child that catches SIGINT);
	 * and what pcprof's own doings raise (a write over RLIMIT_FSIZE) is
	 * not the command's */
	if ((pid > 0 && !cmd_group && si->si_code == SI_KERNEL) ||
	    (si->si_code == SI_USER && si->si_pid == getpid())) {
		pid = 0;
	} else if (stops_end) {
		if (pid > 0)
			kill(-pid, end_sig ? SIGKILL : SIGTERM);
		end_sig = sig;
		pid = 0;
	} else if (is_stop(sig) && !end_sig) {
		end_sig = sig;
	}
	if (pid > 0 && si->si_code == SI_QUEUE && !is_stop(sig))
		sigqueue(pid, sig, si->si_value);
	else if (pid > 0)
		kill(cmd_group && (is_stop(sig) || is_job_control(sig)) ? -pid :
									  pid,
		     sig);
	if (!stops_end && (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU))
		raise(SIGSTOP);
	errno = saved;
}

int
launch_stopped(void)
{
	return end_sig;
}

/* Whether launch catches sig: for LAUNCH_STOPS_END the stops; for
 * LAUNCH_STOPS_PASS every signal that can be caught but SIGCHLD, which
 * says nothing to the command. */
static int
caught(int sig, int pass)
{
	return pass ? sig != SIGKILL && sig != SIGSTOP && sig != SIGCHLD :
		      is_stop(sig);
}

/* Catch the signals caught() names with sa_flags flags (with them blocked
 * by the caller, or before any command); one ignored when pcprof started
 * stays ignored, for pcprof and the command, as a shell leaves it, and
 * one the C library keeps for itself is left to it (sigaction refuses). */
static void
catch_signals(int flags, int pass)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | flags;
	sigfillset(&sa.sa_mask);
	for (int sig = 1; sig <= SIGRTMAX; sig++)
		if (caught(sig, pass) && sigaction(sig, NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN)
			sigaction(sig, &sa, NULL);
}

/* SIGPIPE ignored from now on, as found into pipe_as_found. */
static void
ignore_pipe(void)
{
	struct sigaction ign;

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &pipe_as_found);
	pipe_ignored = 1;
}

void
launch_catch_stops(int flags)
{
	if (!pipe_ignored)
		ignore_pipe();
	stops_end = 1;
	catch_signals(flags, 0);
}

/* Whether pcprof is in the foreground process group of its terminal. */
static int
in_front(void)
{
	int fd = open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC);
	pid_t front;

	if (fd < 0)
		return 0;	/* no controlling terminal */
	front = tcgetpgrp(fd);
	close(fd);
	return front == getpgrp();
}

/* ------------------------------------------------------------- child */

/* exe as execvp(3) runs a file that execve refuses as ENOEXEC: /bin/sh
 * reads it, with exe as $0 and the same arguments. Returns on failure. */
static void
exec_script(const char *exe, char **argv)
{
	size_t n = 0;
	char **v;

	while (argv[n])
		n++;
	if (!(v = calloc(n + 2, sizeof(*v))))
		return;
	v[0] = (char *)"/bin/sh";
	v[1] = (char *)exe;
	memcpy(v + 2, argv + 1, (n ? n - 1 : 0) * sizeof(*v));
	execv(v[0], v);
}

/* fd onto want, with its close-on-exec flag clear: 0, or -1. */
static int
onto(int fd, int want)
{
	if (fd == want)
		return fcntl(fd, F_SETFD, 0);
	return dup2(fd, want) < 0 ? -1 : 0;
}

/* The command's standard input, output and errors as l asks: 0, or -1. */
static int
redirect(const struct launch *l, int out)
{
	int in = -1, lf = -1;

	if (out >= 0 && onto(out, 1))
		return -1;
	if (!l->input && !l->log)
		return 0;
	in = open(l->input, O_RDONLY);
	lf = open(l->log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (in < 0 || lf < 0 || onto(in, 0) || onto(lf, 1) || onto(lf, 2))
		return -1;
	if (in > 2)
		close(in);
	if (lf > 2)
		close(lf);
	return 0;
}

/*
 * The command's process: in the group l asks for (a group of its own
 * unless pcprof is at the front of its terminal, whose group gets ^C and
 * ^Z and may read), with pcprof's handlers gone before the mask is as
 * pcprof found it, so that a stop that comes before exec ends it, and
 * what pcprof ignores as it found it; its standard output onto out
 * unless that is -1. An exec that fails sends its errno on fd.
 */
static void __attribute__((noreturn))
child(const struct launch *l, int own_group, int fd, int out,
      const sigset_t *mask, pid_t parent)
{
	int err;

	if (own_group)
		setpgid(0, 0);
	if (pipe_ignored)
		sigaction(SIGPIPE, &pipe_as_found, NULL);
	out_signals_as_found();
	for (int sig = 1; sig <= SIGRTMAX; sig++) {
		struct sigaction sa;

		if (sigaction(sig, NULL, &sa) == 0 &&
		    (sa.sa_flags & SA_SIGINFO) && sa.sa_sigaction == on_signal)
			signal(sig, SIG_DFL);
	}
	/* run: a command that pcprof's SIGKILL would leave running dies with
	 * pcprof (PR_SET_PDEATHSIG, which fires when the thread that forked
	 * it ends: pcprof's only one); if pcprof is gone already, now */
	if (l->stops == LAUNCH_STOPS_PASS) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(126);
	}
	sigprocmask(SIG_SETMASK, mask, NULL);
	if (redirect(l, out))
		_exit(126);
	if (l->pc_out)
		setenv("PC_OUT", l->pc_out, 1);
	execv(l->exe, l->argv);
	err = errno;
	if (l->say_as) {
		fprintf(stderr, "%s: '%s': %s\n", l->say_as, l->exe,
			strerror(err));
		_exit(127);
	}
	if (err == ENOEXEC)
		exec_script(l->exe, l->argv);
	err = errno;
	if (write(fd, &err, sizeof(err)) < 0)
		err = errno;
	_exit(err == ENOENT ? 127 : 126);
}

/* One line on an exec that failed; the status a shell gives it. */
static int
exec_failed(const char *exe, int err)
{
	char line[256];
	ssize_t n = 0;
	int fd;

	if (err != ENOENT) {
		pc_warn("'%s': %s", exe, strerror(err));
		return 126;
	}
	/* the file is there: what is missing is its interpreter */
	if ((fd = open(exe, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, line, sizeof(line) - 1);
		close(fd);
	}
	if (n > 2 && !memcmp(line, "#!", 2)) {
		line[n] = 0;
		pc_warn("'%s': cannot execute: its interpreter '%.*s' is not there",
			exe,
			(int)strcspn(line + 2 + strspn(line + 2, " \t"),
				     " \t\n"),
			line + 2 + strspn(line + 2, " \t"));
	} else {
		pc_warn("'%s': cannot execute: required file not found", exe);
	}
	return 127;
}

/* ------------------------------------------------------ start and wait */

int
launch_start(struct launch *l)
{
	int fds[2], out[2] = { -1, -1 }, err = 0;
	int own = l->group == LAUNCH_GROUP_OWN ||
		  (l->group == LAUNCH_GROUP_UNLESS_FRONT && !in_front());
	pid_t parent = getpid();
	sigset_t all, old;
	ssize_t n;

	/* a signal that comes before the command's pid is known waits for it */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	if (l->stops == LAUNCH_STOPS_PASS) {
		stops_end = 0;
		catch_signals(SA_RESTART, 1);
	}
	if (pipe2(fds, O_CLOEXEC) || (l->capture && pipe2(out, O_CLOEXEC)))
		pc_fatal("cannot make a pipe: %s", strerror(errno));
	fflush(NULL);
	if ((l->pid = fork()) < 0)
		pc_fatal("cannot fork: %s", strerror(errno));
	if (l->pid == 0)
		child(l, own, fds[1], out[1], &old, parent);
	l->output = out[0];
	if (out[1] >= 0)
		close(out[1]);
	if (own)
		setpgid(l->pid, l->pid);	/* either may run first */
	if (l->stops != LAUNCH_STOPS_NONE) {
		cmd_group = own;
		cmd_pid = l->pid;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	/* a stop asked before the group was known, where it ends the command */
	if (l->stops == LAUNCH_STOPS_END && end_sig)
		kill(-l->pid, SIGTERM);
	close(fds[1]);
	/* end of file: exec closed it; else the errno of a failed exec */
	while ((n = read(fds[0], &err, sizeof(err))) < 0 && errno == EINTR)
		;
	close(fds[0]);
	l->exec_err = n == (ssize_t)sizeof(err) ? err : 0;
	return l->exec_err;
}

/* Wait for pid to end; it stays a zombie, its pid taken, until no
 * handler can send it a signal any more. Its wait status and usage. */
static int
wait_for(pid_t pid, struct rusage *ru)
{
	siginfo_t si;
	int status;

	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0)
		if (errno != EINTR)
			pc_fatal("waitid: %s", strerror(errno));
	cmd_pid = 0;
	while (wait4(pid, &status, 0, ru) < 0)
		if (errno != EINTR)
			pc_fatal("wait4: %s", strerror(errno));
	return status;
}

int
launch_wait(struct launch *l)
{
	l->status = wait_for(l->pid, &l->ru);
	if (!l->exec_err)
		return 1;
	if (!l->say_as)
		l->status = W_EXITCODE(exec_failed(l->exe, l->exec_err), 0);
	return 0;
}

int
launch_run(struct launch *l)
{
	launch_start(l);
	return launch_wait(l);
}

int
launch_end_like(int status)
{
	if (end_sig || WIFSIGNALED(status))
		fflush(NULL);
	return launch_end_like_from_handler(status);
}

int
launch_end_like_from_handler(int status)
{
	int sig = end_sig             ? end_sig :
		  WIFSIGNALED(status) ? WTERMSIG(status) :
					0;
	sigset_t set;

	if (!sig)
		return WEXITSTATUS(status);
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	return 128 + sig;	/* a signal that does not end a process */
}
