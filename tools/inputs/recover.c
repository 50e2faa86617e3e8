/* SPDX-License-Identifier: BSD-2-Clause */
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
 * mark it. A file whose process still runs (a background process of the
 * run) is left alone, and the processes are named, or waited for.
 * Where libpc.so is, for this and for the commands that preload it, is
 * here too.
 */
#include <dirent.h>
#include <fcntl.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcprof.h"
#include "config.h"	/* PC_LIBDIR, written by the Makefile */
#include "../gmon/live.h"

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
			if ((size_t)snprintf(out, size, "%s/libpc.so", self) <
				    size &&
			    access(out, R_OK) == 0)
				return 0;
		}
	}
	snprintf(out, size, "%s/libpc.so", PC_LIBDIR);
	return access(out, R_OK);
}


/* How pc_recover's result travels as the finisher's exit status. */
enum {
	FIN_DONE,
	FIN_NOTHING,
	FIN_BUSY,
	FIN_PROTO,
	FIN_DAMAGED,
	FIN_NOLIB,
	FIN_OTHER,
	FIN_NEWER
};

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
	/* gone since it was listed: its process took it away (at its exec
	 * or exit), nothing to finish */
	return r == 0 || r == -ENOENT        ? (r ? FIN_NOTHING : FIN_DONE) :
	       r == 1                        ? FIN_NOTHING :
	       r == -EBUSY                   ? FIN_BUSY :
	       r == -EPROTO                  ? FIN_PROTO :
	       r == -EBADMSG || r == -EINVAL ? FIN_DAMAGED :
	       r == -EEXIST                  ? FIN_NEWER :
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

static int
cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A name listed, with the type readdir gave it (sorted by the name, its
 * first member, as cmp_path compares). */
struct listed {
	char *name;
	unsigned char type;
};

int
recover_list(struct run_listing *l, const char *dir)
{
	DIR *d = opendir(dir);
	struct listed *v = NULL;
	struct dirent *e;

	recover_listing_release(l);
	if (!d)
		return pc_error("'%s': %s", dir, strerror(errno));
	l->dir = pc_strdup(dir);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		v = pc_realloc(v, (l->n + 1) * sizeof(*v));
		v[l->n].name = pc_asprintf("%s/%s", dir, e->d_name);
		v[l->n++].type = e->d_type;
	}
	closedir(d);
	if (l->n)
		qsort(v, l->n, sizeof(*v), cmp_path);
	l->names = pc_malloc((l->n ? l->n : 1) * sizeof(*l->names));
	l->types = pc_malloc(l->n ? l->n : 1);
	for (size_t i = 0; i < l->n; i++) {
		l->names[i] = v[i].name;
		l->types[i] = v[i].type;
	}
	free(v);
	return 0;
}

void
recover_listing_release(struct run_listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	free(l->types);
	free(l->dir);
	memset(l, 0, sizeof(*l));
}

/* The live files in dir, *n of them, malloc'ed: the names first, for
 * finishing a file adds files to the directory, which a readdir under
 * way may then skip or repeat. */
static char **
live_files(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **live = NULL;

	*n = 0;
	if (!d)
		return NULL;	/* the reader says why */
	while ((e = readdir(d)))
		if (gmon_live_name_pid(e->d_name)) {
			live = pc_realloc(live, (*n + 1) * sizeof(*live));
			live[(*n)++] = pc_asprintf("%s/%s", dir, e->d_name);
		}
	closedir(d);
	return live;
}

/* The pid in DIR/.pcprof.PID.live. */
static pid_t
live_pid(const char *path)
{
	return (pid_t)gmon_live_name_pid(path);
}

/* The head of the live file at path (gmon/live.h), and its inode: 0, or
 * what gmon_live_head_load says (-EPROTO: another version, its number in
 * *version; -EAGAIN: torn by its process's writes on every try); -EINVAL
 * for one that cannot be read. Never follows a symlink, never waits on a
 * FIFO. */
static int
live_head(const char *path, struct gmon_live_head *h, ino_t *ino,
	  uint32_t *version)
{
	struct stat sb;
	int r = -EINVAL,
	    fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	*version = 0;
	if (fd < 0)
		return -EINVAL;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
		*ino = sb.st_ino;
		r = gmon_live_head_load(gmon_live_pread, &fd, h, version);
	}
	close(fd);
	return r;
}

/* Whether the process that made live file path still runs (gmon/live.h's
 * one check, which pc_recover makes too, on the same head). A head that
 * its process was rewriting on every read is of the pid its name says. */
static int
live_running(const char *path)
{
	struct gmon_live_head h;
	uint32_t version;
	ino_t ino = 0;
	int r = live_head(path, &h, &ino, &version);

	if (r == -EAGAIN)
		return gmon_live_owner_runs(live_pid(path), ino, 0);
	return r == 0 && gmon_live_runs(&h, ino);
}

/* Whether path is a live file of another version than this pcprof's:
 * -1 after one line naming it, where the command reads the run (say: it
 * exits 2); in pcprof run, which must exit with its program's status, 1
 * and the file left alone: the report says it. */
