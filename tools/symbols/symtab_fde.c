/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Functions for stripped code from its unwind tables: one .eh_frame FDE,
 * one function, its extent from the FDE's header (read with elfutils'
 * libdw), named OBJECT+0xOFFSET. Called by symtab.c when an object has no
 * .symtab and no debug file.
 */
#include <elfutils/libdw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/symtab_int.h"

/*
 * One DW_EH_PE-encoded value of .eh_frame at *p, which lies at address at;
 * datarel counts from hdr. Only the encodings that compilers write there
 * (4- and 8-byte, absolute, pc- or data-relative) are read; 0, or -1 for
 * anything else or a value past end.
 */
static int
eh_value(const unsigned char **p, const unsigned char *end, unsigned enc,
	 uint64_t at, uint64_t hdr, uint64_t *out)
{
	uint64_t v = 0, base;
	size_t len;

	switch (enc & 0x0f) {
	case 0x03: case 0x0b: len = 4; break;	/* udata4, sdata4 */
	case 0x00:
	case 0x04:
	case 0x0c:
		len = 8;
		break; /* absptr, udata8, sdata8 */
	default: return -1;
	}
	switch (enc & 0x70) {
	case 0x00: base = 0; break;		/* absptr */
	case 0x10: base = at; break;		/* pcrel */
	case 0x30: base = hdr; break;		/* datarel */
	default: return -1;
	}
	if ((size_t)(end - *p) < len)
		return -1;
	for (size_t i = 0; i < len; i++)
		v |= (uint64_t)(*p)[i] << (8 * i);
	if ((enc & 0x0f) == 0x0b)
		v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
	*p += len;
	*out = base + v;
	return 0;
}

/*
 * The symbol in sorted rv that starts last at or before addr: of aliases
 * at one address, the first in sym_raw_cmp's order (the name shown), and in
 * *size the largest extent any of them gives.
 */
static const struct raw *
raw_before(const struct rawvec *rv, uint64_t addr, uint64_t *size)
{
	size_t lo = 0, hi = rv->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rv->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	*size = 0;
	while (lo > 1 && rv->v[lo - 2].lo == rv->v[lo - 1].lo)
		lo--;
	for (size_t i = lo - 1; i < rv->n && rv->v[i].lo == rv->v[lo - 1].lo;
	     i++)
		if (rv->v[i].size > *size)
			*size = rv->v[i].size;
	return &rv->v[lo - 1];
}

struct fde_range {
	uint64_t lo, hi;
};

static int
cmp_range(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi > y->hi ? -1 : x->hi < y->hi;	/* the widest first */
}

/* The size of a pointer of encoding enc in augmentation data, or 0 for
 * one that cannot be skipped. */
static size_t
enc_size(unsigned enc)
{
	switch (enc & 0x0f) {
	case 0x00: return 8;			/* absptr */
	case 0x02: case 0x0a: return 2;
	case 0x03: case 0x0b: return 4;
	case 0x04: case 0x0c: return 8;
	default: return 0;
	}
}

/* How a CIE's FDEs encode their addresses (its 'R'), or -1 where its
 * augmentation is not understood. */
static int
fde_encoding(const Dwarf_CIE *cie)
{
	const char *a = cie->augmentation;
	const uint8_t *d = cie->augmentation_data;
	size_t k = 0, n = cie->augmentation_data_size;
	int enc = 0x00;		/* absptr when there is no 'R' */

	if (!a || !a[0])
		return enc;
	if (a[0] != 'z' || (n && !d))
		return -1;
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			if (k >= n)
				return -1;
			enc = d[k++];
			break;
		case 'L':
			k++;
			break;
		case 'P': {
			size_t sz;

			if (k >= n || !(sz = enc_size(d[k])))
				return -1;
			k += 1 + sz;
			break;
		}
		case 'S': case 'B':
			break;
		default:
			return -1;
		}
		if (k > n)
			return -1;
	}
	return enc;
}

/* The CIEs met so far, in section order, each with the pointer encoding
 * of the FDEs that name it (fde_encoding's, or -1). */
