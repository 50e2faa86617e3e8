/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The settings reader (preload/settings.c) with an environment of the
 * test's own: every default, good values of each kind, and for each bad
 * value the exact warning and the value the table gives it.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../preload/pc.h"
#include "unit.h"

/* The environment a test sets: NULL-terminated name, value pairs. */
static const char *const *env;
static char said[8][256];
static int nsaid;

static char *
fake_getenv(const char *name)
{
	for (int i = 0; env && env[i]; i += 2)
		if (!strcmp(env[i], name))
			return (char *)env[i + 1];
	return NULL;
}

/* As pc_say: a line of the three parts (the variable one cut at 64 bytes,
 * as pc_say shortens it to fit). */
static void
fake_say(const char *a, const char *b, const char *c)
{
	if (nsaid < 8)
		snprintf(said[nsaid], sizeof(said[0]), "libpc: %s%.64s%s", a, b,
			 c);
	nsaid++;
}

static void
read_with(struct pc_settings *s, const char *const *e)
{
	env = e;
	nsaid = 0;
	memset(said, 0, sizeof(said));
	pc_settings_read(s, fake_getenv, fake_say);
}

START_TEST(test_defaults_without_warnings)
{
	static const char *const none[] = { NULL };
	static const char *const empty[] = { "PC_HZ", "", "PC_SIGNAL", "",
					     NULL };
	struct pc_settings s;

	for (int k = 0; k < 2; k++) {
		read_with(&s, k ? empty : none);
		ck_assert_int_eq(nsaid, 0);
		ck_assert_int_eq(s.hz, PC_DEFAULT_HZ);
		ck_assert_int_eq(s.timer, 2);	/* auto: chosen by its cost */
		ck_assert_int_eq(s.sig, 0);	/* auto: start.c chooses */
		ck_assert_int_eq(s.sig_chosen, 0);
		ck_assert_int_eq(s.callgraph, 1);
		ck_assert_int_eq(s.unwinder, PC_UNWIND_AUTO);
		ck_assert_int_eq(s.depth, PC_DEFAULT_DEPTH);
		ck_assert_uint_eq(s.arcs, PC_DEFAULT_ARCS);
		ck_assert_int_eq(s.stacks, 0);
		ck_assert_uint_eq(s.stacks_mb, 32);
		ck_assert_int_eq(s.snapshot_sig, 0);
		ck_assert_int_eq(s.snapshot_interval_ms, 0);
		ck_assert_int_eq(s.scope_all, 0);
		ck_assert_int_eq(s.verbose, 0);
		ck_assert_uint_eq(s.live_max, 0);	/* no cap */
	}
}
END_TEST

START_TEST(test_good_values_of_every_kind)
{
	static const char *const e[] = { "PC_HZ",
					 "4000",
					 "PC_TIMER",
					 "taskclock",
					 "PC_SIGNAL",
					 "SIGRTMIN+2",
					 "PC_CALLGRAPH",
					 "0",
					 "PC_UNWIND",
					 "libunwind",
					 "PC_DEPTH",
					 "256",
					 "PC_ARCS",
					 "1024",
					 "PC_STACKS",
					 "/tmp/st",
					 "PC_STACKS_MB",
					 "4096",
					 "PC_SNAPSHOT_SIGNAL",
					 "USR2",
					 "PC_SNAPSHOT_INTERVAL",
					 "0.0105",
					 "PC_SCOPE",
					 "all",
					 "PC_VERBOSE",
					 "1",
					 NULL };
	struct pc_settings s;

	read_with(&s, e);
	ck_assert_int_eq(nsaid, 0);
	ck_assert_int_eq(s.hz, 4000);
	ck_assert_int_eq(s.timer, 1);
	ck_assert_int_eq(s.sig, SIGRTMIN + 2);
	ck_assert_int_eq(s.sig_chosen, 1);
	ck_assert_int_eq(s.callgraph, 0);
	ck_assert_int_eq(s.unwinder, PC_UNWIND_LIBUNWIND);
	ck_assert_int_eq(s.depth, 256);
	ck_assert_uint_eq(s.arcs, 1024);
	ck_assert_int_eq(s.stacks, 2);
	ck_assert_str_eq(s.stacks_path, "/tmp/st");
	ck_assert_uint_eq(s.stacks_mb, 4096);
	ck_assert_int_eq(s.snapshot_sig, SIGUSR2);
	ck_assert_int_eq(s.snapshot_interval_ms, 11);	/* 10.5 ms rounds up */
	ck_assert_int_eq(s.scope_all, 1);
	ck_assert_int_eq(s.verbose, 1);
}
END_TEST

