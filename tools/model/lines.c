/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Samples by source line, through DWARF's line tables (elfutils' libdw).
 *
 * Each sampled bin is first shared among the symbols that cover it, as the
 * flat profile shares it (flat_walk), and each symbol's part is then shared
 * among the line-table rows that cover its 2-byte units (give_lines): so a
 * line's samples add up exactly to its function's, and with no inlining
 * they are gprof -l's. A row of inlined code is the inlined function's own
 * source line (the line table says where the instructions came from); the
 * scopes at its address (dwarf_getscopes) name the function inlined, and the
 * symbol names the function it was inlined into. Code with no line
 * information is function+0xOFFSET.
 *
 * Debug information is read lazily: an object's DWARF is opened when one
 * of its bins is sampled, and a compile unit's line table when one of its
 * addresses is (dwlines.c), so a big binary costs what was sampled in it.
 */
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "model/lines.h"
#include "symbols/dwlines.h"

/* An object's DWARF, opened when first needed. */
struct lines_module {
	int tried;
	struct dwlines *dw;
	char *path;		/* the file dw reads, or the corrupt one */
	char error[256];	/* its DWARF could not be read */
};


static char *
dup0(const char *s)
{
	char *d = s ? pc_strdup(s) : NULL;

	return d;
}

/* Where object obj's DWARF may be, best first: the debug file its symbols
 * came from, the object's own file, and its separate debug file (by
 * build-id or .gnu_debuglink: symbols may come from the file itself, and
 * its DWARF from there). */
static void
candidates(const struct lines *L, uint32_t obj, char *c[3])
{
	const uint8_t *id;
	size_t idlen;

	uint8_t now[20];
	int n;

	c[0] = c[1] = c[2] = NULL;
	if (obj == 0) {
		c[0] = dup0(L->in->st.debug_path);
		c[1] = dup0(L->in->exe);
		return;
	}
	c[1] = dup0(whole_object(L->in->objects, obj, &id, &idlen));
	/* a library replaced since the run would give another build's lines */
	if (c[1] && idlen &&
	    ((n = elf_build_id(c[1], now, sizeof(now))) != (int)idlen ||
	     memcmp(now, id, idlen))) {
		pc_warn("note: '%s' is not the file that was profiled (its build-id "
			"changed); its lines are left out", c[1]);
		free(c[1]);
		c[1] = NULL;
	}
}

/* The object's DWARF: the first of its candidate files that has any,
 * opened once. */
static struct dwlines *
module(struct lines *L, uint32_t obj)
{
	struct lines_module *m;

	if (obj >= L->nmods)
		return NULL;
	m = &L->mods[obj];
	if (!m->tried) {
		char *cand[3];

		m->tried = 1;
		candidates(L, obj, cand);
		for (int i = 0; i < 3 && !m->dw && !m->error[0]; i++) {
			if (i == 2 && cand[1])
				cand[2] = symtab_debug_file_of(cand[1], L->so);
			m->dw = dwlines_open_in(L->so && L->so->fetch ?
						&L->so->fetch->dwarf : NULL,
						cand[i], m->error,
						sizeof(m->error));
			if (m->dw || m->error[0]) {
				m->path = cand[i];
				cand[i] = NULL;
			}
		}
		for (int i = 0; i < 3; i++)
			free(cand[i]);
		L->have_lines |= m->dw != NULL;
	}
	return m->dw;
}

/* A row of samples of symbol sym from address a: on line l, or where l
 * is NULL at a's offset in the symbol, with no line. */
static void
add(struct lines *L, size_t sym, const struct dwline *l, uint64_t a,
    double samples)
{
	const struct symtab *st = &L->in->st;
	struct line_row *r;

	if (L->nrows == L->cap) {
		L->cap = L->cap ? 2 * L->cap : 1024;
		L->rows = pc_realloc(L->rows, L->cap * sizeof(*L->rows));
	}
	r = &L->rows[L->nrows++];
	*r = (struct line_row){ NULL, 0, st->syms[sym].func, NULL, 0, samples };
	if (l) {
		r->file = l->file;
		r->line = l->line;
		r->inlined = l->inlined;
	} else {
		r->offset = a - st->syms[sym].lo;
		L->nolines += samples;
	}
}

/*
 * A bin wider than WIDE bytes (none of libpc's, whose bins are 2 bytes,
 * but a foreign profile may have them) is shared among the rows that
 * cover it by bytes, a row at a time, so that its width costs nothing.
 */
#define WIDE	64

