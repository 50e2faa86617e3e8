/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Source lines of addresses in one object's DWARF (dwlines.c, libdw).
 * Not AS-safe; one thread.
 */
#ifndef PC_DWLINES_H
#define PC_DWLINES_H

#include <stddef.h>
#include <stdint.h>

struct dwlines;

/* A line: its strings live as long as the struct dwlines. */
struct dwline {
	const char *file;	/* a path, as the unit names it */
	int line;
	const char *inlined;	/* the function inlined there, or NULL */
	/* inlined: where the outermost function inlined there is called
	 * from, in the function that holds it all; NULL and 0 if not known */
	const char *call_file;
	int call_line;
	/* the lines where the function that holds it all (its subprogram)
	 * and the function inlined there are declared (DW_AT_decl_line); 0
	 * where not known */
	int func_line;
	int inlined_line;
};

/* The DWARF of the ELF file at path (or image buf[0..len), which must
 * outlive it), or NULL where there is none that libdw can read; a
 * .debug_info that is there but corrupt is said in err (else ""). */
struct dwlines *dwlines_open(const char *path, char *err, size_t errlen);
struct dwlines *dwlines_open_mem(const void *buf, size_t len);
/* The same, through *cache (allocated on first use; NULL: dwlines_open):
 * a file (by device and inode) is opened once, its sections inflated
 * once, and each call gets a handle of its own on it, with its own
 * error. Strings of a handle live until dwcache_free. */
struct dwcache;
struct dwlines *dwlines_open_in(struct dwcache **cache, const char *path,
				char *err, size_t errlen);
void dwcache_free(struct dwcache *c);
/* The first corrupt part of m's DWARF that a lookup met (a line table
 * libdw cannot read), or NULL. Such a part has no lines. */
const char *dwlines_error(const struct dwlines *m);
void dwlines_close(struct dwlines *m);

/* The line in effect at link-time address addr: 1 with *out set, 0 where
 * no line covers it. *end (if not NULL) is where the row found, or the
 * next row, ends: 0 when not known. */
int dwlines_at(struct dwlines *m, uint64_t addr, struct dwline *out,
	       uint64_t *end);

/* The units whose line tables were read so far. */
size_t dwlines_units(const struct dwlines *m);

#endif
