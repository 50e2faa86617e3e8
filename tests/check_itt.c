/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for preload/itt.c, the ITT collector, driven as an
 * instrumented program's ITT static part drives it: a global of the ITT
 * ABI's layout (written out here from ittnotify.h, not from itt.c) whose
 * table __itt_api_init fills, then the program's calls through the
 * table, read back as the timeline's markers (markers.c, unit_marks.c).
 * Edge cases:
 *  - a global of another magic, or no table, filled with nothing; a name
 *    the collector does not know left alone;
 *  - handles by name: the same name the same domain, string and counter
 *    (a counter of another type another one), a name cut at 127 bytes;
 *  - tasks end innermost first by domain; a region ends by its id, not
 *    the innermost; an unnamed task is marked neither at its begin nor
 *    its end, and its end closes it, not the named one around it;
 *    frames are named after their domain; more than 32 open in a thread
 *    are not marked, begin nor end;
 *  - counters: inc, dec and deltas from 0, a value set of each type;
 *    a counter the static part made (a copy) is ours of its name;
 *  - a clock domain's timestamps (ticks at its frequency from its base)
 *    as CLOCK_MONOTONIC ns; __itt_timestamp_none is now.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../preload/pc.h"
#include "../preload/timeline.h"
#include "unit.h"
#include "unit_marks.h"

/* ------------------------------------------------------- the ITT ABI */

struct domain {
	volatile int flags;
	const char *nameA;
	void *nameW;
	int extra1;
	void *extra2;
	struct domain *next;
};

struct string {
	const char *strA;
	void *strW;
	int extra1;
	void *extra2;
	struct string *next;
};

struct counter {
	const char *nameA;
	void *nameW;
	const char *domainA;
	void *domainW;
	int type;
	long index;
	int extra1;
	void *extra2;
	struct counter *next;
};

struct id {
	unsigned long long d1, d2, d3;
};

struct clock_info {
	unsigned long long freq, base;
};

struct clock_domain;

struct api_info {
	const char *name;
	void **func_ptr;
	void *init_func;
	void *null_func;
	int group;
};

struct global {
	unsigned char magic[8];
	unsigned long version_major, version_minor, version_build;
	volatile long api_initialized, mutex_initialized, atomic_counter;
	pthread_mutex_t mutex;
	void *lib;
	void *error_handler;
	const char **dll_path_ptr;
	struct api_info *api_list_ptr;
};

enum { U64 = 1, S64, U32, S32, U16, S16, FLOAT, DOUBLE };

void __itt_api_init(struct global *g, int groups);

#define NONE	(~0ULL)		/* __itt_timestamp_none */

/* the table the static part has, as the program calls through it */
static struct domain *(*domain_create)(const char *);
static struct string *(*string_create)(const char *);
static struct counter *(*counter_create)(const char *, const char *);
static struct counter *(*counter_typed)(const char *, const char *, int);
static void (*counter_set)(struct counter *, void *);
static void (*counter_inc)(struct counter *);
static void (*counter_dec)(struct counter *);
static void (*counter_inc_delta)(struct counter *, unsigned long long);
static void (*task_begin)(const struct domain *, struct id, struct id,
			  const struct string *);
static void (*task_begin_fn)(const struct domain *, struct id, struct id,
			     void *);
static void (*task_end)(const struct domain *);
static void (*region_begin)(const struct domain *, struct id, struct id,
			    const struct string *);
static void (*region_end)(const struct domain *, struct id);
static void (*frame_begin)(const struct domain *, struct id *);
static void (*frame_end)(const struct domain *, struct id *);
static void (*marker)(const struct domain *, struct id,
		      const struct string *, int);
static unsigned long long (*get_timestamp)(void);
static struct clock_domain *(*clock_create)(
	void (*)(struct clock_info *, void *), void *);
static void (*task_begin_ex)(const struct domain *, struct clock_domain *,
			     unsigned long long, struct id, struct id,
			     const struct string *);
static void (*task_end_ex)(const struct domain *, struct clock_domain *,
			   unsigned long long);
static void (*not_known)(void);

#define API(fn, var)	{ "__itt_" #fn, (void **)&var, NULL, NULL, 0 }
static struct api_info api[] = {
	API(domain_create, domain_create),
	API(string_handle_create, string_create),
	API(counter_create, counter_create),
	API(counter_create_typed, counter_typed),
	API(counter_set_value, counter_set),
	API(counter_inc, counter_inc),
	API(counter_dec, counter_dec),
	API(counter_inc_delta, counter_inc_delta),
	API(task_begin, task_begin),
	API(task_begin_fn, task_begin_fn),
	API(task_end, task_end),
	API(region_begin, region_begin),
	API(region_end, region_end),
	API(frame_begin_v3, frame_begin),
	API(frame_end_v3, frame_end),
	API(marker, marker),
	API(get_timestamp, get_timestamp),
	API(clock_domain_create, clock_create),
	API(task_begin_ex, task_begin_ex),
	API(task_end_ex, task_end_ex),
	API(no_such_call, not_known),
	{ NULL, NULL, NULL, NULL, 0 },
};

