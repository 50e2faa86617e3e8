/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The writer's primitives: a file written through a temporary beside its
 * target and renamed into place (a reader never sees half a file, and a
 * symlink at the target is never followed), text segments' counters as
 * histogram records, and text lines built without stdio. All AS-safe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>		/* rename(2), which is AS-safe; nothing else */
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pc.h"
#include "banned.h"

/* "dir/.base.<pid>.tmp" for "dir/base" */
static int
temp_name(char *dst, size_t size, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	char lbuf[PATH_MAX + 512];
	struct pc_line l = { lbuf, sizeof(lbuf), 0 };

	l.len = 0;
	pc_line_str(&l, ".");
	pc_line_str(&l, path + dirlen);
	pc_line_str(&l, ".");
	pc_line_u64(&l, (uint64_t)getpid());
	pc_line_str(&l, ".tmp");
	if (dirlen + l.len + 1 > size)
		return -ENAMETOOLONG;
	memcpy(dst, path, dirlen);
	memcpy(dst + dirlen, l.buf, l.len);
	dst[dirlen + l.len] = 0;
	return 0;
}

/*
 * The counters of one text segment, page by page: pc_live_resident tells
 * which pages a sample ever touched (mincore for anonymous memory, the
 * file system for the live file), so untouched text is skipped without
 * reading (and faulting in) its zero pages.
 */
struct text_run {
	struct gmon_sink *s;
	const struct pc_text *t;
};

static int
write_bins(size_t lo, size_t hi, void *arg)
{
	const struct text_run *w = arg;
	const struct pc_text *t = w->t;
	const unsigned bin = pc_profil_bin_bytes(t->prof.scale);
	const size_t nbins = t->prof.bufsiz / sizeof(uint32_t);
	size_t a = lo / sizeof(uint32_t), b = hi / sizeof(uint32_t);
	long r;

	if (b > nbins)
		b = nbins;
	if (a >= b)
		return 0;
	r = gmon_sink_counts(w->s, t->link_low + a * bin, bin,
			     (uint32_t)pc_cfg->hz, t->prof.buf + a, b - a);
	return r < 0 ? (int)r : 0;
}

static int
write_text(struct gmon_sink *s, const struct pc_text *t)
{
	struct text_run w = { s, t };
	int r = pc_live_each_written(t->prof.buf, t->map_len, write_bins, &w);

	return r ? r : s->error;
}

int
pc_dump_texts(struct gmon_sink *s, const struct pc_text *t, int n)
{
	uint64_t before = s->bytes;

	for (int i = 0; i < n && !s->error; i++)
		write_text(s, &t[i]);
	if (s->bytes == before && n > 0) {
		/* no sample here, but readers expect a histogram (and its
		 * rate): one empty bin just past the text, where no record of
		 * another run's file can reach, so that files still add up
		 * (gprof and pcprof refuse records that partly overlap) */
		static const uint16_t zero;
		const unsigned bin = pc_profil_bin_bytes(t[n - 1].prof.scale);
		uint64_t end = t[n - 1].link_low +
			       t[n - 1].prof.bufsiz / sizeof(uint32_t) * bin;

		gmon_sink_hist(s, end, end + bin, (uint32_t)pc_cfg->hz, &zero,
			       1);
	}
	return s->error;
}

/* Write body's output to path through a temporary file and rename: a
 * failed write leaves no temporary file. */
static int
dump_file(const char *path, int (*body)(struct gmon_sink *))
{
	char tmp[PATH_MAX];
	struct gmon_sink sink;
	struct stat st;
	int fd, r;

	/* refuse a symlink or a directory rather than replace it */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return S_ISLNK(st.st_mode) ? -ELOOP : -EISDIR;
	r = temp_name(tmp, sizeof(tmp), path);
	if (r)
		return r;
	fd = pc_open_new(tmp, O_WRONLY);
	if (fd < 0)
		return -errno;
	gmon_sink_init(&sink, fd);
	body(&sink);
	r = gmon_sink_flush(&sink);
	if (close(fd) && !r && errno != EINTR)
		r = -errno;
	if (!r && rename(tmp, path))
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}

int
pc_dump_file(const char *path, int (*body)(struct gmon_sink *))
{
	struct pc_xfsz h;
	int r, saved;

	pc_xfsz_block(&h);
	r = dump_file(path, body);
	saved = errno;
	pc_xfsz_release(&h, r == -EFBIG);
	errno = saved;
	return r;
}
