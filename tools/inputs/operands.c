/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof report's operands resolved once (operands.h): the first one
 * peeked at by one open, a run's directory listed once, a plain profile's
 * program found by its build-id, then every process of the run with its
 * manifest, read in one pass, and the processes --process picks. The
 * reports (cmd_report.c, runview.c) read the result and look at no
 * operand again.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pcprof.h"
#include "inputs/operands.h"
#include "inputs/runexe.h"
#include "inputs/runfiles.h"

/* PROFILE.objects, malloc'ed (gmon.h's name). */
static char *
manifest_of(const char *profile)
{
	size_t size = strlen(profile) + sizeof(GMON_OBJECTS_SUFFIX);
	char *buf = pc_realloc(NULL, size);

	gmon_objects_name(buf, size, profile);
	return buf;
}

/* Whether path is the directory that l (NULL: none) listed. */
static int
listed_dir(const struct run_listing *l, const char *path)
{
	return l && l->dir && !strcmp(l->dir, path);
}

static int
cmp_listed(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether profile has a manifest beside it: told by l where l lists
 * profile's directory and says so by readdir's type (a regular file, or
 * no such name), else by a stat of it. */
static int
manifest_listed(const struct run_listing *l, const char *profile)
{
	char *manifest = manifest_of(profile), *const *at;
	size_t k = l && l->dir && l->types ? strlen(l->dir) : 0;
	struct stat sb;
	int r = -1;

	/* a name of l's directory itself, not of one below it */
	if (k && !strncmp(manifest, l->dir, k) && manifest[k] == '/' &&
	    !strchr(manifest + k + 1, '/')) {
		at = l->n ? bsearch(&manifest, l->names, l->n,
				    sizeof(*l->names), cmp_listed) :
			    NULL;
		r = !at ? 0 : l->types[at - l->names] == DT_REG ? 1 : -1;
	}
	if (r < 0)
		r = stat(manifest, &sb) == 0;
	free(manifest);
	return r;
}

/*
 * A plain profile first (a regular file with no manifest: PC_SCOPE=main)
 * is read as EXE's when findexe finds the executable by its build-id; 1
 * then, with its path in exe. A plain profile of libpc's whose program
 * is not found is an error, -1 after one line; anything else is the run
 * view's to read, 0. kind: runfiles_peek's of gmon where known, else -1.
 */
static int
plain_exe(const char *gmon, int kind, const struct run_listing *l, char *exe,
	  size_t size)
{
	static const uint8_t zero[GMON_BUILDID_SIZE];
	char hex[2 * GMON_BUILDID_SIZE + 1], first[PATH_MAX];
	uint8_t id[GMON_BUILDID_SIZE];
	struct stat sb;
	int dir = kind >= 0 ? kind == 2 :
			      listed_dir(l, gmon) ||
				      (!stat(gmon, &sb) && S_ISDIR(sb.st_mode));
	int reg = kind == 1;

	/* a run of pcprof run --main-only: its DIR/gmon.out, plain, with a
	 * link to its program beside it */
	if (dir &&
	    snprintf(first, sizeof(first), "%s/gmon.out", gmon) <
		    (int)sizeof(first) &&
	    !manifest_listed(l, first))
		gmon = first, reg = 0;
	else if (kind == 2)
		return 0;	/* a directory, peeked at: no stat again */
	if ((!reg && (stat(gmon, &sb) || !S_ISREG(sb.st_mode))) ||
	    manifest_listed(NULL, gmon) || runfiles_build_id(gmon, id) != 1)
		return 0;
	if (!memcmp(id, zero, sizeof(id)))
		return pc_error(
			"'%s': no manifest beside it (%s) to name its program, "
			"which has no build-id to find it by: name the executable "
			"(pcprof report EXE %s)",
			gmon, manifest_of(gmon), gmon);
	if (findexe(gmon, id, exe, size))
		return pc_error("'%s': no manifest beside it (%s) to name its program, and "
				"no executable with its build-id (%s...) beside it or in the "
				"current directory: name the executable (pcprof report EXE %s)",
				gmon, manifest_of(gmon),
				pc_hex(id, sizeof(id), hex), gmon);
	pc_warn("note: '%s' is a profile of '%s' (the executable with its build-id)",
		gmon, exe);
	return 1;
}

int
operands_resolve(struct operands *o, char **argv, int argc,
		 struct run_listing *listing)
{
	int kind, rc;

	memset(o, 0, sizeof(*o));
	o->argv = argv;
	o->argc = argc;
	o->listing = listing;
	o->peek = runfiles_peek(argv[0]);
	/* a device or a FIFO is no executable and no profile: said as the
	 * symbol table's reader says it, and never opened */
	if (o->peek == RUNFILES_SPECIAL)
		return pc_error("'%s': not a regular file", argv[0]);
	kind = o->peek > 0 ? o->peek : 0;
	/* an EXE first (or nothing there): runexe.h's to resolve */
	if (!kind)
		return 0;
	o->ops = runexe_operands(argv, argc, &o->n);
	o->own_ops = 1;
	/* a run's directory first is listed once, here, for every stage
	 * that reads it (as pcprof run lists its own); one that cannot be
	 * is said as those stages would have said it */
	if (!o->listing && kind == 2 && !strcmp(o->ops[0], argv[0])) {
		if (recover_list(&o->own, o->ops[0]))
			return -1;
		o->listing = &o->own;
	}
	rc = plain_exe(o->ops[0], strcmp(o->ops[0], argv[0]) ? -1 : kind,
		       o->listing, o->exe, sizeof(o->exe));
	if (rc < 0)
		return -1;
	o->kind = rc ? OPERANDS_PLAIN : OPERANDS_RUN;
	return 0;
}

void
operands_of_run(struct operands *o, char **ops, int n,
		struct run_listing *listing)
{
	memset(o, 0, sizeof(*o));
	o->argv = o->ops = ops;
	o->argc = o->n = n;
	o->peek = RUNFILES_UNPEEKED;
	o->listing = listing;
	o->kind = OPERANDS_RUN;
}

/* The pid at the end of profile's name (gmon.out.NAME.PID), or 0. */
static uint64_t
pid_of_name(const char *path)
{
	const char *dot = strrchr(path, '.');
	unsigned long v;
	char *end;

	if (!dot || !dot[1])
		return 0;
	v = strtoul(dot + 1, &end, 10);
	return *end ? 0 : v;
}

/* One process more: profile (taken), its manifest read with absent_ok
 * or not. */
static void
add(struct operands *o, char *profile, unsigned char **absent_ok,
    int absent)
{
	o->procs = pc_realloc(o->procs, (o->nprocs + 1) * sizeof(*o->procs));
	*absent_ok = pc_realloc(*absent_ok, o->nprocs + 1);
	memset(&o->procs[o->nprocs], 0, sizeof(*o->procs));
	o->procs[o->nprocs].profile = profile;
	(*absent_ok)[o->nprocs++] = (unsigned char)absent;
}

/* The profiles that o's operands hold (a directory's with a manifest, a
 * directory o's listing holds read from it; a file as it is), into
 * o->procs, and their manifests read, in one pass; the profiles with no
 * manifest that directories held in *left_out. 0, or -1 after one line. */
static int
gather(struct operands *o, size_t *left_out)
{
	unsigned char *absent_ok = NULL;
	struct gmon_objects **man;
	char **manifests;
	int rc;

	for (int i = 0; i < o->n; i++) {
		const char *p = o->ops[i];
		int listed = listed_dir(o->listing, p);
		struct stat sb;
		char **names;
		size_t nn;

		if (!listed && stat(p, &sb))
			return pc_error("'%s': %s", p, strerror(errno));
		if (!listed && !S_ISDIR(sb.st_mode)) {
			add(o, pc_strdup(p), &absent_ok, 1);
			continue;
		}
		names = listed ?
				runfiles_of_listing(o->listing, &nn, left_out) :
				runfiles_of_run(p, &nn, left_out);
		if (!names)
			return -1;
		for (size_t k = 0; k < nn; k++)
			add(o, names[k], &absent_ok, 0);
		free(names);
	}
	manifests = pc_calloc(o->nprocs + 1, sizeof(*manifests));
	man = pc_calloc(o->nprocs + 1, sizeof(*man));
	for (size_t i = 0; i < o->nprocs; i++)
		manifests[i] = manifest_of(o->procs[i].profile);
	rc = pc_read_objects_each(manifests, o->nprocs, absent_ok, man);
	for (size_t i = 0; i < o->nprocs; i++) {
		o->procs[i].man = rc ? NULL : man[i];
		o->procs[i].pid = !man[i]     ? 0 :
				  man[i]->pid ? man[i]->pid :
				  pid_of_name(o->procs[i].profile);
		free(manifests[i]);
	}
	free(manifests);
	free(man);
	free(absent_ok);
	return rc;
}

/* A copy of o, malloc'ed: the one program's report takes its manifests,
 * the run's report the originals. */
static struct gmon_objects *
objects_copy(const struct gmon_objects *o)
{
	struct gmon_objects *c = pc_realloc(NULL, sizeof(*c));

	*c = *o;
	c->v = pc_calloc(o->n + 1, sizeof(*c->v));
	for (size_t i = 0; i < o->n; i++) {
		c->v[i] = o->v[i];
		c->v[i].file = o->v[i].file ? pc_strdup(o->v[i].file) : NULL;
		c->v[i].path = o->v[i].path ? pc_strdup(o->v[i].path) : NULL;
	}
	c->arcs = pc_calloc(o->narcs + 1, sizeof(*c->arcs));
	memcpy(c->arcs, o->arcs, o->narcs * sizeof(*c->arcs));
	c->anon = pc_calloc(o->nanon + 1, sizeof(*c->anon));
	memcpy(c->anon, o->anon, o->nanon * sizeof(*c->anon));
	return c;
}

/* The one program of o's processes that process names, into o->re (the
 * manifests copied where the run's report reads them too); 0, or -1
 * after one line. */
static int
one_program(struct operands *o, const char *process, int copy)
{
	struct runexe all = { 0 };

	all.files = pc_calloc(o->nprocs + 1, sizeof(*all.files));
	all.man = pc_calloc(o->nprocs + 1, sizeof(*all.man));
	for (size_t i = 0; i < o->nprocs; i++) {
		struct operand_proc *p = &o->procs[i];

		if (p->man && p->man->n == 0)
			return pc_error(
				"'%s': no program listed in its manifest",
				p->profile);
		all.files[all.nfiles] = pc_strdup(p->profile);
		all.man[all.nfiles++] = !p->man ? NULL :
					copy	? objects_copy(p->man) :
						  p->man;
		if (!copy)
			p->man = NULL;
	}
	return runexe_choose(&o->re, &all, process, o->ops[0]);
}

/* The run's processes that process picks (o->procs[i].chosen), each with
 * a manifest that names its program, and whether one of them recorded
 * wall time; 0, or -1 after one line. */
static int
run_processes(struct operands *o, const char *process, size_t left_out)
{
	char **exes = pc_calloc(o->nprocs + 1, sizeof(*exes));
	uint64_t *pids = pc_calloc(o->nprocs + 1, sizeof(*pids));
	int *chosen = pc_calloc(o->nprocs + 1, sizeof(*chosen));
	size_t kept = 0;

	for (size_t i = 0; i < o->nprocs; i++) {
		const struct operand_proc *p = &o->procs[i];

		if (!p->man)
			return pc_error(
				"'%s': no manifest beside it (%s) to name its program: "
				"name the executable (pcprof report EXE %s), or record with "
				"PC_SCOPE=all",
				p->profile, manifest_of(p->profile),
				p->profile);
		if (p->man->n == 0)
			return pc_error("'%s': no program listed",
					manifest_of(p->profile));
		exes[i] = p->man->v[0].path;
		pids[i] = p->pid;
		chosen[i] = 1;
	}
	if (left_out)
		pc_warn("note: left out %zu profile%s recorded without PC_SCOPE=all "
			"(pcprof report EXE DIR reads them)", left_out,
			left_out == 1 ? "" : "s");
	if (process && runexe_pick(exes, pids, o->nprocs, process, o->ops[0],
				   chosen))
		return -1;
	for (size_t i = 0; i < o->nprocs; i++)
		if ((o->procs[i].chosen = chosen[i]))
			exes[kept++] = o->procs[i].profile;
	if (!kept)
		return pc_error(process ? "'%s': no process %s in the run" :
				"'%s': no profile recorded with PC_SCOPE=all there%s",
				o->ops[0], process ? process : "");
	o->wall = stacks_any_wall(exes, kept);
	free(exes);
	free(pids);
	free(chosen);
	return 0;
}

int
operands_gather(struct operands *o, const char *process, int one, int json)
{
	size_t left_out = 0;
	struct stat sb;

	o->one = one;
	/* a report of one program in JSON has the run report's shape: its
	 * processes, then its profile */
	o->view = !one ||
		  (json && (listed_dir(o->listing, o->ops[0]) ||
			    (!stat(o->ops[0], &sb) && S_ISDIR(sb.st_mode))));
	if (gather(o, &left_out))
		return -1;
	if (one && one_program(o, process, o->view))
		return -1;
	return o->view ? run_processes(o, process, left_out) : 0;
}

void
operands_release(struct operands *o)
{
	for (size_t i = 0; i < o->nprocs; i++) {
		free(o->procs[i].profile);
		if (o->procs[i].man)
			gmon_objects_release(o->procs[i].man);
		free(o->procs[i].man);
	}
	free(o->procs);
	runexe_release(&o->re);
	recover_listing_release(&o->own);
	for (int i = 0; o->own_ops && i < o->n; i++)
		free(o->ops[i]);
	if (o->own_ops)
		free(o->ops);
	memset(o, 0, sizeof(*o));
}
