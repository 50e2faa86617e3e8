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
	if (!(n == 1 && f[0] == '-')) {
		if (n == 0 || n % 2 || n > 2 * sizeof(ob->build_id))
			return fail(err, line, "bad build-id");
		for (size_t i = 0; i < n; i += 2) {
			int a = hexval(f[i]), b = hexval(f[i + 1]);

			if (a < 0 || b < 0)
				return fail(err, line, "bad build-id");
			ob->build_id[i / 2] = (uint8_t)(a * 16 + b);
		}
		ob->build_id_len = n / 2;
	}
	n = field(&p, end, &f);
	if (n == 0)
		return fail(err, line, "no file name");
	if (!(n == 1 && f[0] == '-')) {
		ob->file = unescape(f, n, &nomem);
		if (nomem)
			return -ENOMEM;
		if (!ob->file || strchr(ob->file, '/') || !strcmp(ob->file, ".") ||
		    !strcmp(ob->file, "..")) {
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

int
gmon_objects_parse(const void *buf, size_t len, struct gmon_objects *o,
		   struct gmon_error *err)
{
	const char *s = buf, *end = s + len;
	size_t lines = 0, nobj = 0;
	uint64_t line = 0;
	int r = 0, have_rate = 0;

	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i < len; i++)
		lines += s[i] == '\n';
	if (len == 0 || s[len - 1] != '\n')
		return fail(err, lines + 1, "truncated (no newline at the end)");
	o->v = calloc(lines, sizeof(*o->v));
	o->arcs = calloc(lines, sizeof(*o->arcs));
	o->anon = calloc(lines, sizeof(*o->anon));
	if (!o->v || !o->arcs || !o->anon) {
		gmon_objects_release(o);
		return -ENOMEM;
	}
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *p = s, *f;
		size_t n;

		line++;
		if (memchr(s, 0, (size_t)(nl - s))) {
			r = fail(err, line, "NUL byte");
			break;
		}
		if (line == 1) {
			if ((size_t)(nl - s) != strlen(GMON_OBJECTS_MAGIC) ||
			    memcmp(s, GMON_OBJECTS_MAGIC, (size_t)(nl - s))) {
				r = fail(err, line, "not a pcprof objects manifest");
				break;
			}
			s = nl + 1;
			continue;
		}
		n = field(&p, nl, &f);
		if (n == 4 && !memcmp(f, "rate", 4)) {
			uint64_t v;

			n = field(&p, nl, &f);
			if (number(f, n, 1000000, &v) || v == 0 || field(&p, nl, &f)) {
				r = fail(err, line, "bad rate");
				break;
			}
			o->rate = (uint32_t)v;
			have_rate = 1;
		} else if (n == 3 && !memcmp(f, "pid", 3)) {
			n = field(&p, nl, &f);
			if (number(f, n, UINT32_MAX, &o->pid) || o->pid == 0 ||
			    field(&p, nl, &f)) {
				r = fail(err, line, "bad pid");
				break;
			}
		} else if (n == 7 && !memcmp(f, "threads", 7)) {
			n = field(&p, nl, &f);
			if (number(f, n, UINT32_MAX, &o->threads) || field(&p, nl, &f)) {
				r = fail(err, line, "bad thread count");
				break;
			}
		} else if (n == 9 && !memcmp(f, "no-object", 9)) {
			n = field(&p, nl, &f);
			if (number(f, n, UINT64_MAX, &o->no_object) || field(&p, nl, &f)) {
				r = fail(err, line, "bad no-object count");
				break;
			}
		} else if (n == 7 && !memcmp(f, "started", 7)) {
			n = field(&p, nl, &f);
			if (number(f, n, UINT64_MAX, &o->started) || field(&p, nl, &f)) {
				r = fail(err, line, "bad start time");
				break;
			}
		} else if (n == 3 && !memcmp(f, "cpu", 3)) {
			uint64_t *c[3] = { &o->cpu_start, &o->cpu_stop, &o->cpu_write };
			int bad = 0;

			for (int k = 0; k < 3 && !bad; k++) {
				n = field(&p, nl, &f);
				bad = number(f, n, UINT64_MAX, c[k]);
			}
			/* one clock, read three times in order */
			if (bad || field(&p, nl, &f) || o->cpu_start > o->cpu_stop ||
			    o->cpu_stop > o->cpu_write) {
				r = fail(err, line, "bad cpu record");
				break;
			}
			o->have_cpu = 1;
		} else if (n == 5 && !memcmp(f, "ended", 5)) {
			n = field(&p, nl, &f);
			if (n == 4 && !memcmp(f, "exec", 4))
				o->ended = GMON_ENDED_EXEC;
			else if (n == 4 && !memcmp(f, "exit", 4))
				o->ended = GMON_ENDED_EXIT;
			else
				n = 0;
			if (!n || field(&p, nl, &f)) {
				r = fail(err, line, "bad ending");
				break;
			}
		} else if (n == 6 && !memcmp(f, "object", 6)) {
			if ((r = parse_object(o, p, nl, line, err)))
				break;
			nobj = o->n;
		} else if (n == 3 && !memcmp(f, "arc", 3)) {
			struct gmon_arc *a = &o->arcs[o->narcs];
			const uint64_t max = ((uint64_t)GMON_OBJECTS_MAX << GMON_OBJ_SHIFT) |
					     ((UINT64_C(1) << GMON_OBJ_SHIFT) - 1);

			n = field(&p, nl, &f);
			if (number(f, n, max, &a->from_pc)) {
				r = fail(err, line, "bad arc");
				break;
			}
			n = field(&p, nl, &f);
			if (number(f, n, max, &a->self_pc)) {
				r = fail(err, line, "bad arc");
				break;
			}
			n = field(&p, nl, &f);
			if (number(f, n, UINT64_MAX, &a->count) || field(&p, nl, &f)) {
				r = fail(err, line, "bad arc");
				break;
			}
			o->narcs++;
		} else if (n == 4 && !memcmp(f, "anon", 4)) {
			struct gmon_anon *a = &o->anon[o->nanon];

			n = field(&p, nl, &f);
			if (number(f, n, UINT64_MAX, &a->pc)) {
				r = fail(err, line, "bad anon record");
				break;
			}
			n = field(&p, nl, &f);
			if (number(f, n, UINT64_MAX, &a->count) || !a->count || field(&p, nl, &f)) {
				r = fail(err, line, "bad anon record");
				break;
			}
			o->nanon++;
		} else {
			r = fail(err, line, "unknown record");
			break;
		}
		s = nl + 1;
	}
	if (!r && !have_rate)
		r = fail(err, line, "no rate");
	if (!r && nobj == 0)
		r = fail(err, line, "no objects");
	for (size_t i = 0; !r && i < o->narcs; i++)
		if (o->arcs[i].from_pc >> GMON_OBJ_SHIFT >= o->n ||
		    o->arcs[i].self_pc >> GMON_OBJ_SHIFT >= o->n)
			r = fail(err, line, "arc to an object not listed");
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
