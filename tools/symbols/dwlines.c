/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Source lines of addresses, from an object's DWARF line tables
 * (elfutils' libdw), for lines.c and annotate.c. A unit's table is read
 * when one of its addresses is first asked for: a big binary costs what
 * was asked of it. Of the rows at one address the table's last is the one
 * in effect, and a row of line 0 (or less, in a corrupt table) is no
 * line; relative file names are joined to the unit's DW_AT_comp_dir;
 * the function inlined at an address is the innermost
 * DW_TAG_inlined_subroutine of its scopes.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcprof.h"
#include "symbols/dwlines.h"

/* One row of a compile unit's line table, sorted by address. */
struct lrow {
	uint64_t addr;
	const char *file;	/* libdw's, for as long as the Dwarf is open */
	int line;
	int end;		/* the end of a sequence: no line from here */
	size_t ord;		/* its place in the table */
	int scoped;		/* inl is known */
	const char *inl;	/* the function inlined here, or NULL */
	const char *call_file;	/* where the outermost inlined function is */
	int call_line;		/* called from, or NULL and 0 */
	int inl_line;		/* where inl is declared, or 0 */
	Dwarf_Die cu;
};

/* A subprogram's code range and the line it is declared at. */
struct ufunc {
	uint64_t lo, hi;
	int line;
};

struct unit {
	Dwarf_Off off;		/* the unit's DIE */
	struct lrow *rows;
	size_t n;
	/* file names made absolute against the unit's DW_AT_comp_dir */
	const char **raw;
	char **joined;
	size_t nnames;
	/* its subprograms' ranges, sorted, read when first asked for */
	struct ufunc *funcs;
	size_t nfuncs;
	int funcs_read;
	char *bad;		/* why its line table cannot be read, or NULL */
};

/* The file name f of unit u as a path: relative names (DWARF 5 gives
 * them against the compilation directory) joined to comp_dir. */
static const char *
unit_path(struct unit *u, const char *f, const char *comp_dir)
{
	if (!f || !f[0])
		return "??";
	if (f[0] == '/' || !comp_dir)
		return f;
	for (size_t i = 0; i < u->nnames; i++)
		if (u->raw[i] == f)
			return u->joined[i];
	u->raw = pc_realloc(u->raw, (u->nnames + 1) * sizeof(*u->raw));
	u->joined = pc_realloc(u->joined, (u->nnames + 1) * sizeof(*u->joined));
	u->raw[u->nnames] = f;
	u->joined[u->nnames] = pc_asprintf("%s/%s", comp_dir, f);
	return u->joined[u->nnames++];
}

/* A unit's address range, for objects with no .debug_aranges (clang's
 * default): built from the units' DW_AT_ranges when first needed. */
struct curange {
	uint64_t lo, hi;
	Dwarf_Off die;
};

#define MAX_RANGES	(1u << 20)

struct dwlines {
	int fd;
	Elf *elf;
	Dwarf *dw;
	int shared;		/* fd, elf and dw are a struct dwcache's */
	/* the units and ranges read: base's (itself, or the dwcache's
	 * handle on the same file), which each handle looks in */
	struct dwlines *base;
	struct unit *units;
	size_t nunits;
	struct curange *ranges;
	size_t nranges;
	int built;		/* ranges built, ranges_err their first error */
	char ranges_err[200];
	int ranged;		/* this handle has looked in the ranges */
	char error[200];	/* the first corrupt part found, or "" */
};

/* Note the first corrupt part of the DWARF (dwlines_error). */
static void
corrupt_in(char *buf, size_t len, const char *what, Dwarf_Off off)
{
	if (!buf[0])
		snprintf(buf, len, "corrupt DWARF: %s at offset %#llx: %s",
			 what, (unsigned long long)off, dwarf_errmsg(-1));
}

/* Note text (a corrupt part another handle met first) as m's, unless m
 * has met one already. */
static void
note(struct dwlines *m, const char *text)
{
	if (text && !m->error[0])
		snprintf(m->error, sizeof(m->error), "%s", text);
}

/* Whether elf has a section named name. */
static int
has_section(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (gelf_getshdr(scn, &sh) &&
		    (n = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(n, name))
			return 1;
	}
	return 0;
}

/* m with elf: whether it has DWARF with a unit that libdw can read. A
 * .debug_info that libdw cannot read is said in err. */
static struct dwlines *
with_dwarf(Elf *elf, int fd, char *err, size_t errlen)
{
	Dwarf_Off next;
	size_t hsize;
	struct dwlines *m;
	Dwarf *dw = NULL;

	if (!elf || elf_kind(elf) != ELF_K_ELF ||
	    !(dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL)) ||
	    dwarf_nextcu(dw, 0, &next, &hsize, NULL, NULL, NULL) != 0) {
		/* a .debug_info with no unit libdw can read: corrupt */
		if (err && elf && elf_kind(elf) == ELF_K_ELF &&
		    has_section(elf, ".debug_info"))
			snprintf(err, errlen, "corrupt DWARF: .debug_info cannot be read: %s",
				 dwarf_errmsg(-1));
		if (dw)
			dwarf_end(dw);
		if (elf)
			elf_end(elf);
		return NULL;
	}
	m = pc_calloc(1, sizeof(*m));
	m->fd = fd;
	m->elf = elf;
	m->dw = dw;
	m->base = m;
	return m;
}

