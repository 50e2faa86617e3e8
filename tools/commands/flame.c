/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof flame: its options and usage, and the flame graph of a run's stacks
 * (flame_of_run, which diff --flame draws too): stackfile.c's collapsed
 * stacks split into frames, each coloured by its object, for writers/flame.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands/options.h"
#include "inputs/runexe.h"
#include "model/timeline.h"
#include "symbols/waits.h"
#include "writers/export_out.h"
#include "writers/flame.h"
#include "pcprof.h"

static const char usage_flame[] =
"usage: pcprof flame -o SVG [--title TEXT] [--stacks-file FILE] [--process PID|NAME]\n"
"                   [--clock wall|cpu|off] [--from S] [--to S] [--marker NAME]\n"
"                   [EXE] [GMON|DIR...]\n"
"\n"
"Write an interactive flame graph of the stacks that libpc recorded beside\n"
"GMON (GMON.stacks, written with PC_STACKS=1; default GMON: gmon.out) as a\n"
"self-contained SVG: hover over a frame for its name, samples and share,\n"
"click to zoom into it (Escape or Reset zoom to go back); Search (or\n"
"Ctrl-F) highlights the functions a regular expression matches and says\n"
"their share; Invert turns it into an icicle, its root at the top.\n"
"Frames are coloured by object: warm for the executable, blue for libc,\n"
"green for other libraries, grey for code in no object. Open it in a web\n"
"browser.\n"
"A wall-clock profile (pcprof run --clock wall) is drawn in wall time: its\n"
"waits are violet frames [off-cpu: CALL] (search for off-cpu finds them),\n"
"their time counted in samples of the CPU rate; --clock cpu draws its CPU\n"
"samples alone, --clock off its waits alone.\n"
"An allocation profile's stacks (--stacks-file GMON.alloc, pcprof run\n"
"--alloc) are drawn by --clock alloc, alloc-bytes, inuse or inuse-bytes:\n"
"each frame's objects or bytes allocated, or in use at exit.\n"
"With no EXE, the program is the one that the run's manifests name (DIR,\n"
"as pcprof run left it): its processes' stacks are merged, and --process\n"
"PID|NAME keeps those of one pid or program. EXE may be a program's name\n"
"as the run recorded it, or a name on PATH.\n"
"--from S and --to S (seconds from the run's start) and --marker NAME draw\n"
"only the samples of that window, from the timeline (pcprof run --timeline).\n"
"A run with a timeline is drawn from it, with a strip of each thread's\n"
"samples over time and the markers above the graph: drag across it to\n"
"draw the graph of that window alone, click it for the whole run again.\n";

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

	if (!strcmp(name, FOLDED_OUTSIDE_NAME))
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
		/* the names themselves: the SVG escapes them as XML needs */
		for (size_t d = 0; d < depth; d++)
			text_unescape(frames[d]);
		/* a wait is off-CPU whatever else colours the graph */
		for (size_t d = 0; d < depth; d++)
			kind[d] = wait_name_is(frames[d]) ? FLAME_KIND_OFFCPU :
				  kindf ? kindf(frames[d], arg) :
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

/* The title of exe's graph of fs into buf: its samples and rate, the
 * seconds of a wall or off-CPU graph, the markers it is inside; of an
 * allocation metric, its objects or bytes allocated or in use at exit. */
static const char *
flame_title(char *buf, size_t size, const char *exe, const struct folded_set *fs,
	    enum pc_clock clock, const char *marker)
{
	int n;

	if (CLOCK_IS_ALLOC(clock)) {
		snprintf(buf, size, "%s: %.0f %s %s", exe, fs->total,
			 CLOCK_UNIT(clock), clock >= PC_CLOCK_INUSE ?
			 "in use at exit" : "allocated");
		return buf;
	}
	n = snprintf(buf, size, "%s: %.0f samples at %u Hz", exe, fs->total, fs->rate);
	if (clock != PC_CLOCK_CPU && n > 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, ", %.3f s of %s time", fs->rate ?
			      fs->total / fs->rate : 0, clock == PC_CLOCK_OFF ? "off-CPU" : "wall");
	if (marker && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ", inside the markers '%s'", marker);
	return buf;
}

int
flame_of_run(FILE *out, const struct pc_inputs *in, int run, const char *stacks_file,
	     enum pc_clock clock, const char *title,
	     unsigned char (*kind)(const char *name, void *arg), void *arg)
{
	struct flame_stack *fl;
	struct folded_set fs;
	const char *unit;
	char tbuf[512];
	int r;

	if (clock_resolve(in, run, stacks_file, &clock) ||
	    folded_build(&fs, in, run, stacks_file, clock))
		exit(EXIT_BAD_INPUT);
	if (!title)
		title = flame_title(tbuf, sizeof(tbuf), in->exe, &fs, clock, NULL);
	fl = flame_stacks(&fs, &in->st, kind, arg);
	unit = CLOCK_IS_ALLOC(clock) ? CLOCK_UNIT(clock) : "samples";
	r = flame_write_svg(out, fl, fs.n, title, unit);
	flame_stacks_free(fl, fs.n);
	folded_release(&fs);
	return r;
}

