/*
 * The bottom of pcprof: one-line messages that name the file (err(3)
 * style, exit status 2 for bad input), whole files read with every refusal
 * a reader needs, and whether a profile has a manifest beside it. Calls
 * nothing else in pcprof but label.c's escaping of names.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* asprintf */
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcprof.h"

/* The message is one line whatever the names in it hold: all of it is
 * escaped (label.c), so callers pass names as they are. */
static void
vwarn(const char *fmt, va_list ap)
{
	char *msg;

	fflush(stdout);
	if (vasprintf(&msg, fmt, ap) < 0) {
		fputs("pcprof: out of memory\n", stderr);
		return;
	}
	fprintf(stderr, "pcprof: %s\n", text_name(msg));
	free(msg);
}

void
pc_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
}

void
pc_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn(fmt, ap);
	va_end(ap);
	exit(EXIT_BAD_INPUT);
}

unsigned char *
pc_slurp(const char *path, size_t *len)
{
	struct stat sb;
	unsigned char *buf;
	size_t off = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		pc_fatal("'%s': %s", path, strerror(errno));
	if (fstat(fd, &sb))
		pc_fatal("'%s': %s", path, strerror(errno));
	if (S_ISDIR(sb.st_mode))
		pc_fatal("'%s': is a directory", path);
	if (!S_ISREG(sb.st_mode))
		pc_fatal("'%s': not a regular file", path);
	if (sb.st_size == 0)
		pc_fatal("'%s': empty file", path);
	buf = malloc((size_t)sb.st_size);
	if (!buf)
		pc_fatal("'%s': out of memory for %lld bytes", path, (long long)sb.st_size);
	while (off < (size_t)sb.st_size) {
		ssize_t n = read(fd, buf + off, (size_t)sb.st_size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			pc_fatal("'%s': %s", path, strerror(errno));
		if (n == 0)
			break;	/* shrank under us: parse what there is */
		off += (size_t)n;
	}
	close(fd);
	*len = off;
	return buf;
}

void
pc_parse_fatal(const char *path, int r, const struct gmon_error *err)
{
	if (r == -ENOMEM)
		pc_fatal("'%s': out of memory", path);
	if (r)
		pc_fatal("'%s': %s at byte %llu", path, err->what,
			 (unsigned long long)err->offset);
}

int
files_have_manifest(const char *gmon)
{
	struct stat sb;
	char *manifest;
	int r;

	if (asprintf(&manifest, "%s.objects", gmon) < 0)
		pc_fatal("out of memory");
	r = stat(manifest, &sb) == 0;
	free(manifest);
	return r;
}

const char *
pc_hex(const uint8_t *b, size_t n, char *buf)
{
	for (size_t i = 0; i < n; i++)
		sprintf(buf + 2 * i, "%02x", b[i]);
	buf[2 * n] = 0;
	return buf;
}

void *
pc_realloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		pc_fatal("out of memory");
	return q;
}

/*
 * Output files (out_open, out_commit). A regular file, or a name not there
 * yet, is written under a temporary name beside it and renamed over it
 * when whole, so that a failure leaves no partial file and a symlink there
 * is replaced, not written through; a file replaced keeps its mode. A
 * device or FIFO (/dev/stdout, /dev/full) is written as it is. A failure
 * after out_open exits through pc_fatal, and the temporary file goes with
 * it, as it does on SIGINT, SIGTERM, SIGHUP or SIGPIPE.
 */
static char *volatile pending_tmp;	/* read by drop_pending_and_die */

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
			pc_fatal("'%s': is a directory", path);
		if (!(o->f = fopen(path, "w")))
			pc_fatal("'%s': %s", path, strerror(errno));
		return o->f;
	}
	/* a file replaced keeps its permissions; a new one has the umask's */
	mode = lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? sb.st_mode & 07777 :
	       0666 & ~umask_now();
	if (asprintf(&o->tmp, "%s.XXXXXX", path) < 0)
		pc_fatal("out of memory");
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
		registered = 1;
	}
	if ((fd = mkostemp(o->tmp, O_CLOEXEC)) < 0)
		pc_fatal("'%s': %s", path, strerror(errno));
	pending_tmp = o->tmp;
	fchmod(fd, mode);
	if (!(o->f = fdopen(fd, "w")))
		pc_fatal("'%s': %s", path, strerror(errno));
	return o->f;
}

void
out_commit(struct out_file *o)
{
	int bad = ferror(o->f);

	if (o->f == stdout) {
		if (fflush(stdout) || bad)
			pc_fatal("%s: %s", o->path, strerror(errno ? errno : EIO));
		return;
	}
	if (fclose(o->f) || bad)
		pc_fatal("'%s': %s", o->path, strerror(errno ? errno : EIO));
	o->f = NULL;
	if (o->tmp) {
		if (rename(o->tmp, o->path))
			pc_fatal("'%s': %s", o->path, strerror(errno));
		pending_tmp = NULL;
		free(o->tmp);
		o->tmp = NULL;
	}
}
