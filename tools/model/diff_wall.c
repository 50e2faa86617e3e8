/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof diff --metric wall: a side's off-CPU time, wait by wait, as rows
 * beside its functions' CPU self time (diff_side.c calls it). Each wait is
 * a row named with its stack: the wait ("[off-cpu: clock_nanosleep]",
 * its child's pid left out, which differs from run to run) and the
 * innermost function of the executable it was called from, so that a
 * change that adds a wait in one function is named by both; the row's
 * heaviest stack, whole, is kept beside it for the report.
 */
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "model/diff.h"
#include "symbols/waits.h"

/* The row of off-CPU stack k: "[off-cpu: CALL] from FUNCTION". Frames of
 * the executable are object 0 of every run's stacks (gmon.h), so the
 * side's one table names them in every run. */
static const char *
wait_row(const struct side *s, const struct gmon_stack *k, char *buf, size_t size)
{
	const struct symtab *st = &s->in.st;
	/* the pid of a wait4's child is the run's own */
	uint64_t w = k->pcs[0] & ~((uint64_t)UINT32_MAX << 16);
	size_t n;

	wait_name(w, buf, size);
	n = strlen(buf);
	for (uint32_t d = 1; d < k->depth; d++) {
		long i;

		if (!k->pcs[d] || k->pcs[d] >> GMON_OBJ_SHIFT ||
		    (i = symtab_find(st, k->pcs[d])) < 0)
			continue;
		snprintf(buf + n, size - n, " from %s", st->funcs[st->syms[i].func]);
		break;
	}
	return buf;
}

/* The longest stack kept for a row: past it the outermost frames go. */
#define STACK_MAX 4096

/* Keep off-CPU record k's stack for wait row row where it is the row's
 * heaviest yet: the executable's functions outermost first (a function
 * once where it calls itself), then the wait; where that is longer than
 * STACK_MAX, the outermost frames are left out for "...;". */
static void
keep_stack(struct side *s, size_t row, const struct gmon_stack *k)
{
	const struct symtab *st = &s->in.st;
	size_t i = row - s->first_wait, len, nf = 0, first = 0;
	const char **f = pc_realloc(NULL, (k->depth ? k->depth : 1) * sizeof(*f));
	char wait[256], *out, *p;

	if (i >= s->nwait_stacks) {
		size_t m = i + 1;

		s->wait_stack = pc_realloc(s->wait_stack, m * sizeof(*s->wait_stack));
		s->wait_stack_ns = pc_realloc(s->wait_stack_ns, m * sizeof(*s->wait_stack_ns));
		memset(s->wait_stack + s->nwait_stacks, 0,
		       (m - s->nwait_stacks) * sizeof(*s->wait_stack));
		memset(s->wait_stack_ns + s->nwait_stacks, 0,
		       (m - s->nwait_stacks) * sizeof(*s->wait_stack_ns));
		s->nwait_stacks = m;
	}
	if (s->wait_stack[i] && k->count <= s->wait_stack_ns[i]) {
		free(f);
		return;
	}
	/* the frames of the executable, outermost first */
	for (uint32_t d = k->depth; d-- > 1;) {
		long j;

		if (!k->pcs[d] || k->pcs[d] >> GMON_OBJ_SHIFT ||
		    (j = symtab_find(st, k->pcs[d])) < 0)
			continue;
		if (nf && f[nf - 1] == st->funcs[st->syms[j].func])
			continue;
		f[nf++] = st->funcs[st->syms[j].func];
	}
	wait_name(k->pcs[0] & ~((uint64_t)UINT32_MAX << 16), wait, sizeof(wait));
	len = strlen(wait);
	for (size_t d = 0; d < nf; d++)
		len += strlen(f[d]) + 1;
	while (len > STACK_MAX && first < nf)
		len -= strlen(f[first++]) + 1;
	out = p = pc_realloc(NULL, len + sizeof("...;"));
	if (first)
		p = stpcpy(p, "...;");
	for (size_t d = first; d < nf; d++) {
		p = stpcpy(p, f[d]);
		*p++ = ';';
	}
	strcpy(p, wait);
	free(f);
	free(s->wait_stack[i]);
	s->wait_stack[i] = out;
	s->wait_stack_ns[i] = k->count;
}

const char *
diff_wall_stack(const struct side *s, const char *name)
{
	for (size_t i = 0; i < s->nwait_stacks; i++)
		if (s->wait_stack[i] && !strcmp(s->in.st.funcs[s->first_wait + i], name))
			return s->wait_stack[i];
	return NULL;
}

/* The index of row name in the side's table, appended where new. */
static size_t
row_of(struct side *s, const char *name, size_t first)
{
	struct symtab *st = &s->in.st;

	for (size_t i = first; i < st->nfuncs; i++)
		if (!strcmp(st->funcs[i], name))
			return i;
	st->funcs = pc_realloc(st->funcs, (st->nfuncs + 1) * sizeof(*st->funcs));
	if (!(st->funcs[st->nfuncs] = strdup(name)))
		pc_fatal("out of memory");
	if (st->nobjs) {
		st->func_obj = pc_realloc(st->func_obj, (st->nfuncs + 1) * sizeof(*st->func_obj));
		st->func_obj[st->nfuncs] = 0;
	}
	return st->nfuncs++;
}

/* Every off-CPU record of run r into its row's seconds in self and into
 * the run's program and waited seconds (self NULL: only the rows made). */
static void
each_wait(struct side *s, int r, size_t first, double *self)
{
	const struct pc_run *run = &s->in.runs[r];

	for (int i = 0; i < run->nfiles; i++) {
		struct gmon_stacks ss;
		char buf[1024];

		stacks_load(&s->in, r, i, NULL, 1, &ss);
		if (!(ss.flags & GMON_STACKS_WALL))
			pc_fatal("'%s': a CPU profile, with no off-CPU time for --metric wall "
				 "(record with PC_CLOCK=wall, pcprof run --clock wall)",
				 run->files[i]);
		if (ss.wall[GMON_WALL_HZ_LOW] &&
		    (!s->wall_hz || ss.wall[GMON_WALL_HZ_LOW] < s->wall_hz))
			s->wall_hz = (uint32_t)ss.wall[GMON_WALL_HZ_LOW];
		for (size_t j = 0; j < ss.n; j++) {
			const struct gmon_stack *k = &ss.v[j];
			size_t row;

			if (!(k->flags & GMON_STACK_OFFCPU))
				continue;
			row = row_of(s, wait_row(s, k, buf, sizeof(buf)), first);
			if (!self) {
				keep_stack(s, row, k);
				continue;
			}
			self[row] += (double)k->count / 1e9;
			s->program[r] += (double)k->count / 1e9;
			s->waited[r] += (double)k->count / 1e9;
		}
		gmon_stacks_release(&ss);
	}
}

void
diff_wall_rows(struct side *s)
{
	size_t first = s->in.st.nfuncs;

	s->first_wait = first;
	for (int r = 0; r < s->nruns; r++)
		each_wait(s, r, first, NULL);
	if (!s->wall_hz)
		s->wall_hz = 100;	/* libpc's default, where a file does not say */
}

void
diff_wall_add(struct side *s, int r, double *self)
{
	if (!s->waited && !(s->waited = calloc((size_t)s->nruns, sizeof(*s->waited))))
		pc_fatal("out of memory");
	each_wait(s, r, s->first_wait, self);
}

double
diff_amin(const struct side *s, const char *name)
{
	/* an off-CPU row's independent observations are the wall clock's
	 * rounds, not the CPU samples */
	return s->wall_hz && wait_name_is(name) ? 1.0 / s->wall_hz : 1.0 / s->rate;
}
