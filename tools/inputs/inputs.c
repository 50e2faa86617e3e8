/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * From the command line to what a command reads: the report options that
 * report and run share, and the inputs (struct pc_inputs), resolved once:
 * the executable's symbols, the profiles its operands stand for and their
 * manifests (runfiles.c), then the profiles read and the manifests'
 * objects added (whole.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "commands/options.h"
#include "inputs/runfiles.h"

void
report_usage(FILE *out, const char *text)
{
	fputs(text, out);
}

/* --format's word, in enum format's order. */
static enum format
format_named(const char *arg)
{
	static const char *const words[] = {
		"text", "json", "csv", "folded", "pprof", "speedscope", "callgrind", "firefox", "gmon"
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(arg, words[i]))
			return (enum format)i;
	pc_fatal("--format '%s': not text, json, csv, folded, pprof, speedscope, callgrind, "
		 "firefox or gmon", arg);
}

enum pc_clock
clock_named(const char *arg)
{
	if (!strcmp(arg, "wall"))
		return PC_CLOCK_WALL;
	if (!strcmp(arg, "cpu"))
		return PC_CLOCK_CPU;
	if (!strcmp(arg, "off"))
		return PC_CLOCK_OFF;
	static const char *const alloc[] = { "alloc", "alloc-bytes", "inuse", "inuse-bytes" };

	for (int i = 0; i < 4; i++)
		if (!strcmp(arg, alloc[i]))
			return (enum pc_clock)(PC_CLOCK_ALLOC + i);
	pc_fatal("--clock '%s': not wall, cpu or off (or, of allocations, alloc, "
		 "alloc-bytes, inuse or inuse-bytes)", arg);
}

int
report_option(int c, const char *arg, struct report_opts *r,
	      struct symtab_opts *s)
{
	char *end;

	switch (c) {
	case OPT_FORMAT:
		r->format = format_named(arg);
		return 1;
	case OPT_CALLGRAPH:
		r->callgraph = 1;
		return 1;
	case OPT_BY_OBJECT:
		r->by_object = 1;
		return 1;
	case OPT_LINES:
		r->lines = 1;
		return 1;
	case OPT_PROCESS:
		r->process = arg;
		return 1;
	case OPT_PROCESSES:
		r->all_processes = 1;
		return 1;
	case OPT_BY_THREAD:
		r->by_thread = 1;
		return 1;
	case OPT_THREAD:
		r->thread = arg;
		return 1;
	case OPT_STACKS:
		r->stacks = arg;
		return 1;
	case OPT_CLOCK:
	case OPT_ALLOC_METRIC:
		r->clock = clock_named(arg);
		if (c == OPT_ALLOC_METRIC && !CLOCK_IS_ALLOC(r->clock))
			pc_fatal("--metric '%s': not alloc, alloc-bytes, inuse or inuse-bytes", arg);
		return 1;
	case OPT_ALLOC:
		r->alloc = 1;
		return 1;
	case OPT_TOP:
		r->top = strtol(arg, &end, 10);
		if (*end || end == arg || r->top < 0)
			pc_fatal("--top '%s': not a count", arg);
		return 1;
	}
	return symtab_option(c, arg, s);
}

int
symtab_option(int c, const char *arg, struct symtab_opts *s)
{
	switch (c) {
	case OPT_KEEP_PIECES:
		s->keep_pieces = 1;
		return 1;
	case OPT_NO_DEMANGLE:
		s->no_demangle = 1;
		return 1;
	case OPT_FULL_NAMES:
		s->full_names = 1;
		return 1;
	case OPT_DEBUG_DIR:
		s->debug_root = arg;
		return 1;
	}
	return 0;
}

/* Run r of in: files[0..n) as given, or the profiles they stand for. */
static void
open_run(struct pc_inputs *in, struct pc_run *run, char **files, int n, int flags)
{
	runfiles_open(run, &in->st, files, n, flags & INPUTS_AS_GIVEN);
	for (int i = 0; i < run->nfiles; i++)
		in->whole |= run->manifest[i];
}

void
inputs_open(struct pc_inputs *in, const char *exe, char **operands, int n,
	    const struct symtab_opts *so, int flags)
{
	static char gmon_out[] = "gmon.out";
	char *deflt[] = { gmon_out };
	int each = flags & INPUTS_EACH_RUN;

	memset(in, 0, sizeof(*in));
	if (n == 0) {
		operands = deflt;
		n = 1;
	}
	in->exe = exe;
	/* an executable with no symbols is no error where its profile
	 * covers the whole process: the rest of it can still be named */
	symbols_load_whole(&in->st, exe, so, runfiles_is_whole(operands[0]));
	in->nruns = each ? n : 1;
	in->runs = pc_calloc((size_t)in->nruns, sizeof(*in->runs));
	for (int r = 0; r < in->nruns; r++)
		open_run(in, &in->runs[r], each ? operands + r : operands, each ? 1 : n, flags);
	in->objects = whole_new();
}

void
inputs_load(struct pc_inputs *in, const struct symtab_opts *so, int flags)
{
	static const uint8_t zero[GMON_BUILDID_SIZE];

	for (int r = 0; r < in->nruns; r++) {
		struct pc_run *run = &in->runs[r];
		uint8_t id[GMON_BUILDID_SIZE];

		profiles_load(&run->prof, run->files, run->nfiles);
		if (!(flags & INPUTS_STRICT))
			check_build_id(&run->prof, &in->st, in->exe);
		/* a gate must not compare names read with the wrong symbols */
		else if (gmon_profile_is_libpc(&run->prof, id) && memcmp(id, zero, sizeof(id)) &&
			 in->st.build_id_len >= GMON_BUILDID_SIZE &&
			 memcmp(id, in->st.build_id, sizeof(id)))
			pc_fatal("'%s': not a profile of '%s' (another build-id)",
				 run->files[0], in->exe);
		whole_load(in->objects, &in->st, run, in->exe, so);
	}
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