static const unsigned char magic[8] = { 0xED, 0xAB, 0xAB, 0xEC,
					0x0D, 0xEE, 0xDA, 0x30 };

static void
load(void)
{
	static struct global g;

	unit_preload_reset();
	ck_assert_int_eq(pc_timeline_init(64, 0), 0);
	pc->phase = PC_ON;
	memset(&g, 0, sizeof(g));
	memcpy(g.magic, magic, sizeof(magic));
	g.api_list_ptr = api;
	__itt_api_init(&g, 0);
	ck_assert_ptr_nonnull(domain_create);
	ck_assert_ptr_nonnull(task_end_ex);
}

static const struct id no_id;

static struct id
id_of(unsigned long long n)
{
	struct id id = { n, 0, 0 };

	return id;
}

/* ------------------------------------------------------------ tests */

START_TEST(test_itt_fills_only_a_table_it_knows)
{
	struct global g;

	unit_preload_reset();
	memset(&g, 0, sizeof(g));
	g.api_list_ptr = api;
	__itt_api_init(&g, 0);		/* no magic */
	ck_assert_ptr_null(domain_create);
	memcpy(g.magic, magic, sizeof(magic));
	g.api_list_ptr = NULL;
	__itt_api_init(&g, 0);		/* no table */
	__itt_api_init(NULL, 0);
	g.api_list_ptr = api;
	__itt_api_init(&g, 0);
	for (size_t i = 0; api[i].name; i++)
		ck_assert_msg((*api[i].func_ptr != NULL) ==
				      (strcmp(api[i].name,
					      "__itt_no_such_call") != 0),
			      "%s", api[i].name);
}
END_TEST

START_TEST(test_itt_handles_are_one_a_name)
{
	char long_name[200], other[200];
	struct domain *d;

	load();
	d = domain_create("tbb");
	ck_assert_ptr_eq(domain_create("tbb"), d);
	ck_assert_ptr_ne(domain_create("omp"), d);
	ck_assert_str_eq(d->nameA, "tbb");
	/* the static part's macros skip a domain of flags 0 */
	ck_assert_int_ne(d->flags, 0);
	ck_assert_ptr_null(domain_create(NULL));
	ck_assert_ptr_eq(string_create("load"), string_create("load"));
	ck_assert_ptr_ne(string_create("load"), string_create("save"));
	ck_assert_ptr_eq(counter_create("queue", "tbb"),
			 counter_typed("queue", "tbb", U64));
	ck_assert_ptr_ne(counter_create("queue", "tbb"),
			 counter_typed("queue", "tbb", DOUBLE));
	ck_assert_ptr_ne(counter_create("queue", "tbb"),
			 counter_create("queue", "omp"));
	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = 0;
	ck_assert_uint_eq(strlen(string_create(long_name)->strA), 127);
	/* the same first 127 bytes: the same name */
	memcpy(other, long_name, sizeof(other));
	other[150] = 'x';
	ck_assert_ptr_eq(string_create(other), string_create(long_name));
}
END_TEST

/* The kinds and names of the markers kept, as "B:name E:name I:name". */
static void
marks_are(const char *want)
{
	static struct unit_marks r;
	char got[512] = "";

	unit_marks_read(&r);
	for (size_t i = 0; i < r.n; i++) {
		uint32_t k = r.v[i].kind & ~(uint32_t)PC_TL_AT_NS;
		const char *name = unit_marks_name(&r, r.v[i].where);

		snprintf(got + strlen(got), sizeof(got) - strlen(got),
			 "%s%c:%s", i ? " " : "",
			 k == PC_TL_BEGIN ? 'B' :
			 k == PC_TL_END	  ? 'E' :
			 k == PC_TL_INSTANT ? 'I' :
			 k == PC_TL_COUNT ? 'C' : '?',
			 name ? name : "(none)");
		if (k == PC_TL_COUNT)
			snprintf(got + strlen(got), sizeof(got) - strlen(got),
				 "=%lld", (long long)r.v[i].value);
	}
	ck_assert_str_eq(got, want);
}

