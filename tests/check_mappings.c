/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/mappings.c: mmap, munmap, mremap, mlockall and
 * munlockall as libpc interposes them, linked into this test program so
 * that its own calls go through them. The copies are real: this program's
 * executable segment mapped again from /proc/self/exe, and from a copy of
 * the file (another inode) named as a loaded object.
 *
 * What must hold: a PC in a copy turns into the address of the same bytes
 * in the loader's mapping (compared byte for byte, not by the formula),
 * for a copy from inside the segment and one that starts before it (the
 * bytes before the segment stay as they are); nothing is learned before
 * start-up, from a mapping not executable, anonymous, or of a file that is
 * no known object (another inode: PC_SCOPE=main), while a known object's
 * copy is (PC_SCOPE=all); munmap of one page of a copy, mremap, and a
 * mapping over it (MAP_FIXED) retire it. The calls' results and errno are
 * the system's, errno kept across libpc's own failing calls. mlockall with
 * MCL_FUTURE stops the live file mapping more of itself, and a failed
 * call leaves that as it was.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../preload/pc.h"
#include "../preload/live.h"
#include "../preload/objects.h"
#include "unit.h"

/* this program's load bias and its first executable PT_LOAD */
struct seg {
	uintptr_t bias;
	ElfW(Phdr) ph;
	int found;
};

static int
first_exec(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct seg *s = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD &&
		    (info->dlpi_phdr[i].p_flags & PF_X)) {
			s->bias = info->dlpi_addr;
			s->ph = info->dlpi_phdr[i];
			s->found = 1;
			break;
		}
	return 1;	/* the main program comes first */
}

static size_t page;

/* Start-up done as libpc's is, for this program: its segment in *s. */
static void
setup(struct seg *s, int scope_all)
{
	struct pc_config *c;

	unit_preload_reset();
	unit_objects_init();
	c = unit_config();
	page = (size_t)sysconf(_SC_PAGESIZE);
	memset(s, 0, sizeof(*s));
	dl_iterate_phdr(first_exec, s);
	ck_assert(s->found);
	/* room for a copy that starts a page before it and ends 2 pages in */
	ck_assert_uint_ge(s->ph.p_filesz, 3 * page);
	c->bias = s->bias;
	c->scope_all = scope_all;
	pc_mappings_resolve();
	pc_mappings_start();
}

/* The runtime address of the byte at file offset fo of segment s. */
static uintptr_t
original(const struct seg *s, uintptr_t fo)
{
	return s->bias + s->ph.p_vaddr + (fo - s->ph.p_offset);
}

/* len bytes at m are the program's own text there */
static void
assert_copy(const struct seg *s, const unsigned char *m, size_t len,
	    uintptr_t fo)
{
	for (size_t k = 0; k < len; k += 511) {
		uintptr_t o = pc_copy_original_from_handler((uintptr_t)m + k);

		ck_assert_uint_eq(o, original(s, fo + k));
	}
	ck_assert_uint_eq(
		pc_copy_original_from_handler((uintptr_t)m + len - 1),
		original(s, fo + len - 1));
	ck_assert_int_eq(memcmp((const void *)pc_copy_original_from_handler(
					(uintptr_t)m),
				m, len),
			 0);
}

static void
assert_not_copy(const void *m, size_t len)
{
	for (size_t k = 0; k < len; k += page / 2)
		ck_assert_uint_eq(
			pc_copy_original_from_handler((uintptr_t)m + k),
			(uintptr_t)m + k);
}

/* A copy of this program at path: another inode, the same bytes. */
static void
copy_exe(char *path, size_t size)
{
	char buf[65536];
	int in = open("/proc/self/exe", O_RDONLY), out;
	ssize_t n;

	snprintf(path, size, "/tmp/pc-mappings-XXXXXX");
	out = mkstemp(path);
	ck_assert_int_ge(in, 0);
	ck_assert_int_ge(out, 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)n), n);
	ck_assert_int_eq(n, 0);
	close(in);
	close(out);
}

