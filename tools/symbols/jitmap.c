/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Names for JIT code: the perf map a process writes, /tmp/perf-PID.map,
 * one "START SIZE NAME" line (hexadecimal, no 0x) per function it
 * compiled, as node --perf-basic-prof, LuaJIT and the Java agents write
 * them. /tmp is anyone's to write in, so a map is believed only when it is
 * a plain file of the profiled process's user that no one else may write
 * (its group included). The file may be huge or hostile: it is read a
 * chunk at a time, up to a bound, every line is checked, and a NUL byte or
 * an overlong line ends it as no map at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcprof.h"
#include "symbols/jit.h"

#define JIT_MAP_MAX	(256u << 20)	/* bytes of map read at most */
#define JIT_CHUNK	(64u << 10)	/* bytes read at a time */
#define JIT_LINE_MAX	(64u << 10)	/* a longer line is no map's */

static int
cmp_jline(const void *a, const void *b)
{
	const struct jline *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->name > y->name ? -1 : x->name < y->name;
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
		int d = *s >= '0' && *s <= '9' ? *s - '0' :
			*s >= 'a' && *s <= 'f' ? *s - 'a' + 10 :
			*s >= 'A' && *s <= 'F' ? *s - 'A' + 10 :
						 -1;

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

const char *
jit_untrusted(int fd, uid_t uid, uint64_t started)
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
	mtime = (uint64_t)sb.st_mtim.tv_sec * 1000000000u +
		(uint64_t)sb.st_mtim.tv_nsec;
	if (started && mtime + UINT64_C(3000000000) < started)
		return "last written before the process started (an earlier process's)";
	return NULL;
}

/* *buf grown to hold need elements of size bytes (doubling). */
static void
grow(void *buf, size_t *cap, size_t need, size_t size, size_t first)
{
	void **p = buf;

	if (need <= *cap)
		return;
	while (*cap < need)
		*cap = *cap ? 2 * *cap : first;
	*p = pc_realloc(*p, *cap * size);
}

int
jit_add(struct jlines *l, uint64_t lo, uint64_t hi, const char *name,
	size_t len)
{
	const char *nul = memchr(name, 0, len);

	if (nul)
		len = (size_t)(nul - name);
	if (len > JIT_NAME_MAX)
		len = JIT_NAME_MAX;
	if (l->n >= JIT_ENTRIES_MAX || l->names_len + len + 1 > JIT_NAMES_MAX) {
		l->left_out++;
		return -1;
	}
	grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v), 256);
	grow(&l->names, &l->names_cap, l->names_len + len + 1, 1, 4096);
	memcpy(l->names + l->names_len, name, len);
	l->names[l->names_len + len] = 0;
	l->v[l->n++] = (struct jline){ lo, hi, l->names_len };
	l->names_len += len + 1;
	return 0;
}

void
jit_free(struct jlines *l)
{
	free(l->v);
	free(l->names);
	memset(l, 0, sizeof(*l));
}

/* Line [s, nl) into l when it is well-formed ("START SIZE NAME", its
 * name cut at 512 bytes); -1 when it is not. */
static int
add_line(struct jlines *l, const char *s, const char *nl)
{
	const char *p = s;
	uint64_t lo, size;

	if (hex_field(&p, nl, &lo) || hex_field(&p, nl, &size) || !size ||
	    lo + size <= lo || p >= nl)
		return -1;
	jit_add(l, lo, lo + size, p, (size_t)(nl - p));
	return 0;
}

/*
 * The well-formed lines of the map open on fd into l, read JIT_CHUNK
 * bytes at a time and up to JIT_MAP_MAX, so that what is kept is only
 * what the map holds of functions; a line being written (no newline yet)
 * at the end is left out. NULL, or why the map is no perf map, found in
 * the bytes read so far: a NUL byte, a line over JIT_LINE_MAX bytes, or a
 * first line that is not one.
 */
