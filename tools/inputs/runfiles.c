/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A run's files: which files of a directory, or of a command line, are
 * the profiles to read, and each profile's manifest (PC_SCOPE=all), asked
 * after and read once. inputs.c opens its runs here, runview.c finds a
 * whole run's processes here, and every reader of a manifest (whole.c,
 * stackfile.c, export.c, compare.c) gets it from here.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inputs/runfiles.h"

/* Whether seen (NULL: nothing) tells of path. */
#define SEEN(seen, p) ((seen) && !strcmp((seen)->path, (p)))

/* name(buf, size, profile) into a buffer of its own. */
static char *
name_of(int (*name)(char *, size_t, const char *), const char *profile,
	size_t suffix)
{
	size_t size = strlen(profile) + suffix;
	char *buf = pc_realloc(NULL, size);

	name(buf, size, profile);
	return buf;
}

char *
runfiles_manifest_name(const char *profile)
{
	return name_of(gmon_objects_name, profile, sizeof(GMON_OBJECTS_SUFFIX));
}

char *
runfiles_stacks_name(const char *profile)
{
	return name_of(gmon_stacks_name, profile, sizeof(GMON_STACKS_SUFFIX));
}

char *
runfiles_alloc_name(const char *profile)
{
	size_t n = strlen(profile);
	char *buf = pc_malloc(n + sizeof(GMON_ALLOC_SUFFIX));

	memcpy(buf, profile, n);
	memcpy(buf + n, GMON_ALLOC_SUFFIX, sizeof(GMON_ALLOC_SUFFIX));
	return buf;
}

int
runfiles_has_manifest(const char *profile)
{
	struct stat sb;
	char *manifest = runfiles_manifest_name(profile);
	int r = stat(manifest, &sb) == 0;

	free(manifest);
	return r;
}

int
runfiles_is_whole(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	       runfiles_has_manifest(path);
}

/* Whether the regular file at path starts with the gmon magic: a peek to
 * tell a profile from an executable, which may well be a symlink
 * (/usr/bin/node): this open follows one, but never waits on a FIFO; the
 * profile's reader (pc_open_regular) refuses a symlink. */
static int
starts_with_magic(const char *path)
{
	struct stat sb;
	unsigned char h[4];
	int fd, r;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return 0;
	r = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && read(fd, h, 4) == 4 &&
	    !memcmp(h, GMON_MAGIC, 4);
	close(fd);
	return r;
}

int
runfiles_is_profile(const char *path)
{
	return runfiles_profile_kind(path) != 0;
}

int
runfiles_listed_dir(const struct run_listing *l, const char *path)
{
	return l && l->dir && !strcmp(l->dir, path);
}

int
runfiles_profile_kind(const char *path)
{
	int k = runfiles_peek(path);

	return k > 0 ? k : 0;
}

/* The regular file that the O_PATH descriptor fd names, opened to read
 * through it (the same file, with no look at its name again), else by
 * path where /proc is not there and path is still a regular file; -1
 * where neither. */
static int
reopen_regular(int fd, const char *path)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, rd;
	struct stat sb;

	if ((rd = pc_reopen_read(fd)) >= 0 || errno != ENOENT)
		return rd;
	if ((rd = open(path, flags)) >= 0 &&
	    (fstat(rd, &sb) || !S_ISREG(sb.st_mode))) {
		close(rd);
		rd = -1;
	}
	return rd;
}

