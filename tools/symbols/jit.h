/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the two readers of JIT names share (jitmap.c, jitdump.c): the
 * functions a JIT described, in the order it described them, and the
 * checks that a file in /tmp or a program's directory may be believed.
 */
#ifndef PCPROF_JIT_H
#define PCPROF_JIT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbols/symtab.h"

#define JIT_NAME_MAX	512	/* bytes of a name kept */
#define JIT_ENTRIES_MAX	(1u << 20)	/* functions kept of one map or dump */
#define JIT_NAMES_MAX	(32u << 20)	/* bytes of their names kept */

/* 24 bytes a function, and its name in the names' one buffer: a map of
 * short lines costs little more than its own size. */
struct jline {
	uint64_t lo, hi;
	size_t name;		/* offset in jlines->names; later lines, */
};				/* at higher offsets, win where two overlap */

struct jlines {
	struct jline *v;
	size_t n, cap;
	char *names;		/* every name, NUL-terminated, in order */
	size_t names_len, names_cap;
	size_t left_out; /* functions past JIT_ENTRIES_MAX or JIT_NAMES_MAX */
};

/* The name of l's function i. */
static inline const char *
jit_name(const struct jlines *l, size_t i)
{
	return l->names + l->v[i].name;
}

/* Append [lo, hi) named by the first len bytes of name (cut at
 * JIT_NAME_MAX); 0, or -1 (counted in left_out) when l holds
 * JIT_ENTRIES_MAX functions or JIT_NAMES_MAX bytes of names already.
 * Not AS-safe. */
int jit_add(struct jlines *l, uint64_t lo, uint64_t hi, const char *name,
	    size_t len);
void jit_free(struct jlines *l);

/* l's functions as disjoint functions of st (source named source): where
 * two overlap, the one that starts later takes over; of two at one
 * address, the later. Sorted once (not at all when in order already),
 * then one pass; only the names kept are copied. Empties l. */
void jit_disjoint(struct jlines *l, struct symtab *st, const char *source);

/* Why the file open on fd is not to be believed as uid's, written by a
 * process that started at started (CLOCK_REALTIME ns, 0: not known), or
 * NULL. */
const char *jit_untrusted(int fd, uid_t uid, uint64_t started);

/*
 * jitdump.c: the functions of a jitdump (perf's jit-PID.dump format) held
 * in buf[0..len) into l; NULL, or why it is none to believe: not a jitdump,
 * another machine's or another process's (pid, when not 0), or a record
 * that breaks the format. A short last record (a writer that was still
 * running or was killed) ends it. *lines is the number of DEBUG_INFO line
 * entries that hold together (V8 writes some that do not: those records
 * are dropped).
 */
const char *jitdump_parse(const unsigned char *buf, size_t len, uint64_t pid,
			  struct jlines *l, size_t *lines);

#endif
