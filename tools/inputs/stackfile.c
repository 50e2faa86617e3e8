/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sampled stacks for pictures: the stacks files libpc writes beside its
 * profiles (PC_STACKS), read, checked to be the run's, symbolized and merged
 * into collapsed stacks ("main;caller;leaf 123", the format FlameGraph,
 * speedscope and inferno read). For report --format folded, the exports and
 * the flame graphs of commands/flame.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcprof.h"
#include "inputs/runfiles.h"
#include "symbols/waits.h"


/*
 * A stacks file left from another run must not be drawn under this one's
 * name: its build-id must be the program's, and its pid the profile's
 * where both are recorded (the profile is run's files[file], or none
 * where run is NULL). 0, or -1 after one line.
 */
static int
stacks_check_run(const char *path, const struct gmon_stacks *ss,
		 const struct symtab *st, const struct pc_run *run, int file)
{
	static const uint8_t zero[GMON_BUILDID_SIZE];
	const char *gmon = run ? run->files[file] : NULL;
	uint64_t pid;

	if (st->build_id_len >= GMON_BUILDID_SIZE &&
	    memcmp(ss->build_id, zero, sizeof(zero)) &&
	    memcmp(ss->build_id, st->build_id, GMON_BUILDID_SIZE)) {
		char a[2 * GMON_BUILDID_SIZE + 1], b[2 * GMON_BUILDID_SIZE + 1];

		for (int k = 0; k < GMON_BUILDID_SIZE; k++) {
			sprintf(a + 2 * k, "%02x", ss->build_id[k]);
			sprintf(b + 2 * k, "%02x", st->build_id[k]);
		}
		return pc_error(
			"'%s': stacks of another program (build-id %s..., the "
			"executable's is %s...): a file left from another run?",
			path, a, b);
	}
	if (gmon && run->manifest[file]) {
		const struct gmon_objects *o = runfiles_manifest(run, file);

		if (!o)
			return -1;
		pid = o->pid;
	} else {
		pid = 0;
	}
	if (pid && ss->pid && pid != ss->pid)
		return pc_error("'%s': stacks of another run (process %u, the profile's is %llu)",
				path, ss->pid, (unsigned long long)pid);
	/* libpc writes the stacks right after their profile: stacks older
	 * than the profile beside them are an earlier run's (a plain
	 * LD_PRELOAD run has no manifest to tell the pid by) */
	if (gmon) {
		struct stat a, b;

		if (stat(path, &a) == 0 && stat(gmon, &b) == 0 &&
		    (a.st_mtim.tv_sec < b.st_mtim.tv_sec ||
		     (a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
		      a.st_mtim.tv_nsec < b.st_mtim.tv_nsec)))
			return pc_error(
				"'%s': stacks of another run (older than '%s')",
				path, gmon);
	}
	return 0;
}

static int
read_stacks(const char *path, struct gmon_stacks *ss)
{
	int r = pc_read_stacks_if(path, ss);

	if (r == 1)
		return pc_error("'%s': %s (profile with PC_STACKS=1, or pcprof "
				"run --stacks)",
				path, strerror(ENOENT));
	return r;
}

static int
cmp_str(const void *a, const void *b)
{
	const struct folded *x = a, *y = b;

	return strcmp(x->line, y->line);
}

/* "root;...;leaf" for one stack; the caller frees it. An off-CPU
 * stack's leaf is its wait. Each name is escaped as text is, with a
 * semicolon in it as \x3b (TEXT_FOLDED): the only ';' left are the
 * separators, which FlameGraph, inferno and speedscope split at and
 * cannot escape; text_unescape reads a frame back. */
/* name escaped for a folded frame, in buf (*cap bytes, grown). */
static char *
escaped_frame(const char *name, char *buf, size_t *cap)
{
	size_t n = text_escape(NULL, 0, name, TEXT_FOLDED) + 1;

	if (n > *cap) {
		buf = pc_realloc(buf, n);
		*cap = n;
	}
	text_escape(buf, n, name, TEXT_FOLDED);
	return buf;
}

