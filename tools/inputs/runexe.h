/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The program a command's operands are of (runexe.c), where EXE may be
 * left out: `pcprof flame -o f.svg DIR` reads the program that the run's
 * manifests name, `pcprof flame -o f.svg clang DIR` the program the run
 * recorded as clang (or clang on PATH). --process narrows a run to some of
 * its processes. None is AS-safe; each exits with one line on bad input.
 */
#ifndef PC_RUNEXE_H
#define PC_RUNEXE_H

#include <stdint.h>

#include "pcprof.h"

struct runexe {
	char *exe;		/* the executable's path */
	char **files;		/* the profiles (or directories) to read */
	int nfiles;
	/* where the files came from a run's manifests (no EXE, or
	 * --process): files[i]'s manifest, read once, until runexe_open
	 * gives it to the inputs; NULL otherwise */
	struct gmon_objects **man;
};

/*
 * operands[0..n): [EXE] [GMON|DIR...]. A first operand that is a profile
 * or a directory means no EXE: the profiles of the run's one program
 * (several programs are an error that lists them; process picks one). An
 * EXE that is no file is a program the run recorded by that name, or a
 * name on PATH. A profile's own files among the operands (PROFILE.objects,
 * PROFILE.stacks, PROFILE+OBJECT, as a glob takes them in) stand for
 * PROFILE. n == 0 is no EXE and gmon.out. 0, or -1 after one line.
 */
PC_CHECKED int runexe_resolve(struct runexe *re, char **operands, int n,
			      const char *process);
/* The same, with a run directory among the operands listed already
 * (pcprof run's, runfiles.h): read from listing, not listed again. */
PC_CHECKED int runexe_resolve_listed(struct runexe *re, char **operands, int n,
				     const char *process,
				     struct run_listing *listing);
/* The same, with operands[0] peeked at already (runfiles_peek's answer,
 * or RUNFILES_UNPEEKED): not looked at again to tell an EXE. */
PC_CHECKED int runexe_resolve_peeked(struct runexe *re, char **operands, int n,
				     const char *process,
				     struct run_listing *listing, int peek0);
/* operands[0..n) with each profile's own files (PROFILE.objects,
 * PROFILE.stacks, PROFILE+OBJECT) as their profile, once; *nout of them,
 * malloc'ed. */
char **runexe_operands(char **operands, int n, int *nout);
/* Every profile that paths[0..n) hold (a directory's with a manifest, a
 * file as it is), of the processes that process names (NULL: all), into
 * all's files and their manifests (NULL for a plain profile); no exe. 0,
 * or -1 after one line. */
PC_CHECKED int runexe_processes(struct runexe *all, char **paths, int n,
				const char *process);
/* Of all's profiles (all->man[i] their manifests, NULL for a plain
 * profile, whose program findexe finds), those process names (NULL: all)
 * into re, all taken (emptied); their one program's path in re->exe:
 * none, or several programs, is an error that lists the programs there
 * are, said of where. 0, or -1 after one line. */
PC_CHECKED int runexe_choose(struct runexe *re, struct runexe *all,
			     const char *process, const char *where);
/* Which of the processes exes[0..n) (pids[i] their pids) --process which
 * names, in chosen[i]; none is an error that lists them ("'where': no
 * process WHICH in the run; there are: ..."): 0, or -1 after one line. */
PC_CHECKED int runexe_pick(char *const *exes, const uint64_t *pids, size_t n,
			   const char *which, const char *where, int *chosen);
/* inputs_open on what re resolved, re's manifests given to the run; 0,
 * or -1 after one line. */
PC_CHECKED int runexe_open(struct pc_inputs *in, struct runexe *re,
			   const struct symtab_opts *so, int flags);
void runexe_release(struct runexe *re);

/* Whether a process of program exe (its path when it ran) and pid is one
 * that --process which names: a pid, the program's path or file name, or
 * a name on PATH that is the same file (objdump for
 * x86_64-linux-gnu-objdump). */
int runexe_chosen(const char *exe, uint64_t pid, const char *which);
/* Whether exe_a and exe_b (their manifests a and b, or NULL) are one
 * program: one path, one build-id, or one file (hard links of it). */
int runexe_same_program(const char *exe_a, const struct gmon_objects *a,
			const char *exe_b, const struct gmon_objects *b);
/* "'where': --process WHICH is several programs" with each of exes[0..n)
 * (one program once, man[i] its manifest or NULL) by its path and pids,
 * said on one line: -1. */
PC_CHECKED int runexe_several(const char *where, const char *which,
			      char *const *exes,
			      struct gmon_objects *const *man, size_t n);
/* "'where': no process WHICH in the run; there are: NAME (COUNT), ..."
 * for the programs exes[0..n) (repeats counted), said on one line: -1. */
PC_CHECKED int runexe_unknown(const char *where, const char *which,
			      char *const *exes, size_t n);

#endif
