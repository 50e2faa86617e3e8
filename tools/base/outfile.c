/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one way pcprof writes a file: whole or not at all. Calls nothing in
 * pcprof but msg.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* asprintf */
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"

/*
 * Output files (out_open, out_commit). A regular file, or a name not there
 * yet, is written under a temporary name beside it and renamed over it
 * when whole, so that a failure leaves no partial file and a symlink there
 * is replaced, not written through; a file replaced keeps its mode. A
 * device or FIFO (/dev/stdout, /dev/full) is written as it is. A failure
 * is one line and an error returned; the temporary file goes when pcprof
 * exits, as it does on SIGINT, SIGTERM, SIGHUP or SIGPIPE. SIGXFSZ is
 * ignored from the first out_open on, so that a file over RLIMIT_FSIZE
 * is a write that fails with EFBIG (one line, the temporary removed), not
 * a pcprof killed with its temporary left behind.
 */
static char *volatile pending_tmp;	/* read by drop_pending_and_die */
static struct sigaction xfsz_as_found;	/* before out_open ignored it */
static int xfsz_ignored;

void
out_signals_as_found(void)
{
	if (xfsz_ignored)
		sigaction(SIGXFSZ, &xfsz_as_found, NULL);
}

static mode_t
umask_now(void)
{
	mode_t m = umask(0);

	umask(m);
	return m;
}

static void
drop_pending(void)
{
	if (pending_tmp)
		unlink(pending_tmp);
}

void
out_drop_from_handler(void)
{
	drop_pending();
}

/* A signal that ends pcprof while it writes takes the temporary file with
 * it, then ends pcprof as it would have. AS-safe: unlink, signal, raise. */
static void
drop_pending_and_die(int sig)
{
	drop_pending();
	signal(sig, SIG_DFL);
	raise(sig);
}

FILE *
out_open(struct out_file *o, const char *path)
{
	static int registered;
	struct sigaction ign;
	struct stat sb;
	mode_t mode;
	int fd;

	memset(o, 0, sizeof(*o));
	o->path = path;
	if (!path || !strcmp(path, "-")) {
		o->path = "standard output";
		o->f = stdout;
		return o->f;
	}
	/* lstat: a symlink is replaced, never written through */
	if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode)) {
		if (S_ISDIR(sb.st_mode))
			return pc_error("'%s': is a directory", path), NULL;
		if (!(o->f = fopen(path, "w")))
			return pc_error("'%s': %s", path, strerror(errno)), NULL;
		return o->f;
	}
	/* a file replaced keeps its permissions; a new one has the umask's */
	mode = lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? sb.st_mode & 07777 :
	       0666 & ~umask_now();
	o->tmp = pc_asprintf("%s.XXXXXX", path);
	if (!registered) {
		static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

		atexit(drop_pending);
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
			struct sigaction sa, old;

			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = drop_pending_and_die;
			sigemptyset(&sa.sa_mask);
			/* a signal the caller ignores stays ignored, and one a
			 * command catches (compare: to clean its runs up) is
			 * left to it */
			if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
				sigaction(sigs[i], &sa, NULL);
		}
		memset(&ign, 0, sizeof(ign));
		ign.sa_handler = SIG_IGN;
		xfsz_ignored = sigaction(SIGXFSZ, &ign, &xfsz_as_found) == 0;
		registered = 1;
	}
	if ((fd = mkostemp(o->tmp, O_CLOEXEC)) < 0)
		return pc_error("'%s': %s", path, strerror(errno)), NULL;
	pending_tmp = o->tmp;
	fchmod(fd, mode);
	if (!(o->f = fdopen(fd, "w"))) {
		pc_error("'%s': %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	return o->f;
}

int
out_commit(struct out_file *o)
{
	int bad = ferror(o->f);

	if (o->f == stdout) {
		if (fflush(stdout) || bad)
			return pc_error("%s: %s", o->path, strerror(errno ? errno : EIO));
		return 0;
	}
	/* closed, even when that fails: out_discard must not close it again */
	bad = fclose(o->f) || bad;
	o->f = NULL;
	if (bad)
		return pc_error("'%s': %s", o->path, strerror(errno ? errno : EIO));
	if (o->tmp) {
		if (rename(o->tmp, o->path))
			return pc_error("'%s': %s", o->path, strerror(errno));
		pending_tmp = NULL;
		free(o->tmp);
		o->tmp = NULL;
	}
	return 0;
}

void
out_discard(struct out_file *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp) {
		unlink(o->tmp);
		pending_tmp = NULL;
		free(o->tmp);
		o->tmp = NULL;
	}
}