/* Signals by name, number and real-time offset, with or without SIG. */
START_TEST(test_signal_spellings)
{
	static const struct { const char *v; int sig;
	} ok[] = {
		{ "PROF", SIGPROF }, { "SIGVTALRM", SIGVTALRM },
		{ "12", 12 },        { "RTMIN", 0 },
		{ "SIGRTMAX-1", 1 }, { "RTMIN+0", 0 },
		{ "auto", 0 },
	};
	struct pc_settings s;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		const char *e[] = { "PC_SIGNAL", ok[i].v, NULL };
		int want = ok[i].sig;

		if (!strcmp(ok[i].v, "RTMIN") || !strcmp(ok[i].v, "RTMIN+0"))
			want = SIGRTMIN;
		else if (!strcmp(ok[i].v, "SIGRTMAX-1"))
			want = SIGRTMAX - 1;
		read_with(&s, e);
		ck_assert_msg(nsaid == 0, "%s: %s", ok[i].v, said[0]);
		ck_assert_int_eq(s.sig, want);
	}
}
END_TEST

/* Each bad value: the variable, the value and the table's reason on one
 * line, and the table's value for it. */
START_TEST(test_bad_values_warn_and_get_the_tables_value)
{
	static const struct {
		const char *name, *value, *want;
	} bad[] = {
		{ "PC_HZ", "0", "is not a rate from 1 to 1000000; using 1000" },
		{ "PC_HZ", "1000001",
		  "is not a rate from 1 to 1000000; using 1000" },
		{ "PC_HZ", "12abc",
		  "is not a rate from 1 to 1000000; using 1000" },
		{ "PC_HZ", "99999999999999999999",
		  "is not a rate from 1 to 1000000; using 1000" },
		{ "PC_TIMER", "perf",
		  "is not posix, auto or taskclock; using auto" },
		{ "PC_SIGNAL", "SIGKILL",
		  "is not a signal libpc can use; using auto" },
		{ "PC_SIGNAL", "9",
		  "is not a signal libpc can use; using auto" },
		{ "PC_SIGNAL", "17",
		  "is not a signal libpc can use; using auto" },
		{ "PC_SIGNAL", "RTMAX+1",
		  "is not a signal libpc can use; using auto" },
		{ "PC_SIGNAL", "65",
		  "is not a signal libpc can use; using auto" },
		{ "PC_CALLGRAPH", "yes", "is not 0 or 1; using 1" },
		{ "PC_UNWIND", "frame",
		  "is not auto, dwarf, fp or libunwind; using auto" },
		{ "PC_DEPTH", "1", "is not a depth from 2 to 256; using 128" },
		{ "PC_ARCS", "1023",
		  "is not a count from 1024 to 67108864; using 65536" },
		{ "PC_STACKS_MB", "0",
		  "is not a size from 1 to 4096; using 32" },
		{ "PC_SNAPSHOT_SIGNAL", "STOP",
		  "is not a signal libpc can use; no snapshots on a signal" },
		{ "PC_SNAPSHOT_INTERVAL", "0.001",
		  "is not seconds from 0.01 to 86400; no periodic snapshots" },
		{ "PC_SNAPSHOT_INTERVAL", "nan",
		  "is not seconds from 0.01 to 86400; no periodic snapshots" },
		{ "PC_SCOPE", "everything", "is not main or all; using main" },
		{ "PC_VERBOSE", "2", "is not 0 or 1; using 0" },
		{ "PC_LIVE_MAX", "1K",
		  "is not a size from 64K to 1024G, or 0; no cap" },
		{ "PC_LIVE_MAX", "65535",
		  "is not a size from 64K to 1024G, or 0; no cap" },
		{ "PC_LIVE_MAX", "2T",
		  "is not a size from 64K to 1024G, or 0; no cap" },
		{ "PC_LIVE_MAX", "1025G",
		  "is not a size from 64K to 1024G, or 0; no cap" },
		{ "PC_LIVE_MAX", "-1M",
		  "is not a size from 64K to 1024G, or 0; no cap" },
		{ "PC_LIVE_MAX", "1MB",
		  "is not a size from 64K to 1024G, or 0; no cap" },
		{ "PC_LIVE_MAX", "99999999999999999999",
		  "is not a size from 64K to 1024G, or 0; no cap" },
	};
	struct pc_settings s, d;
	static const char *const none[] = { NULL };

	read_with(&d, none);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *e[] = { bad[i].name, bad[i].value, NULL };
		char line[256];

		read_with(&s, e);
		snprintf(line, sizeof(line), "libpc: %s='%s' %s", bad[i].name,
			 bad[i].value, bad[i].want);
		ck_assert_int_eq(nsaid, 1);
		ck_assert_str_eq(said[0], line);
		/* every bad value here gets its default */
		ck_assert_msg(!memcmp(&s, &d, sizeof(s)), "%s='%s' left a value other than "
			      "the default", bad[i].name, bad[i].value);
	}
}
END_TEST

