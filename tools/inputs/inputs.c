/*
 * From the command line to what a command reads: the report options that
 * report and run share, and the inputs (struct pc_inputs), resolved once:
 * the executable's symbols, the profiles its operands stand for (a
 * directory for the gmon files in it that libpc wrote for that
 * executable; of several files, those recorded for another program are
 * left out), whether each has a manifest, then the profiles read and the
 * manifests' objects added (whole.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcprof.h"
#include "commands/options.h"

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
		"text", "json", "csv", "folded", "pprof", "speedscope", "callgrind"
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(arg, words[i]))
			return (enum format)i;
	pc_fatal("--format '%s': not text, json, csv, folded, pprof, speedscope or callgrind",
		 arg);
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
	case OPT_BY_THREAD:
		r->by_thread = 1;
		return 1;
	case OPT_THREAD:
		r->thread = arg;
		return 1;
	case OPT_STACKS:
		r->stacks = arg;
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

int
inputs_build_id(const char *path, uint8_t id[GMON_BUILDID_SIZE])
{
	unsigned char h[GMON_HEADER_SIZE];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat sb;
	ssize_t n;

	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -1;
	}
	n = read(fd, h, sizeof(h));
	close(fd);
	if (n != (ssize_t)sizeof(h) || memcmp(h, GMON_MAGIC, 4))
		return -1;
	if (h[8] != GMON_PC_MARK0 || h[9] != GMON_PC_MARK1)
		return 0;
	memcpy(id, h + 8 + GMON_BUILDID_OFF, GMON_BUILDID_SIZE);
	return 1;
}

/* A PC_SCOPE=all manifest (a shell glob like gmon.out.* takes them in). */
static int
is_manifest(const char *path)
{
	char head[sizeof(GMON_OBJECTS_MAGIC)];
	size_t n = strlen(path);
	int fd, r = 0;

	if (n < 8 || strcmp(path + n - 8, ".objects"))
		return 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return 0;
	r = read(fd, head, sizeof(head) - 1) == (ssize_t)sizeof(head) - 1 &&
	    !memcmp(head, GMON_OBJECTS_MAGIC, sizeof(head) - 1);
	close(fd);
	return r;
}

/* PROFILE+NAME, where PROFILE is among files[0..n) and has a manifest:
 * part of a PC_SCOPE=all run, read through that manifest. */
static int
is_object_file(const char *path, char **files, int n)
{
	const char *plus = strrchr(path, '+');
	size_t k;

	if (!plus || strchr(plus, '/'))
		return 0;
	k = (size_t)(plus - path);
	for (int i = 0; i < n; i++)
		if (strlen(files[i]) == k && !strncmp(files[i], path, k))
			return files_have_manifest(files[i]);
	return 0;
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory path (not its dot files), sorted; *nn of them. */
static char **
dir_names(const char *path, size_t *nn)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char **names = NULL;

	*nn = 0;
	if (!d)
		pc_fatal("'%s': %s", path, strerror(errno));
	recover_dir(path);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		names = pc_realloc(names, (*nn + 1) * sizeof(*names));
		if (asprintf(&names[*nn], "%s/%s", path, e->d_name) < 0)
			pc_fatal("out of memory");
		(*nn)++;
	}
	closedir(d);
	if (*nn)
		qsort(names, *nn, sizeof(*names), cmp_name);
	return names;
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
	int m = inputs_build_id(name, id);

	if (dir)	/* only profiles of exe */
		return m == 1 && !(known && memcmp(id, st->build_id, sizeof(id)));
	if ((m == -1 && is_manifest(name)) || is_object_file(name, files, nfiles))
		return 0;	/* read with its profile */
	if (many && m == 1 && known && memcmp(id, zero, sizeof(id)) &&
	    memcmp(id, st->build_id, sizeof(id)))
		return 2;
	return 1;
}

/*
 * The profiles to read: each directory stands for the gmon files in it
 * that libpc wrote for exe (the files of one multi-process run), and of
 * several files those recorded for another program are left out.
 */
static char **
select_files(const struct symtab *st, char **files, int nfiles, int *nout)
{
	size_t cap = 16, n = 0, skipped = 0;
	char **v = malloc(cap * sizeof(*v));
	int many = nfiles > 1;

	if (!v)
		pc_fatal("out of memory");
	for (int i = 0; i < nfiles; i++) {
		struct stat sb;
		char **names;
		size_t nn = 1;
		int dir = stat(files[i], &sb) == 0 && S_ISDIR(sb.st_mode);

		if (dir) {
			names = dir_names(files[i], &nn);
			many = 1;
		} else if (!(names = malloc(sizeof(*names))) ||
			   !(names[0] = strdup(files[i]))) {
			pc_fatal("out of memory");
		}
		for (size_t k = 0; k < nn; k++) {
			int keep = keep_file(st, names[k], dir, many, files, nfiles);

			if (keep != 1) {
				skipped += keep == 2;
				free(names[k]);
				continue;
			}
			if (n == cap)
				v = pc_realloc(v, (cap *= 2) * sizeof(*v));
			v[n++] = names[k];
		}
		free(names);
	}
	if (skipped)
		pc_warn("note: left out %zu profile%s of other programs", skipped,
			skipped == 1 ? "" : "s");
	if (n == 0)
		pc_fatal("'%s': no profile of this program there", files[0]);
	*nout = (int)n;
	return v;
}

/* A profile (a plain file) with a manifest beside it: PC_SCOPE=all. */
static int
whole_profile(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && files_have_manifest(path);
}

/* Run r of in: files[0..n) as given, or the profiles they stand for. */
static void
open_run(struct pc_inputs *in, struct pc_run *run, char **files, int n, int flags)
{
	if (flags & INPUTS_AS_GIVEN) {
		run->files = pc_realloc(NULL, (size_t)n * sizeof(*run->files));
		for (int i = 0; i < n; i++)
			if (!(run->files[i] = strdup(files[i])))
				pc_fatal("out of memory");
		run->nfiles = n;
	} else {
		run->files = select_files(&in->st, files, n, &run->nfiles);
	}
	run->manifest = pc_realloc(NULL, (size_t)run->nfiles);
	for (int i = 0; i < run->nfiles; i++) {
		run->manifest[i] = (unsigned char)files_have_manifest(run->files[i]);
		in->whole |= run->manifest[i];
	}
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
	symbols_load_whole(&in->st, exe, so, whole_profile(operands[0]));
	in->nruns = each ? n : 1;
	if (!(in->runs = calloc((size_t)in->nruns, sizeof(*in->runs))))
		pc_fatal("out of memory");
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
		whole_load(in->objects, &in->st, &run->prof, run->files, run->manifest,
			   run->nfiles, in->exe, so);
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
	for (int r = 0; r < in->nruns; r++) {
		struct pc_run *run = &in->runs[r];

		for (int i = 0; i < run->nfiles; i++)
			free(run->files[i]);
		free(run->files);
		free(run->manifest);
		gmon_profile_release(&run->prof);
	}
	free(in->runs);
	symtab_release(&in->st);
	whole_free(in->objects);
	memset(in, 0, sizeof(*in));
}
