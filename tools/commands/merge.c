/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof merge: sum profiles of one executable into one gmon.out that gprof
 * reads, carrying counts above 65535 in extra records (where gprof -s
 * truncates them to 16 bits). Written to a temporary file, then renamed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcprof.h"
#include "inputs/runexe.h"
#include "inputs/runfiles.h"
#include "writers/gmon_out.h"

static const char usage_merge[] =
"usage: pcprof merge -o OUT GMON...\n"
"       pcprof merge -o OUTDIR [--process PID|NAME] DIR...\n"
"\n"
"Sum gmon.out files of the same executable, sampled at the same rate, into\n"
"OUT. Counts are summed in 64 bits and written so that gprof reads them\n"
"exactly; arcs between the same two addresses are added together.\n"
"Of a run's directories (as pcprof run left them), OUTDIR gets what gprof\n"
"reads for each program: gmon.out.PROG, its processes summed (gprof PROG\n"
"OUTDIR/gmon.out.PROG), and gmon.out.PROG+OBJECT, each shared object's\n"
"samples of them (gprof OBJECT OUTDIR/gmon.out.PROG+OBJECT); --process\n"
"PID|NAME keeps those of one pid or program.\n";

/* The files of paths[0..n) summed into out/NAME. */
static void
merge_into(const char *out, const char *name, char **paths, int n,
	   const char *of)
{
	struct gmon_profile p;
	char *path;

	if (asprintf(&path, "%s/%s", out, name) < 0)
		pc_fatal("out of memory");
	if (profiles_load(&p, paths, n))
		exit(EXIT_BAD_INPUT);
	if (gmon_write_file(path, &p))
		exit(EXIT_BAD_INPUT);
	printf("%s: %d profile%s", text_name(path), n, n == 1 ? "" : "s");
	/* a program renamed NAME-2: which one it is */
	printf(of ? " of %s\n" : "\n", of ? text_name(of) : "");
	gmon_profile_release(&p);
	free(path);
}

static const char *
file_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The files of object obj (a file name) of the processes idx[0..ni) of
 * all, one program's, summed into out/gmon.out.PROG+OBJ. */
static void
merge_object(const char *out, const char *prog, const struct runexe *all,
	     const int *idx, int ni, const char *obj)
{
	char **files = NULL;
	char *name, *prog_profile;
	size_t size;
	int n = 0;

	for (int i = 0; i < ni; i++) {
		const struct gmon_objects *o = all->man[idx[i]];
		const char *profile = all->files[idx[i]];
		int dir = (int)(file_name(profile) - profile);

		for (size_t k = 1; k < o->n; k++) {
			if (!o->v[k].file || o->v[k].path[0] == '[' ||
			    strcmp(file_name(o->v[k].path), obj))
				continue;
			files = pc_realloc(files,
					   ((size_t)n + 1) * sizeof(*files));
			if (asprintf(&files[n++], "%.*s%s", dir, profile,
				     o->v[k].file) < 0)
				pc_fatal("out of memory");
		}
	}
	if (asprintf(&prog_profile, "gmon.out.%s", prog) < 0)
		pc_fatal("out of memory");
	size = strlen(prog_profile) + strlen(GMON_OBJECT_SEP) + strlen(obj) + 1;
	name = pc_realloc(NULL, size);
	gmon_object_name(name, size, prog_profile, obj);
	free(prog_profile);
	if (n)
		merge_into(out, name, files, n, NULL);
	while (n--)
		free(files[n]);
	free(files);
	free(name);
}

/* One program's processes idx[0..ni) of all: its profiles summed into
 * out/gmon.out.PROG, and each object's files of them into
 * out/gmon.out.PROG+OBJECT (the first process's objects, then any
 * other's not seen yet). */
static void
merge_program(const char *out, const char *prog, const struct runexe *all,
	      const int *idx, int ni)
{
	char **files = pc_realloc(NULL, (size_t)ni * sizeof(*files)), *name;
	const char **seen = NULL;
	size_t nseen = 0;

	for (int i = 0; i < ni; i++)
		files[i] = all->files[idx[i]];
	if (asprintf(&name, "gmon.out.%s", prog) < 0)
		pc_fatal("out of memory");
	merge_into(out, name, files, ni,
		   strcmp(prog, file_name(all->man[idx[0]]->v[0].path)) ?
		   all->man[idx[0]]->v[0].path : NULL);
	for (int i = 0; i < ni; i++) {
		const struct gmon_objects *o = all->man[idx[i]];

		for (size_t k = 1; k < o->n; k++) {
			const char *obj = file_name(o->v[k].path);
			size_t j = 0;

			while (j < nseen && strcmp(seen[j], obj))
				j++;
			if (j < nseen || !o->v[k].file ||
			    o->v[k].path[0] == '[')
				continue;
			seen = pc_realloc(seen, (nseen + 1) * sizeof(*seen));
			seen[nseen++] = obj;
			merge_object(out, prog, all, idx, ni, obj);
		}
	}
	free(seen);
	free(name);
	free(files);
}

