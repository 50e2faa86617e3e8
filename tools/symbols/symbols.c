/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Symbols for the subcommands: an executable's table loaded or a message
 * naming it, the loader's notes (a debuginfod server not reached), and the
 * check that a profile's build-id is the executable's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"

void
symbols_notes(const struct symtab_opts *o)
{
	const char *note = symtab_fetch_note(o ? o->fetch : NULL);

	if (note)
		pc_warn("note: %s", note);
}

int
symbols_load_whole(struct symtab *st, const char *exe,
		   const struct symtab_opts *o, int whole)
{
	char err[512];

	if (symtab_load(st, exe, o, err, sizeof(err)) == 0) {
		symbols_notes(o);
		return 0;
	}
	if (!whole)
		return pc_error("'%s': %s", exe, err);
	/* the whole process was profiled: the rest of it can still be shown */
	pc_warn("warning: '%s': %s", exe, err);
	memset(st, 0, sizeof(*st));
	st->syms = pc_calloc(1, sizeof(*st->syms));
	st->funcs = pc_calloc(1, sizeof(*st->funcs));
	return 0;
}

void
check_build_id(const struct gmon_profile *p, const struct symtab *st,
	       const char *exe)
{
	static const uint8_t zero[GMON_BUILDID_SIZE];
	uint8_t id[GMON_BUILDID_SIZE];
	char a[32], b[32];

	if (!gmon_profile_is_libpc(p, id) || !memcmp(id, zero, sizeof(id)))
		return;
	if (st->build_id_len < GMON_BUILDID_SIZE)
		return;
	if (memcmp(id, st->build_id, GMON_BUILDID_SIZE))
		pc_warn("warning: '%s' is not the program that was profiled "
			"(build-id %s..., the profile's is %s...); names may be wrong",
			exe, pc_hex(st->build_id, GMON_BUILDID_SIZE, a),
			pc_hex(id, sizeof(id), b));
}
