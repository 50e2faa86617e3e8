/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The executable of a plain profile. A run with PC_SCOPE=main (a plain
 * LD_PRELOAD) writes gmon.out alone, which gprof reads, and no manifest to
 * name its program; but libpc's header carries the first bytes of the
 * program's GNU build-id. The program is looked for by that identity where
 * it usually is: beside the profile, and in the current directory (a
 * program run as ./app in its build directory writes gmon.out there). A
 * file is taken only when its build-id matches; none is guessed by name.
 */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pcprof.h"

#define MAX_LOOKS	4096	/* candidates read in one directory, at most */

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* An executable regular file: worth reading its notes. */
static int
runnable(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	       sb.st_size >= 64 && (sb.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH));
}

/* The first file of dir, in name order, whose build-id starts with id;
 * into out. 0 when found. */
static int
look_in(const char *dir, const uint8_t id[GMON_BUILDID_SIZE], char *out,
	size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;
	int found = -1;

	if (!d)
		return -1;
	while ((e = readdir(d)) && n < MAX_LOOKS) {
		if (e->d_name[0] == '.' || !strncmp(e->d_name, "gmon.out", 8))
			continue;
		names = pc_realloc(names, (n + 1) * sizeof(*names));
		names[n] = pc_asprintf("%s/%s", dir, e->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_name);
	for (size_t i = 0; i < n; i++) {
		uint8_t got[GMON_BUILDID_SIZE];

		if (found && runnable(names[i]) &&
		    elf_build_id(names[i], got, sizeof(got)) ==
			    (int)sizeof(got) &&
		    !memcmp(got, id, sizeof(got)) && strlen(names[i]) < size) {
			strcpy(out, names[i]);
			found = 0;
		}
		free(names[i]);
	}
	free(names);
	return found;
}

int
findexe(const char *gmon, const uint8_t id[GMON_BUILDID_SIZE], char *out,
	size_t size)
{
	static const uint8_t zero[GMON_BUILDID_SIZE];
	char *copy, real[PATH_MAX], here[PATH_MAX];
	int r;

	if (!memcmp(id, zero, sizeof(zero)))
		return -1;	/* a program with no build-id */
	copy = pc_strdup(gmon);
	r = look_in(dirname(copy), id, out, size);
	/* then the current directory, unless that was it */
	if (r && realpath(".", here) &&
	    !(realpath(dirname(strcpy(copy, gmon)), real) &&
	      !strcmp(real, here)))
		r = look_in(".", id, out, size);
	free(copy);
	return r;
}