int
runfiles_peek(const char *path)
{
	struct stat sb;
	unsigned char h[4];
	int fd, rd, r;

	/* one lookup: an O_PATH open, which opens no device and waits on
	 * no FIFO, tells the kind (stat's answer where it fails); a
	 * regular file alone is then opened through it, to peek */
	if ((fd = open(path, O_PATH | O_CLOEXEC)) < 0)
		return errno == ENOENT || stat(path, &sb) ? -1 :
		       S_ISDIR(sb.st_mode)		  ? 2 :
		       S_ISREG(sb.st_mode)		  ? 0 :
							    RUNFILES_SPECIAL;
	if (fstat(fd, &sb))
		r = 0;
	else if (S_ISDIR(sb.st_mode))
		r = 2;
	else if (!S_ISREG(sb.st_mode))
		r = RUNFILES_SPECIAL;
	else if ((rd = reopen_regular(fd, path)) < 0)
		r = 0;
	else {
		r = read(rd, h, 4) == 4 && !memcmp(h, GMON_MAGIC, 4);
		close(rd);
	}
	close(fd);
	return r;
}

int
runfiles_build_id(const char *path, uint8_t id[GMON_BUILDID_SIZE])
{
	unsigned char h[GMON_HEADER_SIZE];
	const char *why;
	int fd = pc_open_regular(path, NULL, &why);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, h, sizeof(h));
	close(fd);
	return gmon_read_header(h, n > 0 ? (size_t)n : 0, id);
}

int
runfiles_read_manifest_if(const char *profile, struct gmon_objects *o)
{
	char *manifest = runfiles_manifest_name(profile);
	int r = pc_read_objects_if(manifest, o);

	free(manifest);
	return r;
}

int
runfiles_read_manifest(const char *profile, struct gmon_objects *o)
{
	char *manifest = runfiles_manifest_name(profile);
	int bad = pc_read_objects(manifest, o);

	free(manifest);
	return bad;
}

static int
has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* Whether name (path/name, which is full) is neither a regular file nor
 * a directory: a symlink, a FIFO, a socket or a device, which no command
 * reads (pc_open_regular would refuse it), left out, with a note where
 * it would have been read as a profile. A manifest, a stacks file or an
 * object's file (PROFILE+NAME) is read with its profile, whose reader
 * says why it cannot. A directory is not odd: a run's may hold runs.
 * *reg: whether it is a regular file, as its lstat said. */
static int
odd_entry(const char *full, const char *name, unsigned char type,
	  unsigned char *reg)
{
	struct stat sb;
	int r;

	/* what readdir said is what lstat would: a regular file or a
	 * directory is looked at no further */
	*reg = type == DT_REG;
	if (type == DT_REG || type == DT_DIR)
		return 0;
	r = lstat(full, &sb);
	*reg = !r && S_ISREG(sb.st_mode);
	if (r || S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode))
		return 0;
	/* a link to a program: pcprof run --main-only's, which names it */
	if (S_ISLNK(sb.st_mode) && !stat(full, &sb) && S_ISREG(sb.st_mode) &&
	    (sb.st_mode & S_IXUSR))
		return 1;
	if (!has_suffix(name, GMON_OBJECTS_SUFFIX) &&
	    !has_suffix(name, GMON_STACKS_SUFFIX) && !strchr(name, '+'))
		pc_warn("note: '%s': %s, left out", full,
			S_ISLNK(sb.st_mode) ? "a symbolic link" : "not a regular file");
	return 1;
}

/* The names of l (not its dot files, nor the odd ones), copied, in l's
 * order; *nn of them, and where reg is not NULL, whether each is a
 * regular file (malloc'ed), as the look that left the odd ones out saw. */
static char **
listed_names(const struct run_listing *l, size_t *nn, unsigned char **reg)
{
	char **names = pc_malloc(sizeof(*names));
	unsigned char *regs = pc_malloc(l->n ? l->n : 1), one;
	size_t skip = strlen(l->dir) + 1;

	*nn = 0;
	for (size_t i = 0; i < l->n; i++) {
		const char *name = l->names[i] + skip;

		if (name[0] == '.' ||
		    odd_entry(l->names[i], name,
			      l->types ? l->types[i] : DT_UNKNOWN, &one))
			continue;
		names = pc_realloc(names, (*nn + 1) * sizeof(*names));
		regs[*nn] = one;
		names[(*nn)++] = pc_strdup(l->names[i]);
	}
	if (reg)
		*reg = regs;
	else
		free(regs);
	return names;
}

