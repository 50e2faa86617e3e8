/*
 * What report and run share on the way from the command line to a report:
 * the report options, the files to read for an executable (a directory
 * stands for the gmon files in it that libpc wrote for that executable,
 * and files recorded for another program are left out), and the report of
 * an executable's profiles.
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
#include "options.h"

void
report_usage(FILE *out, const char *text)
{
	fputs(text, out);
}

int
report_option(int c, const char *arg, struct report_opts *r,
	      struct symtab_opts *s)
{
	char *end;

	switch (c) {
	case OPT_FORMAT:
		if (!strcmp(arg, "text"))
			r->format = FORMAT_TEXT;
		else if (!strcmp(arg, "json"))
			r->format = FORMAT_JSON;
		else if (!strcmp(arg, "csv"))
			r->format = FORMAT_CSV;
		else if (!strcmp(arg, "folded"))
			r->format = FORMAT_FOLDED;
		else
			pc_fatal("--format '%s': not text, json, csv or folded", arg);
		return 1;
	case OPT_CALLGRAPH:
		r->callgraph = 1;
		return 1;
	case OPT_BY_OBJECT:
		r->by_object = 1;
		return 1;
	case OPT_PROCESS:
		r->process = arg;
		return 1;
	case OPT_STACKS:
		r->stacks = arg;
		return 1;
	case OPT_TOP:
		r->top = strtol(arg, &end, 10);
		if (*end || end == arg || r->top < 0)
			pc_fatal("--top '%s': not a count", arg);
		return 1;
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

/* The libpc build-id in a file's header: 1 marked, 0 not, -1 unreadable. */
static int
peek_build_id(const char *path, uint8_t id[GMON_BUILDID_SIZE])
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
	int m = peek_build_id(name, id);

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
char **
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

int
report_files(const char *exe, char **files, int nfiles, struct report_opts *r,
	     const struct symtab_opts *s, FILE *out)
{
	static char gmon_out[] = "gmon.out";
	char *deflt[] = { gmon_out };
	struct gmon_profile p;
	struct callgraph cg;
	struct symtab st;
	struct flat f;
	int arcs;

	if (nfiles == 0) {
		files = deflt;
		nfiles = 1;
	}
	symbols_load_whole(&st, exe, s, files[0]);
	files = select_files(&st, files, nfiles, &nfiles);
	r->exe = exe;
	r->files = files;
	r->nfiles = nfiles;
	profiles_load(&p, files, nfiles);
	check_build_id(&p, &st, exe);
	whole_load(&st, &p, files, nfiles, exe, s);
	if (r->by_object && !st.nobjs)
		pc_fatal("'%s': no objects manifest beside it (record with PC_SCOPE=all "
			 "for --by-object)", files[0]);
	if (r->format == FORMAT_FOLDED) {
		struct folded_set fs;

		folded_build(&fs, &st, files, nfiles, r->stacks);
		folded_print(out, &fs);
		folded_release(&fs);
		goto out;
	}
	flat_build(&f, &st, &p);
	if (f.total == 0)
		pc_warn("warning: '%s': the profile holds no samples", files[0]);
	{
		uint64_t outside;

		/* arcs, not the records that count samples outside */
		arcs = p.narcs > gmon_profile_outside(&p, &outside);
	}
	if (arcs)
		callgraph_build(&cg, &st, &p, &f);
	report_print(out, &f, &st, arcs ? &cg : NULL, r);
	if (arcs)
		callgraph_release(&cg);
	flat_release(&f);
out:
	for (int i = 0; i < nfiles; i++)
		free(files[i]);
	free(files);
	symtab_release(&st);
	gmon_profile_release(&p);
	whole_release();
	return 0;
}
