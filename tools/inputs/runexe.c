/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The program a command's operands are of, where EXE may be left out
 * (runexe.h): what `pcprof run` left is a directory of profiles whose
 * manifests name each process's program by its path, so the commands that
 * read one program (flame, annotate, merge, report --callgraph, --lines,
 * folded, diff) take the directory alone, and --process narrows it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inputs/runexe.h"
#include "inputs/runfiles.h"

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* name (no '/') on PATH: an executable regular file, its path into out. */
static int
on_path(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH"), *p, *end;
	struct stat sb;

	if (!*name || strchr(name, '/') || !path)
		return 0;
	for (p = path; ; p = end + 1) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		if (end > p &&
		    snprintf(out, size, "%.*s/%s", (int)(end - p), p, name) <
			    (int)size &&
		    !stat(out, &sb) && S_ISREG(sb.st_mode) &&
		    !access(out, X_OK))
			return 1;
		if (!*end)
			return 0;
	}
}

static int
same_file(const char *a, const char *b)
{
	struct stat x, y;

	return !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

int
runexe_chosen(const char *exe, uint64_t pid, const char *which)
{
	char found[PATH_MAX];
	char *end;
	unsigned long long v;

	if (!which)
		return 1;
	v = strtoull(which, &end, 10);
	if (!*end && end != which)
		return pid == v;
	if (!strcmp(exe, which))
		return 1;
	/* a path names that file (a/burn is not b/burn), or, gone, its name */
	if (strchr(which, '/'))
		return access(which, F_OK) ?
			       !strcmp(base_name(exe), base_name(which)) :
			       same_file(which, exe);
	if (!strcmp(base_name(exe), which))
		return 1;
	/* as typed or as run: objdump on PATH is x86_64-linux-gnu-objdump */
	return on_path(which, found, sizeof(found)) && same_file(found, exe);
}

int
runexe_same_program(const char *exe_a, const struct gmon_objects *a,
		    const char *exe_b, const struct gmon_objects *b)
{
	const struct gmon_object *x = a && a->n ? &a->v[0] : NULL;
	const struct gmon_object *y = b && b->n ? &b->v[0] : NULL;

	if (!strcmp(exe_a, exe_b))
		return 1;
	/* git runs its subcommands through hard links of itself */
	if (x && y && x->build_id_len && x->build_id_len == y->build_id_len)
		return !memcmp(x->build_id, y->build_id, x->build_id_len);
	return same_file(exe_a, exe_b);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names go in raw: pc_error escapes the whole line once. */
int
runexe_unknown(const char *where, const char *which, char *const *exes,
	       size_t n)
{
	const char **names = pc_realloc(NULL, (n + 1) * sizeof(*names));
	size_t len = 1, at = 0;
	char *list;

	for (size_t i = 0; i < n; i++) {
		names[i] = base_name(exes[i]);
		len += strlen(names[i]) + 32;
	}
	qsort(names, n, sizeof(*names), cmp_str);
	list = pc_realloc(NULL, len);
	list[0] = 0;
	for (size_t i = 0, k; i < n; i = k) {
		for (k = i; k < n && !strcmp(names[k], names[i]); k++)
			;
		at += (size_t)snprintf(list + at, len - at, "%s%s (%zu)",
				       i ? ", " : "", names[i], k - i);
	}
	free(names);
	if (!n && !which)
		pc_error("'%s': no profile recorded with PC_SCOPE=all there (name the "
			 "executable for a plain profile)", where);
	else if (which)
		pc_error("'%s': no process %s in the run; its programs: %s (--process PID|NAME)",
			 where, which, n ? list : "none");
	else
		pc_error("'%s': profiles of %s: name one with --process NAME (or name the "
			 "executable)", where, list);
	free(list);
	return -1;
}

/* The programs of exes[0..n) (their manifests man[0..n), or NULL) one
 * line each, with their pids: the NAME of --process that is several. */
int
runexe_several(const char *where, const char *which, char *const *exes,
	       struct gmon_objects *const *man, size_t n)
{
	char *list = NULL;
	size_t len = 0;
	FILE *m = pc_memstream(&list, &len);

	for (size_t i = 0; i < n; i++) {
		size_t j = 0;

		while (j < i &&
		       !runexe_same_program(exes[j], man ? man[j] : NULL,
					    exes[i], man ? man[i] : NULL))
			j++;
		if (j < i)
			continue;	/* listed with j */
		fprintf(m, "%s%s (pid", i ? "; " : "", exes[i]);
		for (size_t k = i, one = 1; k < n; k++)
			if (runexe_same_program(exes[i], man ? man[i] : NULL,
						exes[k], man ? man[k] : NULL)) {
				fprintf(m, "%s %llu", one ? "" : ",",
					man && man[k] ?
						(unsigned long long)man[k]->pid :
						0ULL);
				one = 0;
			}
		fputc(')', m);
	}
	pc_memstream_close(m);
	pc_error("'%s': --process %s is several programs: name one by its path or a pid: %s",
		 where, which, list);
	free(list);
	return -1;
}

/* The profile that path is a file of (PROFILE.objects, PROFILE.stacks,
 * PROFILE+OBJECT), or path itself; malloc'ed. */
static char *
own_profile(const char *path)
{
	static const char *const suffixes[] = { GMON_OBJECTS_SUFFIX,
						GMON_STACKS_SUFFIX };
	size_t n = strlen(path), split = 0;
	struct stat sb;
	char *p;

	for (size_t i = 0; i < 2; i++) {
		size_t k = strlen(suffixes[i]);

		if (n > k && !strcmp(path + n - k, suffixes[i])) {
			p = pc_realloc(NULL, n - k + 1);
			memcpy(p, path, n - k);
			p[n - k] = 0;
			if (!stat(p, &sb) && S_ISREG(sb.st_mode) &&
			    runfiles_is_profile(p))
				return p;
			free(p);
		}
	}
	/* PROFILE+OBJECT, where OBJECT may hold a '+' (libstdc++.so.6) */
	while ((split = gmon_object_split(path, split))) {
		p = pc_realloc(NULL, split + 1);
		memcpy(p, path, split);
		p[split] = 0;
		if (runfiles_is_whole(p))
			return p;
		free(p);
	}
	p = pc_strdup(path);
	return p;
}

/* Whether the profile p is named among operands[0..n) by itself. */
static int
named(char **operands, int n, const char *p)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(operands[i], p))
			return 1;
	return 0;
}

