/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A whole process in one table (PC_SCOPE=all): each object's symbols moved
 * in at its own slot of the address space, the code no symbol covers named
 * after the object. Called by tools/inputs/whole.c through symtab.h.
 */
#include <stdlib.h>
#include <string.h>

#include "symbols/symtab_int.h"

static int
push_name(struct symtab *st, const char *name)
{
	char **v = realloc(st->objnames, (st->nobjs + 1) * sizeof(*v));

	if (!v)
		return -1;
	st->objnames = v;
	if (!(v[st->nobjs] = strdup(name)))
		return -1;
	st->nobjs++;
	return 0;
}

int
symtab_objects_begin(struct symtab *st, const char *name)
{
	if (st->nobjs)
		return 0;
	st->func_obj =
		calloc(st->nfuncs ? st->nfuncs : 1, sizeof(*st->func_obj));
	if (!st->func_obj)
		return -1;
	return push_name(st, name);
}

int
symtab_objects_add(struct symtab *st, struct symtab *src, const char *name,
		   const char *gap_name, int shift, uint32_t *objp)
{
	uint32_t obj = (uint32_t)st->nobjs;
	uint64_t base = (uint64_t)obj << shift,
		 end = base + (UINT64_C(1) << shift);
	size_t ns = src ? src->nsyms : 0, nf = src ? src->nfuncs : 0;
	size_t room = st->nsyms + 2 * ns + 1;
	struct sym *syms;
	char **funcs;
	uint32_t *fo, gap = 0;
	uint64_t at = base;

	if (shift < 1 || shift > 63 ||
	    (uint64_t)obj >= UINT64_C(1) << (64 - shift))
		return -1;	/* no room for another object */
	if (push_name(st, name))
		return -1;
	syms = realloc(st->syms, room * sizeof(*syms));
	if (syms)
		st->syms = syms;
	funcs = realloc(st->funcs, (st->nfuncs + nf + 1) * sizeof(*funcs));
	if (funcs)
		st->funcs = funcs;
	fo = realloc(st->func_obj, (st->nfuncs + nf + 1) * sizeof(*fo));
	if (fo)
		st->func_obj = fo;
	if (!syms || !funcs || !fo)
		return -1;
	gap = (uint32_t)st->nfuncs;
	if (!(st->funcs[st->nfuncs] = strdup(gap_name)))
		return -1;
	st->func_obj[st->nfuncs++] = obj;
	for (size_t i = 0; i < ns; i++) {
		uint64_t lo = base + src->syms[i].lo,
			 hi = base + src->syms[i].hi;

		if (src->syms[i].hi > end - base || lo < at)
			continue; /* past the object's room, or overlapping */
		if (lo > at)
			st->syms[st->nsyms++] = (struct sym){ at, lo, gap };
		st->syms[st->nsyms++] = (struct sym){ lo, hi,
			(uint32_t)st->nfuncs + src->syms[i].func };
		at = hi;
	}
	if (at < end)
		st->syms[st->nsyms++] = (struct sym){ at, end, gap };
	for (size_t i = 0; i < nf; i++) {
		st->funcs[st->nfuncs + i] = src->funcs[i];
		st->func_obj[st->nfuncs + i] = obj;
		src->funcs[i] = NULL;
	}
	st->nfuncs += nf;
	if (src)
		symtab_release(src);
	if (objp)
		*objp = obj;
	return 0;
}
