/*
 * The command of pcprof run, run as a shell runs it: found on PATH with a
 * shell's statuses (127: nothing to run; 126: found but not runnable), and
 * a script with no #! line run by /bin/sh. run.c calls it; compare.c
 * finds its commands here.
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

/* The command's process, with SIGINT and SIGQUIT as pcprof found them.
 * An exec that fails sends its errno on fd. */
static void __attribute__((noreturn))
child(const char *exe, char **argv, int fd, const struct sigaction *old_int,
      const struct sigaction *old_quit)
{
	int err;

	sigaction(SIGINT, old_int, NULL);
	sigaction(SIGQUIT, old_quit, NULL);
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

/* Run exe with argv and wait for it, like time(1): the terminal's ^C and
 * ^\ are for the program. */
int
run_command(const char *exe, char **argv, int *status)
{
	struct sigaction ign, old_int, old_quit;
	int fds[2], err = 0;
	ssize_t n;
	pid_t pid;

	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	if (pipe2(fds, O_CLOEXEC))
		pc_fatal("cannot make a pipe: %s", strerror(errno));
	fflush(NULL);
	if ((pid = fork()) < 0)
		pc_fatal("cannot fork: %s", strerror(errno));
	if (pid == 0)
		child(exe, argv, fds[1], &old_int, &old_quit);
	close(fds[1]);
	/* end of file: exec closed it; else the errno of a failed exec */
	while ((n = read(fds[0], &err, sizeof(err))) < 0 && errno == EINTR)
		;
	close(fds[0]);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			pc_fatal("waitpid: %s", strerror(errno));
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	if (n == (ssize_t)sizeof(err)) {
		*status = W_EXITCODE(exec_failed(exe, err), 0);
		return 0;
	}
	return 1;
}

int
run_end_like(int status)
{
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		fflush(NULL);
		kill(getpid(), WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WEXITSTATUS(status);
}
