/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The PC_* settings: one table (the variable, how its value is read, its
 * bounds or words, its default, the value a bad one gets, and the end of
 * the warning a bad one prints) and the reader that walks it. It touches no
 * libpc state: start.c turns what it reads into the configuration, and the
 * unit tests (tests/check_settings.c) call it with their own environment.
 * Start-up only; not AS-safe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pc.h"

static int
parse_long(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end)
		return -1;
	*out = v;
	return 0;
}

/* "SIGPROF", "PROF", "27", "SIGRTMIN+2", "RTMAX-1"; "auto" is 0 */
static int
parse_signal(const char *s)
{
	static const struct { const char *name; int sig; } names[] = {
		{ "PROF", SIGPROF }, { "VTALRM", SIGVTALRM }, { "ALRM", SIGALRM },
		{ "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "URG", SIGURG },
		{ "WINCH", SIGWINCH }, { "IO", SIGIO }, { "PWR", SIGPWR },
	};
	long v;

	if (!strcmp(s, "auto"))
		return 0;
	if (!strncmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name))
			return names[i].sig;
	if (!strncmp(s, "RTMIN", 5) || !strncmp(s, "RTMAX", 5)) {
		int base = s[3] == 'I' ? SIGRTMIN : SIGRTMAX;

		if (s[5] == 0)
			return base;
		if ((s[5] == '+' || s[5] == '-') && !parse_long(s + 6, &v) &&
		    v >= 0 && v <= 64) {
			v = s[5] == '+' ? base + v : base - v;
			return v >= SIGRTMIN && v <= SIGRTMAX ? (int)v : -1;
		}
		return -1;
	}
	if (parse_long(s, &v) || v < 1 || v >= NSIG)
		return -1;
	/* signals whose default meaning the host relies on, or that the
	 * kernel will not let us catch */
	switch (v) {
	case SIGKILL: case SIGSTOP: case SIGSEGV: case SIGBUS: case SIGFPE:
	case SIGILL: case SIGABRT: case SIGTRAP: case SIGCHLD: case SIGCONT:
	case SIGTSTP: case SIGTTIN: case SIGTTOU: case SIGSYS:
		return -1;
	}
	return (int)v;
}

int
pc_absolute(char *dst, size_t size, const char *path, const char *suffix)
{
	size_t n = 0, k;

	if (path[0] != '/') {
		if (!getcwd(dst, size))
			return -1;
		n = strlen(dst);
		if (n + 1 >= size)
			return -1;
		if (n > 1 || dst[0] != '/')
			dst[n++] = '/';
	}
	k = strlen(path);
	if (n + k + strlen(suffix) >= size)
		return -1;
	memcpy(dst + n, path, k);
	strcpy(dst + n + k, suffix);
	return 0;
}

enum {
	S_HZ, S_TIMER, S_SIGNAL, S_CALLGRAPH, S_UNWIND, S_DEPTH, S_ARCS,
	S_STACKS, S_STACKS_MB, S_SNAPSHOT_SIGNAL, S_SNAPSHOT_INTERVAL, S_SCOPE,
	S_VERBOSE, S_CLOCK, S_WALL_HZ, S_WALL_BUDGET, S_LIVE_MAX,
	S_TIMELINE, S_TIMELINE_MAX, S_ALLOC, S_ALLOC_RATE, S_COUNT
};

/* One reading of the settings: the values so far, and where PC_STACKS's
 * path goes. */
struct reading {
	long value[S_COUNT];
	struct pc_settings *out;
};

/* parse stores the value in *v and returns 0, or -1 for a bad value. */
struct setting {
	const char *name;
	int (*parse)(const struct setting *, const char *s, long *v, struct reading *r);
	long min, max;			/* parse_range, parse_ms */
	const char *const *words;	/* parse_word: the value is the index */
	long dflt, bad;
	const char *want;
};

static int
parse_range(const struct setting *e, const char *s, long *v, struct reading *r)
{
	(void)r;
	return parse_long(s, v) || *v < e->min || *v > e->max ? -1 : 0;
}

static int
parse_word(const struct setting *e, const char *s, long *v, struct reading *r)
{
	(void)r;
	for (long i = 0; e->words[i]; i++)
		if (!strcmp(s, e->words[i])) {
			*v = i;
			return 0;
		}
	return -1;
}

/* A signal; the snapshot signal must not be the sampling one (which the
 * table reads first). */
static int
parse_sig(const struct setting *e, const char *s, long *v, struct reading *r)
{
	*v = parse_signal(s);
	if (!strcmp(e->name, "PC_SNAPSHOT_SIGNAL") &&
	    (*v == 0 || *v == r->value[S_SIGNAL]))
		return -1;
	return *v < 0 ? -1 : 0;
}