/* The time strip of an export cut to a window (its samples have their
 * times): what flame_write_svg_timeline draws, and what it holds. */
struct strip {
	struct flame_timeline tl;
	uint64_t *t;
	size_t *stack, *lane, *lane_of;
	double *weight;
	char **lanes;
	struct flame_marker *markers;
};

/* A lane for each thread with samples, labelled with its name and tid. */
static void
strip_lanes(struct strip *s, const struct export *x)
{
	s->lane_of = pc_calloc(x->nthreads + 1, sizeof(*s->lane_of));
	s->lanes = pc_calloc(x->nthreads + 1, sizeof(*s->lanes));
	for (size_t i = 0; i < x->nthreads; i++) {
		const struct xp_thread *th = &x->threads[i];
		const char *name = x->strs[th->name ? th->name : x->groups[th->group].name];
		size_t len = strlen(name) + 32;

		s->lane_of[i] = SIZE_MAX;
		if (!(th->samples > 0))
			continue;
		s->lanes[s->tl.nlanes] = pc_malloc(len);
		snprintf(s->lanes[s->tl.nlanes], len, "%s %llu", name, (unsigned long long)th->tid);
		s->lane_of[i] = s->tl.nlanes++;
	}
}

/* The lane of group's thread tid; -1 for none (a marker of the process). */
static long
strip_lane_of(const struct strip *s, const struct export *x, uint32_t group, uint32_t tid)
{
	for (size_t i = 0; tid && i < x->nthreads; i++)
		if (x->threads[i].group == group && x->threads[i].tid == tid)
			return s->lane_of[i] == SIZE_MAX ? -1 : (long)s->lane_of[i];
	return -1;
}

static void
strip_markers(struct strip *s, const struct export *x, uint64_t zero)
{
	const struct timelines *t = x->timeline;
	size_t n = 0;

	for (size_t g = 0; g < t->n; g++)
		n += t->v[g].nmarkers;
	s->markers = pc_calloc(n ? n : 1, sizeof(*s->markers));
	for (size_t g = 0; g < t->n; g++)
		for (size_t i = 0; i < t->v[g].nmarkers; i++) {
			const struct tl_marker *m = &t->v[g].markers[i];

			if (m->kind == TL_COUNTER)
				continue;
			s->markers[s->tl.nmarkers++] = (struct flame_marker){
				m->name, m->start > zero ? m->start - zero : 0,
				m->end > zero ? m->end - zero : 0,
				strip_lane_of(s, x, t->v[g].group, m->tid) };
		}
}

/* x's samples (a window's: export_keep_window) and markers as a strip
 * over fs (export_folded's of x). */
static void
strip_build(struct strip *s, const struct export *x, const struct folded_set *fs)
{
	uint64_t zero = timelines_zero(x->timeline);
	size_t n = x->nsamples ? x->nsamples : 1;

	memset(s, 0, sizeof(*s));
	s->t = pc_calloc(n, sizeof(*s->t));
	s->stack = pc_calloc(n, sizeof(*s->stack));
	s->lane = pc_calloc(n, sizeof(*s->lane));
	s->weight = pc_calloc(n, sizeof(*s->weight));
	export_folded_index(x, fs, s->stack);
	strip_lanes(s, x);
	for (size_t i = 0; i < x->nsamples; i++) {
		const struct xp_sample *sm = &x->samples[i];

		if (s->stack[i] == SIZE_MAX)
			continue;
		s->t[s->tl.n] = sm->t > zero ? sm->t - zero : 0;
		s->stack[s->tl.n] = s->stack[i];
		s->weight[s->tl.n] = sm->count;
		s->lane[s->tl.n] = sm->thread && s->lane_of[sm->thread - 1] != SIZE_MAX ?
				   s->lane_of[sm->thread - 1] : 0;
		s->tl.n++;
	}
	strip_markers(s, x, zero);
	s->tl.span = timelines_end(x->timeline) - zero;
	s->tl.t = s->t;
	s->tl.stack = s->stack;
	s->tl.weight = s->weight;
	s->tl.lane = s->lane;
	s->tl.lanes = (const char *const *)s->lanes;
	s->tl.markers = s->markers;
}

static void
strip_release(struct strip *s)
{
	for (size_t i = 0; i < s->tl.nlanes; i++)
		free(s->lanes[i]);
	free(s->lanes);
	free(s->lane_of);
	free(s->t);
	free(s->stack);
	free(s->lane);
	free(s->weight);
	free(s->markers);
}

