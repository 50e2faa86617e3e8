/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The directory of pcprof compare's runs: made (or found empty), and
 * what compare made in it removed at exit, on a failure or a stop, unless
 * the runs are to be kept. compare.c and compare_runs.c call it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands/compare.h"
#include "commands/launch.h"

/*
 * What is removed at exit unless the runs are to be kept: the run
 * directories compare made in cleanup_dir, each with the files in it
 * (libpc writes files only), by descriptor and never through a symlink;
 * then cleanup_dir itself if compare made it and it is empty by then.
 * Nothing else in it is touched.
 */
static const char *cleanup_dir;
static int cleanup_self;
static char **made;		/* names of run directories in cleanup_dir */
static size_t nmade;

/* Remove run directory name from the directory open as top. */
static void
remove_run_dir(int top, const char *name)
{
	int fd = openat(top, name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *e;

	if (fd >= 0 && (d = fdopendir(fd))) {
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(fd, e->d_name, 0);
		closedir(d);
	} else if (fd >= 0) {
		close(fd);
	}
	unlinkat(top, name, AT_REMOVEDIR);
}

static void
cleanup(void)
{
	int top;

	if (!cleanup_dir)
		return;
	top = open(cleanup_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0)
		return;
	for (size_t i = 0; i < nmade; i++)
		if (made[i])
			remove_run_dir(top, made[i]);
	close(top);
	if (cleanup_self)
		rmdir(cleanup_dir);
}

/* Note a run directory made in cleanup_dir, to be removed on a failure. */
void
compare_note_made(const char *name)
{
	char **v = realloc(made, (nmade + 1) * sizeof(*v));

	if (!v || !(v[nmade] = strdup(name)))
		pc_fatal("out of memory");
	made = v;
	nmade++;
}

/* The runs' directory: -o's, made or empty, or a new temporary one. */
void
compare_make_dir(struct compare *c)
{
	char abs[PATH_MAX];

	if (!c->dir[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(c->dir, sizeof(c->dir), "%s/pcprof-compare-XXXXXX",
			 t && *t ? t : "/tmp");
		if (!mkdtemp(c->dir))
			pc_fatal("'%s': %s", c->dir, strerror(errno));
		c->made_dir = 1;
	} else if (mkdir(c->dir, 0777) == 0) {
		c->made_dir = 1;
	} else if (errno != EEXIST) {
		pc_fatal("'%s': %s", c->dir, strerror(errno));
	} else {
		DIR *d = opendir(c->dir);
		struct dirent *ent;
		int n = 0;

		if (!d)
			pc_fatal("'%s': %s", c->dir, strerror(errno));
		while ((ent = readdir(d)))
			n += strcmp(ent->d_name, ".") && strcmp(ent->d_name, "..");
		closedir(d);
		if (n)
			pc_fatal("'%s': not empty (name a new or an empty directory for the runs)",
				 c->dir);
	}
	if (!realpath(c->dir, abs))
		pc_fatal("'%s': %s", c->dir, strerror(errno));
	snprintf(c->dir, sizeof(c->dir), "%s", abs);
	cleanup_dir = c->dir;
	cleanup_self = c->made_dir;
	atexit(cleanup);
}

/* Remove a disturbed run's directory (the last one made). */
void
compare_remove_run(const struct compare *c, const char *name)
{
	int top = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (top >= 0) {
		remove_run_dir(top, name);
		close(top);
	}
	if (nmade && made[nmade - 1] && !strcmp(made[nmade - 1], name)) {
		free(made[nmade - 1]);
		made[--nmade] = NULL;
	}
}

/* A signal asked compare to stop: the command has ended; clean up and
 * end as the signal would have. */
void
compare_stop_now(void)
{
	int sig = launch_stopped();

	cleanup();
	cleanup_dir = NULL;
	signal(sig, SIG_DFL);
	raise(sig);
	_exit(128 + sig);
}

void
compare_keep_runs(void)
{
	cleanup_dir = NULL;
}
