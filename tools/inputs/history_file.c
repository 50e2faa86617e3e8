/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof history's file: one JSON object a line, one line a commit
 * (docs/pcprof.1, HISTORY FILE). Parses a line (a small JSON reader for
 * exactly this record: no value nests deeper than the functions' object),
 * formats one, appends one with a single write, and reads a whole file,
 * naming the file and the line of anything that is not a record. Called
 * by commands/history.c and by diff.c for compare --keep-history.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcprof.h"
#include "model/history.h"

#define isdigit_c(c)	((c) >= '0' && (c) <= '9')

struct parser {
	const char *s;
	size_t i, n;
	const char *why;
};

static void
skip_ws(struct parser *p)
{
	while (p->i < p->n && strchr(" \t\r", p->s[p->i]) && p->s[p->i])
		p->i++;
}

/* The next character after blanks, 0 at the end (a NUL is an error). */
static int
peek(struct parser *p)
{
	skip_ws(p);
	return p->i < p->n ? (unsigned char)p->s[p->i] : 0;
}

static int
fail(struct parser *p, const char *why)
{
	if (!p->why)
		p->why = why;
	return -1;
}

static int
expect(struct parser *p, char c, const char *why)
{
	if (peek(p) != (unsigned char)c)
		return fail(p, p->i >= p->n ? "truncated" : why);
	p->i++;
	return 0;
}

static int
hex4(struct parser *p, unsigned *u)
{
	*u = 0;
	for (int k = 0; k < 4; k++, p->i++) {
		int c = p->i < p->n ? p->s[p->i] : 0, v;

		v = c >= '0' && c <= '9' ? c - '0' :
		    c >= 'a' && c <= 'f' ? c - 'a' + 10 :
		    c >= 'A' && c <= 'F' ? c - 'A' + 10 :
					   -1;
		if (v < 0)
			return fail(p, "not JSON: a bad \\u escape");
		*u = *u * 16 + (unsigned)v;
	}
	return 0;
}

/* Code point u as UTF-8 into b; its length. */
static size_t
utf8_put(unsigned u, char *b)
{
	if (u < 0x80)
		return b[0] = (char)u, 1;
	if (u < 0x800)
		return b[0] = (char)(0xc0 | u >> 6),
		       b[1] = (char)(0x80 | (u & 0x3f)), 2;
	if (u < 0x10000) {
		b[0] = (char)(0xe0 | u >> 12);
		b[1] = (char)(0x80 | ((u >> 6) & 0x3f));
		b[2] = (char)(0x80 | (u & 0x3f));
		return 3;
	}
	b[0] = (char)(0xf0 | u >> 18);
	b[1] = (char)(0x80 | ((u >> 12) & 0x3f));
	b[2] = (char)(0x80 | ((u >> 6) & 0x3f));
	b[3] = (char)(0x80 | (u & 0x3f));
	return 4;
}

/* A \ escape at p->i (past the backslash) into b; its length, 0 on error. */
static size_t
unescape(struct parser *p, char *b)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e =
		p->i < p->n && p->s[p->i] ? strchr(from, p->s[p->i]) : NULL;
	unsigned u, lo;

	if (p->i < p->n && p->s[p->i] == 'u') {
		p->i++;
		if (hex4(p, &u))
			return 0;
		if (u >= 0xd800 && u < 0xdc00) {
			if (p->i + 1 >= p->n || p->s[p->i] != '\\' ||
			    p->s[p->i + 1] != 'u')
				return fail(p, "not JSON: a lone surrogate"), 0;
			p->i += 2;
			if (hex4(p, &lo) || lo < 0xdc00 || lo > 0xdfff)
				return fail(p, "not JSON: a lone surrogate"), 0;
			u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
		} else if (u >= 0xdc00 && u < 0xe000) {
			return fail(p, "not JSON: a lone surrogate"), 0;
		}
		if (u == 0)
			return fail(p, "a name with a NUL character"), 0;
		return utf8_put(u, b);
	}
	if (!e)
		return fail(p, "not JSON: a bad escape"), 0;
	p->i++;
	b[0] = to[e - from];
	return 1;
}

/*
 * A JSON string into a malloc'ed NUL-ended *out (NULL: checked and
 * dropped): valid UTF-8 only, no control character, no NUL, at most
 * HISTORY_NAME_MAX bytes.
 */
