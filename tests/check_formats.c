/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The names and heads gmon/ builds and reads for libpc and pcprof alike:
 * PROFILE+OBJECT (gmon/write.c), the live file's name and versioned head,
 * and the one check of whether a live file's process runs (gmon/live.c),
 * here where /proc/PID/maps says EACCES.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../gmon/gmon.h"
#include "../gmon/live.h"
#include "unit.h"

/*
 * PROFILE+OBJECT: built once, read by trying each '+' of the last part
 * from the left. Cases: a plain name; an OBJECT with a '+'
 * (libstdc++.so.6); a PROFILE with one (g++); a '+' in a directory, which
 * is no split; a '+' first in the name (no empty PROFILE); none at all;
 * a buffer one byte short.
 */
START_TEST(test_object_names_built_and_split)
{
	static const struct {
		const char *path;
		size_t splits[6];
	} cases[] = {
		{ "gmon.out+libc.so.6", { 8 } },
		{ "d/gmon.out.cc1.8+libstdc++.so.6", { 16, 24, 25 } },
		{ "gmon.out.g++.42+libstdc++.so.6", { 10, 11, 15, 23, 24 } },
		{ "a+b/gmon.out", { 0 } },
		{ "a+b/+x", { 0 } },
		{ "gmon.out", { 0 } },
	};
	char buf[64];

	ck_assert_int_eq(gmon_object_name(buf, sizeof(buf), "r/gmon.out.g++.42",
					  "libstdc++.so.6"), 0);
	ck_assert_str_eq(buf, "r/gmon.out.g++.42+libstdc++.so.6");
	ck_assert_int_eq(gmon_object_name(buf, 13, "gmon.out", "libc"),
			 -ENAMETOOLONG);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(gmon_object_name(buf, 14, "gmon.out", "libc"), 0);
	ck_assert_str_eq(buf, "gmon.out+libc");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t k = 0, j = 0;

		while ((k = gmon_object_split(cases[i].path, k))) {
			ck_assert_msg(j < 5 && k == cases[i].splits[j], "%s: split %zu at %zu",
				      cases[i].path, j, k);
			j++;
		}
		ck_assert_msg(cases[i].splits[j] == 0, "%s: %zu splits",
			      cases[i].path, j);
	}
}
END_TEST

/* The live file's name, its aside name, and the pid read back; names
 * that are no live file's give 0. */
START_TEST(test_live_names_built_and_read)
{
	static const char *const not_live[] = {
		".pcprof.live", ".pcprof..live", ".pcprof.12x.live", "pcprof.12.live",
		".pcprof.12.lives", ".pcprof.99999999999.live", "gmon.out", "",
	};
	char buf[64], aside[80];

	ck_assert_int_eq(gmon_live_name(buf, sizeof(buf), "/r/gmon.out", 4242),
			 0);
	ck_assert_str_eq(buf, "/r/.pcprof.4242.live");
	ck_assert_int_eq(gmon_live_name_pid(buf), 4242);
	ck_assert_int_eq(gmon_live_name(buf, sizeof(buf), "gmon.out", 7), 0);
	ck_assert_str_eq(buf, ".pcprof.7.live");
	ck_assert_int_eq(gmon_live_name(buf, 14, "gmon.out", 7), -ENAMETOOLONG);
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(gmon_live_name(buf, 15, "gmon.out", 7), 0);
	ck_assert_int_eq(gmon_live_aside_name(aside, sizeof(aside), "/r/.pcprof.4242.live",
					      123456789), 0);
	ck_assert_str_eq(aside, "/r/.pcprof.4242.live.123456789.live");
	ck_assert_int_eq(gmon_live_name_pid(aside), 4242);
	for (size_t i = 0; i < sizeof(not_live) / sizeof(not_live[0]); i++)
		ck_assert_msg(gmon_live_name_pid(not_live[i]) == 0, "'%s'",
			      not_live[i]);
}
END_TEST

/*
 * The head: this version's is read back, in 40 bytes (version 1's 32
 * and the generation count); another version's (1, 3, 0, 12) is -EPROTO
 * with its number; bytes that are no head (short, another magic, no number, no
 * newline) are -EINVAL or -EPROTO with version 0.
 */
