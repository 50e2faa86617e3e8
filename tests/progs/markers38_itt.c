/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A program instrumented with Intel ITT that carries its own minimal ITT
 * static part, written from the documented collector ABI: a global
 * record with ITT's magic and a table of named function pointers; at the
 * first call, the library named by INTEL_LIBITTNOTIFY64 is dlopened and
 * its __itt_api_init(&global, groups) fills the table. Without the
 * variable, or with a collector that fills nothing, every call is a
 * no-op.
 *
 *   markers38_itt N K [MS [ex]]  N requests, every Kth "slow" (MS, 10, ms of
 *                       CPU in serve_slow), the others "fast" (1 ms in
 *                       serve_fast), each an ITT task in domain "m38",
 *                       each in a frame of the domain "m38-frame"; the
 *                       counter "served" set after each; an ITT marker
 *                       "done" at the end; one task "early" on a string
 *                       handle the static part made before its collector
 *                       was loaded.
 *
 * With "ex", it then marks with explicit times, after the fact: a slow
 * request's task "ex-task" (__itt_task_begin_ex, _end_ex, no clock
 * domain: the collector's __itt_get_timestamp, CLOCK_MONOTONIC ns), a
 * frame of domain "m38-submit" over the same span (__itt_frame_submit_v3)
 * and one from its end to now (__itt_timestamp_none), an ITT marker
 * "ex-mark" at its middle (__itt_marker_ex), then a fast request's task
 * "clock-task" in a clock domain of its own, microseconds since an offset
 * (__itt_clock_domain_create); it prints "ex START END", "clock START
 * END" (CLOCK_MONOTONIC ns) and, with a collector, "timestamp in 1" where
 * __itt_get_timestamp fell between two CLOCK_MONOTONIC readings.
 *
 * It prints "requests fast F slow S", and for each slow request "slow I
 * START END" (CLOCK_MONOTONIC ns around its task), then "collector yes"
 * or "collector no".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "truth.h"

struct itt_domain {
	volatile int flags;
	const char *nameA;
	void *nameW;
	int extra1;
	void *extra2;
	struct itt_domain *next;
};
struct itt_string {
	const char *strA;
	void *strW;
	int extra1;
	void *extra2;
	struct itt_string *next;
};
struct itt_id { unsigned long long d1, d2, d3; };
struct itt_clock_info { unsigned long long clock_freq, clock_base; };
struct itt_clock_domain {
	struct itt_clock_info info;
	void (*fn)(struct itt_clock_info *, void *);
	void *fn_data;
	int extra1;
	void *extra2;
	struct itt_clock_domain *next;
};
struct itt_api_info {
	const char *name;
	void **func_ptr;
	void *init_func;
	void *null_func;
	int group;
};
struct itt_global {
	unsigned char magic[8];
	unsigned long version_major, version_minor, version_build;
	volatile long api_initialized, mutex_initialized, atomic_counter;
	pthread_mutex_t mutex;
	void *lib;
	void *error_handler;
	const char **dll_path_ptr;
	struct itt_api_info *api_list_ptr;
	struct itt_global *next;
	void *thread_list, *domain_list, *string_list;
	int state;
	void *counter_list;
	unsigned ipt_collect_events;
	void *histogram_list, *counter_metadata_list;
};

static struct itt_domain *(*domain_create)(const char *);
static struct itt_string *(*string_handle_create)(const char *);
static void *(*counter_create)(const char *, const char *);
static void (*counter_set_value)(void *, void *);
static void (*task_begin)(const struct itt_domain *, struct itt_id, struct itt_id,
			  struct itt_string *);
static void (*task_end)(const struct itt_domain *);
static void (*frame_begin_v3)(const struct itt_domain *, struct itt_id *);
static void (*frame_end_v3)(const struct itt_domain *, struct itt_id *);
static void (*marker)(const struct itt_domain *, struct itt_id, struct itt_string *, int);
static unsigned long long (*get_timestamp)(void);
static struct itt_clock_domain *(*clock_domain_create)(void (*)(struct itt_clock_info *, void *),
						       void *);
static void (*task_begin_ex)(const struct itt_domain *, struct itt_clock_domain *,
			     unsigned long long, struct itt_id, struct itt_id, struct itt_string *);
static void (*task_end_ex)(const struct itt_domain *, struct itt_clock_domain *,
			   unsigned long long);
static void (*marker_ex)(const struct itt_domain *, struct itt_clock_domain *,
			 unsigned long long, struct itt_id, struct itt_string *, int);
static void (*frame_submit_v3)(const struct itt_domain *, struct itt_id *, unsigned long long,
			       unsigned long long);

#define API(f, group)	{ "__itt_" #f, (void **)&f, NULL, NULL, group }
static struct itt_api_info api_list[] = {
	API(domain_create, 1 << 5), API(string_handle_create, 1 << 5),
	API(counter_create, 1 << 16), API(counter_set_value, 1 << 16),
	API(task_begin, 1 << 5), API(task_end, 1 << 5),
	API(frame_begin_v3, 1 << 5), API(frame_end_v3, 1 << 5),
	API(marker, 1 << 5),
	API(get_timestamp, 1 << 5), API(clock_domain_create, 1 << 5),
	API(task_begin_ex, 1 << 5), API(task_end_ex, 1 << 5), API(marker_ex, 1 << 5),
	API(frame_submit_v3, 1 << 5),
	/* one the collector does not know: left alone */
	{ "__itt_not_a_function", NULL, NULL, NULL, 0 },
	{ NULL, NULL, NULL, NULL, 0 },
};
static struct itt_global global = {
	{ 0xED, 0xAB, 0xAB, 0xEC, 0x0D, 0xEE, 0xDA, 0x30 }, 3, 0, 0, 0, 0, 0,
	PTHREAD_MUTEX_INITIALIZER, NULL, NULL, NULL, api_list, NULL,
	NULL, NULL, NULL, 0, NULL, 0, NULL, NULL
};

