/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for tools/model/wallgmon.c, gprof's view of a wall-clock
 * profile, on files written here: a CPU profile at 100 Hz (5 samples at
 * 0x1010, an arc 0x1040 -> 0x1010 called twice) and its stacks, whose
 * off-CPU records are nanoseconds. Cases:
 *  - an off-CPU stack's time in the bin of its innermost frame in the
 *    text (50 samples at 0x1020), an arc for each two frames there;
 *  - frames outside the text skipped to the first in it; a stack with
 *    none there counted on the arc of time outside;
 *  - fractions carried from bin to bin (2.5 + 1.5 samples at 0x1030: 4,
 *    not 3 + 2);
 *  - recursion: a pair of frames counted once a stack;
 *  - CPU stacks left to the profile's histogram; under clock off the CPU
 *    samples and arcs left out;
 *  - stacks at another rate than the profile's refused.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../gmon/gmon.h"
#include "pcprof.h"
#include "model/wallgmon.h"
#include "unit.h"
#include "writers/gmon_out.h"

#define N(a)	(sizeof(a) / sizeof((a)[0]))
#define WAIT	GMON_WAIT_WORD(7, 0, 0)	/* poll */
#define LIBC(a)	((uint64_t)1 << GMON_OBJ_SHIFT | (a))
#define MS	1000000ull		/* nanoseconds */

static char dir[64], gmon[128], stacks[160];

static void
setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/pc-wallgmon-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(gmon, sizeof(gmon), "%s/gmon.out", dir);
	snprintf(stacks, sizeof(stacks), "%s" GMON_STACKS_SUFFIX, gmon);
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* The CPU profile: [0x1000, 0x1100) in 2-byte bins at 100 Hz. */
static void
put_gmon(void)
{
	uint64_t counts[128] = { 0 };
	struct gmon_profile p;

	counts[(0x1010 - 0x1000) / 2] = 5;
	unit_profile(&p, 0);
	unit_hist(&p, 0x1000, 0x1100, 100, counts, 128);
	unit_arc(&p, 0x1040, 0x1010, 2);
	ck_assert_int_eq(gmon_write_file(gmon, &p), 0);
	gmon_profile_release(&p);
}

struct rec {
	uint64_t count;
	uint32_t flags, depth;
	uint64_t pcs[6];
};

/* Its stacks at rate: frame 0 of an off-CPU stack is the wait. */
static const struct rec recs[] = {
	/* 0.5 s: 50 samples at 0x1020, 0x1060 -> 0x1050 -> 0x1020 */
	{ 500 * MS, GMON_STACK_OFFCPU, 4, { WAIT, 0x1020, 0x1050, 0x1060 } },
	/* 25 ms and 15 ms at 0x1030, the first under a frame of libc's */
	{ 25 * MS, GMON_STACK_OFFCPU, 3, { WAIT, LIBC(0x500), 0x1030 } },
	{ 15 * MS, GMON_STACK_OFFCPU, 2, { WAIT, 0x1030 } },
	/* 30 ms with no frame in the text */
	{ 30 * MS, GMON_STACK_OFFCPU, 2, { WAIT, LIBC(0x600) } },
	/* 100 ms in a recursion: 0x1070 -> 0x1070 once, 0x1060 -> 0x1070 */
	{ 100 * MS, GMON_STACK_OFFCPU, 5,
	  { WAIT, 0x1070, 0x1070, 0x1070, 0x1060 } },
	/* CPU samples: the profile's histogram has them already */
	{ 7, 0, 2, { 0x1080, 0x1060 } },
};