START_TEST(test_live_head_versions)
{
	struct gmon_live_head h, got;
	unsigned char raw[sizeof(h)];
	uint32_t version;

	gmon_live_head_init(&h, 4096, 321, 1234567890123ull);
	ck_assert_mem_eq(h.magic, "pcprof-live 2\n\0\0", 16);
	ck_assert_uint_eq(sizeof(h), 40); /* version 1's 32, the generation */
	ck_assert_uint_eq(h.gen, 0);
	memcpy(raw, &h, sizeof(h));
	ck_assert_int_eq(gmon_live_head_read(raw, sizeof(raw), &got, &version),
			 0);
	ck_assert_uint_eq(version, GMON_LIVE_VERSION);
	ck_assert_int_eq(got.pid, 321);
	ck_assert_uint_eq(got.hdr_size, 4096);
	ck_assert_uint_eq(got.start_s, 1234);
	ck_assert_int_eq(
		gmon_live_head_read(raw, sizeof(raw) - 1, &got, &version),
		-EINVAL);
	raw[12] = '1';	/* the version before the generation count */
	ck_assert_int_eq(gmon_live_head_read(raw, sizeof(raw), &got, &version),
			 -EPROTO);
	ck_assert_uint_eq(version, 1);
	raw[12] = '3';
	ck_assert_int_eq(gmon_live_head_read(raw, sizeof(raw), &got, &version),
			 -EPROTO);
	ck_assert_uint_eq(version, 3);
	raw[12] = '0';
	ck_assert_int_eq(gmon_live_head_read(raw, sizeof(raw), &got, &version),
			 -EPROTO);
	ck_assert_uint_eq(version, 0);
	memcpy(raw, "pcprof-live 12\n", 15);
	ck_assert_int_eq(gmon_live_head_read(raw, sizeof(raw), &got, &version),
			 -EPROTO);
	ck_assert_uint_eq(version, 12);
	memcpy(raw, "pcprof-live 2222", 16);
	ck_assert_int_eq(gmon_live_head_read(raw, sizeof(raw), &got, &version),
			 -EPROTO);
	ck_assert_uint_eq(version, 0);
	memcpy(raw, "pcprof-live x\n\0\0", 16);
	ck_assert_int_eq(gmon_live_head_read(raw, sizeof(raw), &got, &version),
			 -EPROTO);
	memcpy(raw, "pcprof-lime 2\n\0\0", 16);
	ck_assert_int_eq(gmon_live_head_read(raw, sizeof(raw), &got, &version),
			 -EINVAL);
}
END_TEST

/* Become nobody where this runs as root, so that /proc is as it is for
 * a user: 0, or -1. */
static int
as_user(void)
{
	return geteuid() != 0 || (setgroups(0, NULL) == 0 &&
				  setgid(65534) == 0 && setuid(65534) == 0) ?
		       0 :
		       -1;
}

/*
 * The process that a live file names, whose /proc/PID/maps this one may
 * not read (EACCES: it made itself non-dumpable, which leaves the file
 * root's, as ssh-agent and sandboxed browsers do), may still write the
 * file: it runs, for libpc's pc_recover and pcprof alike, which make this
 * one call. The same process dumpable, whose maps are read and map no
 * such file, is another process of the pid. errno is kept.
 */