static char *
fold_one(const struct gmon_stack *k, const struct pc_inputs *in, int file)
{
	const struct symtab *st = &in->st;
	size_t cap = 64, len = 0;
	char *s = pc_malloc(cap), wait[96], *esc = NULL;
	size_t esc_cap = 0;
	int off = (k->flags & GMON_STACK_OFFCPU) != 0;
	long prev = -1;		/* the symbol of the frame before */

	s[0] = 0;
	if (k->flags & (GMON_STACK_TRUNCATED | GMON_STACK_CUT)) {
		strcpy(s, k->flags & GMON_STACK_TRUNCATED ? TRUNCATED_NAME :
							    CUT_NAME);
		len = strlen(s);
	}
	for (uint32_t d = k->depth; d-- > 0; ) {
		const char *name = FOLDED_OUTSIDE_NAME;
		long i = -1;
		size_t nl;
		int repeat;

		if (off && d == 0) {
			name = wait_site_name(k->pcs[0], wait, sizeof(wait));
		} else if (k->pcs[d]) {
			i = symtab_find(st, inputs_addr(in, file, k->pcs[d]));
			name = i < 0 ? "[unknown]" :
				       st->funcs[st->syms[i].func];
		}
		name = esc = escaped_frame(name, esc, &esc_cap);
		/* consecutive frames of one function are one where they are
		 * two of its pieces (foo calling foo.part.0), or no symbol's;
		 * a symbol that calls itself keeps every level, as pprof does
		 * (main;fib;fib;fib) */
		nl = strlen(name);
		repeat = len >= nl && !strcmp(s + len - nl, name) &&
			 (len == nl || s[len - nl - 1] == ';') &&
			 (i < 0 || i != prev);
		prev = i;
		if (repeat)
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
	free(esc);
	return s;
}

const char *
clock_word(enum pc_clock c)
{
	static const char *const alloc[] = { "alloc", "alloc-bytes", "inuse", "inuse-bytes" };

	if (CLOCK_IS_ALLOC(c))
		return alloc[CLOCK_ALLOC_KIND(c) & 3];
	return c == PC_CLOCK_WALL ? "wall" : c == PC_CLOCK_OFF ? "off" : "cpu";
}

double
stack_weight(const struct gmon_stacks *ss, const struct gmon_stack *k,
	     enum pc_clock c)
{
	/* an allocation profile's records count under their metric alone */
	if ((k->flags & GMON_STACK_ALLOC) || CLOCK_IS_ALLOC(c))
		return (k->flags & GMON_STACK_ALLOC) && CLOCK_IS_ALLOC(c) &&
				       GMON_ALLOC_KIND(k->flags) ==
					       CLOCK_ALLOC_KIND(c) ?
			       (double)k->count :
			       0;
	if (!(k->flags & GMON_STACK_OFFCPU))
		return c == PC_CLOCK_OFF ? 0 : (double)k->count;
	if (c != PC_CLOCK_WALL && c != PC_CLOCK_OFF)
		return 0;
	/* nanoseconds as samples at the CPU rate, so that a report's one
	 * unit is 1/rate seconds of either */
	return (double)k->count * ss->rate / 1e9;
}

/* Whether the stacks file at path has a wall-clock header. */
static int
file_is_wall(const char *path)
{
	unsigned char h[GMON_STACKS_HEADER_SIZE];
	const char *why;
	int fd = pc_open_regular(path, NULL, &why);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, h, sizeof(h));
	close(fd);
	/* little-endian version at 8 and flags at 24, as gmon.h lays out */
	return n == (ssize_t)sizeof(h) && !memcmp(h, GMON_STACKS_MAGIC, 8) &&
	       h[8] == GMON_STACKS_WALL_VERSION && !h[9] && !h[10] && !h[11] &&
	       (h[24] & GMON_STACKS_WALL);
}

int
stacks_profile_is_wall(const char *gmon)
{
	char *path = runfiles_stacks_name(gmon);
	int wall;

	wall = file_is_wall(path);
	free(path);
	return wall;
}

int
stacks_any_wall(char *const *profiles, size_t n)
{
	int wall = 0;

	for (size_t i = 0; i < n && !wall; i++) {
		size_t size = strlen(profiles[i]) + sizeof(GMON_STACKS_SUFFIX);
		char *path = pc_realloc(NULL, size);

		gmon_stacks_name(path, size, profiles[i]);
		wall = file_is_wall(path);
		free(path);
	}
	return wall;
}

