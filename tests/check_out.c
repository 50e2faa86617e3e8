/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/out.c, the writer's primitives, read back with
 * gmon/read.c. Cases:
 *  - a file written through a temporary beside it and renamed: its bytes
 *    at the path, no temporary left, an older file replaced (a new
 *    inode), its mode 0666 less the umask;
 *  - a symbolic link or a directory at the path: refused (-ELOOP,
 *    -EISDIR) and left as it was; a directory that is not there: -ENOENT
 *    and no temporary;
 *  - a text segment's counters as histogram records: a count in each of
 *    two pages far apart, one over 65535 (carried in two records), at
 *    their link-time addresses and at the rate; pages never touched not
 *    read; no sample at all: one empty bin just past the text.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../gmon/gmon.h"
#include "../preload/pc.h"
#include "../preload/profil.h"
#include "unit.h"

static char dir[64];

static void
setup(void)
{
	unit_preload_reset();
	snprintf(dir, sizeof(dir), "/tmp/pc-out-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static char *
at(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
	return buf;
}

/* The names in dir, sorted, joined by spaces. */
static void
names(char *buf, size_t size)
{
	struct dirent **v;
	int n = scandir(dir, &v, NULL, alphasort);

	ck_assert_int_ge(n, 0);
	buf[0] = 0;
	for (int i = 0; i < n; i++) {
		if (v[i]->d_name[0] != '.' || strlen(v[i]->d_name) > 2) {
			if (buf[0])
				strncat(buf, " ", size - strlen(buf) - 1);
			strncat(buf, v[i]->d_name, size - strlen(buf) - 1);
		}
		free(v[i]);
	}
	free(v);
}

static int
body_header(struct gmon_sink *s)
{
	return gmon_sink_header(s, NULL);
}

/* The profile in the file at p. */
static void
parse_file(const char *p, struct gmon_profile *prof)
{
	static unsigned char buf[1 << 16];
	struct gmon_error err;
	int fd = open(p, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	ck_assert_int_gt(n, 0);
	ck_assert_int_lt(n, (ssize_t)sizeof(buf));
	ck_assert_int_eq(gmon_parse(buf, (size_t)n, prof, &err), 0);
}

START_TEST(test_out_through_a_temporary)
{
	char p[128], list[256];
	struct gmon_profile prof;
	struct stat st, before;
	mode_t old = umask(022);

	at(p, sizeof(p), "gmon.out");
	ck_assert_int_eq(pc_dump_file(p, body_header), 0);
	names(list, sizeof(list));
	ck_assert_str_eq(list, "gmon.out");
	ck_assert_int_eq(stat(p, &before), 0);
	ck_assert_uint_eq(before.st_mode & 07777, 0644);
	parse_file(p, &prof);
	ck_assert_uint_eq(prof.nhists, 0);
	ck_assert_uint_eq(prof.narcs, 0);
	gmon_profile_release(&prof);

	/* written again: a new file renamed over the old one */
	ck_assert_int_eq(pc_dump_file(p, body_header), 0);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_uint_ne(st.st_ino, before.st_ino);
	names(list, sizeof(list));
	ck_assert_str_eq(list, "gmon.out");
	umask(old);
}
END_TEST

START_TEST(test_out_refuses_link_and_directory)
{
	char p[128], target[128], list[256];
	struct stat st;

	at(target, sizeof(target), "target");
	at(p, sizeof(p), "gmon.out");
	ck_assert_int_eq(symlink(target, p), 0);
	ck_assert_int_eq(pc_dump_file(p, body_header), -ELOOP);
	ck_assert_int_eq(lstat(p, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	names(list, sizeof(list));
	ck_assert_str_eq(list, "gmon.out");	/* the link alone */

	at(p, sizeof(p), "d");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	ck_assert_int_eq(pc_dump_file(p, body_header), -EISDIR);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));

	at(p, sizeof(p), "none/gmon.out");
	ck_assert_int_eq(pc_dump_file(p, body_header), -ENOENT);
	names(list, sizeof(list));
	ck_assert_str_eq(list, "d gmon.out");
}
END_TEST

/* The text dump_texts writes: 4 pages of counters, mapped anonymous so
 * that the pages never written are not resident. */
static struct pc_text text;

static int
body_texts(struct gmon_sink *s)
{
	gmon_sink_header(s, NULL);
	return pc_dump_texts(s, &text, 1);
}

static void
text_make(void)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);

	memset(&text, 0, sizeof(text));
	text.map_len = 4 * page;
	text.prof.buf = mmap(NULL, text.map_len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(text.prof.buf, MAP_FAILED);
	text.prof.bufsiz = text.map_len;
	text.prof.scale = PC_SCALE;	/* a counter per 2 bytes */
	text.link_low = 0x400000;
}

/* The count of p's histogram at address a, or -1 where no record is. */
static long long
count_at(const struct gmon_profile *p, uint64_t a)
{
	for (size_t i = 0; i < p->nhists; i++) {
		const struct gmon_hist *h = &p->hists[i];
		uint64_t bin = (h->high - h->low) / h->nbins;

		if (a >= h->low && a < h->high)
			return (long long)h->counts[(a - h->low) / bin];
	}
	return -1;
}

START_TEST(test_out_texts)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const size_t last = 3 * page / sizeof(uint32_t) + 17;
	unsigned char vec[4];
	struct gmon_profile prof;
	char p[128];

	text_make();
	unit_config()->hz = 250;
	text.prof.buf[10] = 3;
	text.prof.buf[last] = 70000;
	/* the second and third pages were never touched */
	ck_assert_int_eq(mincore(text.prof.buf, text.map_len, vec), 0);
	ck_assert_int_eq(vec[1] & 1, 0);
	ck_assert_int_eq(vec[2] & 1, 0);
	ck_assert_int_eq(pc_dump_file(at(p, sizeof(p), "g"), body_texts), 0);
	ck_assert_int_eq(mincore(text.prof.buf, text.map_len, vec), 0);
	ck_assert_int_eq(vec[1] & 1, 0);
	ck_assert_int_eq(vec[2] & 1, 0);

	parse_file(p, &prof);
	ck_assert_uint_ge(prof.nhists, 1);
	ck_assert_uint_eq(prof.hists[0].rate, 250);
	ck_assert_uint_eq(gmon_profile_samples(&prof), 70003);
	ck_assert_int_eq(count_at(&prof, 0x400000 + 10 * 2), 3);
	ck_assert_int_eq(count_at(&prof, 0x400000 + last * 2), 70000);
	ck_assert_int_le(count_at(&prof, 0x400000 + last * 2 + 2), 0);
	ck_assert_int_le(count_at(&prof, 0x400000 + 11 * 2), 0);
	gmon_profile_release(&prof);
	munmap(text.prof.buf, text.map_len);
}
END_TEST

START_TEST(test_out_texts_without_samples)
{
	const uint64_t end = 0x400000 + 4 * (uint64_t)sysconf(_SC_PAGESIZE) /
				     sizeof(uint32_t) * 2;
	struct gmon_profile prof;
	char p[128];

	text_make();
	ck_assert_int_eq(pc_dump_file(at(p, sizeof(p), "g"), body_texts), 0);
	parse_file(p, &prof);
	ck_assert_uint_eq(prof.nhists, 1);
	ck_assert_uint_eq(prof.hists[0].low, end);
	ck_assert_uint_eq(prof.hists[0].high, end + 2);
	ck_assert_uint_eq(prof.hists[0].nbins, 1);
	ck_assert_uint_eq(prof.hists[0].counts[0], 0);
	ck_assert_uint_eq(prof.hists[0].rate, 1000);
	gmon_profile_release(&prof);
	munmap(text.prof.buf, text.map_len);
}
END_TEST

Suite *
out_suite(void)
{
	Suite *s = suite_create("out");
	TCase *t = tcase_create("core");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_out_through_a_temporary);
	tcase_add_test(t, test_out_refuses_link_and_directory);
	tcase_add_test(t, test_out_texts);
	tcase_add_test(t, test_out_texts_without_samples);
	suite_add_tcase(s, t);
	return s;
}