/* the static part's own handle, made before the collector is loaded */
static struct itt_string early = { "early", NULL, 0, NULL, NULL };

static void
itt_init(void)
{
	const char *lib = getenv("INTEL_LIBITTNOTIFY64");
	void (*init)(struct itt_global *, int);

	global.api_initialized = 1;
	if (!lib || !(global.lib = dlopen(lib, RTLD_LAZY)))
		return;
	*(void **)&init = dlsym(global.lib, "__itt_api_init");
	if (init)
		init(&global, -1);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* inlined: the spin is its caller's own (self) time */
static inline __attribute__((always_inline)) void
cpu_ms(double ms)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (volatile int i = 0; i < 20000; i++)
			;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6 < ms);
}

/* the clock domain's clock: microseconds since an offset */
#define US_OFFSET	7000000000000ULL
static unsigned long long
us_of(uint64_t ns)
{
	return ns / 1000 + US_OFFSET;
}

static void
us_clock(struct itt_clock_info *info, void *data)
{
	(void)data;
	info->clock_freq = 1000000;
	info->clock_base = us_of(now_ns());
}

__attribute__((noinline)) void serve_fast(void);
__attribute__((noinline)) void serve_slow(void);
void serve_fast(void) { cpu_ms(1.0); }
static double slow_ms = 10.0;
void serve_slow(void) { cpu_ms(slow_ms); }

/* The "ex" requests: marked after the fact, with their own times. */
static void
explicit_times(struct itt_domain *d, int collector)
{
	struct itt_id none = { 0, 0, 0 };
	struct itt_clock_domain *cd = NULL;
	uint64_t a, b, a2, b2, t0, t1;
	unsigned long long ts = 0;

	a = now_ns();
	serve_slow();
	b = now_ns();
	if (collector && task_begin_ex && task_end_ex && frame_submit_v3 && marker_ex) {
		struct itt_domain *sd = domain_create("m38-submit");

		task_begin_ex(d, NULL, a, none, none, string_handle_create("ex-task"));
		task_end_ex(d, NULL, b);
		frame_submit_v3(sd, NULL, a, b);
		frame_submit_v3(sd, NULL, b, ~0ULL);
		marker_ex(d, NULL, a + (b - a) / 2, none, string_handle_create("ex-mark"), 2);
	}
	if (collector && clock_domain_create)
		cd = clock_domain_create(us_clock, NULL);
	a2 = now_ns();
	serve_fast();
	b2 = now_ns();
	if (cd && task_begin_ex && task_end_ex) {
		task_begin_ex(d, cd, us_of(a2), none, none, string_handle_create("clock-task"));
		task_end_ex(d, cd, us_of(b2));
	}
	printf("ex %llu %llu\nclock %llu %llu\n", (unsigned long long)a, (unsigned long long)b,
	       (unsigned long long)a2, (unsigned long long)b2);
	if (collector && get_timestamp) {
		t0 = now_ns();
		ts = get_timestamp();
		t1 = now_ns();
		printf("timestamp in %d\n", t0 <= ts && ts <= t1);
	}
}

int
main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 200, k = argc > 2 ? atoi(argv[2]) : 10;
	struct itt_domain *d, *fd;
	struct itt_string *fast, *slow, *done;
	struct itt_id none = { 0, 0, 0 };
	void *served;
	int nfast = 0, nslow = 0;

	if (argc > 3)
		slow_ms = atof(argv[3]);
	itt_init();
	if (!domain_create) {
		/* no collector: what an uninstrumented run does */
		for (int i = 0; i < n; i++) {
			uint64_t a = now_ns();

			(i % k == k - 1) ? serve_slow() : serve_fast();
			if (i % k == k - 1)
				printf("slow %d %llu %llu\n", i, (unsigned long long)a,
				       (unsigned long long)now_ns());
			(i % k == k - 1) ? nslow++ : nfast++;
		}
		if (argc > 4 && !strcmp(argv[4], "ex"))
			explicit_times(NULL, 0);
		printf("requests fast %d slow %d\ncollector no\n", nfast, nslow);
		return 0;
	}
	d = domain_create("m38");
	fd = domain_create("m38-frame");
	fast = string_handle_create("fast");
	slow = string_handle_create("slow");
	done = string_handle_create("done");
	served = counter_create("served", "m38");
	task_begin(d, none, none, &early);
	serve_fast();
	task_end(d);
	for (int i = 0; i < n; i++) {
		int is_slow = i % k == k - 1;
		unsigned long long v = (unsigned long long)i + 1;
		uint64_t a, b;

		frame_begin_v3(fd, NULL);
		a = now_ns();
		task_begin(d, none, none, is_slow ? slow : fast);
		is_slow ? serve_slow() : serve_fast();
		task_end(d);
		b = now_ns();
		frame_end_v3(fd, NULL);
		if (is_slow)
			printf("slow %d %llu %llu\n", i, (unsigned long long)a,
			       (unsigned long long)b);
		is_slow ? nslow++ : nfast++;
		counter_set_value(served, &v);
	}
	if (argc > 4 && !strcmp(argv[4], "ex"))
		explicit_times(d, 1);
	marker(d, none, done, 2);
	printf("requests fast %d slow %d\ncollector yes\n", nfast, nslow);
	return 0;
}