START_TEST(test_live_owner_whose_maps_say_eacces_runs)
{
	for (int dumpable = 1; dumpable >= 0; dumpable--) {
		int go[2], status;
		pid_t owner, asker;
		char c;

		ck_assert_int_eq(pipe(go), 0);
		if ((owner = fork()) == 0) {
			if (as_user() ||
			    prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0))
				_exit(1);
			if (write(go[1], "r", 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
		ck_assert_int_gt(owner, 0);
		close(go[1]);
		ck_assert_int_eq(read(go[0], &c, 1), 1);
		close(go[0]);
		if ((asker = fork()) == 0) {
			struct gmon_live_head h;
			char path[64];
			int fd, r;

			if (as_user())
				_exit(90);
			snprintf(path, sizeof(path), "/proc/%d/maps",
				 (int)owner);
			fd = open(path, O_RDONLY);
			/* the case under test: EACCES exactly where not
			 * dumpable */
			if (dumpable ? fd < 0 : fd >= 0 || errno != EACCES)
				_exit(91);
			gmon_live_head_init(&h, 4096, (int32_t)owner, 0);
			errno = EDOM;
			r = gmon_live_runs(&h, 12345);
			_exit(errno != EDOM ? 92 : r);
		}
		ck_assert_int_gt(asker, 0);
		ck_assert_int_eq(waitpid(asker, &status, 0), asker);
		kill(owner, SIGKILL);
		waitpid(owner, NULL, 0);
		ck_assert(WIFEXITED(status));
		ck_assert_msg(WEXITSTATUS(status) == !dumpable,
			      "dumpable %d: %d", dumpable, WEXITSTATUS(status));
	}
}
END_TEST

/* A reader's view of a head: the images it reads, one a call (the last
 * again once they run out), and the calls made. */
struct head_reads {
	struct gmon_live_head img[4];
	int nimg, calls;
};

static long
read_image(void *ctx, void *buf, size_t n)
{
	struct head_reads *r = ctx;
	int i = r->calls < r->nimg ? r->calls : r->nimg - 1;

	r->calls++;
	memcpy(buf, &r->img[i], n < sizeof(r->img[i]) ? n : sizeof(r->img[i]));
	return (long)(n < sizeof(r->img[i]) ? n : sizeof(r->img[i]));
}

/*
 * The reader's torn-read check (gmon_live_head_load), on images a writer
 * could leave: an odd generation (a write under way) is read again; two
 * reads that differ (a write between them) are read again; a head torn
 * on every try is -EAGAIN, after GMON_LIVE_TRIES tries; a whole one is
 * read after its first two reads. The writer's side leaves the
 * generation even, 2 higher.
 */
START_TEST(test_live_head_torn_read_detected)
{
	struct gmon_live_head h, got;
	struct head_reads r = { .nimg = 4 };
	uint32_t version;

	gmon_live_head_init(&h, 4096, 321, 1000ull * 1000000000ull);
	gmon_live_head_write(&h, GMON_LIVE_RUNNING, 0, 0);
	ck_assert_uint_eq(h.gen, 2);
	ck_assert_uint_eq(h.state, GMON_LIVE_RUNNING);
	ck_assert_int_eq(h.pid, 321);
	gmon_live_head_write(&h, GMON_LIVE_RUNNING, 654,
			     2000ull * 1000000000ull);
	ck_assert_uint_eq(h.gen, 4);
	ck_assert_int_eq(h.pid, 654);
	ck_assert_uint_eq(h.start_s, 2000);

	/* odd, then a second read that differs, then whole twice */
	r.img[0] = h, r.img[0].gen = 5, r.img[0].pid = 999;
	r.img[1] = h, r.img[1].gen = 6;
	r.img[2] = h, r.img[2].gen = 8, r.img[2].start_s = 3000;
	r.img[3] = r.img[2];
	ck_assert_int_eq(gmon_live_head_load(read_image, &r, &got, &version),
			 0);
	ck_assert_int_eq(r.calls, 1 + 2 + 2);
	ck_assert_uint_eq(got.gen, 8);
	ck_assert_int_eq(got.pid, 654);
	ck_assert_uint_eq(got.start_s, 3000);

	/* odd on every read: torn, said, in GMON_LIVE_TRIES reads */
	r = (struct head_reads){ .nimg = 1 };
	r.img[0] = h, r.img[0].gen = 7;
	ck_assert_int_eq(gmon_live_head_load(read_image, &r, &got, &version),
			 -EAGAIN);
	ck_assert_int_eq(r.calls, GMON_LIVE_TRIES);

	/* another version is refused before its generation is looked at */
	r = (struct head_reads){ .nimg = 1 };
	r.img[0] = h, r.img[0].magic[12] = '1', r.img[0].gen = 7;
	ck_assert_int_eq(gmon_live_head_load(read_image, &r, &got, &version),
			 -EPROTO);
	ck_assert_uint_eq(version, 1);
	ck_assert_int_eq(r.calls, 1);
}
END_TEST

/*
 * The reader that libpc's pc_recover and pcprof share for a live file
 * (gmon_live_pread): a head left odd (its process killed, or writing, on
 * every try) is -EAGAIN from a file too, and a whole one is read as
 * written; a file too short for a head is no live file.
 */
START_TEST(test_live_head_read_from_a_file)
{
	char path[] = "/tmp/pc-check-live-XXXXXX";
	struct gmon_live_head h, got;
	uint32_t version;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	unlink(path);
	gmon_live_head_init(&h, 4096, 4321, 1000ull * 1000000000ull);
	gmon_live_head_write(&h, GMON_LIVE_RUNNING, 0, 0);
	ck_assert_int_eq(pwrite(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	ck_assert_int_eq(gmon_live_head_load(gmon_live_pread, &fd, &got,
					     &version), 0);
	ck_assert_int_eq(got.pid, 4321);
	ck_assert_uint_eq(got.gen, 2);
	h.gen = 3;
	ck_assert_int_eq(pwrite(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	ck_assert_int_eq(gmon_live_head_load(gmon_live_pread, &fd, &got,
					     &version), -EAGAIN);
	ck_assert_int_eq(ftruncate(fd, 8), 0);
	ck_assert_int_eq(gmon_live_head_load(gmon_live_pread, &fd, &got,
					     &version), -EINVAL);
	close(fd);
}
END_TEST

/* A head that a thread rewrites (pid and start the same number k, state
 * RUNNING) while another reads it byte by byte. */
static struct gmon_live_head shared_head;
static volatile int writing;

static void *
rewrite_head(void *arg)
{
	(void)arg;
	for (int32_t k = 1; writing; k = k % 1000000 + 1) {
		gmon_live_head_write(&shared_head, GMON_LIVE_RUNNING, k,
				     (uint64_t)k * 1000000000ull);
		for (volatile int spin = 0; spin < 200; spin++)
			;	/* room between writes, for whole reads too */
	}
	return NULL;
}

static long
read_bytewise(void *ctx, void *buf, size_t n)
{
	const volatile unsigned char *from = ctx;
	unsigned char *to = buf;

	n = n < sizeof(shared_head) ? n : sizeof(shared_head);
	for (size_t i = 0; i < n; i++)
		to[i] = from[i];
	return (long)n;
}

/*
 * The same against a real writer: whatever gmon_live_head_load returns
 * whole has the pid and start of one write (never one write's pid and
 * another's start), however the reads and writes interleave. (One
 * byte-wise read alone, with the threads on two CPUs, read such a mix
 * 1,118 times in 20,000, measured; the loads accepted none.)
 */
START_TEST(test_live_head_read_under_a_writer_is_whole)
{
	struct gmon_live_head got;
	uint32_t version;
	pthread_t t;
	int whole = 0;

	gmon_live_head_init(&shared_head, 4096, 1, 1000000000ull);
	writing = 1;
	ck_assert_int_eq(pthread_create(&t, NULL, rewrite_head, NULL), 0);
	for (int i = 0; i < 20000; i++) {
		int r = gmon_live_head_load(read_bytewise, (void *)&shared_head,
					    &got, &version);

		ck_assert(r == 0 || r == -EAGAIN);
		if (!r) {
			whole++;
			ck_assert_uint_eq((uint32_t)got.pid, got.start_s);
			ck_assert_uint_eq(got.gen % 2, 0);
		}
	}
	writing = 0;
	pthread_join(t, NULL);
	ck_assert_int_gt(whole, 0);
}
END_TEST

Suite *
formats_suite(void)
{
	Suite *s = suite_create("formats");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_object_names_built_and_split);
	tcase_add_test(t, test_live_names_built_and_read);
	tcase_add_test(t, test_live_head_versions);
	tcase_add_test(t, test_live_head_torn_read_detected);
	tcase_add_test(t, test_live_head_read_from_a_file);
	tcase_add_test(t, test_live_head_read_under_a_writer_is_whole);
	tcase_add_test(t, test_live_owner_whose_maps_say_eacces_runs);
	suite_add_tcase(s, t);
	return s;
}
