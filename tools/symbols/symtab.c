/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Symbols for pcprof, the table: a file's symbols from .symtab, else a
 * separate debug file (symtab_debug.c), else .dynsym with functions from
 * the unwind tables for the code it does not cover (symtab_fde.c); sorted,
 * extents settled, pieces folded into one function by name, and looked up
 * by address. Called through symtab.h by symbols.c, the inputs and the
 * models.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/symtab_int.h"

/* Open-addressed table of display names, giving each a function index. */
struct names {
	uint32_t *slot;		/* func index + 1, or 0 */
	size_t mask;
};

uint64_t
symtab_hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static long
intern(struct symtab *st, struct names *nt, char *name)
{
	size_t i = symtab_hash_name(name) & nt->mask;

	while (nt->slot[i]) {
		uint32_t f = nt->slot[i] - 1;

		if (!strcmp(st->funcs[f], name)) {
			free(name);
			return f;
		}
		i = (i + 1) & nt->mask;
	}
	st->funcs[st->nfuncs] = name;
	nt->slot[i] = (uint32_t)++st->nfuncs;
	return (long)st->nfuncs - 1;
}

/* Settle extents (st_size, else up to the next symbol) and names. */
static int
build(struct symtab *st, struct rawvec *rv, uint64_t text_end,
      const struct symtab_opts *o)
{
	struct names nt = { NULL, 0 };
	size_t n = 0, cap = 16;

	if (rv->n)
		qsort(rv->v, rv->n, sizeof(*rv->v), sym_raw_cmp);
	while (cap < 2 * rv->n)
		cap *= 2;
	nt.slot = calloc(cap, sizeof(*nt.slot));
	nt.mask = cap - 1;
	st->syms = calloc(rv->n ? rv->n : 1, sizeof(*st->syms));
	st->funcs = calloc(rv->n ? rv->n : 1, sizeof(*st->funcs));
	if (!nt.slot || !st->syms || !st->funcs) {
		free(nt.slot);
		return -1;
	}
	for (size_t i = 0; i < rv->n; i++) {
		struct raw *r = &rv->v[i];
		uint64_t next = UINT64_MAX, hi;
		char *name;
		long f;

		if (i > 0 && rv->v[i - 1].lo == r->lo)
			continue;	/* an alias of the one kept */
		for (size_t j = i + 1; j < rv->n; j++)
			if (rv->v[j].lo > r->lo) {
				next = rv->v[j].lo;
				break;
			}
		if (r->size)
			hi = r->lo + r->size;
		else
			hi = next != UINT64_MAX ?
				     next :
				     (text_end > r->lo ? text_end : r->lo + 1);
		if (hi > next)
			hi = next;
		if (hi <= r->lo)
			continue;
		name = r->prio == PRIO_LITERAL ? strdup(r->name) :
						 sym_display_name(r->name, o);
		if (!name)
			goto nomem;
		f = intern(st, &nt, name);
		st->syms[n].lo = r->lo;
		st->syms[n].hi = hi;
		st->syms[n].func = (uint32_t)f;
		n++;
	}
	st->nsyms = n;
	free(nt.slot);
	return 0;
nomem:
	free(nt.slot);
	return -1;
}

static int
load(struct symtab *st, Elf *e, const char *path,
     const struct symtab_opts *opts, char *err, size_t errlen)
{
	static const struct symtab_opts none;
	const struct symtab_opts *o = opts ? opts : &none;
	struct rawvec symtab = { 0 }, dynsym = { 0 }, plt = { 0 }, dbg = { 0 },
		      fdes = { 0 };
	struct rawvec *use;
	struct elfinfo info;
	int r = -1;

	memset(st, 0, sizeof(*st));
	if (sym_read_elf(e, &info, &symtab, &dynsym, &plt, err, errlen))
		goto out;
	memcpy(st->build_id, info.build_id, sizeof(st->build_id));
	st->build_id_len = info.build_id_len;
	if (symtab.n) {
		use = &symtab;
		strcpy(st->source, ".symtab");
	} else if (path && sym_debug_find(st, path, &info, o, &dbg)) {
		use = &dbg;
		strcpy(st->source, "debug file");
	} else if (path && sym_debuginfod(st, &info, &dbg, o->fetch)) {
		use = &dbg;
		strcpy(st->source, "debuginfod");
	} else {
		/* stripped: the exported functions, if any, and the rest
		 * from the unwind tables below */
		use = &dynsym;
		strcpy(st->source, dynsym.n ? ".dynsym" : "no symbols");
	}
	for (size_t i = 0; i < plt.n; i++)
		if (sym_raw_push(use, plt.v[i].lo, plt.v[i].size, plt.v[i].name,
				 0))
			goto nomem;
	if (use == &dynsym && sym_add_fdes(st, e, path, &info, o, use, &fdes))
		goto nomem;
	if (build(st, use, info.text_end, o))
		goto nomem;
	r = 0;
	goto out;
nomem:
	sym_fail(err, errlen, "out of memory");
out:
	sym_raw_free(&symtab);
	sym_raw_free(&dynsym);
	sym_raw_free(&plt);
	sym_raw_free(&dbg);
	sym_raw_free(&fdes);
	if (r)
		symtab_release(st);
	return r;
}

int
symtab_load(struct symtab *st, const char *path, const struct symtab_opts *opts,
	    char *err, size_t errlen)
{
	int fd, r;
	Elf *e;

	elf_version(EV_CURRENT);
	memset(st, 0, sizeof(*st));
	if (!(e = sym_open_elf(path, &fd, err, errlen)))
		return -1;
	r = load(st, e, path, opts, err, errlen);
	elf_end(e);
	close(fd);
	return r;
}

int
symtab_load_mem(struct symtab *st, const void *buf, size_t len,
		const struct symtab_opts *opts, char *err, size_t errlen)
{
	Elf *e;
	int r;

	elf_version(EV_CURRENT);
	memset(st, 0, sizeof(*st));
	if (!(e = elf_memory((char *)buf, len)))
		return sym_fail(err, errlen, "cannot read as ELF: %s",
				elf_errmsg(-1));
	r = load(st, e, NULL, opts, err, errlen);
	elf_end(e);
	return r;
}

size_t
symtab_first_after(const struct symtab *st, uint64_t addr)
{
	size_t lo = 0, hi = st->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->syms[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

long
symtab_find(const struct symtab *st, uint64_t addr)
{
	size_t i = symtab_first_after(st, addr);

	return i < st->nsyms && st->syms[i].lo <= addr ? (long)i : -1;
}

void
symtab_release(struct symtab *st)
{
	for (size_t i = 0; i < st->nfuncs; i++)
		free(st->funcs[i]);
	free(st->funcs);
	free(st->syms);
	free(st->debug_path);
	free(st->func_obj);
	for (size_t i = 0; i < st->nobjs; i++)
		free(st->objnames[i]);
	free(st->objnames);
	memset(st, 0, sizeof(*st));
}