/*
 * A profile named twice is read twice, as gprof sums it; a file beside a
 * profile (PROFILE.objects, .stacks, +OBJECT, as a glob catches them)
 * stands for its profile once, and not at all where the profile is named.
 */
char **
runexe_operands(char **operands, int n, int *nout)
{
	char **v = pc_realloc(NULL, ((size_t)n + 1) * sizeof(*v));
	int k = 0;

	for (int i = 0; i < n; i++) {
		char *p = own_profile(operands[i]);
		int seen = 0;

		if (strcmp(p, operands[i])) {
			seen = named(operands, n, p);
			for (int j = 0; j < k && !seen; j++)
				seen = !strcmp(v[j], p);
		}
		if (seen)
			free(p);
		else
			v[k++] = p;
	}
	*nout = k;
	return v;
}

static void
add_file(struct runexe *re, char *profile, struct gmon_objects *o)
{
	re->files = pc_realloc(re->files,
			       ((size_t)re->nfiles + 1) * sizeof(*re->files));
	re->man = pc_realloc(re->man,
			     ((size_t)re->nfiles + 1) * sizeof(*re->man));
	re->files[re->nfiles] = profile;
	re->man[re->nfiles++] = o;
}

/* The processes that paths[0..n) hold: each profile with a manifest, and
 * a plain profile whose program findexe finds by its build-id; a
 * directory that listing holds listed already (runfiles.h). 0, or -1
 * after one line. */
static int
gather(struct runexe *all, char **paths, int n, struct run_listing *listing)
{
	for (int i = 0; i < n; i++) {
		struct stat sb;
		size_t nn, left = 0;
		char **names;
		int listed = runfiles_listed_dir(listing, paths[i]);

		if (!listed && stat(paths[i], &sb))
			return pc_error("'%s': %s", paths[i], strerror(errno));
		if (listed || S_ISDIR(sb.st_mode)) {
			names = listed ? runfiles_of_listing(listing, &nn,
							     &left) :
					 runfiles_of_run(paths[i], &nn, &left);
			if (!names)
				return -1;
		} else {
			names = pc_realloc(NULL, sizeof(*names));
			names[0] = pc_strdup(paths[i]);
			nn = 1;
		}
		for (size_t k = 0; k < nn; k++) {
			struct gmon_objects *o = pc_realloc(NULL, sizeof(*o));
			/* one open: the manifest read, or none there */
			int r = runfiles_read_manifest_if(names[k], o);

			if (r < 0)
				return -1;
			if (r == 0 && o->n == 0)
				return pc_error("'%s': no program listed in its manifest",
						names[k]);
			if (r == 1) {
				free(o);
				o = NULL;
			}
			add_file(all, names[k], o);
		}
		free(names);
	}
	return 0;
}

