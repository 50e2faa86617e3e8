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
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "model/diff.h"
#include "symbols/waits.h"

/* The function of the executable at frame d of stack k, or NULL (another
 * object's frame, or no symbol). Frames of the executable are object 0 of
 * every run's stacks (gmon.h), so the side's one table names them in
 * every run. */
static const char *
exe_func(const struct symtab *st, const struct gmon_stack *k, uint32_t d)
{
	long i;

	if (!k->pcs[d] || k->pcs[d] >> GMON_OBJ_SHIFT ||
	    (i = symtab_find(st, k->pcs[d])) < 0)
		return NULL;
	return st->funcs[st->syms[i].func];
}

/* The wait of off-CPU stack k, its name in buf: the pid of a wait4's
 * child, the run's own, left out. */
static void
wait_of(const struct gmon_stack *k, char *buf, size_t size)
{
	wait_name(k->pcs[0] & ~((uint64_t)UINT32_MAX << 16), buf, size);
}

/* The row of off-CPU stack k: "[off-cpu: CALL] from FUNCTION". */
static const char *
wait_row(const struct side *s, const struct gmon_stack *k, char *buf,
	 size_t size)
{
	size_t n;

	wait_of(k, buf, size);
	n = strlen(buf);
	for (uint32_t d = 1; d < k->depth; d++) {
		const char *f = exe_func(&s->in.st, k, d);

		if (f) {
			snprintf(buf + n, size - n, " from %s", f);
			break;
		}
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
	size_t i = row - s->first_wait, len, nf = 0, first = 0;
	const char **f, *name;
	char wait[256], *out, *p;

	if (i >= s->nwait_stacks) {
		s->wait_stacks = pc_realloc(s->wait_stacks,
					    (i + 1) * sizeof(*s->wait_stacks));
		memset(s->wait_stacks + s->nwait_stacks, 0,
		       (i + 1 - s->nwait_stacks) * sizeof(*s->wait_stacks));
		s->nwait_stacks = i + 1;
	}
	if (s->wait_stacks[i].stack && k->count <= s->wait_stacks[i].ns)
		return;
	/* the frames of the executable, outermost first */
	f = pc_realloc(NULL, (k->depth ? k->depth : 1) * sizeof(*f));
	for (uint32_t d = k->depth; d-- > 1;)
		if ((name = exe_func(&s->in.st, k, d)) &&
		    (!nf || f[nf - 1] != name))
			f[nf++] = name;
	wait_of(k, wait, sizeof(wait));
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
	free(s->wait_stacks[i].stack);
	s->wait_stacks[i].stack = out;
	s->wait_stacks[i].ns = k->count;
}

const char *
diff_wall_stack(const struct side *s, const char *name)
{
	for (size_t i = 0; i < s->nwait_stacks; i++)
		if (s->wait_stacks[i].stack &&
		    !strcmp(s->in.st.funcs[s->first_wait + i], name))
			return s->wait_stacks[i].stack;
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
	st->funcs =
		pc_realloc(st->funcs, (st->nfuncs + 1) * sizeof(*st->funcs));
	st->funcs[st->nfuncs] = pc_strdup(name);
	if (st->nobjs) {
		st->func_obj = pc_realloc(
			st->func_obj, (st->nfuncs + 1) * sizeof(*st->func_obj));
		st->func_obj[st->nfuncs] = 0;
	}
	return st->nfuncs++;
}

/* Every off-CPU record of run r into its row's seconds in self and into
 * the run's program and waited seconds (self NULL: only the rows made). */
static int
each_wait(struct side *s, int r, size_t first, double *self)
{
	const struct pc_run *run = &s->in.runs[r];

	for (int i = 0; i < run->nfiles; i++) {
		struct gmon_stacks ss;
		char buf[1024];

		if (stacks_load(&s->in, r, i, NULL, 1, &ss))
			return -1;
		if (!(ss.flags & GMON_STACKS_WALL))
			return pc_error("'%s': a CPU profile, with no off-CPU time for --metric "
					"wall (record with PC_CLOCK=wall, pcprof run --clock wall)",
					run->files[i]);
		if (ss.wall[GMON_WALL_HZ_LOW] &&
		    (!s->wall_hz || ss.wall[GMON_WALL_HZ_LOW] < s->wall_hz))
			s->wall_hz = (uint32_t)ss.wall[GMON_WALL_HZ_LOW];
		for (size_t j = 0; j < ss.n; j++) {
			const struct gmon_stack *k = &ss.v[j];
			size_t row;

			if (!(k->flags & GMON_STACK_OFFCPU))
				continue;
			row = row_of(s, wait_row(s, k, buf, sizeof(buf)),
				     first);
			if (!self) {
				keep_stack(s, row, k);
				continue;
			}
			self[row] += (double)k->count / 1e9;
			s->program[r] += (double)k->count / 1e9;
			s->waited[r] += (double)k->count / 1e9;
			if (GMON_WAIT_CALL(k->pcs[0]) == GMON_WAIT_RUNQUEUE)
				s->runq[r] += (double)k->count / 1e9;
		}
		gmon_stacks_release(&ss);
	}
	return 0;
}

int
diff_wall_rows(struct side *s)
{
	size_t first = s->in.st.nfuncs;

	s->first_wait = first;
	for (int r = 0; r < s->nruns; r++)
		if (each_wait(s, r, first, NULL))
			return -1;
	if (!s->wall_hz)
		s->wall_hz =
			100; /* libpc's default, where a file does not say */
	return 0;
}

int
diff_wall_add(struct side *s, int r, double *self)
{
	if (!s->waited)
		s->waited = pc_calloc((size_t)s->nruns, sizeof(*s->waited));
	if (!s->runq)
		s->runq = pc_calloc((size_t)s->nruns, sizeof(*s->runq));
	return each_wait(s, r, s->first_wait, self);
}

int
diff_row_is_load(const char *name)
{
	return !strncmp(name, RUNQUEUE_ROW, strlen(RUNQUEUE_ROW));
}

/*
 * What one observation of wait row i is worth on side s. A thread's time
 * off the CPU, and in the run queue, is exact (the kernel's schedstat
 * counters); only where it went is sampled: each of the wall clock's
 * rounds gives the time since the thread's last look, at most 1/wall_hz,
 * to the call and stack it is in then. A row holding a share p of its
 * threads' off-CPU (or run-queue) time then varies by the split alone as
 * a binomial count of rounds, Var = m (1 - p) / wall_hz for m seconds,
 * not as a Poisson one (m / wall_hz): a program that sleeps in one place
 * has that sleep's seconds exactly, and the floor of m / wall_hz was 4
 * times the spread of its runs (a nap of 0.30 s a run: 0.017 s against
 * 0.004 s), which is where the wall gate lost its power. p is taken over
 * the side's threads at once, which errs high (Cauchy-Schwarz: the sum of
 * the threads' m_t (1 - p_t) is at most m (1 - p)); a microsecond is
 * the least, the clock's own grain.
 */
static double
wait_floor(const struct side *s, size_t i)
{
	size_t nf = s->in.st.nfuncs ? s->in.st.nfuncs : 1;
	int load = diff_row_is_load(s->in.st.funcs[i]);
	double m = 0, pool = 0, share;

	if (!s->self || !s->waited || !s->runq || s->nruns < 1)
		return 1.0 / s->wall_hz;
	for (int r = 0; r < s->nruns; r++) {
		m += s->self[(size_t)r * nf + i];
		pool += load ? s->runq[r] : s->waited[r] - s->runq[r];
	}
	share = pool > 0 ? m / pool : 0;
	share = share < 0 ? 0 : share > 1 ? 1 : share;
	return fmax(1e-6, (1 - share) / s->wall_hz);
}

double
diff_amin(const struct side *s, const char *name)
{
	/* an off-CPU row's independent observations are the wall clock's
	 * rounds, not the CPU samples */
	if (!s->wall_hz || !wait_name_is(name))
		return 1.0 / s->rate;
	for (size_t i = s->first_wait; i < s->in.st.nfuncs; i++)
		if (!strcmp(s->in.st.funcs[i], name))
			return wait_floor(s, i);
	return 1.0 / s->wall_hz;
}