static int
refuse_version(const char *path, int say)
{
	struct gmon_live_head h;
	uint32_t version;
	ino_t ino;

	if (live_head(path, &h, &ino, &version) != -EPROTO)
		return 0;
	if (!say)
		return 1;
	if (version)
		return pc_error(
			"'%s': a live file of version %u; this pcprof reads version %u "
			"(finish it with the pcprof of the libpc that wrote it)",
			path, (unsigned)version, GMON_LIVE_VERSION);
	return pc_error(
		"'%s': a live file of a version this pcprof cannot read", path);
}

void
recover_program_of(pid_t pid, char *buf, size_t size)
{
	char path[64], exe[PATH_MAX];
	const char *base;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if ((n = readlink(path, exe, sizeof(exe) - 1)) > 0) {
		exe[n] = 0;
		base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
		memcpy(buf, base, strnlen(base, size - 1));
		buf[strnlen(base, size - 1)] = 0;
		return;
	}
	snprintf(buf, size, "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if ((f = fopen(path, "re"))) {
		if (fgets(buf, (int)size, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
}

/* One line naming the processes of busy[0..n) that still run. */
static void
say_running(const char *dir, char **busy, size_t n)
{
	char list[512] = "", prog[256];
	size_t len = 0;

	for (size_t i = 0; i < n && i < 4; i++) {
		pid_t pid = live_pid(busy[i]);

		recover_program_of(pid, prog, sizeof(prog));
		len += (size_t)snprintf(
			list + len, len < sizeof(list) ? sizeof(list) - len : 0,
			"%spid %d, %s", i ? "; " : "", (int)pid, prog);
		if (len >= sizeof(list))
			len = sizeof(list) - 1;
	}
	/* raw names: pc_warn escapes the whole line once */
	pc_warn("%zu process%s still running (%s%s); `pcprof report %s` when %s",
		n, n == 1 ? "" : "es", list, n > 4 ? "; ..." : "", dir,
		n == 1 ? "it ends" : "they end");
}

/* Whether the live file at path is a regular file, which pc_recover may
 * open; a symlink, a FIFO or a directory of that name is left alone with
 * a note (pc_open_regular's words), never waited on. */
static int
regular_live(const char *path)
{
	const char *why;
	int fd = pc_open_regular(path, NULL, &why);

	if (fd < 0) {
		if (errno != ENOENT)
			pc_warn("note: '%s' left alone: %s", path, why);
		return 0;
	}
	close(fd);
	return 1;
}

int
recover_live_runs(const char *dir, pid_t pid)
{
	char path[PATH_MAX], profile[PATH_MAX];

	/* a profile's name in dir: gmon_live_name keeps its directory */
	return snprintf(profile, sizeof(profile), "%s/x", dir) <
		       (int)sizeof(profile) &&
	       !gmon_live_name(path, sizeof(path), profile, pid) &&
	       live_running(path);
}

size_t
recover_running(const char *dir)
{
	size_t n, running = 0;
	char **live = live_files(dir, &n);

	for (size_t i = 0; i < n; i++) {
		running += live_running(live[i]);
		free(live[i]);
	}
	free(live);
	return running;
}

/* The live files live[0..n) of dir finished (the caller keeps them); how
 * many, or -1 after one line. */
static int
recover_these(const char *dir, char **live, size_t n, int say)
{
	size_t nbusy = 0;
	char **busy = NULL;
	int done = 0, nolib = 0;

	for (size_t i = 0; i < n; i++) {
		char *path = live[i];
		int r = nolib || !regular_live(path) ?
				1 :
				refuse_version(path, say);

		if (r < 0) {
			free(busy);
			return -1;
		}
		if (r)
			continue;
		r = finish_apart(path);
		if (r == FIN_DONE)
			done++;
		else if (r == FIN_BUSY) {
			busy = pc_realloc(busy, (nbusy + 1) * sizeof(*busy));
			busy[nbusy++] = path;
		} else if (r == FIN_NOLIB)
			nolib = 1, pc_warn("'%s': profiles of processes that ended without "
					   "writing them are left unfinished: cannot load libpc.so",
					   dir);
		else if (r == FIN_NEWER)
			pc_warn("note: '%s' left alone: the profile it would be finished into is "
				"newer (a later process's, or its own finished one)",
				path);
		else if (r != FIN_NOTHING)
			pc_warn("'%s': cannot finish this profile: %s", path,
				r == FIN_PROTO ?
					"written by another version of libpc, or cut short" :
				r == FIN_DAMAGED ? "damaged" :
						   "cannot read it");
	}
	if (nbusy && say)
		say_running(dir, busy, nbusy);
	free(busy);
	return done;
}

int
recover_listed(struct run_listing *l, int say)
{
	char **live = pc_malloc((l->n + 1) * sizeof(*live));
	size_t n = 0;
	int done;

	for (size_t i = 0; i < l->n; i++)
		if (gmon_live_name_pid(l->names[i]))
			live[n++] = l->names[i];
	done = recover_these(l->dir, live, n, say);
	free(live);
	/* a finished live file made a profile, its manifest and its
	 * objects' files, which the listing has not */
	if (done > 0) {
		char *dir = pc_strdup(l->dir);	/* recover_list frees l's */

		if (recover_list(l, dir))
			done = -1;
		free(dir);
	}
	return done;
}
