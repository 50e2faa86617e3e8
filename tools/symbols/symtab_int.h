/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the files of the symbol tables share, and nothing outside them sees:
 * the symbols as read from a file (struct raw) and the calls between the
 * files. Included by tools/symbols/symtab*.c only; symtab.h is the interface.
 *
 * symtab_elf.c    reads an ELF file: its symbols, PLT stubs, notes, links
 * symtab_names.c  the names shown: versions off, pieces folded, C++ shortened
 * symtab_fde.c    functions from the unwind tables for stripped code
 * symtab_debug.c  separate debug files: build-id, .gnu_debuglink, debuginfod
 * symtab.c        the table: loading, extents, lookup
 * symtab_merge.c  a whole process's objects in one table
 */
#ifndef PC_SYMTAB_INT_H
#define PC_SYMTAB_INT_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/symtab.h"

/* A symbol as read, before duplicates are dropped and extents settled. */
struct raw {
	uint64_t lo, size;
	char *name;		/* owned */
	int prio;               /* which of several names at one address wins;
				 * PRIO_LITERAL: a made-up name, shown as it is */
};

#define PRIO_LITERAL	(-1)

struct rawvec {
	struct raw *v;
	size_t n, cap;
};

/* What one ELF file offers. */
struct elfinfo {
	int machine;
	int has_symtab;
	uint8_t build_id[20];
	size_t build_id_len;
	char debuglink[256];
	uint64_t text_end;	/* end of the last executable section */
	uint64_t base; /* lowest PT_LOAD address: offsets count from it */
};

/* symtab_elf.c */

/* Format a one-line reason into err; returns -1. Not AS-safe. */
int sym_fail(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Append a copy of name; 0, or -1 when out of memory. Not AS-safe. */
int sym_raw_push(struct rawvec *rv, uint64_t lo, uint64_t size,
		 const char *name, int prio);
/* Free rv's names and array and empty it. Not AS-safe. */
void sym_raw_free(struct rawvec *rv);
/* qsort order of struct raw: by address, the name to show first. AS-safe. */
int sym_raw_cmp(const void *a, const void *b);
/* The section called want (its header in *out), or NULL. Not AS-safe. */
Elf_Scn *sym_section(Elf *e, const char *want, GElf_Shdr *out);
/* libelf's view of the regular file at path (its descriptor in *fdp), or
 * NULL with a reason in err. Not AS-safe. */
Elf *sym_open_elf(const char *path, int *fdp, char *err, size_t errlen);
/* Everything one ELF image offers: notes, debuglink, and the symbols of
 * .symtab, .dynsym and the PLT into those vectors that are not NULL. 0, or
 * -1 with a reason in err. Not AS-safe. */
int sym_read_elf(Elf *e, struct elfinfo *info, struct rawvec *symtab,
		 struct rawvec *dynsym, struct rawvec *plt, char *err,
		 size_t errlen);

/* symtab_names.c */

/* The name to show for the symbol name under o; malloc'ed, or NULL when
 * out of memory. Not AS-safe. */
char *sym_display_name(const char *name, const struct symtab_opts *o);

/* symtab_fde.c */

/* Add the functions of a stripped object's unwind tables to use (its
 * exported symbols), through fdes; says so in st->source. 0, or -1 when
 * out of memory. Not AS-safe. */
int sym_add_fdes(struct symtab *st, Elf *e, const char *path,
		 const struct elfinfo *info, const struct symtab_opts *o,
		 struct rawvec *use, struct rawvec *fdes);

/* symtab_debug.c */

/* The symbols of exe's separate debug file on this machine (by build-id
 * under o->debug_root, then .gnu_debuglink) into rv, its path in
 * st->debug_path: 1, or 0 for none. Not AS-safe. */
int sym_debug_find(struct symtab *st, const char *exe,
		   const struct elfinfo *info, const struct symtab_opts *o,
		   struct rawvec *rv);
/* The same from the debuginfod servers of DEBUGINFOD_URLS through f (NULL:
 * none). 1, or 0 for none. Not AS-safe. */
int sym_debuginfod(struct symtab *st, const struct elfinfo *info,
		   struct rawvec *rv, struct symtab_fetch *f);

#endif