static int
parse_string(struct parser *p, char **out)
{
	char buf[HISTORY_NAME_MAX + 8];
	size_t k = 0;

	if (expect(p, '"', "not JSON: a string expected"))
		return -1;
	while (p->i < p->n && p->s[p->i] != '"') {
		unsigned char c = (unsigned char)p->s[p->i];

		if (c < 0x20)
			return fail(p, c ? "not JSON: a control character in a string" :
				    "a NUL byte");
		if (c == '\\') {
			size_t m;

			p->i++;
			if (!(m = unescape(p, buf + k)))
				return -1;
			k += m;
		} else {
			char tmp[8];
			size_t m = 0;
			long cp;

			/* utf8_next stops at a NUL: copy what remains, bounded */
			while (m < 4 && p->i + m < p->n) {
				tmp[m] = p->s[p->i + m];
				m++;
			}
			tmp[m] = 0;
			m = utf8_next((const unsigned char *)tmp, &cp);
			if (cp < 0)
				return fail(p, "not UTF-8");
			memcpy(buf + k, tmp, m);
			k += m;
			p->i += m;
		}
		if (k > HISTORY_NAME_MAX)
			return fail(p, "a name longer than 4096 bytes");
	}
	if (expect(p, '"', "truncated"))
		return -1;
	buf[k] = 0;
	if (out && !(*out = strdup(buf)))
		return fail(p, "out of memory");
	return 0;
}

/* A JSON number, finite. */
static int
parse_number(struct parser *p, double *x)
{
	char buf[64];
	size_t k = 0, start;
	char *end;

	peek(p);
	start = p->i;
	while (p->i < p->n && p->s[p->i] &&
	       strchr("+-0123456789.eE", p->s[p->i]))
		p->i++;
	k = p->i - start;
	if (k == 0)
		return fail(p, p->i >= p->n ? "truncated" : "not JSON: a number expected");
	if (k >= sizeof(buf))
		return fail(p, "a number of over 63 characters");
	memcpy(buf, p->s + start, k);
	buf[k] = 0;
	/* JSON's grammar, which strtod's is wider than: no hex, inf, nan,
	 * leading '+' or '.', or leading zeros */
	if (buf[0] == '+' || buf[buf[0] == '-'] == '.' ||
	    (buf[buf[0] == '-'] == '0' && isdigit_c(buf[(buf[0] == '-') + 1])))
		return fail(p, "not JSON: a bad number");
	errno = 0;
	*x = strtod(buf, &end);
	if (*end || !isfinite(*x))
		return fail(p, "not JSON: a bad number");
	return 0;
}

/* [MEAN, VARIANCE] of seconds: both finite and not negative. */
static int
parse_pair(struct parser *p, struct hist_value *v)
{
	if (expect(p, '[', "field of seconds: not [mean, variance]") ||
	    parse_number(p, &v->mean) ||
	    expect(p, ',', "field of seconds: not [mean, variance]") ||
	    parse_number(p, &v->var) ||
	    expect(p, ']', "field of seconds: not [mean, variance]"))
		return -1;
	if (v->mean < 0 || v->var < 0)
		return fail(p, "negative seconds");
	return 0;
}

int
history_cmp_value(const void *a, const void *b)
{
	return strcmp(((const struct hist_value *)a)->name,
		      ((const struct hist_value *)b)->name);
}

size_t
history_sort_values(struct hist_value *v, size_t n)
{
	size_t k = 0;

	if (n > 1)
		qsort(v, n, sizeof(*v), history_cmp_value);
	for (size_t i = 0; i < n; i++) {
		if (k && !strcmp(v[k - 1].name, v[i].name)) {
			v[k - 1].mean += v[i].mean;
			v[k - 1].var += v[i].var;
		} else {
			v[k++] = v[i];
		}
	}
	return k;
}

/*
 * A JSON object at p: each member's name (malloc'ed, given to it) and
 * value to member(p, key, arg), which reads the value; empty allowed.
 */
static int
parse_members(struct parser *p, const char *notobj,
	      int (*member)(struct parser *, char *, void *), void *arg)
{
	if (expect(p, '{', notobj))
		return -1;
	if (peek(p) == '}')
		return p->i++, 0;
	for (;;) {
		char *key = NULL;

		if (parse_string(p, &key))
			return -1;
		if (expect(p, ':', "not JSON: ':' expected")) {
			free(key);
			return -1;
		}
		if (member(p, key, arg))
			return -1;
		if (peek(p) == '}')
			break;
		if (expect(p, ',', "not JSON: ',' or '}' expected"))
			return -1;
	}
	p->i++;
	return 0;
}

/* One member of "functions": NAME: [MEAN, VARIANCE], onto r's. */
static int
parse_func(struct parser *p, char *name, void *arg)
{
	struct hist_record *r = arg;

	if (r->nfuncs == HISTORY_SERIES_MAX) {
		free(name);
		return fail(p, "more than 100000 functions");
	}
	if (r->nfuncs % 16 == 0) {
		struct hist_value *f =
			realloc(r->funcs, (r->nfuncs + 16) * sizeof(*f));

		if (!f) {
			free(name);
			return fail(p, "out of memory");
		}
		r->funcs = f;
	}
	r->funcs[r->nfuncs] = (struct hist_value){ name, 0, 0 };
	return parse_pair(p, &r->funcs[r->nfuncs++]);
}