/* PC_LIVE_MAX: bytes, or K, M and G (powers of 1024), 0 for none. */
START_TEST(test_live_max_sizes)
{
	static const struct {
		const char *value;
		uint64_t want;
	} good[] = {
		{ "0", 0 },           { "65536", 65536 },
		{ "64K", 64 << 10 },  { "128k", 128 << 10 },
		{ "1M", 1 << 20 },    { "512m", 512u << 20 },
		{ "3G", 3ull << 30 }, { "1024G", 1ull << 40 },
	};
	struct pc_settings s;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		const char *e[] = { "PC_LIVE_MAX", good[i].value, NULL };

		read_with(&s, e);
		ck_assert_int_eq(nsaid, 0);
		ck_assert_uint_eq(s.live_max, good[i].want);
	}
}
END_TEST

/* The snapshot signal may not be the sampling one, whichever that is. */
START_TEST(test_snapshot_signal_is_not_the_sampling_signal)
{
	static const char *const same[] = {
		"PC_SIGNAL", "USR1", "PC_SNAPSHOT_SIGNAL", "SIGUSR1", NULL
	};
	static const char *const deflt[] = { "PC_SNAPSHOT_SIGNAL", "PROF",
					     NULL };
	static const char *const autosig[] = { "PC_SNAPSHOT_SIGNAL", "auto",
					       NULL };
	struct pc_settings s;

	read_with(&s, same);
	ck_assert_int_eq(nsaid, 1);
	ck_assert_int_eq(s.sig, SIGUSR1);
	ck_assert_int_eq(s.snapshot_sig, 0);
	/* the sampling signal is chosen apart from it by default */
	read_with(&s, deflt);
	ck_assert_int_eq(nsaid, 0);
	ck_assert_int_eq(s.snapshot_sig, SIGPROF);
	read_with(&s, autosig);
	ck_assert_int_eq(nsaid, 1);
	ck_assert_int_eq(s.snapshot_sig, 0);
}
END_TEST

/* PC_STACKS: 0, 1, an absolute path, a relative one made absolute, and
 * one too long to hold, which writes beside the profile. */
START_TEST(test_stacks_paths)
{
	static char longpath[PATH_MAX + 10];
	const char *rel[] = { "PC_STACKS", "st/x", NULL };
	const char *lng[] = { "PC_STACKS", longpath, NULL };
	const char *one[] = { "PC_STACKS", "1", NULL };
	char cwd[PATH_MAX], want[PATH_MAX + 8];
	struct pc_settings s;

	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	read_with(&s, one);
	ck_assert_int_eq(s.stacks, 1);
	ck_assert_str_eq(s.stacks_path, "");
	read_with(&s, rel);
	snprintf(want, sizeof(want), "%s%sst/x", cwd, strcmp(cwd, "/") ? "/" : "");
	ck_assert_int_eq(s.stacks, 2);
	ck_assert_str_eq(s.stacks_path, want);
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	read_with(&s, lng);
	ck_assert_int_eq(nsaid, 1);
	ck_assert_ptr_nonnull(strstr(said[0], "' is too long a path; writing beside the profile"));
	ck_assert_int_eq(s.stacks, 1);
	ck_assert_str_eq(s.stacks_path, "");
}
END_TEST