/* The names in directory path (not its dot files), sorted, once the
 * processes' live files there are finished; *nn of them. The directory
 * is listed once, and again only where a live file was finished into
 * files. NULL after one line where it cannot be read. */
static char **
dir_names(const char *path, size_t *nn, unsigned char **reg)
{
	struct run_listing l = { 0 };
	char **names = NULL;

	*nn = 0;
	if (!recover_list(&l, path) && recover_listed(&l, 1) >= 0)
		names = listed_names(&l, nn, reg);
	recover_listing_release(&l);
	return names;
}

/* The answers of runfiles_has_manifest that one walk of a listing has
 * had, each profile asked once (a profile's objects' files ask for it
 * again, PROFILE+libc.so.6 and the rest); a manifest that the listing
 * names[0..nn) holds as a regular file (reg) is there with no look. */
struct manifest_memo {
	char **profile;
	unsigned char *has;
	size_t n;
	char *const *names;
	const unsigned char *reg;
	size_t nn;
};

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether the listing of m holds path as a regular file. */
static int
listed_regular(const struct manifest_memo *m, const char *path)
{
	char *const *at;

	if (!m->reg || !m->nn)
		return 0;
	at = bsearch(&path, m->names, m->nn, sizeof(*m->names), cmp_name);
	return at && m->reg[at - m->names];
}

static int
memo_has_manifest(struct manifest_memo *m, char *profile)
{
	char *manifest;

	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->profile[i], profile)) {
			free(profile);
			return m->has[i];
		}
	m->profile = pc_realloc(m->profile, (m->n + 1) * sizeof(*m->profile));
	m->has = pc_realloc(m->has, m->n + 1);
	m->profile[m->n] = profile;
	manifest = runfiles_manifest_name(profile);
	m->has[m->n] = (unsigned char)(listed_regular(m, manifest) ||
				       runfiles_has_manifest(profile));
	free(manifest);
	return m->has[m->n++];
}

static void
memo_release(struct manifest_memo *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->profile[i]);
	free(m->profile);
	free(m->has);
}

/* Whether the first k bytes of path name a profile with a manifest: among
 * files[0..n) where files is not NULL; asked through memo where it is not
 * NULL. */
static int
is_profile_prefix(const char *path, size_t k, char **files, int n,
		  struct manifest_memo *memo)
{
	char *profile;
	int r;

	for (int i = 0; files && i < n; i++)
		if (strlen(files[i]) == k && !strncmp(files[i], path, k))
			return runfiles_has_manifest(files[i]);
	if (files)
		return 0;
	profile = pc_strndup(path, k);
	if (memo)
		return memo_has_manifest(memo, profile);
	r = runfiles_has_manifest(profile);
	free(profile);
	return r;
}

/*
 * Whether path is PROFILE+NAME, an object's file of a profile with a
 * manifest: "gmon.out.g++.42" is a profile of its own (g++), and
 * "gmon.out.g++.42+libstdc++.so.6" one of its objects. Either name may
 * hold a '+', so each '+' of the file's name is tried, from the left,
 * for a PROFILE before it. Where files is not NULL, PROFILE must be
 * among files[0..n).
 */
static int
is_object_file(const char *path, char **files, int n,
	       struct manifest_memo *memo)
{
	for (size_t k = 0; (k = gmon_object_split(path, k));)
		if (is_profile_prefix(path, k, files, n, memo))
			return 1;
	return 0;
}

int
runfiles_is_wall_gmon(const char *path)
{
	const char *slash = strrchr(path, '/');

	return !strcmp(slash ? slash + 1 : path, RUNFILES_WALL_GMON);
}

/* Whether name, found in a whole run's directory (a regular file where
 * reg), is one of its profiles. */