int
stacks_are_wall(const struct pc_inputs *in, int runi, const char *stacks_file)
{
	const struct pc_run *run = &in->runs[runi];
	int wall = 0;

	if (stacks_file)
		return file_is_wall(stacks_file);
	for (int i = 0; i < run->nfiles && !wall; i++)
		wall = stacks_profile_is_wall(run->files[i]);
	return wall;
}

int
clock_resolve(const struct pc_inputs *in, int run, const char *stacks_file,
	      enum pc_clock *clock)
{
	enum pc_clock asked = *clock;
	int wall;

	if (CLOCK_IS_ALLOC(asked))
		return 0;	/* of the allocation profile (cmd_report.c) */
	wall = stacks_are_wall(in, run, stacks_file);
	if (asked == PC_CLOCK_AUTO)
		*clock = wall ? PC_CLOCK_WALL : PC_CLOCK_CPU;
	else if (!wall && asked != PC_CLOCK_CPU)
		return pc_error(
			"'%s': a CPU profile, with no off-CPU time for --clock %s "
			"(record with pcprof run --clock wall, or PC_CLOCK=wall)",
			stacks_file ? stacks_file : in->runs[run].files[0],
			clock_word(asked));
	return 0;
}

int
stacks_load(const struct pc_inputs *in, int runi, int file,
	    const char *stacks_file, int required, struct gmon_stacks *ss)
{
	const struct pc_run *run = &in->runs[runi];
	char *path = stacks_file ? pc_strdup(stacks_file) :
		     in->alloc ? runfiles_alloc_name(run->files[file]) :
				 runfiles_stacks_name(run->files[file]);
	int r = required ? read_stacks(path, ss) : pc_read_stacks_if(path, ss);

	if (r == 1) {
		free(path);
		return 1;
	}
	if (r ||
	    stacks_check_run(path, ss, &in->st, stacks_file ? NULL : run,
			     file)) {
		free(path);
		return -1;
	}
	free(path);
	return 0;
}

int
folded_build(struct folded_set *fs, const struct pc_inputs *in, int run,
	     const char *stacks_file, enum pc_clock clock)
{
	int n = in->runs[run].nfiles;
	size_t cap = 0, k = 0;

	memset(fs, 0, sizeof(*fs));
	for (int i = 0; i < (stacks_file ? 1 : n); i++) {
		struct gmon_stacks ss;

		if (stacks_load(in, run, i, stacks_file, 1, &ss))
			return -1;
		if (!fs->rate)
			fs->rate = ss.rate;
		if (ss.rate != fs->rate)
			return pc_error("'%s%s': sampled at %u Hz, not %u Hz",
					stacks_file ? stacks_file :
						      in->runs[run].files[i],
					stacks_file ? "" : GMON_STACKS_SUFFIX,
					ss.rate, fs->rate);
		for (size_t j = 0; j < ss.n; j++) {
			double w = stack_weight(&ss, &ss.v[j], clock);

			if (!(w > 0))
				continue;
			if (k == cap) {
				cap = cap ? 2 * cap : 1024;
				fs->v = pc_realloc(fs->v, cap * sizeof(*fs->v));
			}
			fs->v[k].line = fold_one(&ss.v[j], in, i);
			fs->v[k].count = w;
			fs->total += fs->v[k].count;
			k++;
		}
		gmon_stacks_release(&ss);
	}
	folded_merge(fs, k);
	return 0;
}

void
folded_merge(struct folded_set *fs, size_t k)
{
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
	/* a wall profile's off-CPU time is in fractions of a sample: a stack
	 * of under half of one is left out (the folded format counts whole) */
	for (size_t i = 0; i < fs->n; i++)
		if (fs->v[i].count >= 0.5)
			fprintf(out, "%s %.0f\n", fs->v[i].line,
				fs->v[i].count);
}

void
folded_release(struct folded_set *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		free(fs->v[i].line);
	free(fs->v);
	memset(fs, 0, sizeof(*fs));
}
