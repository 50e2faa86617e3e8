/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fixed model that the writers' suites print, built by hand as
 * export.c would build it from a run (check_fixture.h), and the golden
 * files they compare with. Nothing in it is a time of this run, a pid or
 * a path of the build, so that its output is the same bytes anywhere.
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/export.h"
#include "model/timeline.h"
#include "../gmon/gmon.h"
#include "check_fixture.h"
#include "unit.h"

/* ---------------------------------------------------------------- strings */

static uint32_t
str(struct export *x, const char *s)
{
	for (uint32_t i = 0; i < x->nstrs; i++)
		if (!strcmp(x->strs[i], s))
			return i;
	x->strs = realloc(x->strs, (x->nstrs + 1) * sizeof(*x->strs));
	ck_assert_ptr_nonnull(x->strs);
	x->strs[x->nstrs] = strdup(s);
	x->cap_strs = x->nstrs + 1;
	return (uint32_t)x->nstrs++;
}

/* a copy of n elements of v, of size sz, in memory export_release frees */
static void *
dup_array(const void *v, size_t n, size_t sz)
{
	void *p = malloc(n * sz);

	ck_assert_ptr_nonnull(p);
	memcpy(p, v, n * sz);
	return p;
}

#define DUP(x, field, v) do {						\
	(x)->field = dup_array(v, sizeof(v) / sizeof((v)[0]), sizeof((v)[0])); \
	(x)->n##field = sizeof(v) / sizeof((v)[0]);			\
	(x)->cap_##field = (x)->n##field;				\
} while (0)

/* --------------------------------------------------------------- the model */

enum { F_MAIN, F_WORK, F_FIB, F_OFF, F_MEMCPY, F_ODD, F_HELPER };
enum { L_MAIN, L_WORK, L_FIB, L_FIB_CALL, L_MEMCPY, L_OFF, L_ODD, L_HELPER };

/* the stacks, leaf first, and their samples: the last is off-CPU */
static const uint32_t pool[] = {
	L_WORK, L_MAIN,				/* 0: main;work */
	L_FIB, L_FIB_CALL, L_WORK, L_MAIN,	/* 2: main;work;fib;fib */
	L_MEMCPY, L_WORK, L_MAIN,		/* 6: main;work;memcpy */
	L_ODD, L_HELPER, L_MAIN,		/* 9: main;work/helper;odd */
	L_MAIN,					/* 12: main */
	L_OFF, L_WORK, L_MAIN,			/* 13: main;work;[off-cpu] */
};

static const struct xp_sample samples[] = {
	{ .first = 0, .depth = 2, .thread = 1, .count = 40 },
	{ .first = 2, .depth = 4, .thread = 2, .count = 25 },
	{ .first = 6, .depth = 3, .thread = 2, .count = 10 },
	{ .first = 9, .depth = 3, .thread = 1, .count = 5 },
	{ .first = 12, .depth = 1, .thread = 0, .count = 2 },
	{ .first = 13, .depth = 3, .thread = 1, .count = 20, .off = 1 },
};

static void
fixture_names(struct export *x)
{
	struct xp_map maps[2] = {
		{ str(x, "/usr/bin/demo"), str(x, "0123456789abcdef"), 0x1000,
		  0x1400, 1 },
		{ str(x, "/lib/libc.so.6"), 0, 0x20000, 0x30000, 0 },
	};
	uint32_t demo_c = str(x, "demo.c");
	struct xp_func funcs[] = {
		[F_MAIN] = { str(x, "main"), 1, demo_c, 10 },
		[F_WORK] = { str(x, "work"), 1, demo_c, 20 },
		[F_FIB] = { str(x, "fib"), 1, demo_c, 30 },
		[F_OFF] = { str(x, "[off-cpu: nanosleep]"), 0, 0, 0 },
		[F_MEMCPY] = { str(x, "memcpy"), 2, 0, 0 },
		[F_ODD] = { str(x, "ns::f<a;b>\"q\""), 1, demo_c, 40 },
		[F_HELPER] = { str(x, "helper"), 1, str(x, "demo.h"), 5 },
	};
	struct xp_loc locs[] = {
		[L_MAIN] = { 1, 0x1010, F_MAIN, demo_c, 12, .sym = 0x1001 },
		[L_WORK] = { 1, 0x1110, F_WORK, demo_c, 22, .sym = 0x1101 },
		[L_FIB] = { 1, 0x1210, F_FIB, demo_c, 31, .sym = 0x1201 },
		[L_FIB_CALL] = { 1, 0x1220, F_FIB, demo_c, 33, .sym = 0x1201 },
		[L_MEMCPY] = { 2, 0x20110, F_MEMCPY, .sym = 0x20101 },
		[L_OFF] = { 0, 0, F_OFF },
		[L_ODD] = { 1, 0x1310, F_ODD, demo_c, 41, .sym = 0x1301 },
		[L_HELPER] = { 1, 0x1130, F_WORK, str(x, "demo.h"), 6,
			       1 + F_HELPER, demo_c, 24, 0x1101 },
	};

	DUP(x, maps, maps);
	DUP(x, funcs, funcs);
	DUP(x, locs, locs);
}