START_TEST(test_absolute)
{
	char buf[16];

	ck_assert_int_eq(pc_absolute(buf, sizeof(buf), "/a/b", ".x"), 0);
	ck_assert_str_eq(buf, "/a/b.x");
	ck_assert_int_eq(pc_absolute(buf, sizeof(buf), "/0123456789abcd", ""),
			 0);
	ck_assert_int_eq(pc_absolute(buf, sizeof(buf), "/0123456789abcde", ""),
			 -1);
	ck_assert_int_eq(pc_absolute(buf, sizeof(buf), "/0123456789ab", ".xy"),
			 -1);
}
END_TEST

/* The wall clock's three settings: their defaults, their good values at
 * both ends of each range, and each bad value's line and default. */
START_TEST(test_wall_clock_settings)
{
	static const char *const none[] = { NULL };
	static const char *const lo[] = { "PC_CLOCK", "cpu", "PC_WALL_HZ", "1",
					  "PC_WALL_BUDGET", "1", NULL };
	static const char *const hi[] = { "PC_CLOCK", "wall", "PC_WALL_HZ", "1000",
					  "PC_WALL_BUDGET", "100", NULL };
	static const struct {
		const char *name, *value, *want;
	} bad[] = {
		{ "PC_CLOCK", "WALL", "is not cpu or wall; using cpu" },
		{ "PC_CLOCK", "real", "is not cpu or wall; using cpu" },
		{ "PC_CLOCK", "wall ", "is not cpu or wall; using cpu" },
		{ "PC_WALL_HZ", "0",
		  "is not a rate from 1 to 1000; using 100" },
		{ "PC_WALL_HZ", "1001",
		  "is not a rate from 1 to 1000; using 100" },
		{ "PC_WALL_HZ", "50Hz",
		  "is not a rate from 1 to 1000; using 100" },
		{ "PC_WALL_HZ", "-5",
		  "is not a rate from 1 to 1000; using 100" },
		{ "PC_WALL_BUDGET", "0",
		  "is not a percentage from 1 to 100; using 1" },
		{ "PC_WALL_BUDGET", "101",
		  "is not a percentage from 1 to 100; using 1" },
		{ "PC_WALL_BUDGET", "2.5",
		  "is not a percentage from 1 to 100; using 1" },
		{ "PC_WALL_BUDGET", "5%",
		  "is not a percentage from 1 to 100; using 1" },
	};
	struct pc_settings s;

	read_with(&s, none);
	ck_assert_int_eq(s.clock_wall, 0);
	ck_assert_int_eq(s.wall_hz, PC_DEFAULT_WALL_HZ);
	ck_assert_int_eq(s.wall_budget, 1);
	read_with(&s, lo);
	ck_assert_int_eq(nsaid, 0);
	ck_assert_int_eq(s.clock_wall, 0);
	ck_assert_int_eq(s.wall_hz, 1);
	ck_assert_int_eq(s.wall_budget, 1);
	read_with(&s, hi);
	ck_assert_int_eq(nsaid, 0);
	ck_assert_int_eq(s.clock_wall, 1);
	ck_assert_int_eq(s.wall_hz, 1000);
	ck_assert_int_eq(s.wall_budget, 100);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *e[] = { bad[i].name, bad[i].value, NULL };
		char line[256];

		read_with(&s, e);
		snprintf(line, sizeof(line), "libpc: %s='%s' %s", bad[i].name,
			 bad[i].value, bad[i].want);
		ck_assert_int_eq(nsaid, 1);
		ck_assert_str_eq(said[0], line);
		ck_assert_int_eq(s.clock_wall, 0);
		ck_assert_int_eq(s.wall_hz, PC_DEFAULT_WALL_HZ);
		ck_assert_int_eq(s.wall_budget, 1);
	}
}
END_TEST

/* PC_ALLOC and PC_ALLOC_RATE: off by default, bytes with K or M, and a
 * bad PC_ALLOC still asks for allocations, a bad rate gets 512 KiB. */