/* Whether all's processes i and j ran one program (runexe.h). */
static int
same_program(const struct runexe *all, int i, int j)
{
	return runexe_same_program(all->man[i]->v[0].path, all->man[i],
				   all->man[j]->v[0].path, all->man[j]);
}

/*
 * The name of the program of all's process i in out's file names: its
 * file name, or, where an earlier program of another file had it (a/burn,
 * then b/burn, a different program), NAME-2, NAME-3... in the order
 * first seen, so that no program's file overwrites another's. malloc'd.
 */
static char *
program_name(const struct runexe *all, const char *done, int i)
{
	const char *exe = all->man[i]->v[0].path, *prog = file_name(exe);
	int before = 0;
	char *name;

	for (int j = 0; j < i; j++) {
		int first = 1;

		if (!done[j] || strcmp(file_name(all->man[j]->v[0].path), prog))
			continue;
		/* counted once a program: at its first process */
		for (int k = 0; k < j && first; k++)
			first = !same_program(all, k, j);
		before += first;
	}
	if ((before ? asprintf(&name, "%s-%d", prog, before + 1) :
	     asprintf(&name, "%s", prog)) < 0)
		pc_fatal("out of memory");
	return name;
}

/*
 * merge of a run (a directory among the operands): into directory out,
 * for each program what gprof reads: gmon.out.PROG (its processes
 * summed) and gmon.out.PROG+OBJECT for each object with a file. One
 * program is one file: its processes by one path, one build-id, or hard
 * links of it (git runs its subcommands so) are summed.
 */
static int
merge_run(const char *out, char **ops, int n, const char *process)
{
	struct runexe all;
	struct stat sb;
	char *done;
	int *idx;

	if (runexe_processes(&all, ops, n, process))
		exit(EXIT_BAD_INPUT);
	if (!all.nfiles)
		pc_fatal(
			"'%s': no profile recorded with PC_SCOPE=all there%s%s",
			ops[0], process ? " of " : "", process ? process : "");
	for (int i = 0; i < all.nfiles; i++)
		if (!all.man[i])
			pc_fatal(
				"'%s': no manifest beside it: merge a run's directories, or "
				"plain profiles of one program, not both",
				all.files[i]);
	if (mkdir(out, 0777) &&
	    (errno != EEXIST || stat(out, &sb) || !S_ISDIR(sb.st_mode)))
		pc_fatal("'%s': %s", out,
			 errno == EEXIST ? "not a directory" : strerror(errno));
	done = pc_realloc(NULL, (size_t)all.nfiles);
	memset(done, 0, (size_t)all.nfiles);
	idx = pc_realloc(NULL, (size_t)all.nfiles * sizeof(*idx));
	for (int i = 0; i < all.nfiles; i++) {
		int ni = 0;
		char *prog;

		if (done[i])
			continue;
		prog = program_name(&all, done, i);
		for (int j = i; j < all.nfiles; j++)
			if (!done[j] && same_program(&all, i, j)) {
				done[j] = 1;
				idx[ni++] = j;
			}
		merge_program(out, prog, &all, idx, ni);
		free(prog);
	}
	free(idx);
	free(done);
	runexe_release(&all);
	return 0;
}

/* Whether the operands name a run (a directory): merge_run's. */
static int
names_run(char **ops, int n)
{
	struct stat sb;

	for (int i = 0; i < n; i++)
		if (!stat(ops[i], &sb) && S_ISDIR(sb.st_mode))
			return 1;
	return 0;
}

int
cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "process", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 }
	};
	const char *out = NULL, *process = NULL;
	struct gmon_profile p;
	int c;

	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_merge, stdout);
			return 0;
		}
		if (c != 'o' && c != 'P') {
			fputs(usage_merge, stderr);
			return EXIT_BAD_INPUT;
		}
		*(c == 'o' ? &out : &process) = optarg;
	}
	if (!out || optind >= argc) {
		fputs(usage_merge, stderr);
		return EXIT_BAD_INPUT;
	}
	if (process || names_run(argv + optind, argc - optind))
		return merge_run(out, argv + optind, argc - optind, process);
	if (profiles_load(&p, argv + optind, argc - optind))
		return EXIT_BAD_INPUT;
	for (int i = optind; i < argc; i++)
		if (runfiles_has_manifest(argv[i])) {
			pc_warn("note: '%s' has an objects manifest (PC_SCOPE=all); only the "
				"executable's profiles are merged", argv[i]);
			break;
		}
	if (gmon_write_file(out, &p))
		exit(EXIT_BAD_INPUT);
	gmon_profile_release(&p);
	return 0;
}