/* The flame graph of the run's timeline, or of a window of it (--from,
 * --to, --marker: model/window.c), from the export of in's run 0,
 * loaded, with its time strip. */
static int
flame_of_window(FILE *out, const struct pc_inputs *in, const struct report_opts *r,
		const struct symtab_opts *so, const char *stacks, const char *title)
{
	struct flame_stack *fl;
	struct folded_set fs;
	struct export x;
	struct strip s;
	char tbuf[512];
	int rc;

	export_init(&x);
	x.clock = r->clock;
	if (clock_resolve(in, 0, stacks, &x.clock) || export_add(&x, in, so, stacks, in->exe, 0) ||
	    export_keep_window(&x, r))
		exit(EXIT_BAD_INPUT);
	export_folded(&x, &fs);
	if (!title)
		title = flame_title(tbuf, sizeof(tbuf), in->exe, &fs, x.clock, r->marker);
	strip_build(&s, &x, &fs);
	fl = flame_stacks(&fs, &in->st, NULL, NULL);
	rc = flame_write_svg_timeline(out, fl, fs.n, title, "samples", &s.tl);
	strip_release(&s);
	flame_stacks_free(fl, fs.n);
	folded_release(&fs);
	export_release(&x);
	return rc;
}

/* Whether a profile of in's run 0 has a timeline beside it. */
static int
has_timeline(const struct pc_inputs *in)
{
	char path[4096];

	for (int i = 0; i < in->runs[0].nfiles; i++) {
		int n = snprintf(path, sizeof(path), "%s%s", in->runs[0].files[i], PC_TL_SUFFIX);

		if (n > 0 && (size_t)n < sizeof(path) && !access(path, F_OK))
			return 1;
	}
	return 0;
}

/* --from, --to, --marker into r: 0 where c is none of them. */
static int
window_option(int c, const char *arg, struct report_opts *r)
{
	struct symtab_opts unused = { 0 };

	return (c == OPT_FROM || c == OPT_TO || c == OPT_MARKER) &&
	       report_option(c, arg, r, &unused);
}

/* The flame graph of in onto f: of win's window, or of the whole run. */
static int
flame_write(FILE *f, const struct pc_inputs *in, struct report_opts *win,
	    const struct symtab_opts *so, const char *stacks, enum pc_clock clock,
	    const char *title)
{
	win->clock = clock;
	return win->window || (!stacks && has_timeline(in)) ? flame_of_window(f, in, win, so, stacks, title) :
	       flame_of_run(f, in, 0, stacks, clock, title, NULL, NULL);
}

int
cmd_flame(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "title", required_argument, NULL, 't' },
		{ "stacks-file", required_argument, NULL, 's' },
		{ "process", required_argument, NULL, 'P' },
		{ "clock", required_argument, NULL, 'c' },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "to", required_argument, NULL, OPT_TO },
		{ "marker", required_argument, NULL, OPT_MARKER },
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 }
	};
	const char *out = NULL, *title = NULL, *stacks = NULL, *process = NULL;
	struct symtab_fetch fetch = { 0 };
	struct symtab_opts so = { .fetch = &fetch };
	struct out_file of;
	struct pc_inputs in;
	struct runexe re;
	enum pc_clock clock = PC_CLOCK_AUTO;
	struct report_opts win = { .format = FORMAT_TEXT };
	int c;
	FILE *f;

	while ((c = getopt_long(argc, argv, "ho:t:s:", longopts, NULL)) != -1) {
		if (c == 'o' || c == 't' || c == 's' || c == 'P') {
			*(c == 'o' ? &out : c == 't' ? &title : c == 's' ? &stacks : &process) = optarg;
			continue;
		}
		if (c == 'c') {
			clock = clock_named(optarg);
			continue;
		}
		if (window_option(c, optarg, &win))
			continue;
		fputs(usage_flame, c == 'h' ? stdout : stderr);
		return c == 'h' ? 0 : EXIT_BAD_INPUT;
	}
	if (!out || optind >= argc) {
		fputs(usage_flame, stderr);
		return EXIT_BAD_INPUT;
	}
	/* PC_SCOPE=all: the profiles place the frames in every object */
	if (runexe_resolve(&re, argv + optind, argc - optind, process) ||
	    runexe_open(&in, &re, &so, INPUTS_AS_GIVEN) ||
	    (((!stacks && (in.runs[0].manifest[0] || has_timeline(&in))) || win.window) &&
	     inputs_load(&in, &so, 0)))
		exit(EXIT_BAD_INPUT);
	if (!(f = out_open(&of, out)))
		exit(EXIT_BAD_INPUT);
	if (flame_write(f, &in, &win, &so, stacks, clock, title))
		pc_fatal("'%s': %s", out, strerror(errno));
	if (out_commit(&of))
		exit(EXIT_BAD_INPUT);
	inputs_close(&in);
	runexe_release(&re);
	symtab_fetch_end(&fetch);
	return 0;
}
