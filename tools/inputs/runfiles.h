/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A run's files (runfiles.c): which files of a directory or a command line
 * are profiles, whether each has a manifest beside it (PC_SCOPE=all), and
 * each manifest read once into the run that every command reads it from.
 * None is AS-safe; each exits with one line naming the file on bad input.
 */
#ifndef PC_RUNFILES_H
#define PC_RUNFILES_H

#include <stddef.h>

#include "pcprof.h"

/* PROFILE.objects and PROFILE.stacks (gmon.h's names), malloc'ed. */
char *runfiles_manifest_name(const char *profile);
char *runfiles_stacks_name(const char *profile);
/* The allocation profile's name beside profile (PROFILE.alloc). */
char *runfiles_alloc_name(const char *profile);

/* Whether profile has a manifest beside it; the one place that asks. */
int runfiles_has_manifest(const char *profile);
/* A plain file with a manifest beside it: a profile of PC_SCOPE=all. */
int runfiles_is_whole(const char *path);
/* Whether path is a profile (it starts with the gmon magic) or a
 * directory of them, rather than an executable. */
int runfiles_is_profile(const char *path);
/* The same, told apart: 0 neither, 1 a profile, 2 a directory. */
int runfiles_profile_kind(const char *path);
/* The same in one lookup, and whether path is there at all: -1 nothing
 * (or nothing stat sees), 0 some other file, 1 a profile, 2 a directory,
 * RUNFILES_SPECIAL neither a regular file nor a directory (a device, a
 * FIFO, a socket: never opened). RUNFILES_UNPEEKED stands for a path not
 * peeked at. */
#define RUNFILES_UNPEEKED (-2)
#define RUNFILES_SPECIAL (-3)
int runfiles_peek(const char *path);
/* Whether path is the directory that l (NULL: none) listed: known from
 * the listing, with no look at the disk. */
int runfiles_listed_dir(const struct run_listing *l, const char *path);
/* The build-id bytes that libpc wrote into the header of the profile at
 * path: 1 when it is libpc's, 0 when not, -1 when it is not a gmon file
 * one can read. */
int runfiles_build_id(const char *path, uint8_t id[GMON_BUILDID_SIZE]);
/* The gprof file of a wall-clock run's wall time that pcprof run writes
 * in the run's directory (model/wallgmon.h): made of its profiles, never
 * read as one of them. */
#define RUNFILES_WALL_GMON	"gmon.wall"
int runfiles_is_wall_gmon(const char *path);

/* profile's manifest parsed into o (gmon_objects_release frees it): 0, or
 * -1 after one line naming it. */
PC_CHECKED int runfiles_read_manifest(const char *profile,
				      struct gmon_objects *o);
/* The same in one lookup, or 1, unsaid, where there is none at all. */
PC_CHECKED int runfiles_read_manifest_if(const char *profile,
					 struct gmon_objects *o);

/*
 * The profiles of a whole run in directory dir, in name order, each with
 * a manifest beside it: libpc's live files finished first (recover.c),
 * then every file that starts with the gmon magic (and every directory),
 * but dot files, manifests, stacks files and the objects' own files of a
 * profile with a manifest (PROFILE+libc.so.6). *n of them; those with no
 * manifest are counted in *left_out. The names are malloc'ed; NULL after
 * one line where dir cannot be read.
 */
char **runfiles_of_run(const char *dir, size_t *n, size_t *left_out);

/* runfiles_of_run's profiles, of l: its live files finished (and those
 * still running named) as runfiles_of_run does, without listing the
 * directory again unless that made files. */
char **runfiles_of_listing(struct run_listing *l, size_t *n, size_t *left_out);

/*
 * Run run of files[0..n): those files as they are when as_given, else
 * the profiles they stand for: a directory for the profiles in it that
 * libpc wrote for st's executable (a live file finished first), and of
 * several files those recorded for another program left out (said in a
 * note), manifests and objects' files read with their profile. Whether
 * each has a manifest is asked here, once, unless as_given has
 * INPUTS_WHOLE (the caller read each one's). 0, or -1 after one line
 * where no profile is left.
 */
PC_CHECKED int runfiles_open(struct pc_run *run, const struct symtab *st,
			     char **files, int n, int as_given);
/* What inputs_open saw of one operand, path, already: whether it is a
 * directory, and whether it is a whole profile (a regular file with its
 * manifest beside it). */
struct runfiles_seen {
	const char *path;
	int dir;
	int whole;
};
/* runfiles_open, where a file named seen's path (seen not NULL) is not
 * looked at again for what seen says. */
PC_CHECKED int runfiles_open_seen(struct pc_run *run, const struct symtab *st,
				  char **files, int n, int as_given,
				  const struct runfiles_seen *seen);
/* The manifest of run's files[file], read on the first call and kept
 * with the run (whole.c raises its no-object count to what it lists by
 * PC, and sorts those); NULL where it has none, or after one line where
 * it cannot be read. */
struct gmon_objects *runfiles_manifest(const struct pc_run *run, int file);
/* Give run's files[file] the manifest o, read already (runview.c): run
 * takes it, and runfiles_manifest does not read it again. */
void runfiles_adopt(struct pc_run *run, int file, struct gmon_objects *o);
/* Free what runfiles_open and runfiles_manifest allocated, and the
 * profile read into run. */
void runfiles_release(struct pc_run *run);

#endif