struct cies {
	struct { Dwarf_Off off; int enc; } *v;
	size_t n, cap;
};

/* The FDEs' ranges, as they come. */
struct ranges {
	struct fde_range *v;
	size_t n, cap;
};

/* v, an array of *cap elements of size of which n are used, with room for
 * one more: v itself, a larger copy (its size in *cap, doubled from first),
 * or NULL when out of memory (v still held). */
static void *
room(void *v, size_t n, size_t *cap, size_t first, size_t size)
{
	size_t want = *cap ? 2 * *cap : first;
	void *g;

	if (n < *cap)
		return v;
	if ((g = realloc(v, want * size)))
		*cap = want;
	return g;
}

static int
cies_add(struct cies *c, Dwarf_Off off, const Dwarf_CIE *cie)
{
	void *g = room(c->v, c->n, &c->cap, 16, sizeof(*c->v));

	if (!g)
		return -1;
	c->v = g;
	c->v[c->n].off = off;
	c->v[c->n++].enc = fde_encoding(cie);
	return 0;
}

/* The encoding of the CIE at off, or -1 for none understood. An FDE's
 * CIE comes before it, so the CIEs met are in order: search them. */
static int
cies_enc(const struct cies *c, Dwarf_Off off)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->v[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->n && c->v[lo].off == off ? c->v[lo].enc : -1;
}

static int
ranges_add(struct ranges *r, struct fde_range x)
{
	void *g = room(r->v, r->n, &r->cap, 256, sizeof(*r->v));

	if (!g)
		return -1;
	r->v = g;
	r->v[r->n++] = x;
	return 0;
}

/* The range an FDE's header gives, its pointers in encoding enc (-1: not
 * understood), the header at address at in the section at hdr. 0, or -1
 * where it cannot be read or covers nothing. */
static int
fde_range_of(const Dwarf_FDE *fde, int enc, uint64_t at, uint64_t hdr,
	     struct fde_range *out)
{
	const unsigned char *q = fde->start;
	uint64_t loc, len;

	if (enc < 0 || eh_value(&q, fde->end, (unsigned)enc, at, hdr, &loc) ||
	    eh_value(&q, fde->end, (unsigned)enc & 0x0f, 0, 0, &len) ||
	    !len || loc + len <= loc)
		return -1;
	*out = (struct fde_range){ loc, loc + len };
	return 0;
}

/*
 * Every FDE's [initial_location, +address_range) in .eh_frame, sorted; their
 * number in *np. Only the entries' headers are read (libdw's
 * dwarf_next_cfi): executing their instructions, as dwarf_cfi_addrframe
 * does, allocates by the register numbers they name, which a hostile file
 * sets at will (100 million: 1.6 GB, as fuzz_symtab found). NULL with *np
 * 0 where there is nothing to read, or when out of memory (*np 1).
 */
static struct fde_range *
eh_fdes(Elf *e, size_t *np)
{
	GElf_Shdr sh;
	Elf_Scn *scn = sym_section(e, ".eh_frame", &sh);
	const unsigned char *ident =
		(const unsigned char *)elf_getident(e, NULL);
	struct cies cies = { 0 };
	struct ranges out = { 0 };
	Dwarf_Off off = 0, next;
	Elf_Data *d;
	int nomem = 0;

	*np = 0;
	/* lld types it SHT_X86_64_UNWIND */
	if (!scn || !ident ||
	    (sh.sh_type != SHT_PROGBITS && sh.sh_type != SHT_X86_64_UNWIND) ||
	    !(d = elf_getdata(scn, NULL)) || !d->d_buf || !d->d_size)
		return NULL;
	while (!nomem && off < d->d_size) {
		Dwarf_CFI_Entry en;
		int r = dwarf_next_cfi(ident, d, 1, off, &next, &en);
		struct fde_range x;

		if (r == 1 || (r < 0 && (next == (Dwarf_Off)-1 || next <= off)))
			break;
		if (r == 0 && dwarf_cfi_cie_p(&en))
			nomem = cies_add(&cies, off, &en.cie);
		else if (r == 0 &&
			 fde_range_of(
				 &en.fde, cies_enc(&cies, en.fde.CIE_pointer),
				 sh.sh_addr + (uint64_t)(en.fde.start -
							 (const unsigned char *)
								 d->d_buf),
				 sh.sh_addr, &x) == 0)
			nomem = ranges_add(&out, x);
		off = next;
	}
	free(cies.v);
	if (nomem || !out.n) {
		free(out.v);
		*np = (size_t)nomem;
		return NULL;
	}
	qsort(out.v, out.n, sizeof(*out.v), cmp_range);
	*np = out.n;
	return out.v;
}