static int
of_run(const char *name, struct manifest_memo *memo, int reg)
{
	if (has_suffix(name, GMON_OBJECTS_SUFFIX) ||
	    has_suffix(name, GMON_STACKS_SUFFIX) || runfiles_is_wall_gmon(name))
		return 0;
	/* PROFILE+libc.so.6: read with PROFILE */
	return !is_object_file(name, NULL, 0, memo) &&
	       (reg ? starts_with_magic(name) : runfiles_is_profile(name));
}

/* The profiles with a manifest of names[0..nn) (reg: which are regular
 * files, as listed), which they become, in their order: the others
 * freed, and counted in *left_out; *n of them. Each profile's manifest is
 * looked for once, and not at all where the listing holds it. */
static char **
run_profiles(char **names, unsigned char *reg, size_t nn, size_t *n,
	     size_t *left_out)
{
	struct manifest_memo memo = { .names = names, .reg = reg, .nn = nn };
	unsigned char *keep = pc_malloc(nn ? nn : 1);

	for (size_t i = 0; i < nn; i++) {
		int profile = of_run(names[i], &memo, reg[i]);

		keep[i] = profile &&
			  memo_has_manifest(&memo, pc_strdup(names[i]));
		*left_out += profile && !keep[i];
	}
	*n = 0;
	for (size_t i = 0; i < nn; i++) {
		if (keep[i])
			names[(*n)++] = names[i];
		else
			free(names[i]);
	}
	free(keep);
	free(reg);
	memo_release(&memo);
	return names;
}

char **
runfiles_of_run(const char *dir, size_t *n, size_t *left_out)
{
	size_t nn;
	unsigned char *reg = NULL;
	char **names = dir_names(dir, &nn, &reg);

	*n = 0;
	return names ? run_profiles(names, reg, nn, n, left_out) : NULL;
}

char **
runfiles_of_listing(struct run_listing *l, size_t *n, size_t *left_out)
{
	size_t nn;
	char **names;
	unsigned char *reg;

	*n = 0;
	if (recover_listed(l, 1) < 0)
		return NULL;
	names = listed_names(l, &nn, &reg);
	return run_profiles(names, reg, nn, n, left_out);
}

/* A PC_SCOPE=all manifest (a shell glob like gmon.out.* takes them in). */
static int
is_manifest(const char *path)
{
	char head[sizeof(GMON_OBJECTS_MAGIC)];
	const char *why;
	int fd, r = 0;

	if (!has_suffix(path, GMON_OBJECTS_SUFFIX))
		return 0;
	if ((fd = pc_open_regular(path, NULL, &why)) < 0)
		return 0;
	r = read(fd, head, sizeof(head) - 1) == (ssize_t)sizeof(head) - 1 &&
	    !memcmp(head, GMON_OBJECTS_MAGIC, sizeof(head) - 1);
	close(fd);
	return r;
}

/* Whether name, found in a directory (dir) or named among files[0..nfiles),
 * is a profile to read for st: 1 to read, 0 to leave out, 2 to leave out
 * and count as another program's. */
static int
keep_file(const struct symtab *st, const char *name, int dir, int many,
	  char **files, int nfiles)
{
	static const uint8_t zero[GMON_BUILDID_SIZE];
	int known = st->build_id_len >= GMON_BUILDID_SIZE;
	uint8_t id[GMON_BUILDID_SIZE];
	int m = runfiles_build_id(name, id);

	if (dir) /* only profiles of exe, not the wall time made of them */
		return m == 1 &&
		       !(known && memcmp(id, st->build_id, sizeof(id))) &&
		       !runfiles_is_wall_gmon(name);
	if ((m == -1 && is_manifest(name)) ||
	    is_object_file(name, files, nfiles, NULL))
		return 0;	/* read with its profile */
	if (many && m == 1 && known && memcmp(id, zero, sizeof(id)) &&
	    memcmp(id, st->build_id, sizeof(id)))
		return 2;
	return 1;
}