int
runexe_processes(struct runexe *all, char **paths, int n, const char *process)
{
	int keep = 0;

	memset(all, 0, sizeof(*all));
	if (gather(all, paths, n, NULL))
		return -1;
	for (int i = 0; i < all->nfiles; i++) {
		struct gmon_objects *o = all->man[i];

		if (o ? runexe_chosen(o->v[0].path, o->pid, process) :
			!process) {
			all->files[keep] = all->files[i];
			all->man[keep++] = o;
			continue;
		}
		free(all->files[i]);
		if (o)
			gmon_objects_release(o);
		free(o);
	}
	all->nfiles = keep;
	return 0;
}

/* The program of a plain profile (no manifest), by its build-id; NULL
 * after one line. */
static char *
plain_program(const char *gmon)
{
	uint8_t id[GMON_BUILDID_SIZE];
	char exe[PATH_MAX], *p;

	if (runfiles_build_id(gmon, id) != 1 ||
	    findexe(gmon, id, exe, sizeof(exe)))
		return pc_error("'%s': no manifest beside it to name its program: name the "
				"executable", gmon), NULL;
	p = pc_strdup(exe);
	return p;
}

/* Of all's processes, those process names, into re; all's names are
 * re's or freed. Their one program's path in re->exe: none, or several
 * programs, is an error that lists the programs there are: 0, or -1
 * after one line. */
static int
choose(struct runexe *re, struct runexe *all, const char *process,
       const char *where)
{
	char **exes =
		pc_realloc(NULL, ((size_t)all->nfiles + 1) * sizeof(*exes));
	char **kept =
		pc_realloc(NULL, ((size_t)all->nfiles + 1) * sizeof(*kept));
	int nprogs = 0;

	for (int i = 0; i < all->nfiles; i++) {
		struct gmon_objects *o = all->man[i];

		exes[i] = o ? pc_strdup(o->v[0].path) :
			      plain_program(all->files[i]);
		if (!exes[i])
			return -1;
		if (!runexe_chosen(exes[i], o ? o->pid : 0, process)) {
			free(all->files[i]);
			if (o)
				gmon_objects_release(o);
			free(o);
			continue;
		}
		kept[re->nfiles] = exes[i];
		add_file(re, all->files[i], o);
		nprogs += !re->exe ||
			  !runexe_same_program(re->exe, re->man[0], exes[i], o);
		if (!re->exe)
			re->exe = exes[i];
	}
	if (!re->nfiles)
		return runexe_unknown(where, process, exes,
				      (size_t)all->nfiles);
	if (nprogs > 1 && process)
		return runexe_several(where, process, kept, re->man,
				      (size_t)re->nfiles);
	if (nprogs > 1)
		return runexe_unknown(where, NULL, kept, (size_t)re->nfiles);
	re->exe = pc_strdup(re->exe);
	for (int i = 0; i < all->nfiles; i++)
		free(exes[i]);
	free(exes);
	free(kept);
	return 0;
}

/* The program that the run in paths[0..n) recorded as name, malloc'ed,
 * or NULL, into *exe; 0, or -1 after one line. */
static int
recorded(char **paths, int n, const char *name, char **exe)
{
	struct runexe all = { 0 };

	*exe = NULL;
	if (gather(&all, paths, n, NULL))
		return -1;
	for (int i = 0; i < all.nfiles; i++)
		if (!*exe && all.man[i] &&
		    runexe_chosen(all.man[i]->v[0].path, UINT64_MAX, name))
			*exe = pc_strdup(all.man[i]->v[0].path);
	runexe_release(&all);
	return 0;
}

/* EXE as the command line names it: a file, a program of the run, or a
 * name on PATH; malloc'ed, or NULL after one line. peek: runfiles_peek's
 * answer for name, or RUNFILES_UNPEEKED (then stat tells). */
static char *
exe_named(const char *name, char **paths, int n, int peek)
{
	char found[PATH_MAX], *exe = NULL;
	struct stat sb;

	if (strchr(name, '/') || peek >= 0 ||
	    (peek == RUNFILES_UNPEEKED && !stat(name, &sb)))
		return pc_strdup(name);
	if (recorded(paths, n, name, &exe))
		return NULL;
	if (!exe)
		exe = pc_strdup(on_path(name, found, sizeof(found)) ? found :
								      name);
	return exe;
}