struct dwlines *
dwlines_open(const char *path, char *err, size_t errlen)
{
	struct dwlines *m;
	int fd;

	if (err && errlen)
		err[0] = 0;
	if (!path || (fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return NULL;
	elf_version(EV_CURRENT);
	if (!(m = with_dwarf(elf_begin(fd, ELF_C_READ_MMAP, NULL), fd, err,
			     errlen)))
		close(fd);
	return m;
}

/* ------------------------------------------------------------ cache */

/* One file as dwlines_open found it: its ELF and DWARF (libdw inflates
 * every compressed .debug_* section at dwarf_begin_elf), or why none. */
struct dwsrc {
	dev_t dev;
	ino_t ino;
	struct dwlines *m;	/* NULL: no DWARF that libdw can read */
	char err[256];		/* then: what dwlines_open said */
};

struct dwcache {
	struct dwsrc *v;
	size_t n;
};

/* A handle of its own (units, rows, first error) on src's Dwarf. */
static struct dwlines *
share(const struct dwsrc *src)
{
	struct dwlines *m = pc_calloc(1, sizeof(*m));

	m->fd = -1;
	m->elf = src->m->elf;
	m->dw = src->m->dw;
	m->shared = 1;
	m->base = src->m;
	return m;
}

struct dwlines *
dwlines_open_in(struct dwcache **cache, const char *path, char *err,
		size_t errlen)
{
	struct dwcache *c;
	struct dwsrc *src;
	struct stat sb;
	size_t i;

	if (!cache || !path || stat(path, &sb))
		return dwlines_open(path, err, errlen);
	if (!(c = *cache))
		c = *cache = pc_calloc(1, sizeof(*c));
	for (i = 0; i < c->n; i++)
		if (c->v[i].dev == sb.st_dev && c->v[i].ino == sb.st_ino)
			break;
	if (i == c->n) {
		c->v = pc_realloc(c->v, (c->n + 1) * sizeof(*c->v));
		c->v[c->n++] = (struct dwsrc){ sb.st_dev, sb.st_ino, NULL, "" };
		c->v[i].m = dwlines_open(path, c->v[i].err,
					 sizeof(c->v[i].err));
	}
	src = &c->v[i];
	if (err && errlen)
		snprintf(err, errlen, "%s", src->err);
	return src->m ? share(src) : NULL;
}

void
dwcache_free(struct dwcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		dwlines_close(c->v[i].m);
	free(c->v);
	free(c);
}

struct dwlines *
dwlines_open_mem(const void *buf, size_t len)
{
	elf_version(EV_CURRENT);
	return with_dwarf(elf_memory((char *)buf, len), -1, NULL, 0);
}

const char *
dwlines_error(const struct dwlines *m)
{
	return m && m->error[0] ? m->error : NULL;
}

void
dwlines_close(struct dwlines *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nunits; i++) {
		for (size_t j = 0; j < m->units[i].nnames; j++)
			free(m->units[i].joined[j]);
		free(m->units[i].joined);
		free(m->units[i].raw);
		free(m->units[i].rows);
		free(m->units[i].funcs);
		free(m->units[i].bad);
	}
	free(m->units);
	free(m->ranges);
	if (!m->shared) {
		dwarf_end(m->dw);
		elf_end(m->elf);
		if (m->fd >= 0)
			close(m->fd);
	}
	free(m);
}

size_t
dwlines_units(const struct dwlines *m)
{
	return m ? m->base->nunits : 0;
}

static int
cmp_lrow(const void *a, const void *b)
{
	const struct lrow *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* a sequence's end before the next sequence's start at its address;
	 * of rows at one address the table's last is the one in effect */
	if (x->end != y->end)
		return x->end ? -1 : 1;
	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* The line table of the unit whose DIE is cu, sorted; NULL if it has none. */
static struct unit *
unit_of(struct dwlines *m, Dwarf_Die *cu)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	Dwarf_Attribute at;
	const char *comp_dir =
		dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &at));
	Dwarf_Lines *dl;
	struct unit *u;
	size_t n;

	struct dwlines *b = m->base;
	char bad[200] = "";

	for (size_t i = 0; i < b->nunits; i++)
		if (b->units[i].off == off) {
			note(m, b->units[i].bad);
			return b->units[i].rows ? &b->units[i] : NULL;
		}
	b->units = pc_realloc(b->units, (b->nunits + 1) * sizeof(*b->units));
	u = &b->units[b->nunits++];
	memset(u, 0, sizeof(*u));
	u->off = off;
	if (dwarf_getsrclines(cu, &dl, &n) || n == 0) {
		/* a unit that points at a line table libdw cannot read */
		if (dwarf_hasattr(cu, DW_AT_stmt_list)) {
			corrupt_in(bad, sizeof(bad),
				   "the line table of the unit", off);
			u->bad = pc_strdup(bad);
			note(m, u->bad);
		}
		return NULL;
	}
	u->rows = pc_calloc(n, sizeof(*u->rows));
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(dl, i);
		struct lrow *r = &u->rows[u->n];
		Dwarf_Addr a;
		bool end = false;

		if (!l || dwarf_lineaddr(l, &a) || dwarf_lineno(l, &r->line))
			continue;
		dwarf_lineendsequence(l, &end);
		r->addr = a;
		r->end = end;
		r->ord = i;
		r->file = unit_path(u, dwarf_linesrc(l, NULL, NULL), comp_dir);
		r->cu = *cu;
		u->n++;
	}
	qsort(u->rows, u->n, sizeof(*u->rows), cmp_lrow);
	return u->n ? u : NULL;
}

