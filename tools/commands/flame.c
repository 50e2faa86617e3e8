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

#include "commands/options.h"
#include "inputs/runexe.h"
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
"With no EXE, the program is the one that the run's manifests name (DIR,\n"
"as pcprof run left it): its processes' stacks are merged, and --process\n"
"PID|NAME keeps those of one pid or program. EXE may be a program's name\n"
"as the run recorded it, or a name on PATH.\n"
"--from S and --to S (seconds from the run's start) and --marker NAME draw\n"
"only the samples of that window, from the timeline (pcprof run --timeline).\n";

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

int
flame_of_run(FILE *out, const struct pc_inputs *in, int run, const char *stacks_file,
	     enum pc_clock clock, const char *title,
	     unsigned char (*kind)(const char *name, void *arg), void *arg)
{
	struct flame_stack *fl;
	struct folded_set fs;
	char tbuf[512];
	int r;

	if (clock_resolve(in, run, stacks_file, &clock) ||
	    folded_build(&fs, in, run, stacks_file, clock))
		exit(EXIT_BAD_INPUT);
	if (!title) {
		int n = snprintf(tbuf, sizeof(tbuf), "%s: %.0f samples at %u Hz", in->exe,
				 fs.total, fs.rate);

		if (clock != PC_CLOCK_CPU && n > 0 && (size_t)n < sizeof(tbuf))
			snprintf(tbuf + n, sizeof(tbuf) - (size_t)n, ", %.3f s of %s time", fs.rate ?
				 fs.total / fs.rate : 0, clock == PC_CLOCK_OFF ? "off-CPU" : "wall");
		title = tbuf;
	}
	fl = flame_stacks(&fs, &in->st, kind, arg);
	r = flame_write_svg(out, fl, fs.n, title, "samples");
	flame_stacks_free(fl, fs.n);
	folded_release(&fs);
	return r;
}

/* The flame graph of a window of the run's timeline (--from, --to,
 * --marker: model/window.c), from the export of in's run 0, loaded. */
static int
flame_of_window(FILE *out, const struct pc_inputs *in, const struct report_opts *r,
		const struct symtab_opts *so, const char *stacks, const char *title)
{
	struct flame_stack *fl;
	struct folded_set fs;
	struct export x;
	char tbuf[512];
	int rc;

	export_init(&x);
	x.clock = r->clock;
	if (clock_resolve(in, 0, stacks, &x.clock) || export_add(&x, in, so, stacks, in->exe, 0) ||
	    export_keep_window(&x, r))
		exit(EXIT_BAD_INPUT);
	export_folded(&x, &fs);
	if (!title) {
		snprintf(tbuf, sizeof(tbuf), "%s: %.0f samples at %u Hz%s%s%s", in->exe,
			 fs.total, fs.rate, r->marker ? ", inside the markers '" : "",
			 r->marker ? r->marker : "", r->marker ? "'" : "");
		title = tbuf;
	}
	fl = flame_stacks(&fs, &in->st, NULL, NULL);
	rc = flame_write_svg(out, fl, fs.n, title, "samples");
	flame_stacks_free(fl, fs.n);
	folded_release(&fs);
	export_release(&x);
	return rc;
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
	return win->window ? flame_of_window(f, in, win, so, stacks, title) :
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
	    (((!stacks && in.runs[0].manifest[0]) || win.window) && inputs_load(&in, &so, 0)))
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
