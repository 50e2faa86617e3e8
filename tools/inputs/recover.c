/*
 * Profiles that a process left unfinished: libpc keeps its counters in a
 * live file (DIR/.pcprof.PID.live) from the start, and writes the profile
 * at the end. A process that never reached its end (SIGKILL, the OOM
 * killer, a raw exit_group) leaves the live file; before a run directory
 * is read, each such file is finished into the profile the process would
 * have written, by libpc's own writer: a process of its own, pcprof
 * __finish FILE, loads libpc.so with PC_RECOVER set, so that it does not
 * profile itself, and calls its pc_recover().
 * The profile's manifest then says the process was killed, and reports
 * mark it. A file whose process still runs is left alone and said so.
 * Where libpc.so is, for this and for the commands that preload it, is
 * here too.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcprof.h"
#include "config.h"	/* PC_LIBDIR, written by the Makefile */

/* libpc.so beside this pcprof (the build tree), else the installed one. */
int
libpc_find(char *out, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n > 0) {
		self[n] = 0;
		if ((slash = strrchr(self, '/'))) {
			*slash = 0;
			if ((size_t)snprintf(out, size, "%s/libpc.so", self) < size &&
			    access(out, R_OK) == 0)
				return 0;
		}
	}
	snprintf(out, size, "%s/libpc.so", PC_LIBDIR);
	return access(out, R_OK);
}

static int
is_live(const char *name)
{
	size_t n = strlen(name);

	return !strncmp(name, ".pcprof.", 8) && n > 13 && !strcmp(name + n - 5, ".live");
}

/* How pc_recover's result travels as the finisher's exit status. */
enum { FIN_DONE, FIN_NOTHING, FIN_BUSY, FIN_PROTO, FIN_DAMAGED, FIN_NOLIB, FIN_OTHER };

/*
 * pcprof __finish FILE, in a process of its own that pcprof starts with
 * LD_PRELOAD removed: libpc.so loaded with PC_RECOVER set (so that it
 * does not profile this process), and its pc_recover() run on FILE. A
 * damaged file that crashed the finisher would crash only it, and a libpc
 * already loaded in pcprof (LD_PRELOAD exported by a CI job) is not the
 * one that finishes.
 */
int
cmd_finish(int argc, char **argv)
{
	char lib[PATH_MAX];
	int (*fn)(const char *);
	void *h;
	int r;

	if (argc != 2)
		return FIN_OTHER;
	if (libpc_find(lib, sizeof(lib)))
		return FIN_NOLIB;
	setenv("PC_RECOVER", "1", 1);
	if (!(h = dlopen(lib, RTLD_NOW | RTLD_LOCAL)) ||
	    !(fn = (int (*)(const char *))dlsym(h, "pc_recover")))
		return FIN_NOLIB;
	r = fn(argv[1]);
	return r == 0 ? FIN_DONE : r == 1 ? FIN_NOTHING : r == -EBUSY ? FIN_BUSY :
	       r == -EPROTO ? FIN_PROTO : r == -EBADMSG || r == -EINVAL ? FIN_DAMAGED :
	       FIN_OTHER;
}

/* The finisher's result for path: FIN_*, or FIN_DAMAGED for one that
 * died of a signal. */
static int
finish_apart(const char *path)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int status;
	pid_t pid;

	if (n <= 0)
		return FIN_NOLIB;
	self[n] = 0;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return FIN_OTHER;
	if (pid == 0) {
		unsetenv("LD_PRELOAD");
		execl(self, "pcprof", "__finish", path, (char *)NULL);
		_exit(FIN_NOLIB);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return FIN_OTHER;
	return WIFEXITED(status) ? WEXITSTATUS(status) : FIN_DAMAGED;
}

int
recover_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **live = NULL;
	size_t n = 0;
	int done = 0, nolib = 0;

	if (!d)
		return 0;	/* the reader says why */
	/* the names first: finishing a file adds files to the directory,
	 * which a readdir under way may then skip or repeat */
	while ((e = readdir(d)))
		if (is_live(e->d_name)) {
			live = pc_realloc(live, (n + 1) * sizeof(*live));
			if (asprintf(&live[n++], "%s/%s", dir, e->d_name) < 0)
				pc_fatal("out of memory");
		}
	closedir(d);
	for (size_t i = 0; i < n; i++) {
		char *path = live[i];
		int r;

		if (nolib) {
			free(path);
			continue;
		}
		r = finish_apart(path);
		if (r == FIN_DONE)
			done++;
		else if (r == FIN_BUSY)
			pc_warn("'%s': its process is still running; its profile is not "
				"written yet", path);
		else if (r == FIN_NOLIB)
			nolib = 1, pc_warn("'%s': profiles of processes that ended without "
					   "writing them are left unfinished: cannot load libpc.so",
					   dir);
		else if (r != FIN_NOTHING)
			pc_warn("'%s': cannot finish this profile: %s", path,
				r == FIN_PROTO ? "written by another version of libpc, or cut short" :
				r == FIN_DAMAGED ? "damaged" : "cannot read it");
		free(path);
	}
	free(live);
	return done;
}