/*
 * The outermost inlined call that holds addr, in the subprogram that holds
 * it: found by descending from the unit through the DIEs whose ranges hold
 * addr (dwarf_getscopes goes from an inlined instance to its abstract
 * definition, not to its caller), into namespaces and classes on the way
 * to the subprogram. 1 with *out set, else 0. At most 64 levels and
 * MAX_SCAN DIEs, for a strange file.
 */
#define MAX_SCAN	200000

static int
outer_inlined(Dwarf_Die *parent, uint64_t addr, int in_sub, int depth,
	      long *scanned, Dwarf_Die *out)
{
	Dwarf_Die kid;

	if (depth > 64 || dwarf_child(parent, &kid) != 0)
		return 0;
	do {
		if (++*scanned > MAX_SCAN)
			return 0;
		switch (dwarf_tag(&kid)) {
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			if (!in_sub && outer_inlined(&kid, addr, 0, depth + 1,
						     scanned, out))
				return 1;
			break;
		case DW_TAG_subprogram:
		case DW_TAG_lexical_block:
			if (dwarf_haspc(&kid, addr) == 1)
				return outer_inlined(&kid, addr, 1, depth + 1,
						     scanned, out);
			break;
		case DW_TAG_inlined_subroutine:
			if (in_sub && dwarf_haspc(&kid, addr) == 1) {
				*out = kid;
				return 1;
			}
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&kid, &kid) == 0);
	return 0;
}