START_TEST(test_alloc_settings)
{
	static const char *const none[] = { NULL };
	static const char *const on[] = { "PC_ALLOC", "1", "PC_ALLOC_RATE",
					  "1M", NULL };
	static const char *const exact[] = { "PC_ALLOC", "1", "PC_ALLOC_RATE",
					     "1", NULL };
	static const char *const bad[] = { "PC_ALLOC", "yes", "PC_ALLOC_RATE",
					   "0", NULL };
	static const char *const only[] = { "PC_ALLOC", "only", NULL };
	struct pc_settings s;

	read_with(&s, none);
	ck_assert_int_eq(s.alloc, 0);
	ck_assert_uint_eq(s.alloc_rate, PC_ALLOC_DEFAULT_RATE);
	read_with(&s, on);
	ck_assert_int_eq(nsaid, 0);
	ck_assert_int_eq(s.alloc, 1);
	ck_assert_uint_eq(s.alloc_rate, 1 << 20);
	read_with(&s, exact);
	ck_assert_int_eq(nsaid, 0);
	ck_assert_uint_eq(s.alloc_rate, 1);
	read_with(&s, only);
	ck_assert_int_eq(nsaid, 0);
	ck_assert_int_eq(s.alloc, 2);
	read_with(&s, bad);
	ck_assert_int_eq(nsaid, 2);
	ck_assert_str_eq(said[0], "libpc: PC_ALLOC='yes' is not 0, 1 or only; profiling allocations");
	ck_assert_int_eq(s.alloc, 1);
	ck_assert_uint_eq(s.alloc_rate, PC_ALLOC_DEFAULT_RATE);
}
END_TEST

/*
 * Each row of settings.h, as the row itself says: unset, its default and
 * no line; the value it refuses, its one line and its bad value; a range's
 * two ends taken and one past each refused; a text kept as it is, empty
 * included; and libpc(7)'s ENVIRONMENT entry for it saying its doc words.
 * A new row is tested here with nothing added.
 */
struct row {
	const char *name, *parse, *want, *refuse, *doc;
	long min, max, dflt, bad;
	size_t off, size;
};

static const struct row rows[] = {
#define ROW(id, name, field, type, parse, min, max, words, dflt, bad, want, \
	    refuse, doc) \
	{ name,        #parse, \
	  want,        refuse, \
	  doc,         (long)(min), \
	  (long)(max), (long)(dflt), \
	  (long)(bad), offsetof(struct pc_settings, field), \
	  sizeof(type) },
	PC_SETTINGS(ROW)
#undef ROW
};

/* Row r's field in s, as a long (a text's pointer too). */
static long
field_of(const struct pc_settings *s, const struct row *r)
{
	int32_t i;
	int64_t l;

	if (r->size == sizeof(i)) {
		memcpy(&i, (const char *)s + r->off, sizeof(i));
		return i;
	}
	memcpy(&l, (const char *)s + r->off, sizeof(l));
	return (long)l;
}

/* NAME=value read alone: the field, and the lines said in nsaid. */
static long
read_one(const struct row *r, const char *value)
{
	const char *e[] = { r->name, value, NULL };
	struct pc_settings s;

	read_with(&s, e);
	return field_of(&s, r);
}

static void
check_refused(const struct row *r, const char *value)
{
	char line[256];
	long v = read_one(r, value);

	snprintf(line, sizeof(line), "libpc: %s='%s' %s", r->name, value,
		 r->want);
	ck_assert_msg(nsaid == 1, "%s='%s': %d lines", r->name, value, nsaid);
	ck_assert_str_eq(said[0], line);
	ck_assert_msg(v == r->bad, "%s='%s': %ld, not %ld", r->name, value, v,
		      r->bad);
}

static void
check_taken(const struct row *r, const char *value, long want)
{
	long v = read_one(r, value);

	ck_assert_msg(nsaid == 0 && v == want,
		      "%s='%s': %ld (%d lines), not %ld", r->name, value, v,
		      nsaid, want);
}