/* The names files[i] stands for: a directory's, or itself; *nn of them. */
static char **
names_of(const char *file, int dir, size_t *nn)
{
	char **names;

	if (dir)
		return dir_names(file, nn, NULL);
	names = pc_malloc(sizeof(*names));
	names[0] = pc_strdup(file);
	*nn = 1;
	return names;
}

/*
 * The profiles to read: each directory stands for the gmon files in it
 * that libpc wrote for exe (the files of one multi-process run), and of
 * several files those recorded for another program are left out. NULL
 * after one line where none is left.
 */
static char **
select_files(const struct symtab *st, char **files, int nfiles, int *nout,
	     const struct runfiles_seen *seen)
{
	size_t n = 0, skipped = 0;
	char **v = NULL;
	int many = nfiles > 1;

	for (int i = 0; i < nfiles; i++) {
		struct stat sb;
		size_t nn;
		int dir = SEEN(seen, files[i]) ?
				  seen->dir :
				  !stat(files[i], &sb) && S_ISDIR(sb.st_mode);
		char **names = names_of(files[i], dir, &nn);

		if (!names)
			return NULL;
		many |= dir;
		for (size_t k = 0; k < nn; k++) {
			int keep = keep_file(st, names[k], dir, many, files,
					     nfiles);

			if (keep != 1) {
				skipped += keep == 2;
				free(names[k]);
				continue;
			}
			v = pc_realloc(v, (n + 1) * sizeof(*v));
			v[n++] = names[k];
		}
		free(names);
	}
	if (skipped)
		pc_warn("note: left out %zu profile%s of other programs",
			skipped, skipped == 1 ? "" : "s");
	if (n == 0)
		return pc_error("'%s': no profile of this program there",
				files[0]),
		       NULL;
	*nout = (int)n;
	return v;
}

int
runfiles_open(struct pc_run *run, const struct symtab *st, char **files, int n,
	      int as_given)
{
	return runfiles_open_seen(run, st, files, n, as_given, NULL);
}

int
runfiles_open_seen(struct pc_run *run, const struct symtab *st, char **files,
		   int n, int as_given, const struct runfiles_seen *seen)
{
	if (as_given) {
		run->files = pc_realloc(NULL, (size_t)n * sizeof(*run->files));
		for (int i = 0; i < n; i++)
			run->files[i] = pc_strdup(files[i]);
		run->nfiles = n;
	} else {
		if (!(run->files = select_files(st, files, n, &run->nfiles,
						seen)))
			return -1;
	}
	run->manifest = pc_realloc(NULL, (size_t)run->nfiles);
	run->objects = pc_calloc((size_t)run->nfiles, sizeof(*run->objects));
	for (int i = 0; i < run->nfiles; i++)
		run->manifest[i] =
			(unsigned char)((as_given & INPUTS_WHOLE) ||
					(SEEN(seen, run->files[i]) &&
					 seen->whole) ||
					runfiles_has_manifest(run->files[i]));
	return 0;
}

struct gmon_objects *
runfiles_manifest(const struct pc_run *run, int file)
{
	if (!run->manifest[file])
		return NULL;
	if (!run->objects[file]) {
		struct gmon_objects *o = pc_realloc(NULL, sizeof(*o));

		if (runfiles_read_manifest(run->files[file], o)) {
			free(o);
			return NULL;
		}
		run->objects[file] = o;
	}
	return run->objects[file];
}

void
runfiles_adopt(struct pc_run *run, int file, struct gmon_objects *o)
{
	if (run->objects[file]) {
		gmon_objects_release(run->objects[file]);
		free(run->objects[file]);
	}
	run->objects[file] = o;
}

void
runfiles_release(struct pc_run *run)
{
	for (int i = 0; i < run->nfiles; i++) {
		free(run->files[i]);
		if (run->objects[i])
			gmon_objects_release(run->objects[i]);
		free(run->objects[i]);
	}
	free(run->files);
	free(run->manifest);
	free(run->objects);
	free(run->mtimes);
	gmon_profile_release(&run->prof);
	memset(run, 0, sizeof(*run));
}