/* Where the outermost function inlined at addr is called from: r's
 * call_file and call_line. */
static void
call_site(struct unit *u, struct lrow *r, uint64_t addr)
{
	Dwarf_Attribute at, cd;
	Dwarf_Word line = 0, file = 0;
	Dwarf_Files *files;
	Dwarf_Die outer;
	size_t nfiles;
	const char *f;
	long scanned = 0;

	if (!outer_inlined(&r->cu, addr, 0, 0, &scanned, &outer))
		return;
	if (dwarf_formudata(dwarf_attr(&outer, DW_AT_call_line, &at), &line) ==
		    0 &&
	    line > 0 && line < INT32_MAX &&
	    dwarf_formudata(dwarf_attr(&outer, DW_AT_call_file, &at), &file) ==
		    0 &&
	    dwarf_getsrcfiles(&r->cu, &files, &nfiles) == 0 && file < nfiles &&
	    (f = dwarf_filesrc(files, file, NULL, NULL))) {
		r->call_line = (int)line;
		r->call_file = unit_path(u, f,
					 dwarf_formstring(dwarf_attr(
						 &r->cu, DW_AT_comp_dir, &cd)));
	}
}

/* The function inlined at r's address, innermost, or NULL; and where the
 * outermost function inlined there is called (call_site). */
static const char *
inlined_at(struct unit *u, struct lrow *r, uint64_t addr)
{
	Dwarf_Die *scopes = NULL;
	int n;

	if (r->scoped)
		return r->inl;
	r->scoped = 1;
	n = dwarf_getscopes(&r->cu, addr, &scopes);
	for (int i = 0; i < n; i++) {
		Dwarf_Attribute at;
		const char *name;

		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		if (dwarf_attr_integrate(&scopes[i], DW_AT_name, &at) &&
		    (name = dwarf_formstring(&at)))
			r->inl = name;
		if (r->inl && dwarf_decl_line(&scopes[i], &r->inl_line))
			r->inl_line = 0;
		break;
	}
	free(scopes);
	if (r->inl)
		call_site(u, r, addr);
	return r->inl;
}

