/*
 * Sampled stacks for pictures: the stacks files libpc writes beside its
 * profiles (PC_STACKS), symbolized and merged into collapsed stacks
 * ("main;caller;leaf 123", the format FlameGraph, speedscope and inferno
 * read) or handed to the flame graph writer.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "writers/flame.h"
#include "pcprof.h"
#include "inputs/runfiles.h"

#define OUTSIDE_NAME	"[libraries]"

/*
 * A stacks file left from another run must not be drawn under this one's
 * name: its build-id must be the program's, and its pid the profile's
 * where both are recorded (the profile is run's files[file], or none
 * where run is NULL).
 */
static void
stacks_check_run(const char *path, const struct gmon_stacks *ss,
		 const struct symtab *st, const struct pc_run *run, int file)
{
	static const uint8_t zero[GMON_BUILDID_SIZE];
	const char *gmon = run ? run->files[file] : NULL;
	uint64_t pid;

	if (st->build_id_len >= GMON_BUILDID_SIZE && memcmp(ss->build_id, zero, sizeof(zero)) &&
	    memcmp(ss->build_id, st->build_id, GMON_BUILDID_SIZE)) {
		char a[2 * GMON_BUILDID_SIZE + 1], b[2 * GMON_BUILDID_SIZE + 1];

		for (int k = 0; k < GMON_BUILDID_SIZE; k++) {
			sprintf(a + 2 * k, "%02x", ss->build_id[k]);
			sprintf(b + 2 * k, "%02x", st->build_id[k]);
		}
		pc_fatal("'%s': stacks of another program (build-id %s..., the executable's "
			 "is %s...): a file left from another run?", path, a, b);
	}
	pid = gmon && run->manifest[file] ? runfiles_manifest(run, file)->pid : 0;
	if (pid && ss->pid && pid != ss->pid)
		pc_fatal("'%s': stacks of another run (process %u, the profile's is %llu)",
			 path, ss->pid, (unsigned long long)pid);
	/* libpc writes the stacks right after their profile: stacks older
	 * than the profile beside them are an earlier run's (a plain
	 * LD_PRELOAD run has no manifest to tell the pid by) */
	if (gmon) {
		struct stat a, b;

		if (stat(path, &a) == 0 && stat(gmon, &b) == 0 &&
		    (a.st_mtim.tv_sec < b.st_mtim.tv_sec ||
		     (a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec < b.st_mtim.tv_nsec)))
			pc_fatal("'%s': stacks of another run (older than '%s')", path, gmon);
	}
}

static void
read_stacks(const char *path, struct gmon_stacks *ss)
{
	if (access(path, F_OK))
		pc_fatal("'%s': %s%s", path, strerror(errno), errno == ENOENT ?
			 " (profile with PC_STACKS=1, or pcprof run --stacks)" : "");
	pc_read_stacks(path, ss);
}

static int
cmp_str(const void *a, const void *b)
{
	const struct folded *x = a, *y = b;

	return strcmp(x->line, y->line);
}

/* "root;...;leaf" for one stack; the caller frees it. */
static char *
fold_one(const struct gmon_stack *k, const struct pc_inputs *in, int file)
{
	const struct symtab *st = &in->st;
	size_t cap = 64, len = 0;
	char *s = malloc(cap);

	if (!s)
		pc_fatal("out of memory");
	s[0] = 0;
	if (k->flags & GMON_STACK_TRUNCATED) {
		strcpy(s, "[truncated]");
		len = strlen(s);
	}
	for (uint32_t d = k->depth; d-- > 0; ) {
		const char *name = OUTSIDE_NAME;
		size_t nl;

		if (k->pcs[d]) {
			long i = symtab_find(st, inputs_addr(in, file, k->pcs[d]));

			name = i < 0 ? "[unknown]" : st->funcs[st->syms[i].func];
		}
		/* consecutive frames of one function (a folded piece) are one */
		nl = strlen(name);
		if (len >= nl && !strcmp(s + len - nl, name) &&
		    (len == nl || s[len - nl - 1] == ';'))
			continue;
		while (len + nl + 2 > cap) {
			cap *= 2;
			s = pc_realloc(s, cap);
		}
		if (len)
			s[len++] = ';';
		memcpy(s + len, name, nl + 1);
		len += nl;
	}
	return s;
}

