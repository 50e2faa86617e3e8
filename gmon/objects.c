/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading libpc's objects manifest (PC_SCOPE=all), for pcprof. The input
 * may be hostile: lines are bounded by the buffer, numbers are checked for
 * overflow, names for path tricks, and every allocation is bounded by the
 * number of lines, so by len.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmon.h"

static int
fail(struct gmon_error *err, uint64_t line, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->offset = line;
		va_start(ap, fmt);
		vsnprintf(err->what, sizeof(err->what), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* One space-separated field of [*p, end), advanced past; 0 if none. */
static size_t
field(const char **p, const char *end, const char **start)
{
	const char *s = *p;
	size_t n = 0;

	while (s < end && *s == ' ')
		s++;
	*start = s;
	while (s + n < end && s[n] != ' ')
		n++;
	*p = s + n;
	return n;
}

static int
number(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	int base = 10;

	if (n > 2 && s[0] == '0' && s[1] == 'x') {
		base = 16;
		s += 2;
		n -= 2;
	}
	if (n == 0 || n > 20)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned d;

		if (s[i] >= '0' && s[i] <= '9')
			d = (unsigned)(s[i] - '0');
		else if (base == 16 && s[i] >= 'a' && s[i] <= 'f')
			d = (unsigned)(s[i] - 'a' + 10);
		else
			return -1;
		if (v > (UINT64_MAX - d) / (uint64_t)base)
			return -1;
		v = v * (uint64_t)base + d;
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* %XX-unescape s[0..n) into a new string; NULL on a bad escape or a NUL. */
static char *
unescape(const char *s, size_t n, int *nomem)
{
	char *d = malloc(n + 1);
	size_t k = 0;

	if (!d) {
		*nomem = 1;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '%') {
			d[k++] = s[i];
			continue;
		}
		if (i + 2 >= n) {	/* "%" or "%X" at the end */
			free(d);
			return NULL;
		}
		if (hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0 ||
		    (hexval(s[i + 1]) == 0 && hexval(s[i + 2]) == 0)) {
			free(d);
			return NULL;
		}
		d[k++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
		i += 2;
	}
	d[k] = 0;
	return d;
}

/* The build-id in hex, f[0..n), into ob; -1 when it is not one. */
static int
parse_build_id(struct gmon_object *ob, const char *f, size_t n)
{
	if (n == 0 || n % 2 || n > 2 * sizeof(ob->build_id))
		return -1;
	for (size_t i = 0; i < n; i += 2) {
		int a = hexval(f[i]), b = hexval(f[i + 1]);

		if (a < 0 || b < 0)
			return -1;
		ob->build_id[i / 2] = (uint8_t)(a * 16 + b);
	}
	ob->build_id_len = n / 2;
	return 0;
}

static int
parse_object(struct gmon_objects *o, const char *p, const char *end,
	     uint64_t line, struct gmon_error *err)
{
	struct gmon_object *ob = &o->v[o->n];
	const char *f;
	size_t n;
	uint64_t v;
	int nomem = 0;

	memset(ob, 0, sizeof(*ob));
	n = field(&p, end, &f);
	if (number(f, n, GMON_OBJECTS_MAX, &v) || v != o->n)
		return fail(err, line, "object index out of order");
	n = field(&p, end, &f);
	if (n != 1 || (f[0] != '0' && f[0] != '1'))
		return fail(err, line, "bad loaded flag");
	ob->loaded = f[0] == '1';
	n = field(&p, end, &f);
	if (number(f, n, UINT64_MAX, &ob->samples))
		return fail(err, line, "bad sample count");
	n = field(&p, end, &f);
	if (!(n == 1 && f[0] == '-') && parse_build_id(ob, f, n))
		return fail(err, line, "bad build-id");
	n = field(&p, end, &f);
	if (n == 0)
		return fail(err, line, "no file name");
	if (!(n == 1 && f[0] == '-')) {
		ob->file = unescape(f, n, &nomem);
		if (nomem)
			return -ENOMEM;
		if (!ob->file || strchr(ob->file, '/') ||
		    !strcmp(ob->file, ".") || !strcmp(ob->file, "..")) {
			free(ob->file);
			ob->file = NULL;
			return fail(err, line, "bad file name");
		}
	}
	n = field(&p, end, &f);
	if (n == 0 || (ob->path = unescape(f, n, &nomem)) == NULL) {
		free(ob->file);
		ob->file = NULL;
		return nomem ? -ENOMEM : fail(err, line, "bad path");
	}
	if (field(&p, end, &f)) {
		free(ob->file);
		free(ob->path);
		ob->file = ob->path = NULL;
		return fail(err, line, "extra fields");
	}
	o->n++;
	return 0;
}

/* Exactly n numbers in [p, end), each at most max[i], into out[i]; -1 if
 * a field is missing, bad or one too many. */
static int
numbers(const char *p, const char *end, int n, const uint64_t *max,
	uint64_t *out)
{
	const char *f;
	size_t k;

	for (int i = 0; i < n; i++) {
		k = field(&p, end, &f);
		if (number(f, k, max[i], &out[i]))
			return -1;
	}
	return field(&p, end, &f) ? -1 : 0;
}

/* "timer KIND HOW COST". */
static int
parse_timer(struct gmon_objects *o, const char *p, const char *nl,
	    uint64_t line, struct gmon_error *err)
{
	static const uint64_t any[1] = { UINT64_MAX };
	const char *f;
	size_t n = field(&p, nl, &f);

#define IS(word) (n == sizeof(word) - 1 && !memcmp(f, word, n))
	o->timer = IS("posix")     ? GMON_TIMER_POSIX :
		   IS("taskclock") ? GMON_TIMER_TASKCLOCK :
				     0;
	n = field(&p, nl, &f);
	o->timer_how = IS("asked")    ? GMON_TIMER_ASKED :
		       IS("measured") ? GMON_TIMER_MEASURED :
		       IS("refused")  ? GMON_TIMER_REFUSED :
					0;
#undef IS
	if (!o->timer || !o->timer_how ||
	    numbers(p, nl, 1, any, &o->timer_cost))
		return fail(err, line, "bad timer record");
	return 0;
}

/* "cpu START STOP WRITE": one clock, read three times in order. */
static int
parse_cpu(struct gmon_objects *o, const char *p, const char *nl, uint64_t line,
	  struct gmon_error *err)
{
	static const uint64_t any[3] = { UINT64_MAX, UINT64_MAX, UINT64_MAX };
	uint64_t v[3];

	if (numbers(p, nl, 3, any, v) || v[0] > v[1] || v[1] > v[2])
		return fail(err, line, "bad cpu record");
	o->cpu_start = v[0];
	o->cpu_stop = v[1];
	o->cpu_write = v[2];
	o->have_cpu = 1;
	return 0;
}

/* "version V": the libpc that wrote the manifest, one printable word. */
static int
parse_version(struct gmon_objects *o, const char *p, const char *nl,
	      uint64_t line, struct gmon_error *err)
{
	const char *f, *more;
	size_t n = field(&p, nl, &f);

	if (!n || n > GMON_VERSION_MAX || field(&p, nl, &more))
		return fail(err, line, "bad version");
	for (size_t i = 0; i < n; i++)
		if (f[i] < 0x21 || f[i] > 0x7e)
			return fail(err, line, "bad version");
	memcpy(o->version, f, n);
	o->version[n] = 0;
	return 0;
}

/*
 * A record of a newer libpc's, which this pcprof skips: a word of
 * lowercase letters, digits and '-' from a letter on. A record is added
 * only where a reader that skips it still reads the profile right (a
 * change of meaning changes GMON_OBJECTS_MAGIC instead), so that a
 * profile from a newer libpc reads in an older pcprof. pcprof before
 * 1.0.0 refused every record it did not know ("unknown record").
 */
static int
newer_record(const char *f, size_t n)
{
	if (!n || f[0] < 'a' || f[0] > 'z')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((f[i] >= 'a' && f[i] <= 'z') ||
		      (f[i] >= '0' && f[i] <= '9') || f[i] == '-'))
			return 0;
	return 1;
}

/* One record after the first line: its word, then its fields. */
/* "ended exec|exit|killed|signal N" */
static int
parse_ending(struct gmon_objects *o, const char *p, const char *nl,
	     uint64_t line, struct gmon_error *err)
{
	static const uint64_t sig_max[1] = { 127 };
	const char *f;
	size_t n = field(&p, nl, &f);
	uint64_t sig;

#define IS(word) (n == sizeof(word) - 1 && !memcmp(f, word, n))
	o->ended = IS("exec")   ? GMON_ENDED_EXEC :
		   IS("exit")   ? GMON_ENDED_EXIT :
		   IS("killed") ? GMON_ENDED_KILLED :
		   IS("signal") ? GMON_ENDED_SIGNAL :
				  0;
#undef IS
	if (o->ended == GMON_ENDED_SIGNAL) {
		if (numbers(p, nl, 1, sig_max, &sig) || !sig)
			return fail(err, line, "bad ending");
		o->end_signal = (int)sig;
		return 0;
	}
	if (!o->ended || field(&p, nl, &f))
		return fail(err, line, "bad ending");
	return 0;
}

/* "signals N SAMPLES": the timer's signals and the samples they stood
 * for, never fewer. */
static int
parse_signals(struct gmon_objects *o, const char *p, const char *nl,
	      uint64_t line, struct gmon_error *err)
{
	static const uint64_t any[2] = { UINT64_MAX, UINT64_MAX };
	uint64_t v[2];

	if (numbers(p, nl, 2, any, v) || v[0] > v[1])
		return fail(err, line, "bad signals record");
	o->signals = v[0];
	o->signal_samples = v[1];
	return 0;
}

static int
parse_record(struct gmon_objects *o, const char *p, const char *nl,
	     uint64_t line, struct gmon_error *err)
{
	static const uint64_t any[3] = { UINT64_MAX, UINT64_MAX, UINT64_MAX };
	static const uint64_t u32[1] = { UINT32_MAX }, hz[1] = { 1000000 };
	const uint64_t arc_max =
		((uint64_t)GMON_OBJECTS_MAX << GMON_OBJ_SHIFT) |
		((UINT64_C(1) << GMON_OBJ_SHIFT) - 1);
	const uint64_t arc[3] = { arc_max, arc_max, UINT64_MAX };
	uint64_t v[3];
	const char *f;
	size_t n = field(&p, nl, &f);

#define IS(word) (n == sizeof(word) - 1 && !memcmp(f, word, n))
	if (IS("rate")) {
		if (numbers(p, nl, 1, hz, v) || !v[0])
			return fail(err, line, "bad rate");
		o->rate = (uint32_t)v[0];
	} else if (IS("pid")) {
		if (numbers(p, nl, 1, u32, &o->pid) || !o->pid)
			return fail(err, line, "bad pid");
	} else if (IS("threads")) {
		if (numbers(p, nl, 1, u32, &o->threads))
			return fail(err, line, "bad thread count");
	} else if (IS("signals")) {
		return parse_signals(o, p, nl, line, err);
	} else if (IS("no-object")) {
		if (numbers(p, nl, 1, any, &o->no_object))
			return fail(err, line, "bad no-object count");
	} else if (IS("started")) {
		if (numbers(p, nl, 1, any, &o->started))
			return fail(err, line, "bad start time");
	} else if (IS("cpu")) {
		return parse_cpu(o, p, nl, line, err);
	} else if (IS("ended")) {
		return parse_ending(o, p, nl, line, err);
	} else if (IS("timer")) {
		return parse_timer(o, p, nl, line, err);
	} else if (IS("object")) {
		return parse_object(o, p, nl, line, err);
	} else if (IS("arc")) {
		if (numbers(p, nl, 3, arc, v))
			return fail(err, line, "bad arc");
		o->arcs[o->narcs++] = (struct gmon_arc){ v[0], v[1], v[2] };
	} else if (IS("anon")) {
		if (numbers(p, nl, 2, any, v) || !v[1])
			return fail(err, line, "bad anon record");
		o->anon[o->nanon++] = (struct gmon_anon){ v[0], v[1] };
	} else if (IS("version")) {
		return parse_version(o, p, nl, line, err);
	} else if (!newer_record(f, n)) {
		return fail(err, line, "unknown record");
	}
#undef IS
	return 0;
}

/*
 * What line number line, [s, s + n), is refused for before its record is
 * read, whether a newline ends it there (whole) or it goes on: the first
 * line must be the magic; of another, a NUL byte in its first
 * GMON_OBJECTS_LINE_MAX bytes, or more bytes than that. Each is decided
 * by the bytes up to the point at issue, so that a line read in part is
 * refused for what it is refused for whole.
 */
static int
check_line(const char *s, size_t n, int whole, uint64_t line,
	   struct gmon_error *err)
{
	size_t m = strlen(GMON_OBJECTS_MAGIC);

	if (line == 1) {
		int bad = (whole ? n != m : n > m) ||
			  memcmp(s, GMON_OBJECTS_MAGIC, n < m ? n : m);

		return bad ? fail(err, line, "not a pcprof objects manifest") :
			     0;
	}
	if (memchr(s, 0, n < GMON_OBJECTS_LINE_MAX ? n : GMON_OBJECTS_LINE_MAX))
		return fail(err, line, "NUL byte");
	if (n > GMON_OBJECTS_LINE_MAX)
		return fail(err, line, "line too long");
	return 0;
}

/* One whole line [s, nl), number line: the magic, or a record. */
static int
parse_line(struct gmon_objects *o, const char *s, const char *nl, uint64_t line,
	   struct gmon_error *err)
{
	int r = check_line(s, (size_t)(nl - s), 1, line, err);

	return r || line == 1 ? r : parse_record(o, s, nl, line, err);
}

/* What only the whole manifest can tell: 0, or -EINVAL. */
static int
check_whole(const struct gmon_objects *o, uint64_t line, struct gmon_error *err)
{
	if (!o->rate)
		return fail(err, line, "no rate");
	if (o->n == 0)
		return fail(err, line, "no objects");
	for (size_t i = 0; i < o->narcs; i++)
		if (o->arcs[i].from_pc >> GMON_OBJ_SHIFT >= o->n ||
		    o->arcs[i].self_pc >> GMON_OBJ_SHIFT >= o->n)
			return fail(err, line, "arc to an object not listed");
	return 0;
}

int
gmon_objects_parse(const void *buf, size_t len, struct gmon_objects *o,
		   struct gmon_error *err)
{
	return gmon_objects_parse_part(buf, len, len, o, err);
}

int
gmon_objects_parse_part(const void *buf, size_t have, size_t len,
			struct gmon_objects *o, struct gmon_error *err)
{
	const char *s = buf, *nl;
	size_t lines = 0, whole;
	uint64_t line = 0;
	int r = 0;

	memset(o, 0, sizeof(*o));
	if (len == 0)
		return fail(err, 1, "truncated (no newline at the end)");
	have = have < len ? have : len;
	for (size_t i = 0; i < have; i++)
		lines += s[i] == '\n';
	nl = memrchr(s, '\n', have);
	whole = nl ? (size_t)(nl - s) + 1 : 0;
	o->v = calloc(lines ? lines : 1, sizeof(*o->v));
	o->arcs = calloc(lines ? lines : 1, sizeof(*o->arcs));
	o->anon = calloc(lines ? lines : 1, sizeof(*o->anon));
	if (!o->v || !o->arcs || !o->anon) {
		gmon_objects_release(o);
		return -ENOMEM;
	}
	for (const char *p = s, *end = s + whole; !r && p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		r = parse_line(o, p, nl, ++line, err);
	}
	if (!r && whole < have)
		r = check_line(s + whole, have - whole, 0, line + 1, err);
	if (!r && whole < len && have == len)
		r = fail(err, line + 1, "truncated (no newline at the end)");
	if (!r && whole < len) {
		/* a valid beginning: the rest of the file decides */
		gmon_objects_release(o);
		if (err) {
			err->offset = err->need = have + 1;
			snprintf(err->what, sizeof(err->what), "more to read");
		}
		return -EAGAIN;
	}
	if (!r)
		r = check_whole(o, line, err);
	if (r)
		gmon_objects_release(o);
	return r;
}

void
gmon_objects_release(struct gmon_objects *o)
{
	for (size_t i = 0; o->v && i < o->n; i++) {
		free(o->v[i].file);
		free(o->v[i].path);
	}
	free(o->v);
	free(o->arcs);
	free(o->anon);
	memset(o, 0, sizeof(*o));
}