/* libpc(7)'s text, whitespace made single spaces; NULL where not found. */
static char *
man_page(void)
{
	static const char *const at[] = { "docs/libpc.7", "../docs/libpc.7", "../../docs/libpc.7" };
	char exe[PATH_MAX], path[PATH_MAX + 32], *text = NULL;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f = NULL;
	size_t len = 0;
	int c, space = 0;

	exe[n > 0 ? n : 0] = 0;
	if (strrchr(exe, '/'))
		*strrchr(exe, '/') = 0;
	for (size_t i = 0; !f && i < 2 * (sizeof(at) / sizeof(at[0])); i++) {
		snprintf(path, sizeof(path), "%s%s%s", i % 2 ? exe : "",
			 i % 2 ? "/" : "", at[i / 2]);
		f = fopen(path, "r");
	}
	if (!f)
		return NULL;
	while ((c = getc(f)) != EOF) {
		if (!(len % 4096))
			ck_assert_ptr_nonnull(text = realloc(text, len + 4097));
		if (c == '\n' || c == '\t' || c == ' ') {
			space = 1;
			continue;
		}
		if (space && len)
			text[len++] = ' ';
		space = 0;
		if (!(len % 4096))
			ck_assert_ptr_nonnull(text = realloc(text, len + 4097));
		text[len++] = (char)c;
	}
	fclose(f);
	if (text)
		text[len] = 0;
	return text;
}

/* Whether libpc(7)'s ENVIRONMENT has an entry for name that says doc. */
static int
documented(const char *man, const char *name, const char *doc)
{
	char head[96];
	const char *section = strstr(man, ".SH ENVIRONMENT"), *p, *end;

	snprintf(head, sizeof(head), ".TP .B %s ", name);
	if (!section || !(p = strstr(section, head)))
		return 0;
	p += strlen(head);
	end = strstr(p, ".TP ");
	if (!end || (strstr(p, ".SH ") && strstr(p, ".SH ") < end))
		end = strstr(p, ".SH ") ? strstr(p, ".SH ") : p + strlen(p);
	for (; (p = strstr(p, doc)) && p < end; p++)
		if (p + strlen(doc) <= end)
			return 1;
	return 0;
}

START_TEST(test_every_row_as_it_says)
{
	char *man = man_page();

	ck_assert_msg(man != NULL, "docs/libpc.7 not found");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		char v[64];

		ck_assert_msg(documented(man, r->name, r->doc),
			      "libpc(7) has no entry for %s that says '%s'",
			      r->name, r->doc);
		check_taken(r, NULL, r->dflt);
		if (!strcmp(r->parse, "parse_text")) {
			ck_assert_str_eq(
				(const char *)(intptr_t)read_one(r, "a b"),
				"a b");
			ck_assert_str_eq(
				(const char *)(intptr_t)read_one(r, ""), "");
			ck_assert_int_eq(r->dflt, 0);
			continue;
		}
		ck_assert_msg(r->want[0], "%s: no line for a bad value",
			      r->name);
		check_taken(r, "", r->dflt);
		if (r->refuse)
			check_refused(r, r->refuse);
		if (!strcmp(r->parse, "parse_range")) {
			for (int end = 0; end < 2; end++) {
				long at = end ? r->max : r->min;

				snprintf(v, sizeof(v), "%ld", at);
				check_taken(r, v, at);
				snprintf(v, sizeof(v), "%ld",
					 end ? at + 1 : at - 1);
				check_refused(r, v);
			}
		} else if (!strcmp(r->parse, "parse_ms")) {
			snprintf(v, sizeof(v), "%g", (double)r->min / 1000);
			check_taken(r, v, r->min);
			snprintf(v, sizeof(v), "%g", (double)r->max / 1000);
			check_taken(r, v, r->max);
		}
	}
	free(man);
}
END_TEST

Suite *
settings_suite(void)
{
	Suite *s = suite_create("settings");
	TCase *t = tcase_create("read");

	tcase_add_test(t, test_defaults_without_warnings);
	tcase_add_test(t, test_good_values_of_every_kind);
	tcase_add_test(t, test_signal_spellings);
	tcase_add_test(t, test_bad_values_warn_and_get_the_tables_value);
	tcase_add_test(t, test_live_max_sizes);
	tcase_add_test(t, test_snapshot_signal_is_not_the_sampling_signal);
	tcase_add_test(t, test_stacks_paths);
	tcase_add_test(t, test_absolute);
	tcase_add_test(t, test_wall_clock_settings);
	tcase_add_test(t, test_alloc_settings);
	tcase_add_test(t, test_every_row_as_it_says);
	suite_add_tcase(s, t);
	return s;
}