/* Seconds, to milliseconds within [min, max]. */
static int
parse_ms(const struct setting *e, const char *s, long *v, struct reading *r)
{
	char *end;
	double sec;

	(void)r;
	errno = 0;
	sec = strtod(s, &end);
	if (errno || end == s || *end || !(sec * 1000 >= (double)e->min &&
					   sec * 1000 <= (double)e->max))
		return -1;
	*v = (long)(sec * 1000 + 0.5);
	return 0;
}

/* PC_STACKS: 0 (none), 1 (beside the profile) or a path (2). */
static int
parse_stacks(const struct setting *e, const char *s, long *v, struct reading *r)
{
	char *path = r->out->stacks_path;

	(void)e;
	*v = !strcmp(s, "0") ? 0 : !strcmp(s, "1") ? 1 : 2;
	if (*v == 2 && pc_absolute(path, sizeof(r->out->stacks_path), s, "")) {
		path[0] = 0;
		return -1;
	}
	return 0;
}

/* Bytes, with a K, M or G suffix (powers of 1024), within [min, max];
 * 0 is none. */
static int
parse_size(const struct setting *e, const char *s, long *v, struct reading *r)
{
	char *end;
	unsigned long long n;
	int shift = 0;

	(void)r;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -1;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if ((shift && *++end) || *end || n > (unsigned long long)e->max >> shift)
		return -1;
	*v = (long)(n << shift);
	return *v && *v < e->min ? -1 : 0;
}

/* parse_size, and not 0 */
static int
parse_bytes(const struct setting *e, const char *s, long *v, struct reading *r)
{
	return parse_size(e, s, v, r) || !*v ? -1 : 0;
}

static const char *const timer_words[] = { "posix", "taskclock", "auto", NULL };
static const char *const bit_words[] = { "0", "1", NULL };
static const char *const unwind_words[] = {	/* enum pc_unwinder's order */
	"auto", "dwarf", "fp", "libunwind", NULL
};
static const char *const scope_words[] = { "main", "all", NULL };
static const char *const clock_words[] = { "cpu", "wall", NULL };
static const char *const alloc_words[] = { "0", "1", "only", NULL };

/* In the order they are read: PC_SIGNAL before PC_SNAPSHOT_SIGNAL. */
static const struct setting settings[S_COUNT] = {
	[S_HZ] = { "PC_HZ", parse_range, 1, PC_MAX_HZ, NULL, PC_DEFAULT_HZ,
		   PC_DEFAULT_HZ, "is not a rate from 1 to 1000000; using 1000" },
	/* auto by default: task-clock where its sample is cheap (start.c
	 * measures it), POSIX timers where it is dear, as in a virtual
	 * machine like the one the benchmarks ran on (+7 % at 1000 Hz
	 * against +0.4 %; docs/benchmarks.md) */
	[S_TIMER] = { "PC_TIMER", parse_word, 0, 0, timer_words, 2, 2,
		      "is not posix, auto or taskclock; using auto" },
	/* auto (0) by default: a real-time signal the program leaves alone,
	 * so that SIGPROF and its masks stay entirely the program's
	 * (start.c chooses it) */
	[S_SIGNAL] = { "PC_SIGNAL", parse_sig, 0, 0, NULL, 0, 0,
		       "is not a signal libpc can use; using auto" },
	[S_CALLGRAPH] = { "PC_CALLGRAPH", parse_word, 0, 0, bit_words, 1, 1,
			  "is not 0 or 1; using 1" },
	[S_UNWIND] = { "PC_UNWIND", parse_word, 0, 0, unwind_words,
		       PC_UNWIND_AUTO, PC_UNWIND_AUTO,
		       "is not auto, dwarf, fp or libunwind; using auto" },
	[S_DEPTH] = { "PC_DEPTH", parse_range, 2, PC_MAX_DEPTH, NULL,
		      PC_DEFAULT_DEPTH, PC_DEFAULT_DEPTH,
		      "is not a depth from 2 to 256; using 128" },
	[S_ARCS] = { "PC_ARCS", parse_range, 1024, 1L << 26, NULL,
		     PC_DEFAULT_ARCS, PC_DEFAULT_ARCS,
		     "is not a count from 1024 to 67108864; using 65536" },
	[S_STACKS] = { "PC_STACKS", parse_stacks, 0, 0, NULL, 0, 1,
		       "is too long a path; writing beside the profile" },
	[S_STACKS_MB] = { "PC_STACKS_MB", parse_range, 1, 4096, NULL, 32, 32,
			  "is not a size from 1 to 4096; using 32" },
	[S_SNAPSHOT_SIGNAL] = { "PC_SNAPSHOT_SIGNAL", parse_sig, 0, 0, NULL, 0, 0,
				"is not a signal libpc can use; no snapshots on a signal" },
	[S_SNAPSHOT_INTERVAL] = { "PC_SNAPSHOT_INTERVAL", parse_ms, 10, 86400000,
				  NULL, 0, 0,
				  "is not seconds from 0.01 to 86400; no periodic snapshots" },
	[S_SCOPE] = { "PC_SCOPE", parse_word, 0, 0, scope_words, 0, 0,
		      "is not main or all; using main" },
	[S_VERBOSE] = { "PC_VERBOSE", parse_word, 0, 0, bit_words, 0, 0,
			"is not 0 or 1; using 0" },
	/* wall: off-CPU samples of every blocked thread too (wall.c) */
	[S_CLOCK] = { "PC_CLOCK", parse_word, 0, 0, clock_words, 0, 0,
		      "is not cpu or wall; using cpu" },
	/* the wall sampler's rounds a second; wall.c says why 100 */
	[S_WALL_HZ] = { "PC_WALL_HZ", parse_range, 1, 1000, NULL, PC_DEFAULT_WALL_HZ,
			PC_DEFAULT_WALL_HZ, "is not a rate from 1 to 1000; using 100" },
	/* the wall sampler's CPU, in percent of one CPU: 1 by default (the
	 * overhead that goes unnoticed); pcprof compare asks for more, as a
	 * gate's power grows with the rounds */
	[S_WALL_BUDGET] = { "PC_WALL_BUDGET", parse_range, 1, 100, NULL, 1, 1,
			    "is not a percentage from 1 to 100; using 1" },
	/* the most the live file may take on disk or in memory; 0: as much
	 * as the program's text, threads and stacks need (live.c) */
	[S_LIVE_MAX] = { "PC_LIVE_MAX", parse_size, 64L << 10, 1L << 40, NULL, 0, 0,
			 "is not a size from 64K to 1024G, or 0; no cap" },
	/* the timeline (timeline.c): each sample's time and thread, and the
	 * program's markers */
	[S_TIMELINE] = { "PC_TIMELINE", parse_word, 0, 0, bit_words, 0, 0,
			 "is not 0 or 1; using 0" },
	[S_TIMELINE_MAX] = { "PC_TIMELINE_MAX", parse_range, 64, 1L << 26, NULL,
			     1L << 18, 1L << 18,
			     "is not a count from 64 to 67108864; using 262144" },
	/* allocations sampled by bytes (alloc.c), only: without CPU samples;
	 * anything else still asks for them */
	[S_ALLOC] = { "PC_ALLOC", parse_word, 0, 0, alloc_words, 0, 1,
		      "is not 0, 1 or only; profiling allocations" },
	[S_ALLOC_RATE] = { "PC_ALLOC_RATE", parse_bytes, 1, 4294967295L, NULL,
			   PC_ALLOC_DEFAULT_RATE, PC_ALLOC_DEFAULT_RATE,
			   "is not a number of bytes from 1 to 4294967295; "
			   "sampling one allocation in 512 KiB" },
};

