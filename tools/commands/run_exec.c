/*
 * The command of pcprof run, run as a shell runs it: found on PATH with a
 * shell's statuses (127: nothing to run; 126: found but not runnable), a
 * script with no #! line run by /bin/sh, and the signals that ask pcprof
 * run to stop passed on to it, so that the run still ends in a report and
 * leaves no orphan. run.c calls it; compare.c finds its commands here.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcprof.h"

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
run_find_command(const char *cmd, char *out, size_t size)
{
	const char *path = getenv("PATH");
	char found[PATH_MAX] = "";
	int r;

	if (strchr(cmd, '/')) {
		snprintf(out, size, "%s", cmd);
		return runnable(out);
	}
	for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin"; ; p++) {
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
run_not_found(const char *cmd, const char *file, int err)
{
	if (err == ENOENT && !strchr(cmd, '/'))
		pc_warn("'%s': command not found", cmd);
	else
		pc_warn("'%s': %s", err == ENOENT ? cmd : file, strerror(err));
	return err == ENOENT ? 127 : 126;
}

/* The signals that ask pcprof run to stop: passed on to the command. */
static const int stop_sigs[] = { SIGINT, SIGTERM, SIGHUP };
#define NSTOP (sizeof(stop_sigs) / sizeof(stop_sigs[0]))

static struct sigaction quit_as_found;
static volatile sig_atomic_t cmd_pid;	/* while it can take a signal */
static volatile sig_atomic_t cmd_group;	/* 1: cmd_pid leads a group of its own */
static volatile sig_atomic_t end_sig;	/* what pcprof run ends by, once reported */

/*
 * A stop asked of pcprof run: passed on to the command, whose end (and
 * the report) pcprof waits for before it ends by the same signal. A
 * second one is passed on too and loses nothing. AS-safe.
 */
static void
on_stop(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	pid_t pid = (pid_t)cmd_pid;

	(void)uc;
	/* the terminal's ^C and hang-up went to its whole foreground group,
	 * the command with pcprof: it has it already, and pcprof ends as
	 * it chooses to (bash's rule for a child that catches SIGINT) */
	if (pid > 0 && !cmd_group && si->si_code == SI_KERNEL) {
		errno = saved;
		return;
	}
	if (!end_sig)
		end_sig = sig;
	if (pid > 0)
		kill(cmd_group ? -pid : pid, sig);
	errno = saved;
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

/* Catch the stops (with them blocked by the caller); one ignored when
 * pcprof started stays ignored, for pcprof and the command, as a shell
 * leaves it. ^\ is the command's alone, as time(1) has it. */
static void
catch_stops(void)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_stop;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < NSTOP; i++)
		if (sigaction(stop_sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(stop_sigs[i], &sa, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGQUIT, &sa, &quit_as_found);
}

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

/*
 * The command's process: in a group of its own unless pcprof is at the
 * front of its terminal (there the group is the terminal's, which sends
 * it ^C and ^Z and lets it read), with pcprof's handlers gone before the
 * mask is as pcprof found it, so that a stop that comes before exec ends
 * it. An exec that fails sends its errno on fd.
 */
static void __attribute__((noreturn))
child(const char *exe, char **argv, int own_group, int fd, const sigset_t *mask)
{
	int err;

	if (own_group)
		setpgid(0, 0);
	for (size_t i = 0; i < NSTOP; i++) {
		struct sigaction sa;

		if (sigaction(stop_sigs[i], NULL, &sa) == 0 && (sa.sa_flags & SA_SIGINFO) &&
		    sa.sa_sigaction == on_stop)
			signal(stop_sigs[i], SIG_DFL);
	}
	sigaction(SIGQUIT, &quit_as_found, NULL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	execv(exe, argv);
	if (errno == ENOEXEC)
		exec_script(exe, argv);
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
		pc_warn("'%s': cannot execute: its interpreter '%.*s' is not there", exe,
			(int)strcspn(line + 2 + strspn(line + 2, " \t"), " \t\n"),
			line + 2 + strspn(line + 2, " \t"));
	} else {
		pc_warn("'%s': cannot execute: required file not found", exe);
	}
	return 127;
}

/* Wait for pid to end; it stays a zombie, its pid taken, until no
 * handler can send it a signal any more. Its wait status. */
static int
wait_for(pid_t pid)
{
	siginfo_t si;
	int status;

	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0)
		if (errno != EINTR)
			pc_fatal("waitid: %s", strerror(errno));
	cmd_pid = 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			pc_fatal("waitpid: %s", strerror(errno));
	return status;
}

int
run_command(const char *exe, char **argv, int *status)
{
	int fds[2], err = 0, own = !in_front();
	sigset_t stop_set, old;
	ssize_t n;
	pid_t pid;

	/* a stop that comes before the command's pid is known waits for it */
	sigemptyset(&stop_set);
	for (size_t i = 0; i < NSTOP; i++)
		sigaddset(&stop_set, stop_sigs[i]);
	sigprocmask(SIG_BLOCK, &stop_set, &old);
	catch_stops();
	if (pipe2(fds, O_CLOEXEC))
		pc_fatal("cannot make a pipe: %s", strerror(errno));
	fflush(NULL);
	if ((pid = fork()) < 0)
		pc_fatal("cannot fork: %s", strerror(errno));
	if (pid == 0)
		child(exe, argv, own, fds[1], &old);
	if (own)
		setpgid(pid, pid);	/* either may run first */
	cmd_group = own;
	cmd_pid = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(fds[1]);
	/* end of file: exec closed it; else the errno of a failed exec */
	while ((n = read(fds[0], &err, sizeof(err))) < 0 && errno == EINTR)
		;
	close(fds[0]);
	*status = wait_for(pid);
	sigaction(SIGQUIT, &quit_as_found, NULL);
	if (n == (ssize_t)sizeof(err)) {
		*status = W_EXITCODE(exec_failed(exe, err), 0);
		return 0;
	}
	return 1;
}

int
run_end_like(int status)
{
	int sig = end_sig ? end_sig : WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	sigset_t set;

	if (!sig)
		return WEXITSTATUS(status);
	fflush(NULL);
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	return 128 + sig;	/* a signal that does not end a process */
}