/* ------------------------------------------------------------ the timeline */

#define T0	5000000000ull		/* CLOCK_MONOTONIC at the start */
#define MS	1000000ull

static void
fixture_timeline(struct export *x, int off)
{
	/* t in ms, tid, stack (samples' index, 9: none recorded), weight */
	static const struct {
		unsigned ms, tid, stack;
		double weight;
	} v[] = {
		{ 10, 100, 0, 1 },  { 10, 101, 1, 1 },  { 20, 100, 0, 1 },
		{ 20, 101, 1, 1 },  { 30, 100, 3, 1 },  { 30, 101, 2, 1 },
		{ 40, 100, 0, 1 },  { 40, 101, 1, 1 },  { 50, 101, 9, 1 },
		{ 60, 100, 0, 1 },  { 150, 100, 5, 9 }, { 160, 100, 0, 1 },
		{ 170, 101, 2, 1 }, { 250, 100, 4, 1 },
	};
	struct timelines *tl = calloc(1, sizeof(*tl));
	struct tl_group *g;
	uint64_t prev[2] = { 0, 0 };

	ck_assert_ptr_nonnull(tl);
	tl->v = calloc(1, sizeof(*tl->v));
	ck_assert_ptr_nonnull(tl->v);
	tl->n = 1;
	g = &tl->v[0];
	memcpy(g->head.magic, PC_TL_MAGIC, 16);
	g->head.pid = 100;
	g->head.hz = 100;
	g->head.start_ns = T0;
	g->head.end_ns = T0 + 300 * MS;
	g->head.interval_ns = 10 * MS;
	g->head.max = PC_TL_DEFAULT_MAX;
	g->head.marks = 5;
	g->samples = calloc(sizeof(v) / sizeof(v[0]), sizeof(*g->samples));
	g->stacks = calloc(sizeof(samples) / sizeof(samples[0]),
			   sizeof(*g->stacks));
	ck_assert(g->samples && g->stacks);
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++)
		g->stacks[i] =
			(struct tl_stack){ samples[i].first, samples[i].depth };
	g->nstacks = sizeof(samples) / sizeof(samples[0]);
	g->pool = dup_array(pool, sizeof(pool) / sizeof(pool[0]),
			    sizeof(pool[0]));
	g->npool = sizeof(pool) / sizeof(pool[0]);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct tl_sample *s = &g->samples[g->nsamples];
		int isoff = v[i].stack == 5;
		uint64_t t = T0 + v[i].ms * MS;

		if (isoff && !off)
			continue;
		s->t = t;
		s->tid = v[i].tid;
		s->stack = v[i].stack == 9 ? UINT32_MAX : v[i].stack;
		s->weight = v[i].weight;
		s->off = isoff;
		s->pc = v[i].stack == 9 ? 0x1010 : 0;
		if (!isoff) {
			s->cpu_delta = prev[v[i].tid - 100] ?
					       t - prev[v[i].tid - 100] :
					       10 * MS;
			prev[v[i].tid - 100] = t;
			g->cpu_samples += s->weight;
		}
		g->nsamples++;
	}
	g->head.seen = g->nsamples;
	g->markers = calloc(5, sizeof(*g->markers));
	ck_assert_ptr_nonnull(g->markers);
	g->markers[0] = (struct tl_marker){ T0 + 15 * MS,
					    T0 + 45 * MS,
					    100,
					    strdup("phase one"),
					    TL_INTERVAL,
					    0,
					    0 };
	g->markers[1] = (struct tl_marker){ T0 + 35 * MS,
					    T0 + 35 * MS,
					    101,
					    strdup("tick"),
					    TL_INSTANT,
					    0,
					    0 };
	g->markers[2] = (struct tl_marker){ T0 + 40 * MS,
					    T0 + 40 * MS,
					    101,
					    strdup("queue"),
					    TL_COUNTER,
					    7,
					    0 };
	g->markers[3] = (struct tl_marker){ T0 + 100 * MS,
					    T0 + 200 * MS,
					    0,
					    strdup("from a file"),
					    TL_INTERVAL,
					    0,
					    1 };
	g->markers[4] = (struct tl_marker){ T0 + 160 * MS,
					    T0 + 160 * MS,
					    101,
					    strdup("queue"),
					    TL_COUNTER,
					    3,
					    0 };
	g->nmarkers = 5;
	g->first_t = T0 + 10 * MS;
	g->last_t = T0 + 250 * MS;
	x->timeline = tl;
}