/*
 * Functions for the code that the symbols in rv (sorted) do not cover,
 * from the unwind tables: each FDE is one function, over the range its
 * header gives (what lies between two is padding), cut at the next one's
 * start. Each is named OBJ+0xOFFSET, with the exported symbol before it as
 * a hint. Pushed onto out; 0, or -1 when out of memory (tables that cannot
 * be read give no functions).
 */
static int
read_fdes(Elf *e, const char *obj, uint64_t base, uint64_t text_end,
	  const struct rawvec *rv, const struct symtab_opts *o,
	  struct rawvec *out)
{
	size_t n;
	struct fde_range *fdes = eh_fdes(e, &n);
	int r = 0;

	if (!fdes)
		return n ? -1 : 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t start = fdes[i].lo, hi = fdes[i].hi, size = 0;
		const struct raw *near = raw_before(rv, start, &size);
		char name[512];

		if (i > 0 && fdes[i - 1].lo == start)
			continue; /* listed twice: the widest came first */
		if (near && (near->lo == start || start - near->lo < size))
			continue;	/* a symbol has it */
		/* never into the next function, nor past the code */
		if (i + 1 < n && fdes[i + 1].lo < hi)
			hi = fdes[i + 1].lo;
		if (text_end && hi > text_end)
			hi = text_end;
		if (hi <= start || hi - start > (UINT64_C(1) << 32))
			continue;
		if (near && near->prio > 0) {
			char *hint = sym_display_name(near->name, o);

			if (!hint) {
				r = -1;
				break;
			}
			snprintf(name, sizeof(name),
				 "%s+0x%llx (after '%.200s')", obj,
				 (unsigned long long)(start - base), hint);
			free(hint);
		} else {
			snprintf(name, sizeof(name), "%s+0x%llx", obj,
				 (unsigned long long)(start - base));
		}
		if ((r = sym_raw_push(out, start, hi - start, name,
				      PRIO_LITERAL)))
			break;
	}
	free(fdes);
	return r;
}


/*
 * A stripped object's functions from its unwind tables, added to use (its
 * exported symbols, if any), through fdes; st->source says so: ".dynsym
 * and unwind tables", or "unwind tables" for an object that exports none
 * (before, the exported count was taken after the unwind tables' functions
 * were added, and the second label never showed). -1 when memory runs out.
 */
int
sym_add_fdes(struct symtab *st, Elf *e, const char *path,
	     const struct elfinfo *info, const struct symtab_opts *o,
	     struct rawvec *use, struct rawvec *fdes)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	const char *obj = slash ? slash + 1 : path ? path : "[memory]";
	size_t k = strlen(obj);
	int exported = !strcmp(st->source, ".dynsym");	/* else "no symbols" */

	/* libpc's copy of the vDSO, PROFILE+vdso.so, is the vDSO */
	if (k > 8 && !strcmp(obj + k - 8, "+vdso.so"))
		obj = "[vdso]";
	if (use->n)
		qsort(use->v, use->n, sizeof(*use->v), sym_raw_cmp);
	if (read_fdes(e, obj, info->base, info->text_end, use, o, fdes))
		return -1;
	for (size_t i = 0; i < fdes->n; i++)
		if (sym_raw_push(use, fdes->v[i].lo, fdes->v[i].size,
				 fdes->v[i].name, PRIO_LITERAL))
			return -1;
	if (fdes->n)
		strcpy(st->source, exported ? ".dynsym and unwind tables" :
		       "unwind tables");
	return 0;
}