static void
give_span(struct lines *L, size_t sym, struct dwlines *m, uint64_t base,
	  uint64_t lo, uint64_t hi, double samples)
{
	for (uint64_t a = lo; a < hi; ) {
		struct dwline l;
		uint64_t end = 0, b;
		int have = m && dwlines_at(m, a - base, &l, &end);

		b = end && base + end > a && base + end < hi ? base + end : hi;
		add(L, sym, have ? &l : NULL, a,
		    samples * (double)(b - a) / (double)(hi - lo));
		a = b;
	}
}

/*
 * flat_walk's share of one symbol in one bin, shared among its lines by
 * 2-byte units, each unit wholly the line in effect at its second byte.
 * That is gprof -l's sharing (it scales addresses to 2-byte units, so a
 * line starting at an odd address owns the unit it starts in), and it is
 * what the samples mean: a sample is at an instruction's start, and the
 * byte before a line that starts at an odd address is almost always the
 * end of a longer instruction, not the start of one.
 */
static void
give_lines(void *arg, size_t sym, uint64_t lo, uint64_t hi, double samples)
{
	struct lines *L = arg;
	const struct symtab *st = &L->in->st;
	uint32_t func = st->syms[sym].func;
	uint32_t obj = st->nobjs ? st->func_obj[func] : 0;
	uint64_t base = st->nobjs ? lo & ~GMON_OBJ_ADDR_MASK : 0;
	struct dwlines *m = st->funcs[func][0] == '[' ? NULL : module(L, obj);

	if (hi - lo > WIDE) {
		give_span(L, sym, m, base, lo, hi, samples);
		return;
	}
	for (uint64_t u = lo & ~UINT64_C(1); u < hi; u += 2) {
		uint64_t a = u > lo ? u : lo, b = u + 2 < hi ? u + 2 : hi;
		struct dwline l;
		int have = m && dwlines_at(m, b - 1 - base, &l, NULL);

		add(L, sym, have ? &l : NULL, a,
		    samples * (double)(b - a) / (double)(hi - lo));
	}
}

int
lines_line_at(struct lines *L, uint32_t obj, uint64_t addr, struct dwline *out)
{
	struct dwlines *m = module(L, obj);

	return m && dwlines_at(m, addr, out, NULL);
}

int
lines_at(struct lines *L, uint32_t obj, uint64_t addr, const char **file,
	 int *line, const char **inlined)
{
	struct dwline l;

	if (!lines_line_at(L, obj, addr, &l))
		return 0;
	*file = l.file;
	*line = l.line;
	*inlined = l.inlined;
	return 1;
}

static int
cmp_str0(const char *a, const char *b)
{
	return a == b ? 0 : !a ? -1 : !b ? 1 : strcmp(a, b);
}

static int
cmp_key(const void *a, const void *b)
{
	const struct line_row *x = a, *y = b;
	int c = cmp_str0(x->file, y->file);

	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if ((c = cmp_str0(x->inlined, y->inlined)))
		return c;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int
cmp_samples(const void *a, const void *b)
{
	const struct line_row *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return cmp_key(a, b);
}

int
lines_build(struct lines *L, const struct pc_inputs *in,
	    const struct gmon_profile *p, const struct symtab_opts *so)
{
	uint64_t out;
	size_t n = 0;

	memset(L, 0, sizeof(*L));
	L->in = in;
	L->so = so;
	L->nmods = in->st.nobjs ? in->st.nobjs : 1;
	L->mods = pc_calloc(L->nmods, sizeof(*L->mods));
	L->rate = p->nhists ? p->hists[0].rate : 0;
	L->total = flat_walk(&in->st, p, give_lines, L, &L->unknown);
	gmon_profile_outside(p, &out);
	L->outside = (double)out;
	L->total += L->outside;
	/* the same line of the same function, from several bins, is one row */
	if (L->nrows)
		qsort(L->rows, L->nrows, sizeof(*L->rows), cmp_key);
	for (size_t i = 0; i < L->nrows; i++) {
		if (n && !cmp_key(&L->rows[n - 1], &L->rows[i]))
			L->rows[n - 1].samples += L->rows[i].samples;
		else
			L->rows[n++] = L->rows[i];
	}
	L->nrows = n;
	if (n)
		qsort(L->rows, n, sizeof(*L->rows), cmp_samples);
	return lines_check(L);
}

int
lines_check(const struct lines *L)
{
	for (size_t k = 0; k < L->nmods; k++) {
		const struct lines_module *m = &L->mods[k];
		const char *e = m->error[0] ? m->error : dwlines_error(m->dw);

		if (e)
			return pc_error("'%s': %s", m->path, e);
	}
	return 0;
}

void
lines_release(struct lines *L)
{
	for (size_t k = 0; k < L->nmods; k++) {
		dwlines_close(L->mods[k].dw);
		free(L->mods[k].path);
	}
	free(L->mods);
	free(L->rows);
	memset(L, 0, sizeof(*L));
}
