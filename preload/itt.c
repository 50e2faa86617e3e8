/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libpc-itt.so: an Intel ITT collector that turns a program's ITT tasks,
 * regions, frames, markers and counters into pcprof's markers. The ITT
 * static part that instrumented programs and libraries carry (TBB,
 * OpenVINO, PyTorch) dlopens the library that INTEL_LIBITTNOTIFY64 names
 * (pcprof run --timeline sets it) at its first call, and calls its
 * __itt_api_init(global, groups), which fills the static part's table of
 * function pointers by their names ("__itt_task_begin"); a pointer left
 * alone stays a no-op.
 *
 * It is a library of its own, not libpc.so: a program that inherits the
 * variable without libpc preloaded (a child that cleared LD_PRELOAD)
 * would otherwise start libpc by dlopen, late and without its
 * interposition. Here it only reaches libpc through the weak marker API
 * of pcprof/marker.h, and fills nothing where libpc is not loaded.
 *
 * Times: __itt_get_timestamp is CLOCK_MONOTONIC in nanoseconds, which
 * the _ex calls with no clock domain and __itt_frame_submit_v3 take; a
 * clock domain's timestamps are converted by the frequency and base its
 * callback gives, the base read as now (see clock_now).
 *
 * ITT calls come from the program's own code, never from libpc's signal
 * handlers: the create functions take a mutex; the rest take no lock and
 * allocate nothing. Handles live in fixed pools (never freed, as ITT's
 * are not), so a name's pointer is stable, as libpc's markers want.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "../include/pcprof/marker.h"

#define ITT_EXPORT	__attribute__((visibility("default")))
#define NAME_LEN	128	/* a name's bytes kept, NUL included */
#define MAX_DOMAINS	64
#define MAX_STRINGS	2048
#define MAX_COUNTERS	256
#define MAX_OPEN	32	/* tasks, regions, frames open in a thread */
#define MAX_CLOCKS	64	/* clock domains */
#define TIMESTAMP_NONE	(~0ULL)	/* __itt_timestamp_none: now */

/* The ITT ABI's records, as ittnotify.h and ittnotify_config.h lay them
 * out (8-byte packing, which x86-64's natural alignment gives). */
