/*
 * Profiles that a process left unfinished: libpc keeps its counters in a
 * live file (DIR/.pcprof.PID.live) from the start, and writes the profile
 * at the end. A process that never reached its end (SIGKILL, the OOM
 * killer, a raw exit_group) leaves the live file; before a run directory
 * is read, each such file is finished into the profile the process would
 * have written, by libpc's own writer: libpc.so is loaded with PC_RECOVER
 * set, so that it does not profile pcprof, and its pc_recover() called.
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

/* libpc's pc_recover, loaded once; NULL (said once) where it cannot be. */
static int (*recover_fn(const char *dir))(const char *)
{
	static int (*fn)(const char *);
	static int tried;
	char lib[PATH_MAX];
	void *h;

	if (tried)
		return fn;
	tried = 1;
	if (libpc_find(lib, sizeof(lib))) {
		pc_warn("'%s': profiles of processes that ended without writing them are left "
			"unfinished: cannot find libpc.so", dir);
		return NULL;
	}
	setenv("PC_RECOVER", "1", 1);
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	unsetenv("PC_RECOVER");
	if (!h || !(fn = (int (*)(const char *))dlsym(h, "pc_recover")))
		pc_warn("'%s': cannot load pc_recover from '%s': %s", dir, lib, dlerror());
	return fn;
}

int
recover_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int done = 0;

	if (!d)
		return 0;	/* the reader says why */
	while ((e = readdir(d))) {
		int (*fn)(const char *);
		char *path;
		int r;

		if (!is_live(e->d_name) || !(fn = recover_fn(dir)))
			continue;
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0)
			pc_fatal("out of memory");
		r = fn(path);
		if (r == 0)
			done++;
		else if (r == -EBUSY)
			pc_warn("'%s': its process is still running; its profile is not "
				"written yet", path);
		else if (r < 0)
			pc_warn("'%s': cannot finish this profile: %s", path,
				r == -EPROTO ? "written by another version of libpc, or cut short" :
				r == -EBADMSG || r == -EINVAL ? "damaged" : strerror(-r));
		free(path);
	}
	closedir(d);
	return done;
}