/* "functions": {NAME: [MEAN, VARIANCE], ...}, sorted into r. */
static int
parse_funcs(struct parser *p, struct hist_record *r)
{
	if (parse_members(p, "field functions: not an object", parse_func, r))
		return -1;
	/* qsort's base may not be NULL, even for no element */
	if (r->nfuncs > 1)
		qsort(r->funcs, r->nfuncs, sizeof(*r->funcs),
		      history_cmp_value);
	for (size_t i = 1; i < r->nfuncs; i++)
		if (!strcmp(r->funcs[i - 1].name, r->funcs[i].name))
			return fail(p, "a function named twice");
	return 0;
}

enum {
	F_VERSION = 1,
	F_COMMIT = 2,
	F_TIME = 4,
	F_RUNS = 8,
	F_CPU = 16,
	F_WALL = 32,
	F_FUNCS = 64
};

/* One member's value by its name into r; the field's bit in *seen. */
static int
parse_member(struct parser *p, const char *key, struct hist_record *r,
	     unsigned *seen)
{
	static const char *const keys[] = { "version",   "commit", "time",
					    "runs",      "cpu",    "wall",
					    "functions", NULL };
	static char msg[80];
	double x;
	int k;

	for (k = 0; keys[k] && strcmp(keys[k], key); k++)
		;
	if (!keys[k]) {
		snprintf(msg, sizeof(msg), "an unknown field '%.40s'",
			 text_name(key));
		return fail(p, msg);
	}
	if (*seen & (1u << k))
		return fail(p, "a field given twice");
	*seen |= 1u << k;
	switch (1u << k) {
	case F_VERSION:
		if (parse_number(p, &x))
			return -1;
		if (x != HISTORY_VERSION) {
			snprintf(msg, sizeof(msg), "version %g, not %d: %s", x,
				 HISTORY_VERSION,
				 x > HISTORY_VERSION ?
					 "written by a newer pcprof" :
					 "not a version");
			return fail(p, msg);
		}
		return 0;
	case F_COMMIT:
		return parse_string(p, &r->commit);
	case F_TIME:
		return parse_number(p, &r->time);
	case F_RUNS:
		if (parse_number(p, &x))
			return -1;
		if (x < 1 || x > 1e6 || x != floor(x))
			return fail(p,
				    "field runs: not a count of 1 to 1000000");
		r->runs = (int)x;
		return 0;
	case F_CPU:
		return parse_pair(p, &r->cpu);
	case F_WALL:
		return parse_pair(p, &r->wall);
	}
	return parse_funcs(p, r);
}

/* What parse_object's members fill. */
struct object {
	struct hist_record *r;
	unsigned seen;
};

static int
object_member(struct parser *p, char *key, void *arg)
{
	struct object *o = arg;
	int bad = parse_member(p, key, o->r, &o->seen);

	free(key);
	return bad;
}

static int
parse_object(struct parser *p, struct hist_record *r)
{
	struct object o = { r, 0 };
	unsigned seen;

	if (parse_members(p, "not a JSON object", object_member, &o))
		return -1;
	seen = o.seen;
	if (peek(p))
		return fail(p, "not JSON: text after the object");
	if (!(seen & F_VERSION))
		return fail(p, "no version field: not a pcprof history record");
	if ((seen & (F_COMMIT | F_TIME | F_RUNS | F_CPU | F_FUNCS)) !=
	    (F_COMMIT | F_TIME | F_RUNS | F_CPU | F_FUNCS))
		return fail(p, "a field missing (commit, time, runs, cpu and functions are needed)");
	if (!r->commit[0])
		return fail(p, "an empty commit");
	return 0;
}

int
history_parse(const char *line, size_t len, struct hist_record *r,
	      const char **why)
{
	struct parser p = { line, 0, len, NULL };

	memset(r, 0, sizeof(*r));
	r->wall.mean = -1;
	if (parse_object(&p, r)) {
		history_record_release(r);
		*why = p.why ? p.why : "not a record";
		return -1;
	}
	return 0;
}

void
history_record_release(struct hist_record *r)
{
	free(r->commit);
	for (size_t i = 0; i < r->nfuncs; i++)
		free(r->funcs[i].name);
	free(r->funcs);
	memset(r, 0, sizeof(*r));
}

/* %.17g, which reads back as the same double */
static void
put_pair(FILE *f, const struct hist_value *v)
{
	fprintf(f, "[%.17g,%.17g]", v->mean, v->var);
}

