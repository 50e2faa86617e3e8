/*
 * Names for JIT code: the perf map a process writes, /tmp/perf-PID.map,
 * one "START SIZE NAME" line (hexadecimal, no 0x) per function it
 * compiled, as node --perf-basic-prof, LuaJIT and the Java agents write
 * them. /tmp is anyone's to write in, so a map is believed only when it is
 * a plain file of the profiled process's user that no one else may write
 * (its group included). The file may be huge or hostile: its size is bounded
 * and every line is checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcprof.h"

#define JIT_MAP_MAX	(256u << 20)	/* bytes of map read at most */

struct jline {
	uint64_t lo, hi;
	size_t order;		/* later lines win where two overlap */
	char *name;
};

static int
cmp_jline(const void *a, const void *b)
{
	const struct jline *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->order > y->order ? -1 : x->order < y->order;
}

/* One hexadecimal field of [*p, end), advanced past; -1 if none. */
static int
hex_field(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int n = 0;

	if (end - s > 1 && s[0] == '0' && s[1] == 'x')
		s += 2;
	for (; s < end && n < 17; s++, n++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ?
			*s - 'a' + 10 : *s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;

		if (d < 0)
			break;
		v = v << 4 | (uint64_t)d;
	}
	if (!n || n > 16 || s >= end || *s != ' ')
		return -1;
	*p = s + 1;
	*out = v;
	return 0;
}

/* Why the map at path is not to be believed for uid, or NULL. */
static const char *
untrusted(int fd, uid_t uid, uint64_t started)
{
	struct stat sb;
	uint64_t mtime;

	if (fstat(fd, &sb))
		return strerror(errno);
	if (!S_ISREG(sb.st_mode))
		return "not a regular file";
	if (sb.st_uid != uid)
		return "owned by another user than the profiled process's";
	if (sb.st_mode & (S_IWGRP | S_IWOTH))
		return "its group or others may write to it";
	/* a process writes its map while it runs: one last written before
	 * the process started is an earlier process's of the same pid (file
	 * times lag the clock by a tick; 3 s of grace, as for objects' files) */
	mtime = (uint64_t)sb.st_mtim.tv_sec * 1000000000u + (uint64_t)sb.st_mtim.tv_nsec;
	if (started && mtime + UINT64_C(3000000000) < started)
		return "last written before the process started (an earlier process's)";
	return NULL;
}

/* Up to JIT_MAP_MAX bytes of fd (a file of size bytes now); their number
 * in *len. */
static unsigned char *
read_bounded(int fd, size_t size, size_t *len)
{
	size_t cap = size < JIT_MAP_MAX ? size + 1 : JIT_MAP_MAX;
	unsigned char *buf = malloc(cap);

	if (!buf)
		pc_fatal("out of memory");
	*len = 0;
	for (;;) {
		ssize_t r = read(fd, buf + *len, cap - *len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		*len += (size_t)r;
		if (*len == cap)
			break;	/* the rest (written since) is not read */
	}
	return buf;
}

/* The well-formed lines of buf, in file order; their number in *np. */
static struct jline *
parse_lines(const unsigned char *buf, size_t len, size_t *np)
{
	size_t n = 0, cap = 1;
	struct jline *v;

	for (size_t i = 0; i < len; i++)
		cap += buf[i] == '\n';
	if (!(v = calloc(cap, sizeof(*v))))
		pc_fatal("out of memory");
	for (const char *s = (const char *)buf, *end = s + len; s < end && n < cap;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s)), *p = s;
		uint64_t lo, size;

		if (!nl)
			break;	/* a line being written */
		if (!hex_field(&p, nl, &lo) && !hex_field(&p, nl, &size) && size &&
		    lo + size > lo && p < nl && !memchr(p, 0, (size_t)(nl - p))) {
			v[n].lo = lo;
			v[n].hi = lo + size;
			v[n].order = n;
			if (!(v[n].name = strndup(p, (size_t)(nl - p > 512 ? 512 : nl - p))))
				pc_fatal("out of memory");
			n++;
		}
		s = nl + 1;
	}
	*np = n;
	return v;
}

/*
 * v[0..n) as disjoint functions of st: where two overlap (code moved and
 * its memory reused), the one that starts later takes over; of two at one
 * address, the later line. Takes the names.
 */
static void
disjoint(struct jline *v, size_t n, struct symtab *st)
{
	if (n)
		qsort(v, n, sizeof(*v), cmp_jline);
	st->syms = calloc(n ? n : 1, sizeof(*st->syms));
	st->funcs = calloc(n ? n : 1, sizeof(*st->funcs));
	if (!st->syms || !st->funcs)
		pc_fatal("out of memory");
	strcpy(st->source, "perf map");
	for (size_t i = 0; i < n; i++) {
		uint64_t hi = v[i].hi;

		if ((i > 0 && v[i].lo == v[i - 1].lo) ||
		    (st->nsyms && st->syms[st->nsyms - 1].hi > v[i].lo)) {
			free(v[i].name);
			continue;
		}
		for (size_t j = i + 1; j < n; j++)
			if (v[j].lo > v[i].lo) {
				if (v[j].lo < hi)
					hi = v[j].lo;
				break;
			}
		st->syms[st->nsyms].lo = v[i].lo;
		st->syms[st->nsyms].hi = hi;
		st->syms[st->nsyms].func = (uint32_t)st->nfuncs;
		st->funcs[st->nfuncs++] = v[i].name;
		st->nsyms++;
	}
}

int
jitmap_load(uint64_t pid, uid_t uid, uint64_t started, struct symtab *st, char *path,
	    size_t pathlen)
{
	const char *why;
	unsigned char *buf;
	struct jline *v;
	size_t n, len;
	int fd;

	memset(st, 0, sizeof(*st));
	snprintf(path, pathlen, "/tmp/perf-%llu.map", (unsigned long long)pid);
	/* never through a symlink someone else planted */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)) < 0) {
		if (errno == ENOENT)
			return -1;
		pc_warn("note: '%s': %s; JIT code left unnamed", path,
			errno == ELOOP ? "a symbolic link" : strerror(errno));
		return -1;
	}
	if ((why = untrusted(fd, uid, started))) {
		pc_warn("note: '%s' ignored: %s; JIT code left unnamed", path, why);
		close(fd);
		return -1;
	}
	{
		struct stat sb;

		buf = read_bounded(fd, fstat(fd, &sb) ? 0 : (size_t)sb.st_size, &len);
	}
	close(fd);
	v = parse_lines(buf, len, &n);
	free(buf);
	disjoint(v, n, st);
	free(v);
	return (int)st->nsyms;
}