void
fixture_timeline_allocs(struct export *x)
{
	/* t in ms, tid, stack (samples' index, 9: none recorded), address,
	 * bytes (a free's negative) */
	static const struct {
		unsigned ms, tid, stack;
		uint64_t addr;
		int64_t bytes;
	} v[] = {
		{ 12, 100, 0, 0x5000, 4096 },	  { 18, 101, 1, 0x6000, 64 },
		{ 22, 100, 2, 0x7000, 1048576 }, { 25, 101, 1, 0x6000, -64 },
		{ 33, 100, 0, 0x5000, -4096 },	  { 41, 101, 9, 0x8000, 128 },
		{ 55, 100, 0, 0x5000, 512 },
	};
	struct tl_group *g = &x->timeline->v[0];

	g->allocs = calloc(sizeof(v) / sizeof(v[0]), sizeof(*g->allocs));
	ck_assert_ptr_nonnull(g->allocs);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		g->allocs[i] = (struct tl_alloc){
			T0 + v[i].ms * MS, v[i].addr, v[i].bytes, v[i].tid,
			v[i].stack == 9 ? UINT32_MAX : v[i].stack
		};
	g->nallocs = sizeof(v) / sizeof(v[0]);
	g->has_allocs = 1;
	g->alloc_head.seen = g->nallocs;
}

void
fixture_export(struct export *x, enum pc_clock clock, int timeline)
{
	int off = clock != PC_CLOCK_CPU;
	size_t n = sizeof(samples) / sizeof(samples[0]) - !off;
	struct xp_thread threads[] = {
		{ 0, 100, 0, 0, 0 },
		{ 0, 101, 0, 0, 0 },
	};
	struct xp_group group = { 0, 100, 100, 0, off ? 100 : 0 };

	export_init(x);
	x->clock = clock;
	fixture_names(x);
	threads[0].name = str(x, "demo");
	threads[1].name = str(x, "worker");
	group.name = str(x, "demo");
	x->samples = dup_array(samples, n, sizeof(samples[0]));
	x->nsamples = x->cap_samples = n;
	/* under the off clock, the CPU samples are left out */
	for (size_t i = 0; clock == PC_CLOCK_OFF && i < n; i++)
		if (!x->samples[i].off)
			x->samples[i].count = 0;
	DUP(x, pool, pool);
	for (size_t i = 0; i < n; i++) {
		const struct xp_sample *s = &x->samples[i];

		x->total += s->count;
		x->off += s->off ? s->count : 0;
		if (s->thread) {
			threads[s->thread - 1].samples += s->count;
			threads[s->thread - 1].off += s->off ? s->count : 0;
		}
	}
	group.samples = x->total;
	x->groups = dup_array(&group, 1, sizeof(group));
	x->ngroups = x->cap_groups = 1;
	DUP(x, threads, threads);
	x->stacks = 1;
	x->time_ns = 1700000000123456789ull;
	x->duration_ns = 1500000000ull;
	x->source = strdup("demo/gmon.out");
	if (timeline)
		fixture_timeline(x, off);
}

/* an allocation profile's records: a stack (samples' index) and its
 * kinds' counts (enum gmon_alloc_kind) */