static void
put_stacks(uint32_t rate)
{
	struct gmon_sink s;
	int fd = open(stacks, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	gmon_sink_init(&s, fd);
	gmon_sink_stacks_header(&s, rate, NULL, 0, GMON_STACKS_WALL);
	for (size_t i = 0; i < N(recs); i++)
		gmon_sink_stack(&s, recs[i].count, recs[i].flags, 0,
				recs[i].pcs, recs[i].depth);
	ck_assert_int_eq(gmon_sink_flush(&s), 0);
	close(fd);
}

/* One run of the one file gmon. */
static void
inputs(struct pc_inputs *in, struct pc_run *run)
{
	static char *files[1];
	static unsigned char manifest[1];
	static struct gmon_objects *objects[1];

	files[0] = gmon;
	memset(in, 0, sizeof(*in));
	memset(run, 0, sizeof(*run));
	run->files = files;
	run->manifest = manifest;
	run->objects = objects;
	run->nfiles = 1;
	in->runs = run;
	in->nruns = 1;
}

/* The count of p's 2-byte bin at a; 0 where no record holds it. */
static uint64_t
count_at(const struct gmon_profile *p, uint64_t a)
{
	for (size_t i = 0; i < p->nhists; i++) {
		const struct gmon_hist *h = &p->hists[i];

		ck_assert_uint_eq((h->high - h->low) / h->nbins, 2);
		if (a >= h->low && a < h->high)
			return h->counts[(a - h->low) / 2];
	}
	return 0;
}

/* The count of the arc from -> self, summed, and -1 where none is. */
static long long
arc(const struct gmon_profile *p, uint64_t from, uint64_t self)
{
	long long n = -1;

	for (size_t i = 0; i < p->narcs; i++)
		if (p->arcs[i].from_pc == from && p->arcs[i].self_pc == self)
			n = (n < 0 ? 0 : n) + (long long)p->arcs[i].count;
	return n;
}

START_TEST(test_wallgmon_places_off_cpu_time)
{
	struct gmon_profile p;
	struct pc_inputs in;
	struct pc_run run;

	put_gmon();
	put_stacks(100);
	inputs(&in, &run);
	ck_assert_int_eq(wallgmon_build(&p, &in, 0, NULL, PC_CLOCK_WALL), 0);
	ck_assert_uint_eq(p.hists[0].rate, 100);
	ck_assert_uint_eq(count_at(&p, 0x1010), 5);	/* the CPU's */
	ck_assert_uint_eq(count_at(&p, 0x1020), 50);
	ck_assert_uint_eq(count_at(&p, 0x1030), 4);
	ck_assert_uint_eq(count_at(&p, 0x1070), 10);
	ck_assert_uint_eq(count_at(&p, 0x1080), 0);	/* a CPU stack */
	ck_assert_uint_eq(gmon_profile_samples(&p), 69);
	ck_assert_int_eq(arc(&p, 0x1040, 0x1010), 2);
	ck_assert_int_eq(arc(&p, 0x1050, 0x1020), 50);
	ck_assert_int_eq(arc(&p, 0x1060, 0x1050), 50);
	ck_assert_int_eq(arc(&p, 0x1070, 0x1070), 10);
	ck_assert_int_eq(arc(&p, 0x1060, 0x1070), 10);
	ck_assert_int_eq(arc(&p, GMON_OUTSIDE_FROM, GMON_OUTSIDE_SELF), 3);
	ck_assert_uint_eq(p.narcs, 6);
	gmon_profile_release(&p);
}
END_TEST

START_TEST(test_wallgmon_off_leaves_the_cpu_out)
{
	struct gmon_profile p;
	struct pc_inputs in;
	struct pc_run run;

	put_gmon();
	/* a stacks file of another name (--stacks-file) */
	snprintf(stacks, sizeof(stacks), "%s/other", dir);
	put_stacks(100);
	inputs(&in, &run);
	ck_assert_int_eq(wallgmon_build(&p, &in, 0, stacks, PC_CLOCK_OFF), 0);
	ck_assert_uint_eq(count_at(&p, 0x1010), 0);
	ck_assert_uint_eq(count_at(&p, 0x1020), 50);
	ck_assert_uint_eq(gmon_profile_samples(&p), 64);
	ck_assert_int_eq(arc(&p, 0x1040, 0x1010), -1);
	ck_assert_int_eq(arc(&p, 0x1060, 0x1050), 50);
	ck_assert_uint_eq(p.narcs, 5);
	gmon_profile_release(&p);
}
END_TEST

START_TEST(test_wallgmon_refuses_another_rate)
{
	struct gmon_profile p;
	struct pc_inputs in;
	struct pc_run run;
	char path[128], said[512];
	int err = dup(STDERR_FILENO), fd;
	ssize_t n;

	put_gmon();
	put_stacks(250);
	inputs(&in, &run);
	/* its one line, into a file of the test's */
	snprintf(path, sizeof(path), "%s/said", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	ck_assert_int_eq(wallgmon_build(&p, &in, 0, NULL, PC_CLOCK_WALL), -1);
	fflush(stderr);
	dup2(err, STDERR_FILENO);
	close(err);
	n = pread(fd, said, sizeof(said) - 1, 0);
	close(fd);
	ck_assert_int_gt(n, 0);
	said[n] = 0;
	ck_assert_ptr_nonnull(strstr(said, "/gmon.out': stacks sampled at 250 "
					   "Hz, its profile at 100 Hz\n"));
}
END_TEST

Suite *
wallgmon_suite(void)
{
	Suite *s = suite_create("wallgmon");
	TCase *t = tcase_create("core");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_wallgmon_places_off_cpu_time);
	tcase_add_test(t, test_wallgmon_off_leaves_the_cpu_out);
	tcase_add_test(t, test_wallgmon_refuses_another_rate);
	suite_add_tcase(s, t);
	return s;
}
