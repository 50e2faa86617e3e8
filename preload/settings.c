/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The PC_* settings: one table, made of settings.h's rows (the variable,
 * how its value is read, its bounds or words, its default, the value a
 * bad one gets, and the end of the warning a bad one prints), and the
 * reader that walks it. It touches no
 * libpc state: start.c turns what it reads into the configuration, and the
 * unit tests (tests/check_settings.c) call it with their own environment.
 * Start-up only; not AS-safe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
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
	static const struct { const char *name; int sig;
	} names[] = {
		{ "PROF", SIGPROF },   { "VTALRM", SIGVTALRM },
		{ "ALRM", SIGALRM },   { "USR1", SIGUSR1 },
		{ "USR2", SIGUSR2 },   { "URG", SIGURG },
		{ "WINCH", SIGWINCH }, { "IO", SIGIO },
		{ "PWR", SIGPWR },
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

/* One reading of the settings: the values so far, and where PC_STACKS's
 * path goes. */
struct reading {
	long value[PC_S_COUNT];
	struct pc_settings *out;
};

/* parse stores the value in *v and returns 0, or -1 for a bad value. */
struct setting {
	const char *name;
	int (*parse)(const struct setting *, const char *s, long *v,
		     struct reading *r);
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
	    (*v == 0 || *v == r->value[PC_S_SIGNAL]))
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
	if ((shift && *++end) || *end ||
	    n > (unsigned long long)e->max >> shift)
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

/* The string as it is, kept as the value (a long holds a pointer on
 * Linux): the environment's, which outlives start-up. */
static int
parse_text(const struct setting *e, const char *s, long *v, struct reading *r)
{
	(void)e, (void)r;
	*v = (long)(intptr_t)s;
	return 0;
}

static const char *const timer_words[] = { "posix", "taskclock", "auto", NULL };
static const char *const bit_words[] = { "0", "1", NULL };
static const char *const unwind_words[] = {	/* enum pc_unwinder's order */
	"auto", "dwarf", "fp", "libunwind", NULL
};
static const char *const scope_words[] = { "main", "all", NULL };
static const char *const clock_words[] = { "cpu", "wall", NULL };
static const char *const alloc_words[] = { "0", "1", "only", NULL };

/* The rows of settings.h, in the order they are read. */
static const struct setting settings[PC_S_COUNT] = {
#define ROW(id, name, field, type, parse, min, max, words, dflt, bad, want, \
	    refuse, doc) \
	[PC_S_##id] = { name,  parse,        min,         max, \
			words, (long)(dflt), (long)(bad), want },
	PC_SETTINGS(ROW)
#undef ROW
};

/* The values into s, by name. */
static void
settings_store(struct pc_settings *s, const long *value)
{
#define STORE(id, name, field, type, ...) s->field = (type)value[PC_S_##id];
	PC_SETTINGS(STORE)
#undef STORE
}

const char *
pc_setting_text(enum pc_setting id, char *(*get)(const char *))
{
	return get(settings[id].name);
}

void
pc_settings_read(struct pc_settings *s, char *(*get)(const char *),
		 void (*say)(const char *, const char *, const char *))
{
	struct reading r = { .out = s };

	memset(s, 0, sizeof(*s));
	for (int i = 0; i < PC_S_COUNT; i++) {
		const struct setting *e = &settings[i];
		const char *v = get(e->name);
		char name[32], why[128];
		size_t n = strlen(e->name), k = strlen(e->want);

		r.value[i] = e->dflt;
		/* a text's empty value is a value (PC_ROOT=) */
		if (!v || (!*v && e->parse != parse_text))
			continue;
		if (e->parse(e, v, &r.value[i], &r) == 0) {
			s->sig_chosen |= i == PC_S_SIGNAL;
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
