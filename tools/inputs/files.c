/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpc's files opened and read, and parsed with every refusal a reader
 * needs and no further than they show themselves to be what they should
 * (a manifest is read through runfiles.c). Calls gmon/'s parsers and the
 * messages of base/.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* asprintf */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcprof.h"

/* The file at path opened for reading (pc_open_regular), its size in
 * *size; -1 after one line for what cannot be read or is empty, or -2,
 * unsaid, where absent_ok and there is nothing at path (as access(2)
 * sees it: a dangling symbolic link too). */
static int
open_input(const char *path, size_t *size, int absent_ok,
	   struct timespec *mtime)
{
	struct stat sb;
	const char *why;
	int fd = pc_open_regular(path, &sb, &why);

	if (fd < 0 && absent_ok &&
	    (errno == ENOENT ||
	     (errno == ELOOP && access(path, F_OK) && errno == ENOENT)))
		return -2;
	if (fd < 0)
		return pc_error("'%s': %s", path, why);
	if (sb.st_size == 0 || (uint64_t)sb.st_size > SIZE_MAX) {
		close(fd);
		return pc_error("'%s': %s", path,
				sb.st_size ? "too large to read" :
					     "empty file");
	}
	*size = (size_t)sb.st_size;
	if (mtime)
		*mtime = sb.st_mtim;
	return fd;
}

/* Read fd into buf[*have..want); a file that shrank under us ends where
 * it ends, its size, *len, now what was read. 0, or -1 after one line. */
static int
read_upto(int fd, const char *path, unsigned char *buf, size_t *have,
	  size_t want, size_t *len)
{
	while (*have < want) {
		ssize_t n = read(fd, buf + *have, want - *have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return pc_error("'%s': %s", path, strerror(errno));
		if (n == 0) {
			*len = *have;
			return 0;
		}
		*have += (size_t)n;
	}
	return 0;
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
 * its size. 0, or -1 after one line naming the file on any refusal.
 */
static int
read_format(const char *path, const struct file_format *fmt, void *out,
	    int absent_ok, struct timespec *mtime)
{
	struct gmon_error err;
	unsigned char *buf = NULL;
	size_t have = 0, len = 0, want;
	int fd = open_input(path, &len, absent_ok, mtime), r;

	if (fd < 0)
		return fd == -2 ? 1 : -1;
	want = len < FIRST_READ ? len : FIRST_READ;
	for (;;) {
		buf = pc_realloc(buf, want);
		if (read_upto(fd, path, buf, &have, want, &len)) {
			close(fd);
			free(buf);
			return -1;
		}
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
		return pc_error("'%s': out of memory", path);
	if (r)
		return pc_error("'%s': %s at %s %llu", path,
				r == -EAGAIN ? "cannot be read whole" :
					       err.what,
				fmt->unit, (unsigned long long)err.offset);
	return 0;
}

static int
parse_gmon(const void *buf, size_t have, size_t len, void *out,
	   struct gmon_error *err)
{
	return gmon_parse_part(buf, have, len, out, err);
}

static int
parse_stacks(const void *buf, size_t have, size_t len, void *out,
	     struct gmon_error *err)
{
	return gmon_stacks_parse_part(buf, have, len, out, err);
}

static int
parse_objects(const void *buf, size_t have, size_t len, void *out,
	      struct gmon_error *err)
{
	return gmon_objects_parse_part(buf, have, len, out, err);
}

int
pc_read_gmon(const char *path, struct gmon_profile *p)
{
	static const struct file_format f = { parse_gmon, "byte" };

	return read_format(path, &f, p, 0, NULL);
}

int
pc_read_gmon_at(const char *path, struct gmon_profile *p,
		struct timespec *mtime)
{
	static const struct file_format f = { parse_gmon, "byte" };

	return read_format(path, &f, p, 0, mtime);
}

int
pc_read_stacks(const char *path, struct gmon_stacks *ss)
{
	static const struct file_format f = { parse_stacks, "byte" };

	return read_format(path, &f, ss, 0, NULL);
}

int
pc_read_stacks_if(const char *path, struct gmon_stacks *ss)
{
	static const struct file_format f = { parse_stacks, "byte" };

	return read_format(path, &f, ss, 1, NULL);
}

int
pc_read_objects(const char *path, struct gmon_objects *o)
{
	static const struct file_format f = { parse_objects, "line" };

	return read_format(path, &f, o, 0, NULL);
}

int
pc_read_objects_if(const char *path, struct gmon_objects *o)
{
	static const struct file_format f = { parse_objects, "line" };

	return read_format(path, &f, o, 1, NULL);
}

int
pc_read_objects_each(char *const *paths, size_t n,
		     const unsigned char *absent_ok, struct gmon_objects **o)
{
	static const struct file_format f = { parse_objects, "line" };

	for (size_t i = 0; i < n; i++) {
		int r;

		o[i] = pc_realloc(NULL, sizeof(*o[i]));
		r = read_format(paths[i], &f, o[i], absent_ok[i], NULL);
		if (r) {
			free(o[i]);
			o[i] = NULL;
		}
		if (r < 0)
			return -1;
	}
	return 0;
}
