/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a command reads: the inputs (struct pc_inputs), resolved once:
 * the executable's symbols, the profiles its operands stand for and their
 * manifests (runfiles.c), then the profiles read and the manifests'
 * objects added (whole.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pcprof.h"
#include "inputs/runfiles.h"

/* Run r of in: files[0..n) as given, or the profiles they stand for; 0,
 * or -1 after one line. */
static int
open_run(struct pc_inputs *in, struct pc_run *run, char **files, int n,
	 int flags, const struct runfiles_seen *seen)
{
	if (runfiles_open_seen(run, &in->st, files, n,
			       flags & (INPUTS_AS_GIVEN | INPUTS_WHOLE), seen))
		return -1;
	for (int i = 0; i < run->nfiles; i++)
		in->whole |= run->manifest[i];
	return 0;
}

int
inputs_open(struct pc_inputs *in, const char *exe, char **operands, int n,
	    const struct symtab_opts *so, int flags)
{
	static char gmon_out[] = "gmon.out";
	char *deflt[] = { gmon_out };
	int each = flags & INPUTS_EACH_RUN;
	struct runfiles_seen seen = { 0 }, *saw = NULL;
	struct stat sb;

	memset(in, 0, sizeof(*in));
	if (n == 0) {
		operands = deflt;
		n = 1;
	}
	in->exe = exe;
	/* operands[0] looked at once, here, for what open_run would ask
	 * again: a directory, or a whole profile */
	if (!(flags & INPUTS_WHOLE)) {
		int there = !stat(operands[0], &sb);

		seen.path = operands[0];
		seen.dir = there && S_ISDIR(sb.st_mode);
		seen.whole = there && S_ISREG(sb.st_mode) &&
			     runfiles_has_manifest(operands[0]);
		saw = &seen;
	}
	/* an executable with no symbols is no error where its profile
	 * covers the whole process: the rest of it can still be named */
	if (symbols_load_whole(&in->st, exe, so,
			       (flags & INPUTS_WHOLE) || seen.whole))
		return -1;
	in->nruns = each ? n : 1;
	in->runs = pc_calloc((size_t)in->nruns, sizeof(*in->runs));
	for (int r = 0; r < in->nruns; r++)
		if (open_run(in, &in->runs[r], each ? operands + r : operands,
			     each ? 1 : n, flags, saw))
			return -1;
	in->objects = whole_new();
	return 0;
}

int
inputs_load(struct pc_inputs *in, const struct symtab_opts *so, int flags)
{
	static const uint8_t zero[GMON_BUILDID_SIZE];

	for (int r = 0; r < in->nruns; r++) {
		struct pc_run *run = &in->runs[r];
		uint8_t id[GMON_BUILDID_SIZE];

		free(run->mtimes);
		run->mtimes = pc_calloc((size_t)run->nfiles,
					sizeof(*run->mtimes));
		if (profiles_load_at(&run->prof, run->files, run->nfiles,
				     run->mtimes))
			return -1;
		if (!(flags & INPUTS_STRICT))
			check_build_id(&run->prof, &in->st, in->exe);
		/* a gate must not compare names read with the wrong symbols */
		else if (gmon_profile_is_libpc(&run->prof, id) &&
			 memcmp(id, zero, sizeof(id)) &&
			 in->st.build_id_len >= GMON_BUILDID_SIZE &&
			 memcmp(id, in->st.build_id, sizeof(id)))
			return pc_error("'%s': not a profile of '%s' (another build-id)",
					run->files[0], in->exe);
		if (whole_load(in->objects, &in->st, run, in->exe, so) < 0)
			return -1;
	}
	return 0;
}

uint64_t
inputs_addr(const struct pc_inputs *in, int file, uint64_t a)
{
	return whole_addr(in->objects, file, a);
}

void
inputs_close(struct pc_inputs *in)
{
	for (int r = 0; r < in->nruns; r++)
		runfiles_release(&in->runs[r]);
	free(in->runs);
	symtab_release(&in->st);
	whole_free(in->objects);
	memset(in, 0, sizeof(*in));
}