static const struct {
	uint32_t stack;
	double v[GMON_ALLOC_KINDS];
} allocs[] = {
	{ 0, { 100, 409600, 10, 40960, 100, 10 } },
	{ 1, { 50, 204800, 0, 0, 50, 0 } },
	{ 2, { 1, 1048576, 1, 1048576, 256, 256 } },
	{ 5, { 3, 12288, 3, 12288, 3, 3 } },
};

void
fixture_alloc_export(struct export *x, int all)
{
	size_t n = 0;

	fixture_export(x, PC_CLOCK_WALL, 0);
	x->clock = PC_CLOCK_ALLOC_BYTES;
	x->alloc_all = all;
	x->alloc_rate = 4096;
	x->groups[0].rate = 1;
	x->groups[0].wall_hz = 0;
	x->total = x->off = 0;
	x->nthreads = 0;
	free(x->samples);
	x->samples =
		calloc(sizeof(allocs) / sizeof(allocs[0]) * GMON_ALLOC_KINDS,
		       sizeof(*x->samples));
	ck_assert_ptr_nonnull(x->samples);
	for (size_t i = 0; i < sizeof(allocs) / sizeof(allocs[0]); i++)
		for (uint32_t k = 0; k < GMON_ALLOC_KINDS; k++) {
			struct xp_sample *s = &x->samples[n];

			if (!allocs[i].v[k] ||
			    (!all && k != CLOCK_ALLOC_KIND(x->clock)))
				continue; /* as a profile has no record of 0 */
			*s = samples[allocs[i].stack];
			s->off = 0;
			s->thread = 0;
			s->kind = k;
			s->count = allocs[i].v[k];
			if (k == CLOCK_ALLOC_KIND(x->clock))
				x->total += s->count;
			n++;
		}
	x->nsamples = x->cap_samples = n;
	x->groups[0].samples = x->total;
}

/* ------------------------------------------------------------- golden files */

static char *golden_buf;
static size_t golden_len;

/* The names of the golden files the suites checked, a line each, in an
 * unlinked file that the tests' children (Check forks one a test)
 * append to: golden_suite's, made when the runner makes its suites. */
static int golden_seen = -1;

static void
golden_saw(const char *name)
{
	char line[300];
	int n = snprintf(line, sizeof(line), "%s\n", name);

	/* one write of O_APPEND: lines of two children never interleave */
	if (golden_seen >= 0 && n > 0 && (size_t)n < sizeof(line))
		ck_assert_int_eq(write(golden_seen, line, (size_t)n), n);
}

void
golden_skipped(const char *name)
{
	golden_saw(name);
}

FILE *
golden_open(void)
{
	FILE *out = open_memstream(&golden_buf, &golden_len);

	ck_assert_ptr_nonnull(out);
	return out;
}

void
golden_check(FILE *out, const char *name)
{
	ck_assert_int_eq(fclose(out), 0);
	golden_check_bytes(golden_buf, golden_len, name);
	free(golden_buf);
	golden_buf = NULL;
}

/* tests/golden/name: beside this file, as the compiler named it (the
 * suites run from the top of the tree), or under PC_GOLDEN_DIR */
static void
golden_path(char *path, size_t size, const char *name)
{
	const char *dir = getenv("PC_GOLDEN_DIR"),
		   *slash = strrchr(__FILE__, '/');

	if (dir)
		snprintf(path, size, "%s/%s", dir, name);
	else
		snprintf(path, size, "%.*sgolden/%s",
			 slash ? (int)(slash - __FILE__ + 1) : 0, __FILE__,
			 name);
}

/* The line of buf at byte off, as "N: TEXT" (60 bytes at most). */
static void
line_at(const char *buf, size_t len, size_t off, char *line, size_t size)
{
	size_t start = off, n = 1, end;

	while (start > 0 && buf[start - 1] != '\n')
		start--;
	for (size_t i = 0; i < start; i++)
		n += buf[i] == '\n';
	for (end = start; end < len && buf[end] != '\n' && end - start < 60;
	     end++)
		;
	snprintf(line, size, "%zu: %.*s", n, (int)(end - start), buf + start);
}