int
stacks_load(const struct pc_inputs *in, int runi, int file, const char *stacks_file,
	    int required, struct gmon_stacks *ss)
{
	const struct pc_run *run = &in->runs[runi];
	char *path = stacks_file ? strdup(stacks_file) : runfiles_stacks_name(run->files[file]);

	if (!path)
		pc_fatal("out of memory");
	if (!required && access(path, F_OK) && errno == ENOENT) {
		free(path);
		return 1;
	}
	read_stacks(path, ss);
	stacks_check_run(path, ss, &in->st, stacks_file ? NULL : run, file);
	free(path);
	return 0;
}

void
folded_build(struct folded_set *fs, const struct pc_inputs *in, int run,
	     const char *stacks_file)
{
	int n = in->runs[run].nfiles;
	size_t cap = 0, k = 0;

	memset(fs, 0, sizeof(*fs));
	for (int i = 0; i < (stacks_file ? 1 : n); i++) {
		struct gmon_stacks ss;

		stacks_load(in, run, i, stacks_file, 1, &ss);
		if (!fs->rate)
			fs->rate = ss.rate;
		if (ss.rate != fs->rate)
			pc_fatal("'%s%s': sampled at %u Hz, not %u Hz",
				 stacks_file ? stacks_file : in->runs[run].files[i],
				 stacks_file ? "" : GMON_STACKS_SUFFIX, ss.rate, fs->rate);
		for (size_t j = 0; j < ss.n; j++) {
			if (k == cap) {
				cap = cap ? 2 * cap : 1024;
				fs->v = realloc(fs->v, cap * sizeof(*fs->v));
				if (!fs->v)
					pc_fatal("out of memory");
			}
			fs->v[k].line = fold_one(&ss.v[j], in, i);
			fs->v[k].count = (double)ss.v[j].count;
			fs->total += fs->v[k].count;
			k++;
		}
		gmon_stacks_release(&ss);
	}
	/* the same names from different addresses are one stack */
	qsort(fs->v, k, sizeof(*fs->v), cmp_str);
	fs->n = 0;
	for (size_t j = 0; j < k; j++) {
		if (fs->n && !strcmp(fs->v[fs->n - 1].line, fs->v[j].line)) {
			fs->v[fs->n - 1].count += fs->v[j].count;
			free(fs->v[j].line);
		} else {
			fs->v[fs->n++] = fs->v[j];
		}
	}
}

void
folded_print(FILE *out, const struct folded_set *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		fprintf(out, "%s %.0f\n", text_name(fs->v[i].line), fs->v[i].count);
}

void
folded_release(struct folded_set *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		free(fs->v[i].line);
	free(fs->v);
	memset(fs, 0, sizeof(*fs));
}

static const char usage_flame[] =
"usage: pcprof flame -o SVG [--title TEXT] [--stacks-file FILE] EXE [GMON...]\n"
"\n"
"Write an interactive flame graph of the stacks that libpc recorded beside\n"
"GMON (GMON.stacks, written with PC_STACKS=1; default GMON: gmon.out) as a\n"
"self-contained SVG: hover over a frame for its name, samples and share,\n"
"click to zoom into it (Escape or Reset zoom to go back); Search (or\n"
"Ctrl-F) highlights the functions a regular expression matches and says\n"
"their share; Invert turns it into an icicle, its root at the top.\n"
"Frames are coloured by object: warm for the executable, blue for libc,\n"
"green for other libraries, grey for code in no object. Open it in a web\n"
"browser.\n";

/* Each function's kind of object, by name, for the flame graph's colours. */
struct kind_of {
	const char *name;
	unsigned char kind;
};

static int
cmp_kind(const void *a, const void *b)
{
	return strcmp(((const struct kind_of *)a)->name, ((const struct kind_of *)b)->name);
}

static unsigned char
object_kind(const struct symtab *st, uint32_t func)
{
	const char *obj;

	if (!st->nobjs || st->func_obj[func] == 0)
		return FLAME_KIND_EXE;
	obj = st->objnames[st->func_obj[func]];
	if (!strncmp(obj, "libc.so", 7))
		return FLAME_KIND_LIBC;
	return obj[0] == '[' ? FLAME_KIND_ANON : FLAME_KIND_LIB;
}

static struct kind_of *
kinds_build(const struct symtab *st)
{
	struct kind_of *k = malloc((st->nfuncs ? st->nfuncs : 1) * sizeof(*k));

	if (!k)
		pc_fatal("out of memory");
	for (size_t i = 0; i < st->nfuncs; i++)
		k[i] = (struct kind_of){ st->funcs[i], object_kind(st, (uint32_t)i) };
	qsort(k, st->nfuncs, sizeof(*k), cmp_kind);
	return k;
}

