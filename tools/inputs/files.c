/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The bottom of pcprof: one-line messages that name the file (err(3)
 * style, exit status 2 for bad input), libpc's files read and parsed with
 * every refusal a reader needs and no further than they show themselves to
 * be what they should (a manifest is read through runfiles.c).
 * Calls nothing else in pcprof but label.c's escaping of names.
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

int
pc_open_regular(const char *path, struct stat *sb, const char **why)
{
	struct stat own;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW), e;

	if (!sb)
		sb = &own;
	if (fd < 0) {
		e = errno;
		/* O_NOFOLLOW's ELOOP is a symlink at the end of the path */
		*why = e == ELOOP ? "a symbolic link" : strerror(e);
		errno = e;
		return -1;
	}
	if (fstat(fd, sb)) {
		e = errno;
		*why = strerror(e);
		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(sb->st_mode)) {
		*why = S_ISDIR(sb->st_mode) ? "is a directory" : "not a regular file";
		close(fd);
		errno = S_ISDIR(sb->st_mode) ? EISDIR : EINVAL;
		return -1;
	}
	return fd;
}

/* The file at path opened for reading (pc_open_regular), its size in
 * *size; exits with one line for what cannot be read or is empty. */
static int
open_input(const char *path, size_t *size)
{
	struct stat sb;
	const char *why;
	int fd = pc_open_regular(path, &sb, &why);

	if (fd < 0)
		pc_fatal("'%s': %s", path, why);
	if (sb.st_size == 0)
		pc_fatal("'%s': empty file", path);
	if ((uint64_t)sb.st_size > SIZE_MAX)
		pc_fatal("'%s': too large to read", path);
	*size = (size_t)sb.st_size;
	return fd;
}

/* Read fd into buf[*have..want); a file that shrank under us ends where
 * it ends, its size, *len, now what was read. */
static void
read_upto(int fd, const char *path, unsigned char *buf, size_t *have, size_t want,
	  size_t *len)
{
	while (*have < want) {
		ssize_t n = read(fd, buf + *have, want - *have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			pc_fatal("'%s': %s", path, strerror(errno));
		if (n == 0) {
			*len = *have;
			return;
		}
		*have += (size_t)n;
	}
}

/* A format that files.c reads: its _part parser (gmon.h), and what the
 * offset of its errors counts. */
struct file_format {
	int (*parse)(const void *buf, size_t have, size_t len, void *out,
		     struct gmon_error *err);
	const char *unit;
};

#define FIRST_READ	(64u << 10)	/* bytes read before the first parse */

/*
 * The file at path parsed into out, read no further than what was read
 * of it shows to be a valid beginning: first FIRST_READ bytes, then, as
 * long as the parser asks for more, to the end of the record they end in
 * and at least twice as far, so that parsing it again and again costs no
 * more than twice parsing it once. A file that is not of the format, or
 * whose records claim more than it holds, costs one small read whatever
 * its size. Exits with one line naming the file on any refusal.
 */
static void
read_format(const char *path, const struct file_format *fmt, void *out)
{
	struct gmon_error err;
	unsigned char *buf = NULL;
	size_t have = 0, len, want;
	int fd = open_input(path, &len), r;

	want = len < FIRST_READ ? len : FIRST_READ;
	for (;;) {
		buf = pc_realloc(buf, want);
		read_upto(fd, path, buf, &have, want, &len);
		r = fmt->parse(buf, have, len, out, &err);
		if (r != -EAGAIN || have >= len || err.need <= have)
			break;
		want = have > len / 2 ? len : 2 * have;
		if (err.need > want)
			want = err.need < len ? (size_t)err.need : len;
	}
	close(fd);
	free(buf);
	if (r == -ENOMEM)
		pc_fatal("'%s': out of memory", path);
	if (r)
		pc_fatal("'%s': %s at %s %llu", path, r == -EAGAIN ? "cannot be read whole" :
			 err.what, fmt->unit, (unsigned long long)err.offset);
}

static int
parse_gmon(const void *buf, size_t have, size_t len, void *out, struct gmon_error *err)
{
	return gmon_parse_part(buf, have, len, out, err);
}

static int
parse_stacks(const void *buf, size_t have, size_t len, void *out, struct gmon_error *err)
{
	return gmon_stacks_parse_part(buf, have, len, out, err);
}

static int
parse_objects(const void *buf, size_t have, size_t len, void *out, struct gmon_error *err)
{
	return gmon_objects_parse_part(buf, have, len, out, err);
}

void
pc_read_gmon(const char *path, struct gmon_profile *p)
{
	static const struct file_format f = { parse_gmon, "byte" };

	read_format(path, &f, p);
}

void
pc_read_stacks(const char *path, struct gmon_stacks *ss)
{
	static const struct file_format f = { parse_stacks, "byte" };

	read_format(path, &f, ss);
}

void
pc_read_objects(const char *path, struct gmon_objects *o)
{
	static const struct file_format f = { parse_objects, "line" };

	read_format(path, &f, o);
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
 * it, as it does on SIGINT, SIGTERM, SIGHUP or SIGPIPE. SIGXFSZ is
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
		memset(&ign, 0, sizeof(ign));
		ign.sa_handler = SIG_IGN;
		xfsz_ignored = sigaction(SIGXFSZ, &ign, &xfsz_as_found) == 0;
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