void
golden_check_bytes(const void *buf, size_t len, const char *name)
{
	const char *update = getenv("UPDATE_GOLDEN");
	char path[512], want_line[128], got_line[128];
	char *want = NULL;
	size_t wlen = 0, i;
	FILE *f;

	golden_path(path, sizeof(path), name);
	golden_saw(name);
	if (update && !strcmp(update, "1")) {
		f = fopen(path, "wb");
		ck_assert_msg(f != NULL, "%s: cannot write it", path);
		ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
		ck_assert_int_eq(fclose(f), 0);
		return;
	}
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "%s: missing (UPDATE_GOLDEN=1 build/tests/unit writes it)",
		      path);
	want = malloc(len + 2);
	ck_assert_ptr_nonnull(want);
	wlen = fread(want, 1, len + 1, f);
	fclose(f);
	for (i = 0; i < len && i < wlen && want[i] == ((const char *)buf)[i];
	     i++)
		;
	if (i < len || i < wlen) {
		line_at(want, wlen, i < wlen ? i : wlen, want_line,
			sizeof(want_line));
		line_at(buf, len, i < len ? i : len, got_line,
			sizeof(got_line));
		free(want);
		ck_abort_msg(
			"%s differs at byte %zu (%zu bytes, golden %s%zu): golden line %s; "
			"written %s (UPDATE_GOLDEN=1 rewrites it)",
			path, i, len, wlen > len ? "over " : "", wlen,
			want_line, got_line);
	}
	free(want);
}

/* ------------------------------------------------- golden files current */

/* Whether line is one of the lines of seen[0..len). */
static int
seen_in(const char *seen, size_t len, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = seen; p + n <= seen + len;) {
		const char *end = memchr(p, '\n', (size_t)(seen + len - p));

		if (!end)
			break;
		if ((size_t)(end - p) == n && !memcmp(p, line, n))
			return 1;
		p = end + 1;
	}
	return 0;
}

/*
 * Run after every other suite (tests/unit.c adds it last): each file of
 * tests/golden/ was compared by a test of this run (or written, under
 * UPDATE_GOLDEN=1), so that no golden file outlives the output it was of
 * (a format renamed, a test removed). A run of some suites only
 * (CK_RUN_SUITE, CK_RUN_CASE, tags) leaves it out. What each golden file
 * holds is checked by its own test; this is that none is left over.
 */
START_TEST(test_every_golden_file_is_checked_by_a_test)
{
	static const char *const subset[] = { "CK_RUN_SUITE", "CK_RUN_CASE",
					      "CK_INCLUDE_TAGS",
					      "CK_EXCLUDE_TAGS" };
	char path[512], stale[2048] = "";
	char *seen;
	size_t len = 0, cap = 1 << 16;
	ssize_t k;
	struct dirent *d;
	DIR *dir;

	for (size_t i = 0; i < sizeof(subset) / sizeof(subset[0]); i++)
		if (getenv(subset[i])) {
			unit_skip("test_every_golden_file_is_checked_by_a_test",
				  "a run of some suites only");
			return;
		}
	ck_assert_int_ge(golden_seen, 0);
	seen = malloc(cap);
	ck_assert_ptr_nonnull(seen);
	while ((k = pread(golden_seen, seen + len, cap - len, (off_t)len)) > 0)
		if ((len += (size_t)k) == cap) {
			seen = realloc(seen, cap *= 2);
			ck_assert_ptr_nonnull(seen);
		}
	golden_path(path, sizeof(path), "");
	dir = opendir(path);
	ck_assert_msg(dir != NULL, "%s: cannot list it", path);
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.' && !seen_in(seen, len, d->d_name) &&
		    strlen(stale) + strlen(d->d_name) + 2 < sizeof(stale)) {
			strcat(stale, " ");
			strcat(stale, d->d_name);
		}
	closedir(dir);
	free(seen);
	ck_assert_msg(!stale[0],
		      "golden files no test checked (stale: git rm them; or "
		      "their test failed before it compared them):%s",
		      stale);
}
END_TEST

Suite *
golden_suite(void)
{
	Suite *s = suite_create("golden");
	TCase *t = tcase_create("core");
	char path[] = "/tmp/pcprof-golden-XXXXXX";
	int fd = mkstemp(path);

	/* unlinked at once: nothing is left behind however the run ends */
	if (fd >= 0) {
		unlink(path);
		golden_seen = fcntl(fd, F_DUPFD_CLOEXEC, 100);
		close(fd);
		if (golden_seen >= 0)
			fcntl(golden_seen, F_SETFL, O_APPEND);
	}
	tcase_add_test(t, test_every_golden_file_is_checked_by_a_test);
	suite_add_tcase(s, t);
	return s;
}