static const char *
read_lines(int fd, struct jlines *l)
{
	char *buf = pc_realloc(NULL, JIT_LINE_MAX + JIT_CHUNK);
	size_t len = 0, total = 0, lines = 0;
	const char *why = NULL;

	while (!why && total < JIT_MAP_MAX && !l->left_out) {
		size_t left = JIT_MAP_MAX - total;
		ssize_t r = read(fd, buf + len,
				 left < JIT_CHUNK ? left : JIT_CHUNK);
		const char *s = buf, *nl;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (memchr(buf + len, 0, (size_t)r)) {
			why = "a NUL byte";
			break;
		}
		len += (size_t)r;
		total += (size_t)r;
		for (; !why && !l->left_out &&
		       (nl = memchr(s, '\n', len - (size_t)(s - buf)));
		     s = nl + 1, lines++)
			if (add_line(l, s, nl) && lines == 0)
				why = "its first line is not START SIZE NAME";
		len -= (size_t)(s - buf);
		memmove(buf, s, len);
		if (len > JIT_LINE_MAX)
			why = "a line of over 64 KiB";
	}
	free(buf);
	return why;
}

static int
in_order(const struct jline *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (cmp_jline(&v[i - 1], &v[i]) > 0)
			return 0;
	return 1;
}

void
jit_disjoint(struct jlines *l, struct symtab *st, const char *source)
{
	struct jline *v = l->v;
	size_t n = l->n, next = 0;

	if (n && !in_order(v, n))
		qsort(v, n, sizeof(*v), cmp_jline);
	st->syms = pc_calloc(n ? n : 1, sizeof(*st->syms));
	st->funcs = pc_calloc(n ? n : 1, sizeof(*st->funcs));
	snprintf(st->source, sizeof(st->source), "%s", source);
	/* sorted by start, the latest first at each: the first of each start
	 * is the one kept, and it ends where the next start begins */
	for (size_t i = 0; i < n; i = next) {
		uint64_t hi = v[i].hi;

		for (next = i + 1; next < n && v[next].lo == v[i].lo; next++)
			;
		if (next < n && v[next].lo < hi)
			hi = v[next].lo;
		if (st->nsyms && st->syms[st->nsyms - 1].hi > v[i].lo)
			continue;
		st->funcs[st->nfuncs] = pc_strdup(l->names + v[i].name);
		st->syms[st->nsyms].lo = v[i].lo;
		st->syms[st->nsyms].hi = hi;
		st->syms[st->nsyms].func = (uint32_t)st->nfuncs++;
		st->nsyms++;
	}
	jit_free(l);
}

int
jitmap_load(uint64_t pid, uid_t uid, uint64_t started, struct symtab *st,
	    char *path, size_t pathlen)
{
	struct jlines l = { 0 };
	const char *why;
	int fd;

	memset(st, 0, sizeof(*st));
	snprintf(path, pathlen, "/tmp/perf-%llu.map", (unsigned long long)pid);
	/* never through a symlink someone else planted */
	if ((fd = pc_open_regular(path, NULL, &why)) < 0) {
		if (errno != ENOENT)
			pc_warn("note: '%s' ignored: %s; JIT code left unnamed",
				path, why);
		return -1;
	}
	if ((why = jit_untrusted(fd, uid, started))) {
		pc_warn("note: '%s' ignored: %s; JIT code left unnamed", path,
			why);
		close(fd);
		return -1;
	}
	why = read_lines(fd, &l);
	close(fd);
	if (why) {
		pc_warn("note: '%s' ignored: not a perf map (%s); JIT code left unnamed",
			path, why);
		jit_free(&l);
		return -1;
	}
	if (l.left_out)
		pc_warn("note: '%s': only its first %zu functions read (a bound of %u functions, "
			"%u MiB of names); JIT code past them left unnamed",
			path, l.n, JIT_ENTRIES_MAX, JIT_NAMES_MAX >> 20);
	jit_disjoint(&l, st, "perf map");
	return (int)st->nsyms;
}