static unsigned char
kind_find(const struct kind_of *k, size_t n, const char *name)
{
	struct kind_of key = { name, 0 };
	const struct kind_of *f;

	if (!strcmp(name, OUTSIDE_NAME))
		return FLAME_KIND_LIB;
	f = bsearch(&key, k, n, sizeof(*k), cmp_kind);
	return f ? f->kind : FLAME_KIND_ANON;
}

/* The collapsed lines of fs split back into their frames, in place: one
 * flame_stack a line, its frames and kinds malloc'ed (flame_stacks_free). */
static struct flame_stack *
flame_stacks(struct folded_set *fs, const struct symtab *st,
	     unsigned char (*kindf)(const char *name, void *arg), void *arg)
{
	struct flame_stack *fl = calloc(fs->n ? fs->n : 1, sizeof(*fl));
	struct kind_of *kinds = kinds_build(st);

	if (!fl)
		pc_fatal("out of memory");
	for (size_t i = 0; i < fs->n; i++) {
		size_t depth = 1;
		unsigned char *kind;
		char **frames;
		char *p;

		for (p = fs->v[i].line; *p; p++)
			depth += *p == ';';
		frames = malloc(depth * sizeof(*frames));
		kind = malloc(depth);
		if (!frames || !kind)
			pc_fatal("out of memory");
		depth = 0;
		frames[depth++] = fs->v[i].line;
		for (p = fs->v[i].line; *p; p++)
			if (*p == ';') {
				*p = 0;
				frames[depth++] = p + 1;
			}
		for (size_t d = 0; d < depth; d++)
			kind[d] = kindf ? kindf(frames[d], arg) :
				  kind_find(kinds, st->nfuncs, frames[d]);
		fl[i].frames = (const char *const *)frames;
		fl[i].depth = depth;
		fl[i].count = fs->v[i].count;
		fl[i].kinds = kind;
	}
	free(kinds);
	return fl;
}

static void
flame_stacks_free(struct flame_stack *fl, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free((void *)fl[i].frames);
		free((void *)fl[i].kinds);
	}
	free(fl);
}

int
flame_of_run(FILE *out, const struct pc_inputs *in, int run, const char *stacks_file,
	     const char *title, unsigned char (*kind)(const char *name, void *arg), void *arg)
{
	struct flame_stack *fl;
	struct folded_set fs;
	char tbuf[512];
	int r;

	folded_build(&fs, in, run, stacks_file);
	if (!title) {
		snprintf(tbuf, sizeof(tbuf), "%s: %.0f samples at %u Hz", in->exe, fs.total,
			 fs.rate);
		title = tbuf;
	}
	fl = flame_stacks(&fs, &in->st, kind, arg);
	r = flame_write_svg(out, fl, fs.n, title, "samples");
	flame_stacks_free(fl, fs.n);
	folded_release(&fs);
	return r;
}

int
cmd_flame(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 't' },
		{ "stacks-file", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 }
	};
	const char *out = NULL, *title = NULL, *stacks = NULL;
	struct symtab_fetch fetch = { 0 };
	struct symtab_opts so = { .fetch = &fetch };
	struct out_file of;
	struct pc_inputs in;
	int c;
	FILE *f;

	while ((c = getopt_long(argc, argv, "+ho:t:s:", longopts, NULL)) != -1) {
		if (c == 'o' || c == 't' || c == 's') {
			*(c == 'o' ? &out : c == 't' ? &title : &stacks) = optarg;
			continue;
		}
		fputs(usage_flame, c == 'h' ? stdout : stderr);
		return c == 'h' ? 0 : EXIT_BAD_INPUT;
	}
	if (!out || optind >= argc) {
		fputs(usage_flame, stderr);
		return EXIT_BAD_INPUT;
	}
	inputs_open(&in, argv[optind], argv + optind + 1, argc - optind - 1, &so,
		    INPUTS_AS_GIVEN);
	/* PC_SCOPE=all: the profiles place the frames in every object */
	if (!stacks && in.runs[0].manifest[0])
		inputs_load(&in, &so, 0);
	f = out_open(&of, out);
	if (flame_of_run(f, &in, 0, stacks, title, NULL, NULL))
		pc_fatal("'%s': %s", out, strerror(errno));
	out_commit(&of);
	inputs_close(&in);
	symtab_fetch_end(&fetch);
	return 0;
}