int
runexe_resolve(struct runexe *re, char **operands, int n, const char *process)
{
	return runexe_resolve_listed(re, operands, n, process, NULL);
}

int
runexe_resolve_listed(struct runexe *re, char **operands, int n,
		      const char *process, struct run_listing *listing)
{
	return runexe_resolve_peeked(re, operands, n, process, listing,
				     RUNFILES_UNPEEKED);
}

int
runexe_resolve_peeked(struct runexe *re, char **operands, int n,
		      const char *process, struct run_listing *listing,
		      int peek0)
{
	static char gmon_out[] = "gmon.out";
	char *deflt[] = { gmon_out };
	struct runexe all = { 0 };
	char **ops;
	int k, exe_first;

	memset(re, 0, sizeof(*re));
	ops = runexe_operands(n ? operands : deflt, n ? n : 1, &k);
	/* the peek was of operands[0]: of ops[0] where that is the same */
	if (!n || strcmp(ops[0], operands[0]))
		peek0 = RUNFILES_UNPEEKED;
	exe_first = n && !(listing && runfiles_listed_dir(listing, ops[0])) &&
		    !(peek0 == RUNFILES_UNPEEKED ? runfiles_is_profile(ops[0]) :
						   peek0 > 0);
	if (exe_first && !process) {
		if (!(re->exe = exe_named(ops[0], ops + 1, k - 1, peek0)))
			return -1;
		free(ops[0]);
		re->files = ops;
		re->nfiles = k - 1;
		memmove(ops, ops + 1, (size_t)re->nfiles * sizeof(*ops));
		return 0;
	}
	if (exe_first && k == 1)
		ops[k++] = pc_strdup(gmon_out);
	if (gather(&all, ops + exe_first, k - exe_first, listing) ||
	    choose(re, &all, process, ops[exe_first]))
		return -1;
	if (exe_first) {
		free(re->exe);
		if (!(re->exe = exe_named(ops[0], ops + 1, k - 1, peek0)))
			return -1;
	}
	free(all.files);
	free(all.man);
	for (int i = 0; i < k; i++)
		free(ops[i]);
	free(ops);
	return 0;
}

int
runexe_choose(struct runexe *re, struct runexe *all, const char *process,
	      const char *where)
{
	int rc;

	memset(re, 0, sizeof(*re));
	rc = choose(re, all, process, where);
	free(all->files);
	free(all->man);
	memset(all, 0, sizeof(*all));
	return rc;
}

int
runexe_pick(char *const *exes, const uint64_t *pids, size_t n,
	    const char *which, const char *where, int *chosen)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((chosen[i] = runexe_chosen(exes[i], pids[i], which)))
			break;
	if (n && i == n)
		return runexe_unknown(where, which, exes, n);
	for (; i < n; i++)
		chosen[i] = runexe_chosen(exes[i], pids[i], which);
	return 0;
}

int
runexe_open(struct pc_inputs *in, struct runexe *re,
	    const struct symtab_opts *so, int flags)
{
	struct stat sb;
	int read = re->man != NULL;

	for (int i = 0; re->man && i < re->nfiles; i++)
		read &= re->man[i] != NULL;
	/* each a profile whose manifest is read: none looked for again */
	if (read && re->nfiles)
		flags |= INPUTS_AS_GIVEN | INPUTS_WHOLE;
	else if (re->man)
		flags |= INPUTS_AS_GIVEN;
	/* a directory stands for its profiles of the program (files not
	 * taken as given are looked at by inputs_open alone) */
	for (int i = 0; (flags & INPUTS_AS_GIVEN) && !(flags & INPUTS_WHOLE) &&
			i < re->nfiles;
	     i++)
		if (!stat(re->files[i], &sb) && S_ISDIR(sb.st_mode))
			flags &= ~INPUTS_AS_GIVEN;
	if (inputs_open(in, re->exe, re->files, re->nfiles, so, flags))
		return -1;
	for (int i = 0; re->man && i < re->nfiles; i++)
		if (re->man[i]) {
			runfiles_adopt(&in->runs[0], i, re->man[i]);
			re->man[i] = NULL;
		}
	return 0;
}

void
runexe_release(struct runexe *re)
{
	for (int i = 0; i < re->nfiles; i++) {
		free(re->files[i]);
		if (re->man && re->man[i]) {
			gmon_objects_release(re->man[i]);
			free(re->man[i]);
		}
	}
	free(re->files);
	free(re->man);
	free(re->exe);
	memset(re, 0, sizeof(*re));
}