/* This program's text mapped again from /proc/self/exe, 2 pages from
 * inside its segment (at file offset *fo, fd open on it): a copy. */
static unsigned char *
map_inside(const struct seg *s, int *fd, uintptr_t *fo)
{
	unsigned char *m;

	*fd = open("/proc/self/exe", O_RDONLY);
	ck_assert_int_ge(*fd, 0);
	*fo = (s->ph.p_offset + page) & ~(uintptr_t)(page - 1);
	m = mmap(NULL, 2 * page, PROT_READ | PROT_EXEC, MAP_PRIVATE, *fd,
		 (off_t)*fo);
	ck_assert_ptr_ne(m, MAP_FAILED);
	assert_copy(s, m, 2 * page, *fo);
	return m;
}

START_TEST(test_mappings_copy_of_text_names_the_original)
{
	struct seg s;
	int fd;
	uintptr_t fo, before;
	unsigned char *m, *b;

	setup(&s, 0);
	/* from inside the segment, 2 pages */
	m = map_inside(&s, &fd, &fo);
	/* from the page before the segment's first byte, where it has one:
	 * only the segment's bytes are a copy */
	before = (s.ph.p_offset & ~(uintptr_t)(page - 1));
	if (before == s.ph.p_offset && before >= page)
		before -= page;
	b = mmap(NULL, 3 * page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd,
		 (off_t)before);
	ck_assert_ptr_ne(b, MAP_FAILED);
	assert_not_copy(b, s.ph.p_offset - before);
	assert_copy(&s, b + (s.ph.p_offset - before),
		    3 * page - (s.ph.p_offset - before), s.ph.p_offset);
	/* one page unmapped retires the whole copy; the other stays */
	ck_assert_int_eq(munmap(m + page, page), 0);
	assert_not_copy(m, page);
	assert_copy(&s, b + (s.ph.p_offset - before), page, s.ph.p_offset);
	/* a mapping over part of it (MAP_FIXED) retires it too */
	ck_assert_ptr_eq(mmap(b, s.ph.p_offset - before + 1, PROT_READ,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
			 b);
	assert_not_copy(b, 3 * page);
	close(fd);
}
END_TEST

START_TEST(test_mappings_mremap_retires_a_copy)
{
	struct seg s;
	int fd;
	uintptr_t fo;
	unsigned char *m, *r, *d;

	setup(&s, 0);
	m = map_inside(&s, &fd, &fo);
	r = mremap(m, 2 * page, page, 0);	/* shrunk in place */
	ck_assert_ptr_eq(r, m);
	assert_not_copy(m, page);
	/* moved elsewhere: where it was is no copy */
	m = mmap(NULL, 2 * page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd,
		 (off_t)fo);
	ck_assert_ptr_ne(m, MAP_FAILED);
	assert_copy(&s, m, 2 * page, fo);
	d = mmap(NULL, 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(d, MAP_FAILED);
	r = mremap(m, 2 * page, 2 * page, MREMAP_MAYMOVE | MREMAP_FIXED, d);
	ck_assert_ptr_eq(r, d);
	assert_not_copy(m, 2 * page);
	close(fd);
}
END_TEST

START_TEST(test_mappings_learn_nothing_from_what_is_no_copy)
{
	struct seg s;
	char path[64];
	int fd, other;
	uintptr_t fo;
	unsigned char *m;

	setup(&s, 0);
	fd = open("/proc/self/exe", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	fo = (s.ph.p_offset + page) & ~(uintptr_t)(page - 1);
	/* not executable */
	m = mmap(NULL, page, PROT_READ, MAP_PRIVATE, fd, (off_t)fo);
	ck_assert_ptr_ne(m, MAP_FAILED);
	assert_not_copy(m, page);
	/* anonymous */
	m = mmap(NULL, page, PROT_READ | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	assert_not_copy(m, page);
	/* the same bytes from another inode, no object under PC_SCOPE=main */
	copy_exe(path, sizeof(path));
	other = open(path, O_RDONLY);
	ck_assert_int_ge(other, 0);
	m = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, other,
		 (off_t)fo);
	ck_assert_ptr_ne(m, MAP_FAILED);
	assert_not_copy(m, page);
	close(other);
	unlink(path);
	close(fd);
}
END_TEST

/* PC_SCOPE=all: a loaded object's file, found by its path's inode */
START_TEST(test_mappings_copy_of_a_loaded_object)
{
	struct seg s;
	char path[64];
	int fd;
	uintptr_t fo;
	unsigned char *m;

	setup(&s, 1);
	copy_exe(path, sizeof(path));
	/* an object that is not there first: it is skipped, errno kept */
	pc_objs->objs[1].path = (char *)"/nonexistent/libgone.so";
	pc_objs->objs[1].loaded = 1;
	pc_objs->objs[2].path = path;
	pc_objs->objs[2].loaded = 1;
	pc_objs->objs[2].bias = s.bias;
	pc_objs->nobjs = 3;
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	fo = (s.ph.p_offset + page) & ~(uintptr_t)(page - 1);
	errno = 4242;
	m = mmap(NULL, 2 * page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd,
		 (off_t)fo);
	ck_assert_int_eq(errno, 4242);
	ck_assert_ptr_ne(m, MAP_FAILED);
	assert_copy(&s, m, 2 * page, fo);
	/* unloaded: its file's copies are not learned */
	pc_objs->objs[2].loaded = 0;
	m = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd,
		 (off_t)fo);
	ck_assert_ptr_ne(m, MAP_FAILED);
	assert_not_copy(m, page);
	close(fd);
	unlink(path);
}
END_TEST

START_TEST(test_mappings_return_what_the_system_returns)
{
	struct seg s;
	void *m;

	setup(&s, 0);
	errno = 0;
	ck_assert_ptr_eq(mmap(NULL, page, PROT_READ, MAP_PRIVATE, -1, 0),
			 MAP_FAILED);
	ck_assert_int_eq(errno, EBADF);
	errno = 0;
	ck_assert_int_eq(munmap((char *)&s + 1, page), -1);
	ck_assert_int_eq(errno, EINVAL);
	m = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	errno = 77;
	ck_assert_int_eq(munmap(m, page), 0);
	ck_assert_int_eq(errno, 77);
	errno = 0;
	ck_assert_ptr_eq(mremap(m, page, 2 * page, 0), MAP_FAILED);
	ck_assert_int_eq(errno, EFAULT);
}
END_TEST

START_TEST(test_mappings_mlockall_future_stops_live_mapping)
{
	int r;

	ck_assert_int_eq(pc_live_map_locked(0), 0);
	/* refused (a flag the kernel has not): as it was, errno the call's */
	errno = 0;
	ck_assert_int_eq(mlockall(MCL_FUTURE | 0x100), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(pc_live_map_locked(-1), 0);
	r = mlockall(MCL_FUTURE);
	if (r) {	/* no RLIMIT_MEMLOCK: refused, as it was */
		ck_assert_int_eq(pc_live_map_locked(-1), 0);
		return;
	}
	ck_assert_int_eq(pc_live_map_locked(-1), 1);
	ck_assert_int_eq(munlockall(), 0);
	ck_assert_int_eq(pc_live_map_locked(-1), 0);
}
END_TEST

Suite *
mappings_suite(void)
{
	Suite *s = suite_create("mappings");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_mappings_copy_of_text_names_the_original);
	tcase_add_test(t, test_mappings_mremap_retires_a_copy);
	tcase_add_test(t, test_mappings_learn_nothing_from_what_is_no_copy);
	tcase_add_test(t, test_mappings_copy_of_a_loaded_object);
	tcase_add_test(t, test_mappings_return_what_the_system_returns);
	tcase_add_test(t, test_mappings_mlockall_future_stops_live_mapping);
	suite_add_tcase(s, t);
	return s;
}