/* dwarf_getfuncs' callback: subprogram die's ranges into unit arg. */
static int
add_func(Dwarf_Die *die, void *arg)
{
	struct unit *u = arg;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t o = 0;
	int line;

	if (dwarf_decl_line(die, &line) || line <= 0)
		return DWARF_CB_OK;
	while ((o = dwarf_ranges(die, o, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		u->funcs = pc_realloc(u->funcs,
				      (u->nfuncs + 1) * sizeof(*u->funcs));
		u->funcs[u->nfuncs++] = (struct ufunc){ lo, hi, line };
	}
	return DWARF_CB_OK;
}

static int
cmp_ufunc(const void *a, const void *b)
{
	const struct ufunc *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The line the subprogram of unit u (DIE cu) that holds addr is declared
 * at, or 0: the nearest range below addr that holds it. */
static int
func_line(struct unit *u, Dwarf_Die *cu, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!u->funcs_read) {
		u->funcs_read = 1;
		dwarf_getfuncs(cu, add_func, u, 0);
		if (u->nfuncs)
			qsort(u->funcs, u->nfuncs, sizeof(*u->funcs),
			      cmp_ufunc);
	}
	hi = u->nfuncs;
	while (lo < hi) {	/* the first range above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (u->funcs[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && addr < u->funcs[lo - 1].hi ? u->funcs[lo - 1].line :
						      0;
}

static int
cmp_range(const void *a, const void *b)
{
	const struct curange *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Every unit's ranges, sorted: at most MAX_RANGES of them. */
static void
build_ranges(struct dwlines *m)
{
	Dwarf_Off off = 0, next;
	size_t hsize, cap = 0;

	m->built = 1;
	while (dwarf_nextcu(m->dw, off, &next, &hsize, NULL, NULL, NULL) == 0 &&
	       m->nranges < MAX_RANGES) {
		Dwarf_Die cu;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t o = 0;

		if (!dwarf_offdie(m->dw, off + hsize, &cu))
			corrupt_in(m->ranges_err, sizeof(m->ranges_err),
				   "the unit", off);
		else
			while ((o = dwarf_ranges(&cu, o, &base, &lo, &hi)) >
				       0 &&
			       m->nranges < MAX_RANGES) {
				if (hi <= lo)
					continue;
				if (m->nranges == cap) {
					cap = cap ? 2 * cap : 64;
					m->ranges = pc_realloc(
						m->ranges,
						cap * sizeof(*m->ranges));
				}
				m->ranges[m->nranges++] =
					(struct curange){ lo, hi, off + hsize };
			}
		off = next;
	}
	if (dwarf_nextcu(m->dw, off, &next, &hsize, NULL, NULL, NULL) < 0)
		corrupt_in(m->ranges_err, sizeof(m->ranges_err),
			   "the unit header", off);
	if (m->nranges)
		qsort(m->ranges, m->nranges, sizeof(*m->ranges), cmp_range);
}

/* The unit that addr is in: by .debug_aranges, else by the units' own
 * ranges. */
static int
unit_at(struct dwlines *m, uint64_t addr, Dwarf_Die *cu)
{
	size_t lo = 0, hi;

	struct dwlines *b = m->base;

	if (dwarf_addrdie(m->dw, addr, cu))
		return 1;
	if (!b->built)
		build_ranges(b);
	if (!m->ranged) {
		m->ranged = 1;
		note(m, b->ranges_err[0] ? b->ranges_err : NULL);
	}
	hi = b->nranges;
	while (lo < hi) {	/* the first range starting above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (b->ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges may nest or overlap in a strange file: the nearest below */
	return lo > 0 && addr < b->ranges[lo - 1].hi &&
	       dwarf_offdie(m->dw, b->ranges[lo - 1].die, cu) != NULL;
}

/*
 * The row in effect at addr in object m, with *end the address where it
 * stops being so (the next row's); NULL where no line covers addr, *end
 * then the next row's address or 0 for none.
 */
static struct lrow *
row_at(struct dwlines *m, uint64_t addr, uint64_t *end, struct unit **up)
{
	Dwarf_Die cu;
	struct unit *u;
	size_t lo = 0, hi;

	*end = 0;
	if (!unit_at(m, addr, &cu) || !(u = unit_of(m, &cu)))
		return NULL;
	hi = u->n;
	while (lo < hi) {	/* the first row above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (u->rows[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < u->n)
		*end = u->rows[lo].addr;
	*up = u;
	if (lo == 0 || u->rows[lo - 1].end)
		return NULL;
	return &u->rows[lo - 1];
}

int
dwlines_at(struct dwlines *m, uint64_t addr, struct dwline *out, uint64_t *end)
{
	struct unit *u = NULL;
	struct lrow *r;
	uint64_t e;

	/* line 0 is code that no source line stands for (DWARF 5, 6.2.5.1) */
	if (!(r = row_at(m, addr, &e, &u)) || r->line <= 0) {
		if (end)
			*end = e;
		return 0;
	}
	if (end)
		*end = e;
	out->file = r->file;
	out->line = r->line;
	out->inlined = inlined_at(u, r, addr);
	out->call_file = r->call_file;
	out->call_line = r->call_line;
	out->inlined_line = r->inl ? r->inl_line : 0;
	out->func_line = func_line(u, &r->cu, addr);
	return 1;
}
