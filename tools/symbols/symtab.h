/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Function symbols of an executable or shared object, read with libelf by
 * tools/symbols/symtab*.c (symtab_int.h says which file does what): sorted,
 * with extents, compiler-split pieces folded into their function, PLT stubs
 * named. Used by the commands, the models and the inputs.
 */
#ifndef PC_SYMTAB_H
#define PC_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct sym {
	uint64_t lo, hi;	/* link-time address range [lo, hi) */
	uint32_t func;		/* index into symtab->funcs */
};

struct symtab {
	struct sym *syms;	/* sorted by lo, disjoint */
	size_t nsyms;
	char **funcs;		/* display names: demangled, pieces folded */
	size_t nfuncs;
	uint8_t build_id[20];
	size_t build_id_len;
	char source[64];	/* ".symtab", "debug file", "debuginfod", ".dynsym",
				 * "unwind tables"... */
	char *debug_path;	/* separate debug file used, or NULL */

	/* a whole process (PC_SCOPE=all): object k's symbols are at
	 * k << 48 | address; NULL and 0 for one executable */
	uint32_t *func_obj;	/* nfuncs object indexes */
	char **objnames;	/* nobjs display names: "libz.so.1" */
	size_t nobjs;
};

/* Options for symtab_load. */
struct symtab_opts {
	int keep_pieces;	/* show foo.cold apart from foo */
	int no_demangle;
	const char *debug_root;	/* "/usr/lib/debug" unless set */
	int full_names;		/* C++: keep template arguments, parameters */
	struct symtab_fetch *fetch;	/* debuginfod, or NULL for none */
};

/*
 * A command's debuginfod session (symtab_fetch_*): libdebuginfod's client,
 * opened on the first debug file asked for when DEBUGINFOD_URLS is set,
 * and what it could not reach. One a command, shared by every load.
 */
struct symtab_fetch {
	void *client;		/* debuginfod_client, or NULL */
	int down;		/* a server could not be reached: ask no more */
	char note[512];		/* for symtab_fetch_note */
	int noted;		/* symtab_fetch_note has told it */
	/* the DWARF files that line lookups opened (dwlines_open_in):
	 * each read and inflated once a command, not once a process */
	struct dwcache *dwarf;
};

/*
 * Load the symbols of the ELF file at path. On failure returns -1 with a
 * one-line reason in err (without the file name). Not AS-safe.
 */
int symtab_load(struct symtab *st, const char *path,
		const struct symtab_opts *opts, char *err, size_t errlen);

/* The same from an ELF image in memory (no debug-file search); for fuzzing. */
int symtab_load_mem(struct symtab *st, const void *buf, size_t len,
		    const struct symtab_opts *opts, char *err, size_t errlen);

/*
 * A demangled C++ name shortened as pprof shows them: template arguments,
 * parameter lists, qualifiers after them, the return type and " [clone
 * .cold]" suffixes (kept when keep_clones) left out, but for the clones that
 * are functions of their own (" [clone ._omp_fn.0]"), always kept:
 * "std::vector<int>::push_back(int const&)" is "std::vector::push_back".
 * A name that cannot be shortened safely comes back whole. malloc'd; NULL
 * when out of memory.
 */
char *symtab_short_name(const char *name, int keep_clones);

/*
 * A line to tell the user about f's loads so far (a debuginfod server that
 * could not be reached), once; NULL when there is none (or no f).
 */
const char *symtab_fetch_note(struct symtab_fetch *f);
/* Close f's client and its DWARF files. */
void symtab_fetch_end(struct symtab_fetch *f);

/* Index of the symbol containing addr, or -1. */
long symtab_find(const struct symtab *st, uint64_t addr);

/* Index of the first symbol whose hi is above addr (nsyms if none). */
size_t symtab_first_after(const struct symtab *st, uint64_t addr);

void symtab_release(struct symtab *st);

/* Start a whole-process table: st (the executable, object 0) is object
 * name. 0 or -1 (out of memory). */
int symtab_objects_begin(struct symtab *st, const char *name);
/* Add an object named name (index st->nobjs, returned in *obj) with the
 * symbols of src moved in at obj << shift; src may be NULL for an object
 * with no symbols. The code no symbol covers, up to the next object, is
 * the function gap ("[libz.so.1]"). src is released. 0 or -1. */
int symtab_objects_add(struct symtab *st, struct symtab *src, const char *name,
		       const char *gap, int shift, uint32_t *obj);

/*
 * Whether the ELF file at path has a dynamic linker (PT_INTERP), so that
 * LD_PRELOAD can work: 1 yes, 0 no (static or static-pie), -1 not ELF.
 */
int elf_probe_dynamic(const char *path);

/* The DT_NEEDED names of the ELF file at path, in its order, each ended by
 * a NUL, the list by an empty name ("libasan.so.8\0libc.so.6\0\0");
 * malloc'ed, or NULL for none (or not an ELF file with section headers). */
char *elf_needed(const char *path);

/* The separate debug file of the ELF file at path, found as its symbols
 * would be (by build-id under o->debug_root, then .gnu_debuglink, then
 * from o->fetch's debuginfod servers); malloc'ed, or NULL for none. */
char *symtab_debug_file_of(const char *path, const struct symtab_opts *o);

/* The GNU build-id of the ELF file at path: its length (up to max bytes
 * into id), 0 when it has none, -1 when it is not an ELF file one can
 * read. */
int elf_build_id(const char *path, uint8_t *id, size_t max);

/* FNV-1a of a name, for the tables that intern names (here and the
 * export's). */
uint64_t symtab_hash_name(const char *s);

/* A function's name for the call graph: "name (object)" outside the
 * executable (symtab_names.c). buf is used when needed. */
const char *func_label(const struct symtab *st, uint32_t func, char *buf,
		       size_t size);

#endif