START_TEST(test_itt_tasks_regions_and_frames_nest)
{
	struct domain *d, *e;
	struct string *a, *b, *c;
	struct id one = id_of(1), two = id_of(2);

	load();
	d = domain_create("tbb");
	e = domain_create("render");
	a = string_create("outer");
	b = string_create("inner");
	c = string_create("region");
	task_begin(d, no_id, no_id, a);
	task_begin_fn(d, no_id, no_id, (void *)load);	/* unnamed */
	task_end(d);			/* the unnamed one: nothing */
	task_begin(d, no_id, no_id, b);
	region_begin(d, one, no_id, c);
	region_begin(d, two, no_id, a);
	region_end(d, one);		/* by id: not the innermost */
	task_end(d);			/* inner */
	frame_begin(e, NULL);
	marker(d, no_id, b, 0);
	frame_end(e, NULL);
	region_end(d, two);
	task_end(d);			/* outer */
	task_end(d);			/* none open: nothing */
	marks_are("B:outer B:inner B:region B:outer E:region E:inner "
		  "B:render I:inner E:render E:outer E:outer");
}
END_TEST

START_TEST(test_itt_more_than_32_open_are_not_marked)
{
	struct domain *d;
	struct string *s;
	static struct unit_marks r;

	load();
	d = domain_create("deep");
	s = string_create("level");
	for (int i = 0; i < 40; i++)
		task_begin(d, no_id, no_id, s);
	for (int i = 0; i < 40; i++)
		task_end(d);
	unit_marks_read(&r);
	ck_assert_uint_eq(r.n, 64);
	for (size_t i = 0; i < 64; i++)
		ck_assert_uint_eq(r.v[i].kind,
				  i < 32 ? PC_TL_BEGIN : PC_TL_END);
}
END_TEST

START_TEST(test_itt_counters_count)
{
	struct counter *q, *f, copy;
	double half = 2.5;
	int16_t neg = -7;
	uint64_t big = 1000;

	load();
	q = counter_create("queue", NULL);
	counter_inc(q);
	counter_inc(q);
	counter_dec(q);
	counter_inc_delta(q, 10);
	counter_set(q, &big);
	f = counter_typed("ratio", "d", DOUBLE);
	counter_set(f, &half);
	counter_set(counter_typed("s16", "d", S16), &neg);
	/* a counter the static part made itself before it loaded us: ours
	 * of its name, type and domain */
	memset(&copy, 0, sizeof(copy));
	copy.nameA = "queue";
	copy.domainA = "";
	copy.type = U64;
	counter_inc(&copy);
	counter_set(NULL, &big);
	marks_are("C:queue=1 C:queue=2 C:queue=1 C:queue=11 C:queue=1000 "
		  "C:ratio=2 C:s16=-7 C:queue=1001");
}
END_TEST

static void
ticks(struct clock_info *info, void *data)
{
	info->freq = 1000;		/* ms */
	info->base = *(unsigned long long *)data;
}

START_TEST(test_itt_clock_domains_read_as_monotonic_ns)
{
	static struct unit_marks r;
	unsigned long long base = 1000000000000ull, before, after;
	struct domain *d;
	struct string *s;
	struct clock_domain *c;
	struct timespec ts;

	load();
	d = domain_create("gpu");
	s = string_create("kernel");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	before = (unsigned long long)ts.tv_sec * 1000000000ull +
		 (unsigned long long)ts.tv_nsec;
	c = clock_create(ticks, &base);
	ck_assert_ptr_nonnull(c);
	after = get_timestamp();
	ck_assert_uint_ge(after, before);
	/* 250 ticks after its base: 0.25 s after the domain was made */
	task_begin_ex(d, c, base + 250, no_id, no_id, s);
	/* 10^9 s before its base, before CLOCK_MONOTONIC's epoch: 1 ns,
	 * not a wrap */
	task_end_ex(d, c, 0);
	/* no domain: the collector's own ns */
	task_begin_ex(d, NULL, 123456789, no_id, no_id, s);
	task_end_ex(d, NULL, NONE);
	unit_marks_read(&r);
	ck_assert_uint_eq(r.n, 4);
	ck_assert_uint_eq(r.v[0].kind, PC_TL_BEGIN | PC_TL_AT_NS);
	ck_assert_uint_ge(r.v[0].t, before + 250000000ull);
	ck_assert_uint_le(r.v[0].t, after + 250000000ull);
	ck_assert_uint_eq(r.v[1].t, 1);
	ck_assert_uint_eq(r.v[2].t, 123456789);
	/* none: now, a time of the marker API's own */
	ck_assert_uint_eq(r.v[3].kind, PC_TL_END);
}
END_TEST

Suite *
itt_suite(void)
{
	Suite *s = suite_create("itt");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_itt_fills_only_a_table_it_knows);
	tcase_add_test(t, test_itt_handles_are_one_a_name);
	tcase_add_test(t, test_itt_tasks_regions_and_frames_nest);
	tcase_add_test(t, test_itt_more_than_32_open_are_not_marked);
	tcase_add_test(t, test_itt_counters_count);
	tcase_add_test(t, test_itt_clock_domains_read_as_monotonic_ns);
	suite_add_tcase(s, t);
	return s;
}