/* The values into s, by name. */
static void
settings_store(struct pc_settings *s, const long *value)
{
	s->hz = value[S_HZ];
	s->timer = (int)value[S_TIMER];
	s->sig = (int)value[S_SIGNAL];
	s->callgraph = (int)value[S_CALLGRAPH];
	s->unwinder = (enum pc_unwinder)value[S_UNWIND];
	s->depth = (int)value[S_DEPTH];
	s->arcs = (size_t)value[S_ARCS];
	s->stacks = (int)value[S_STACKS];
	s->stacks_mb = (size_t)value[S_STACKS_MB];
	s->snapshot_sig = (int)value[S_SNAPSHOT_SIGNAL];
	s->snapshot_interval_ms = value[S_SNAPSHOT_INTERVAL];
	s->scope_all = value[S_SCOPE] == 1;
	s->verbose = (int)value[S_VERBOSE];
	s->clock_wall = value[S_CLOCK] == 1;
	s->wall_hz = value[S_WALL_HZ];
	s->wall_budget = (int)value[S_WALL_BUDGET];
	s->live_max = (uint64_t)value[S_LIVE_MAX];
	s->timeline = (int)value[S_TIMELINE];
	s->timeline_max = (uint64_t)value[S_TIMELINE_MAX];
	s->alloc = (int)value[S_ALLOC];
	s->alloc_rate = (uint64_t)value[S_ALLOC_RATE];
}

void
pc_settings_read(struct pc_settings *s, char *(*get)(const char *),
		 void (*say)(const char *, const char *, const char *))
{
	struct reading r = { .out = s };

	memset(s, 0, sizeof(*s));
	for (int i = 0; i < S_COUNT; i++) {
		const struct setting *e = &settings[i];
		const char *v = get(e->name);
		char name[32], why[128];
		size_t n = strlen(e->name), k = strlen(e->want);

		r.value[i] = e->dflt;
		if (!v || !*v)
			continue;
		if (e->parse(e, v, &r.value[i], &r) == 0) {
			s->sig_chosen |= i == S_SIGNAL;
			continue;
		}
		r.value[i] = e->bad;
		memcpy(name, e->name, n);
		memcpy(name + n, "='", 3);
		memcpy(why, "' ", 2);
		memcpy(why + 2, e->want, k + 1);
		say(name, v, why);
	}
	settings_store(s, r.value);
}