struct itt_domain {
	volatile int flags;	/* 0: the static part's macros skip it */
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

struct itt_counter {		/* __itt_counter_info_t */
	const char *nameA;
	void *nameW;
	const char *domainA;
	void *domainW;
	int type;		/* __itt_metadata_type */
	long index;
	int extra1;
	void *extra2;
	struct itt_counter *next;
};

struct itt_id {
	unsigned long long d1, d2, d3;
};

struct itt_clock_info {
	unsigned long long clock_freq;	/* its ticks a second */
	unsigned long long clock_base;	/* its time now */
};

typedef void (*itt_clock_fn)(struct itt_clock_info *info, void *data);

struct itt_clock_domain {
	struct itt_clock_info info;
	itt_clock_fn fn;
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

struct itt_global {		/* its head: what a collector reads */
	unsigned char magic[8];
	unsigned long version_major, version_minor, version_build;
	volatile long api_initialized, mutex_initialized, atomic_counter;
	pthread_mutex_t mutex;
	void *lib;
	void *error_handler;
	const char **dll_path_ptr;
	struct itt_api_info *api_list_ptr;
};

enum {
	META_U64 = 1,
	META_S64,
	META_U32,
	META_S32,
	META_U16,
	META_S16,
	META_FLOAT,
	META_DOUBLE
};

static const unsigned char itt_magic[8] = { 0xED, 0xAB, 0xAB, 0xEC,
					    0x0D, 0xEE, 0xDA, 0x30 };

/* The pools: an entry is whole once its count says so (release store),
 * so that lookups may read them under the mutex only. */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	struct itt_domain d;
	char name[NAME_LEN];
} domains[MAX_DOMAINS];
static struct {
	struct itt_string s;
	char name[NAME_LEN];
} strings[MAX_STRINGS];
static struct {
	struct itt_counter c;
	char name[NAME_LEN], domain[NAME_LEN];
	long long value;	/* for inc and dec, atomic */
} counters[MAX_COUNTERS];
static struct {
	struct itt_clock_domain c;
	unsigned long long at_ns;	/* CLOCK_MONOTONIC when info was read */
} clocks[MAX_CLOCKS];
static size_t ndomains, nstrings, ncounters, nclocks;

/* What a thread has open: tasks and regions end by their domain or id,
 * not their name, so each end finds its begin's name here. */
enum { OPEN_TASK = 1, OPEN_REGION, OPEN_FRAME };
struct open {
	int kind;
	const void *domain;
	unsigned long long id;
	const char *name;	/* NULL: a task with no name, not marked */
};
static __thread struct open opened[MAX_OPEN];
static __thread int nopened;

static void
copy_name(char *to, const char *from)
{
	size_t n = strnlen(from, NAME_LEN - 1);

	memcpy(to, from, n);
	to[n] = 0;
}

static int
same_name(const char *kept, const char *name)
{
	return name && !strncmp(kept, name, NAME_LEN - 1);
}

static struct itt_domain *
domain_create(const char *name)
{
	struct itt_domain *d = NULL;

	if (!name)
		return NULL;
	pthread_mutex_lock(&pool_lock);
	for (size_t i = 0; i < ndomains && !d; i++)
		if (same_name(domains[i].name, name))
			d = &domains[i].d;
	if (!d && ndomains < MAX_DOMAINS) {
		d = &domains[ndomains].d;
		copy_name(domains[ndomains].name, name);
		d->nameA = domains[ndomains].name;
		d->flags = 1;
		__atomic_store_n(&ndomains, ndomains + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&pool_lock);
	return d;
}

static struct itt_string *
string_handle_create(const char *name)
{
	struct itt_string *s = NULL;

	if (!name)
		return NULL;
	pthread_mutex_lock(&pool_lock);
	for (size_t i = 0; i < nstrings && !s; i++)
		if (same_name(strings[i].name, name))
			s = &strings[i].s;
	if (!s && nstrings < MAX_STRINGS) {
		s = &strings[nstrings].s;
		copy_name(strings[nstrings].name, name);
		s->strA = strings[nstrings].name;
		__atomic_store_n(&nstrings, nstrings + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&pool_lock);
	return s;
}

static struct itt_counter *
counter_create_typed(const char *name, const char *domain, int type)
{
	struct itt_counter *c = NULL;

	if (!name)
		return NULL;
	if (!domain)
		domain = "";
	pthread_mutex_lock(&pool_lock);
	for (size_t i = 0; i < ncounters && !c; i++)
		if (same_name(counters[i].name, name) &&
		    same_name(counters[i].domain, domain) &&
		    counters[i].c.type == type)
			c = &counters[i].c;
	if (!c && ncounters < MAX_COUNTERS) {
		c = &counters[ncounters].c;
		copy_name(counters[ncounters].name, name);
		copy_name(counters[ncounters].domain, domain);
		c->nameA = counters[ncounters].name;
		c->domainA = counters[ncounters].domain;
		c->type = type;
		__atomic_store_n(&ncounters, ncounters + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&pool_lock);
	return c;
}

static struct itt_counter *
counter_create(const char *name, const char *domain)
{
	return counter_create_typed(name, domain, META_U64);
}

static struct itt_counter *
counter_create_v3(const struct itt_domain *domain, const char *name, int type)
{
	return counter_create_typed(name, domain ? domain->nameA : NULL, type);
}

/* A counter of ours: c itself, or, for one that the static part made
 * before it loaded this library (its own copy, same layout), ours of
 * the same name. */
static struct itt_counter *
own_counter(struct itt_counter *c)
{
	uintptr_t p = (uintptr_t)c, lo = (uintptr_t)counters;

	if (!c)
		return NULL;
	if (p >= lo && p < lo + sizeof(counters))
		return c;
	return counter_create_typed(c->nameA, c->domainA, c->type);
}

static long long *
counter_value(struct itt_counter *c)
{
	return &counters[((uintptr_t)c - (uintptr_t)counters) /
			 sizeof(counters[0])]
			.value;
}

/* The value at p, of the counter's type, as an integer. */
static long long
read_value(int type, const void *p)
{
	switch (type) {
	case META_S64: { int64_t v; memcpy(&v, p, 8); return v; }
	case META_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
	case META_S32: { int32_t v; memcpy(&v, p, 4); return v; }
	case META_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
	case META_S16: { int16_t v; memcpy(&v, p, 2); return v; }
	case META_FLOAT: { float v; memcpy(&v, p, 4); return (long long)v; }
	case META_DOUBLE: { double v; memcpy(&v, p, 8); return (long long)v; }
	default: { uint64_t v; memcpy(&v, p, 8); return (long long)v; }
	}
}

static void
counter_set_value(struct itt_counter *c, void *value)
{
	long long v;

	if (!(c = own_counter(c)) || !value)
		return;
	v = read_value(c->type, value);
	__atomic_store_n(counter_value(c), v, __ATOMIC_RELAXED);
	pcprof_count(c->nameA, v);
}

static void
counter_add(struct itt_counter *c, long long delta)
{
	if (!(c = own_counter(c)))
		return;
	pcprof_count(c->nameA, __atomic_add_fetch(counter_value(c), delta,
						  __ATOMIC_RELAXED));
}

static void counter_inc(struct itt_counter *c) { counter_add(c, 1); }
static void counter_dec(struct itt_counter *c) { counter_add(c, -1); }
static void counter_inc_delta(struct itt_counter *c, unsigned long long d)
{ counter_add(c, (long long)d); }
static void counter_dec_delta(struct itt_counter *c, unsigned long long d)
{ counter_add(c, -(long long)d); }

/* Open kind in this thread with name (NULL: unnamed, nothing marked),
 * at CLOCK_MONOTONIC ns at (0: now). Past MAX_OPEN neither the begin nor
 * its end is marked. */
static void
open_at(int kind, const void *domain, unsigned long long id, const char *name,
	unsigned long long at)
{
	if (nopened >= MAX_OPEN)
		return;
	opened[nopened++] = (struct open){ kind, domain, id, name };
	if (name)
		pcprof_mark_begin_at(name, at);
}

static void
open_one(int kind, const void *domain, unsigned long long id, const char *name)
{
	open_at(kind, domain, id, name, 0);
}

/* End the innermost open kind of domain (and id, unless any_id), at
 * CLOCK_MONOTONIC ns at (0: now). */
static void
close_at(int kind, const void *domain, unsigned long long id, int any_id,
	 unsigned long long at)
{
	for (int i = nopened; i-- > 0; ) {
		struct open *o = &opened[i];

		if (o->kind != kind || o->domain != domain ||
		    (!any_id && o->id != id))
			continue;
		if (o->name)
			pcprof_mark_end_at(o->name, at);
		memmove(o, o + 1, (size_t)(nopened - i - 1) * sizeof(*o));
		nopened--;
		return;
	}
}

static void
close_one(int kind, const void *domain, unsigned long long id, int any_id)
{
	close_at(kind, domain, id, any_id, 0);
}

static void
task_begin(const struct itt_domain *d, struct itt_id id, struct itt_id parent,
	   const struct itt_string *name)
{
	open_one(OPEN_TASK, d, id.d1, name ? name->strA : NULL);
}

static void
task_begin_fn(const struct itt_domain *d, struct itt_id id,
	      struct itt_id parent, void *fn)
{
	open_one(OPEN_TASK, d, id.d1, NULL);
}

static void
task_end(const struct itt_domain *d)
{
	close_one(OPEN_TASK, d, 0, 1);
}

static void
region_begin(const struct itt_domain *d, struct itt_id id, struct itt_id parent,
	     const struct itt_string *name)
{
	open_one(OPEN_REGION, d, id.d1, name ? name->strA : NULL);
}

static void
region_end(const struct itt_domain *d, struct itt_id id)
{
	close_one(OPEN_REGION, d, id.d1, 0);
}

/* A frame is named after its domain. */
static void
frame_begin_v3(const struct itt_domain *d, struct itt_id *id)
{
	open_one(OPEN_FRAME, d, id ? id->d1 : 0, d ? d->nameA : NULL);
}

static void
frame_end_v3(const struct itt_domain *d, struct itt_id *id)
{
	close_one(OPEN_FRAME, d, id ? id->d1 : 0, !id);
}

static void
marker(const struct itt_domain *d, struct itt_id id,
       const struct itt_string *name, int scope)
{
	if (name && name->strA)
		pcprof_mark_instant(name->strA);
}

static unsigned long long
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL +
	       (unsigned long long)ts.tv_nsec;
}

/* The collector's timestamps: CLOCK_MONOTONIC ns, pcprof's own. */
static unsigned long long
get_timestamp(void)
{
	return mono_ns();
}

/*
 * c's frequency and base from its callback, the base taken to be its
 * clock's now: the moment is the middle of a monotonic reading before
 * and one after the callback, read again (three tries) where a
 * preemption made them more than 20 us apart.
 */
static void
clock_now(struct itt_clock_domain *c)
{
	unsigned long long a, b;

	for (int i = 0; i < 3; i++) {
		a = mono_ns();
		c->fn(&c->info, c->fn_data);
		b = mono_ns();
		if (b - a <= 20000)
			break;
	}
	clocks[c - &clocks[0].c].at_ns = a + (b - a) / 2;
}

static struct itt_clock_domain *
clock_domain_create(itt_clock_fn fn, void *data)
{
	struct itt_clock_domain *c = NULL;

	if (!fn)
		return NULL;
	/* the slot taken under the lock, the callback called outside it:
	 * it is the program's code, which may make ITT calls of its own */
	pthread_mutex_lock(&pool_lock);
	if (nclocks < MAX_CLOCKS)
		c = &clocks[nclocks++].c;
	pthread_mutex_unlock(&pool_lock);
	if (c) {
		c->fn = fn;
		c->fn_data = data;
		clock_now(c);
	}
	return c;
}

static void
clock_domain_reset(void)
{
	size_t n;

	pthread_mutex_lock(&pool_lock);
	n = nclocks;
	pthread_mutex_unlock(&pool_lock);
	for (size_t i = 0; i < n; i++)
		if (clocks[i].c.fn)
			clock_now(&clocks[i].c);
}

/* Timestamp ts of clock domain c (NULL: get_timestamp's) as CLOCK_MONOTONIC
 * ns; 0 (now) for __itt_timestamp_none. A clock of no frequency is read
 * as nanoseconds. */
static unsigned long long
at_ns(const struct itt_clock_domain *c, unsigned long long ts)
{
	uintptr_t p = (uintptr_t)c, lo = (uintptr_t)clocks;
	unsigned long long freq, at;
	__int128 d;

	if (ts == TIMESTAMP_NONE)
		return 0;
	if (!c || p < lo || p >= lo + sizeof(clocks))
		return ts;
	freq = c->info.clock_freq ? c->info.clock_freq : 1000000000ULL;
	at = clocks[(p - lo) / sizeof(clocks[0])].at_ns;
	d = ((__int128)ts - (__int128)c->info.clock_base) * 1000000000 /
	    (__int128)freq;
	if (d < -(__int128)at)
		return 1;
	return (unsigned long long)((__int128)at + d);
}

static void
task_begin_ex(const struct itt_domain *d, struct itt_clock_domain *c,
	      unsigned long long ts, struct itt_id id, struct itt_id parent,
	      const struct itt_string *name)
{
	open_at(OPEN_TASK, d, id.d1, name ? name->strA : NULL, at_ns(c, ts));
}

static void
task_begin_fn_ex(const struct itt_domain *d, struct itt_clock_domain *c,
		 unsigned long long ts, struct itt_id id, struct itt_id parent,
		 void *fn)
{
	open_at(OPEN_TASK, d, id.d1, NULL, at_ns(c, ts));
}

static void
task_end_ex(const struct itt_domain *d, struct itt_clock_domain *c,
	    unsigned long long ts)
{
	close_at(OPEN_TASK, d, 0, 1, at_ns(c, ts));
}

static void
marker_ex(const struct itt_domain *d, struct itt_clock_domain *c,
	  unsigned long long ts, struct itt_id id,
	  const struct itt_string *name, int scope)
{
	if (name && name->strA)
		pcprof_mark_instant_at(name->strA, at_ns(c, ts));
}

/* A frame already over, from begin to end (get_timestamp's; end
 * __itt_timestamp_none: now), named after its domain as frames are. */
static void
frame_submit_v3(const struct itt_domain *d, struct itt_id *id,
		unsigned long long begin, unsigned long long end)
{
	if (!d || !d->nameA || begin == TIMESTAMP_NONE)
		return;
	pcprof_mark_begin_at(d->nameA, begin);
	pcprof_mark_end_at(d->nameA, end == TIMESTAMP_NONE ? mono_ns() : end);
}

#define FN(f)	{ "__itt_" #f, (void *)f }
static const struct { const char *name; void *fn; } collected[] = {
	FN(domain_create), FN(string_handle_create),
	FN(counter_create), FN(counter_create_typed), FN(counter_create_v3),
	FN(counter_set_value), FN(counter_inc), FN(counter_dec),
	FN(counter_inc_delta), FN(counter_dec_delta),
	FN(task_begin), FN(task_begin_fn), FN(task_end),
	FN(region_begin), FN(region_end),
	FN(frame_begin_v3), FN(frame_end_v3), FN(marker),
	FN(get_timestamp), FN(clock_domain_create), FN(clock_domain_reset),
	FN(task_begin_ex), FN(task_begin_fn_ex), FN(task_end_ex), FN(marker_ex),
	FN(frame_submit_v3),
};

void __itt_api_init(struct itt_global *g, int groups) ITT_EXPORT;

/* The static part's entry: fill its table with what is collected here,
 * where libpc is loaded and the table is one this file knows. */
void
__itt_api_init(struct itt_global *g, int groups)
{
	if (!g || memcmp(g->magic, itt_magic, sizeof(itt_magic)) ||
	    !g->api_list_ptr || !pcprof_mark_begin || !pcprof_mark_end ||
	    !pcprof_mark_instant || !pcprof_count || !pcprof_mark_begin_at ||
	    !pcprof_mark_end_at || !pcprof_mark_instant_at)
		return;
	for (struct itt_api_info *a = g->api_list_ptr; a->name; a++)
		for (size_t i = 0; i < sizeof(collected) / sizeof(collected[0]);
		     i++)
			if (a->func_ptr && !strcmp(a->name, collected[i].name))
				*a->func_ptr = collected[i].fn;
}