char *
history_format(const struct hist_record *r)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = pc_memstream(&s, &n);

	fprintf(f, "{\"version\":%d,\"commit\":", HISTORY_VERSION);
	json_string(f, r->commit);
	fprintf(f, ",\"time\":%.17g,\"runs\":%d,\"cpu\":", r->time, r->runs);
	put_pair(f, &r->cpu);
	if (r->wall.mean >= 0) {
		fputs(",\"wall\":", f);
		put_pair(f, &r->wall);
	}
	fputs(",\"functions\":{", f);
	for (size_t i = 0; i < r->nfuncs; i++) {
		fputs(i ? "," : "", f);
		json_string(f, r->funcs[i].name);
		fputc(':', f);
		put_pair(f, &r->funcs[i]);
	}
	fputs("}}\n", f);
	pc_memstream_close(f);
	return s;
}

/* line[0..len) written to path whole, at its end */
static int
append_line(const char *path, const char *line, size_t len)
{
	struct stat sb;
	ssize_t k;
	int fd;

	if (len > HISTORY_LINE_MAX)
		return pc_error(
			"'%s': a record of %zu bytes, over the %u a line may hold",
			path, len, HISTORY_LINE_MAX);
	fd = open(path,
		  O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
			  O_NONBLOCK,
		  0644);
	if (fd < 0)
		return pc_error("'%s': %s", path,
				errno == ELOOP ? "a symbolic link" :
				errno == ENXIO ? "not a regular file (a FIFO)" :
						 strerror(errno));
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return pc_error("'%s': not a regular file", path);
	}
	/* one write of the whole line: O_APPEND puts it at the end as one
	 * piece, whoever else appends meanwhile */
	k = write(fd, line, len);
	if (k != (ssize_t)len || close(fd))
		return pc_error("'%s': %s", path, k < 0 ? strerror(errno) : "a short write");
	return 0;
}

int
history_append(const char *path, const struct hist_record *r)
{
	char *line = history_format(r);
	int bad = append_line(path, line, strlen(line));

	free(line);
	return bad;
}

/* Line number lineno of path, line[0..len), parsed onto h's end. */
static int
read_line(const char *path, size_t lineno, const char *line, size_t len,
	  struct history *h)
{
	const char *why;

	if (h->n == HISTORY_RECORDS_MAX)
		return pc_error("'%s': line %zu: more than %d records; keep the newest (tail -n)",
				path, lineno, HISTORY_RECORDS_MAX);
	if (len > HISTORY_LINE_MAX)
		return pc_error(
			"'%s': line %zu: longer than %u bytes: not a record",
			path, lineno, HISTORY_LINE_MAX);
	if (h->n % 64 == 0)
		h->recs = pc_realloc(h->recs, (h->n + 64) * sizeof(*h->recs));
	if (history_parse(line, len, &h->recs[h->n], &why))
		return pc_error("'%s': line %zu: %s", path, lineno, why);
	h->n++;
	return 0;
}

/* The lines of fd (path) onto h: the first error's -1 (said), or 0;
 * *len bytes after the last line end are left in *buf. */
static int
read_lines(int fd, const char *path, struct history *h, char **bufp,
	   size_t *lenp, size_t *linep)
{
	size_t cap = 1 << 16, len = 0, lineno = 0;
	char *buf = *bufp = pc_realloc(NULL, cap);

	for (;;) {
		char *nl;
		size_t start = 0;
		ssize_t k = read(fd, buf + len, cap - len);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return pc_error("'%s': %s", path, strerror(errno));
		if (k == 0)
			break;
		len += (size_t)k;
		while ((nl = memchr(buf + start, '\n', len - start))) {
			if (read_line(path, ++lineno, buf + start,
				      (size_t)(nl - buf) - start, h))
				return -1;
			start = (size_t)(nl - buf) + 1;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
		if (len > HISTORY_LINE_MAX)
			return pc_error(
				"'%s': line %zu: longer than %u bytes: not a record",
				path, lineno + 1, HISTORY_LINE_MAX);
		if (len == cap)
			*bufp = buf = pc_realloc(buf, cap *= 2);
	}
	*lenp = len;
	*linep = lineno;
	return 0;
}

int
history_read(const char *path, struct history *h)
{
	const char *why;
	int fd = pc_open_regular(path, NULL, &why), bad;
	size_t len = 0, lineno = 0;
	char *buf = NULL;

	memset(h, 0, sizeof(*h));
	if (fd < 0)
		return pc_error("'%s': %s", path, why);
	bad = read_lines(fd, path, h, &buf, &len, &lineno);
	close(fd);
	free(buf);
	if (bad)
		return -1;
	if (len)
		return pc_error("'%s': line %zu: truncated (no line end)", path,
				lineno + 1);
	if (!h->n)
		return pc_error("'%s': no record", path);
	return 0;
}

void
history_release(struct history *h)
{
	for (size_t i = 0; i < h->n; i++)
		history_record_release(&h->recs[i]);
	free(h->recs);
	memset(h, 0, sizeof(*h));
}
