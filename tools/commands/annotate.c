/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof annotate: one function's samples by instruction and by source
 * line. The instructions come from binutils' objdump, run as a subprocess:
 * it is installed wherever gprof is (the same package), it knows every
 * instruction set binutils does, and it prints jump targets by symbol, so
 * pcprof needs no disassembler of its own and no library beside libelf's.
 * The lines come from DWARF (lines.c).
 *
 * A bin is 2 bytes and an instruction 1 to 15. A bin's samples (the
 * function's share of it, as the flat profile counts it) go to the
 * instruction that holds the bin's second byte: a sample is at an
 * instruction's start, and an instruction that starts at the bin's first
 * byte and is longer than one byte holds the second too. This is the rule
 * pcprof report --lines (and gprof -l) use for lines, so an instruction's
 * samples add up to its line's, and the instructions' to the function's,
 * exactly.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcprof.h"
#include "commands/launch.h"
#include "inputs/runexe.h"
#include "model/lines.h"

#define HOT	0.05	/* a line or instruction with this share is marked */

struct insn {
	uint64_t addr;		/* link-time, within the object */
	char *text;
	double samples;
	int target;		/* a jump in the function lands here */
	int has_line;		/* line is set */
	struct {
		const char *file, *inlined;
		int line;
	} line;
};

struct annotation {
	struct insn *v;
	size_t n;
	uint32_t func, obj;
	double samples;		/* the function's */
	double total;		/* the profile's */
	uint32_t rate;
};

static const char usage_annotate[] =
"usage: pcprof annotate [--asm|--source] [--source-dir DIR] [--process PID|NAME]\n"
"                       [EXE] [GMON|DIR...] FUNCTION\n"
"\n"
"One function's samples by instruction and by source line. FUNCTION is a\n"
"name as pcprof report shows it (a demangled C++ name, short), or a\n"
"prefix of one; of several that match, the one with most samples is\n"
"shown and the others are named. --asm: the instructions (objdump's),\n"
"each with its samples, grouped under their source lines, jump targets\n"
"marked with >. --source: the source lines with their samples. Both\n"
"(the default): each source line, then its instructions. Lines with 5 %\n"
"of the function's samples or more are marked with *. Source files are\n"
"found where the debug information says, or under --source-dir DIR\n"
"(by name, then by their path under DIR).\n"
"With no EXE, the program is the one that the run's manifests name (DIR,\n"
"as pcprof run left it), its processes merged; --process PID|NAME picks\n"
"one of several programs. EXE may be a name the run recorded, or on PATH.\n";

/* ----------------------------------------------------- the function */

/* The function named name: exactly, else by prefix; of several, the one
 * with most samples in f, the others named on one line. */
static uint32_t
pick_function(const struct symtab *st, const struct flat *f, const char *name)
{
	size_t n = strlen(name), found = 0;
	long best = -1;

	for (int exact = 1; exact >= 0 && best < 0; exact--)
		for (size_t i = 0; i < f->nrows; i++) {
			const char *fn = st->funcs[f->rows[i].func];

			if (exact ? strcmp(fn, name) : strncmp(fn, name, n))
				continue;
			if (best < 0)
				best = (long)i;
			else if (found < 8)
				pc_warn("note: '%s' also matches %s (%.0f samples)",
					name, fn, f->rows[i].samples);
			found++;
		}
	if (best < 0)
		pc_fatal("'%s': no function of that name or prefix has samples",
			 name);
	if (found > 8)
		pc_warn("note: and %zu more functions match '%s'", found - 8,
			name);
	return f->rows[best].func;
}

/* ----------------------------------------------------- disassembly */

/* objdump's lines "  addr:\tinstruction" for [lo, hi) of path. */
static void
disassemble(struct annotation *an, const char *path, uint64_t lo, uint64_t hi)
{
	static char objdump[] = "objdump", d[] = "-d", w[] = "-w",
		    raw[] = "--no-show-raw-insn", dashes[] = "--";
	char start[32], stop[32], exe[PATH_MAX], *line = NULL;
	char *argv[] = { objdump,      d,   w, raw, start, stop, dashes,
			 (char *)path, NULL };
	struct launch l = { .exe = exe, .argv = argv, .capture = 1 };
	size_t cap = 0;
	int err;
	FILE *in;

	snprintf(start, sizeof(start), "--start-address=0x%llx",
		 (unsigned long long)lo);
	snprintf(stop, sizeof(stop), "--stop-address=0x%llx",
		 (unsigned long long)hi);
	/* execvp(3) calls a directory on PATH EACCES */
	if ((err = launch_find(objdump, exe, sizeof(exe))) ||
	    (err = launch_start(&l)))
		pc_fatal("objdump: %s (install binutils)",
			 strerror(err == EISDIR ? EACCES : err));
	if (!(in = fdopen(l.output, "r")))
		pc_fatal("out of memory");
	while (getline(&line, &cap, in) > 0) {
		char *end, *tab = strchr(line, '\t');
		unsigned long long a = strtoull(line, &end, 16);

		if (!tab || end == line || *end != ':' || a < lo || a >= hi)
			continue;
		tab[strcspn(tab, "\n")] = 0;
		an->v = pc_realloc(an->v, (an->n + 1) * sizeof(*an->v));
		an->v[an->n] =
			(struct insn){ .addr = a, .text = strdup(tab + 1) };
		if (!an->v[an->n].text)
			pc_fatal("out of memory");
		an->n++;
	}
	free(line);
	fclose(in);
	if (!launch_wait(&l) || !WIFEXITED(l.status) || WEXITSTATUS(l.status))
		pc_fatal("'%s': objdump could not disassemble it", path);
}

static int
cmp_insn(const void *a, const void *b)
{
	const struct insn *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Mark the instructions that a jump of the function lands on: objdump
 * writes a jump's target as "ADDR <function+0x..>". */
static void
mark_targets(struct annotation *an)
{
	for (size_t i = 0; i < an->n; i++) {
		const char *t = an->v[i].text, *lt = strchr(t, '<');
		unsigned long long a;
		char *end;

		if (t[0] != 'j' || !lt || lt == t)
			continue;
		for (lt--; lt > t && lt[-1] != ' ' && lt[-1] != '\t'; lt--)
			;
		a = strtoull(lt, &end, 16);
		if (end != lt) {
			struct insn key = { .addr = a }, *hit;

			hit = bsearch(&key, an->v, an->n, sizeof(*an->v),
				      cmp_insn);
			if (hit)
				hit->target = 1;
		}
	}
}

/* ----------------------------------------------------- the samples */

/* The instruction holding address a: the last one starting at or below
 * it (the first if none does). */
static struct insn *
holding(struct annotation *an, uint64_t a)
{
	size_t lo = 0, hi = an->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (an->v[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &an->v[lo ? lo - 1 : 0];
}

/* c samples in [lo, hi), by 2-byte units, each to the instruction that
 * holds its second byte (see the top). */
static void
credit(struct annotation *an, uint64_t lo, uint64_t hi, double c)
{
	if (hi - lo > 64) {
		/* a foreign profile's wide bin: by bytes, an instruction at a
		 * time */
		for (struct insn *v = holding(an, lo);
		     v < an->v + an->n && v->addr < hi; v++) {
			uint64_t a = v->addr > lo ? v->addr : lo;
			uint64_t b = v + 1 < an->v + an->n && v[1].addr < hi ?
					     v[1].addr :
					     hi;

			if (b > a)
				v->samples +=
					c * (double)(b - a) / (double)(hi - lo);
		}
		return;
	}
	for (uint64_t u = lo & ~UINT64_C(1); u < hi; u += 2) {
		uint64_t a = u > lo ? u : lo, b = u + 2 < hi ? u + 2 : hi;

		holding(an, b - 1)->samples +=
			c * (double)(b - a) / (double)(hi - lo);
	}
}

/* flat_walk's share of a symbol in a bin: the function's, to its
 * instructions. */
struct walk {
	struct annotation *an;
	const struct symtab *st;
};

static void
give_insns(void *arg, size_t sym, uint64_t lo, uint64_t hi, double samples)
{
	struct walk *w = arg;

	if (w->st->syms[sym].func != w->an->func)
		return;
	w->an->samples += samples;
	credit(w->an, lo & GMON_OBJ_ADDR_MASK, hi - (lo & ~GMON_OBJ_ADDR_MASK),
	       samples);
}

/* The function's instructions, from every piece of it, with their
 * samples; exits if objdump gives none. */
static void
build(struct annotation *an, const struct pc_inputs *in,
      const struct gmon_profile *p, const char *path)
{
	const struct symtab *st = &in->st;
	struct walk w = { an, st };
	double unknown = 0;

	for (size_t i = 0; i < st->nsyms; i++)
		if (st->syms[i].func == an->func)
			disassemble(
				an, path, st->syms[i].lo & GMON_OBJ_ADDR_MASK,
				st->syms[i].hi & GMON_OBJ_ADDR_MASK ?
					st->syms[i].hi & GMON_OBJ_ADDR_MASK :
					GMON_OBJ_ADDR_MASK);
	if (!an->n)
		pc_fatal("'%s': objdump shows no instructions for %s", path,
			 st->funcs[an->func]);
	qsort(an->v, an->n, sizeof(*an->v), cmp_insn);
	mark_targets(an);
	an->total = flat_walk(st, p, give_insns, &w, &unknown);
}

/* ----------------------------------------------------- printing */

struct source {
	const char *path;	/* as DWARF names it */
	char **text;		/* its lines, [0] unused; NULL if not found */
	size_t n;
};

#define MAX_SOURCE	(64 << 20)	/* bytes of a source file read, at most */

/* A source file to read: a plain file (never a FIFO or a device, which
 * could block or never end) of at most MAX_SOURCE bytes; NULL if not. */
static FILE *
open_source(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat sb;
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_size > MAX_SOURCE ||
	    !(f = fdopen(fd, "r"))) {
		close(fd);
		return NULL;
	}
	return f;
}

/* The source file at path, or under one of dirs (by name, then by path). */
static void
read_source(struct source *s, const char *path, char **dirs, int ndirs)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char *line = NULL, *try;
	size_t cap = 0;
	FILE *f = open_source(path);

	for (int i = 0; !f && i < ndirs; i++)
		for (int k = 0; !f && k < 2; k++) {
			if (asprintf(&try, "%s/%s", dirs[i], k ? path : base) <
			    0)
				pc_fatal("out of memory");
			f = open_source(try);
			free(try);
		}
	s->path = path;
	s->text = NULL;
	s->n = 0;
	if (!f)
		return;
	s->text = pc_realloc(NULL, sizeof(*s->text));
	s->text[0] = NULL;
	while (getline(&line, &cap, f) >= 0) {
		line[strcspn(line, "\n")] = 0;
		s->text = pc_realloc(s->text, (s->n + 2) * sizeof(*s->text));
		if (!(s->text[++s->n] = strdup(line)))
			pc_fatal("out of memory");
	}
	free(line);
	fclose(f);
}

static const char *
source_line(struct source *cache, size_t *ncache, const char *path, int line,
	    char **dirs, int ndirs)
{
	size_t i;

	for (i = 0; i < *ncache && strcmp(cache[i].path, path); i++)
		;
	if (i == *ncache) {
		if (*ncache == 16)
			return NULL;
		read_source(&cache[(*ncache)++], path, dirs, ndirs);
	}
	return cache[i].text && line > 0 && (size_t)line <= cache[i].n ?
		       cache[i].text[line] :
		       NULL;
}

struct view_opts {
	int asm_, source;
	char **dirs;
	int ndirs;
	const char *process;	/* --process */
};

static const char *
base_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* The source line l of path with its samples. */
static void
print_source_row(FILE *out, const struct annotation *an, double samples,
		 const char *path, int line, const char *text,
		 const char *inlined)
{
	double share = an->samples > 0 ? samples / an->samples : 0;

	fprintf(out, "%c %9.1f %6.2f%%  %s:%d%s%s%s", share >= HOT ? '*' : ' ',
		samples, 100 * share, text_name(base_of(path)), line,
		inlined ? " [inlined: " : "", inlined ? text_name(inlined) : "",
		inlined ? "]" : "");
	if (text)
		fprintf(out, "\t%s", text_source(text));
	fputc('\n', out);
}

static void
cache_release(struct source *cache, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 1; k <= cache[i].n; k++)
			free(cache[i].text[k]);
		free(cache[i].text);
	}
}

/* Whether instructions i and k are on the same line. */
static int
same_line(const struct insn *i, const struct insn *k)
{
	return i->has_line && k->has_line && i->line.line == k->line.line &&
	       i->line.inlined == k->line.inlined &&
	       !strcmp(i->line.file, k->line.file);
}

/* Each run of instructions of one line under that line (with --asm only
 * its file:line), then the instructions, each with its samples. */
static void
print_asm(FILE *out, struct annotation *an, const struct view_opts *vo)
{
	struct source cache[16];
	size_t ncache = 0;

	for (size_t i = 0; i < an->n; i++) {
		const struct insn *v = &an->v[i];
		double share = an->samples > 0 ? v->samples / an->samples : 0;

		if (v->has_line && (i == 0 || !same_line(&an->v[i - 1], v))) {
			double sum = 0;

			for (size_t k = i; k < an->n && same_line(v, &an->v[k]);
			     k++)
				sum += an->v[k].samples;
			print_source_row(
				out, an, sum, v->line.file, v->line.line,
				vo->source ?
					source_line(cache, &ncache,
						    v->line.file, v->line.line,
						    vo->dirs, vo->ndirs) :
					NULL,
				v->line.inlined);
		}
		fprintf(out, "%c %9.1f %6.2f%%  %c %8llx:  %s\n",
			share >= HOT ? '*' : ' ', v->samples, 100 * share,
			v->target ? '>' : ' ', (unsigned long long)v->addr,
			text_source(v->text));
	}
	cache_release(cache, ncache);
}

/* qsort_r order: the function's own file (arg) first, then by file and
 * line, then address. */
static int
cmp_by_line(const void *a, const void *b, void *arg)
{
	const struct insn *x = *(struct insn *const *)a,
			  *y = *(struct insn *const *)b;
	const char *own = arg;
	int c = strcmp(x->line.file, y->line.file);

	if (c)
		return !strcmp(x->line.file, own) ? -1 :
		       !strcmp(y->line.file, own) ? 1 :
						    c;
	if (x->line.line != y->line.line)
		return x->line.line < y->line.line ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * --source: the lines of the function's own file (the file of its first
 * instruction with a line), from the first to the last that its code is
 * on, each with its samples; then, in file and line order, its lines from
 * other files (headers inlined into it).
 */
static void
print_source(FILE *out, struct annotation *an, const struct view_opts *vo)
{
	struct insn **by = malloc((an->n + 1) * sizeof(*by));
	struct source cache[16];
	size_t ncache = 0, n = 0;
	const char *main_file = NULL;

	if (!by)
		pc_fatal("out of memory");
	for (size_t i = 0; i < an->n; i++)
		if (an->v[i].has_line) {
			main_file = main_file ? main_file : an->v[i].line.file;
			by[n++] = &an->v[i];
		}
	if (!main_file) {
		fputs("No line information for this function (build with -g); see --asm.\n",
		      out);
		free(by);
		return;
	}
	qsort_r(by, n, sizeof(*by), cmp_by_line, (void *)main_file);
	for (size_t i = 0, first = 1; i < n; ) {
		const char *file = by[i]->line.file, *inl = by[i]->line.inlined;
		int line = by[i]->line.line, own = !strcmp(file, main_file);
		double sum = 0;
		size_t k = i;

		for (; k < n && !strcmp(by[k]->line.file, file) &&
		       by[k]->line.line == line;
		     k++)
			sum += by[k]->samples;
		if (!own && first) {
			fputs("\nFrom other files:\n", out);
			first = 0;
		}
		print_source_row(out, an, sum, file, line,
				 source_line(cache, &ncache, file, line,
					     vo->dirs, vo->ndirs),
				 inl);
		/* the own file's lines between this one and the next, with no
		 * code */
		if (own && k < n && !strcmp(by[k]->line.file, file))
			for (int l = line + 1; l < by[k]->line.line; l++)
				print_source_row(out, an, 0, file, l,
						 source_line(cache, &ncache,
							     file, l, vo->dirs,
							     vo->ndirs),
						 NULL);
		i = k;
	}
	cache_release(cache, ncache);
	free(by);
}

/* EXE [GMON|DIR...] FUNCTION: the function is the last word. */
static int
annotate_options(int argc, char **argv, struct view_opts *vo,
		 struct symtab_opts *so)
{
	static const struct option longopts[] = {
		{ "asm", no_argument, NULL, 'a' },
		{ "source", no_argument, NULL, 's' },
		{ "source-dir", required_argument, NULL, 'd' },
		{ "debug-dir", required_argument, NULL, 'D' },
		{ "process", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'a' || c == 's') {
			*(c == 'a' ? &vo->asm_ : &vo->source) = 1;
		} else if (c == 'd') {
			vo->dirs =
				pc_realloc(vo->dirs, (size_t)(vo->ndirs + 1) *
							     sizeof(*vo->dirs));
			vo->dirs[vo->ndirs++] = optarg;
		} else if (c == 'D') {
			so->debug_root = optarg;
		} else if (c == 'P') {
			vo->process = optarg;
		} else {
			fputs(usage_annotate, c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : EXIT_BAD_INPUT;
		}
	}
	if (argc - optind < 2) {
		fputs(usage_annotate, stderr);
		return EXIT_BAD_INPUT;
	}
	if (!vo->asm_ && !vo->source)
		vo->asm_ = vo->source = 1;
	return -1;
}

/* The profiles of operands[0..n) ([EXE] [GMON|DIR...]), read. */
static void
open_inputs(struct pc_inputs *in, struct runexe *re, char **operands, int n,
	    const struct view_opts *vo, const struct symtab_opts *so)
{
	if (runexe_resolve(re, operands, n, vo->process) ||
	    runexe_open(in, re, so, 0))
		exit(EXIT_BAD_INPUT);
	if (inputs_load(in, so, 0))
		exit(EXIT_BAD_INPUT);
}

/* Each instruction of an's line (L's); whether any has one. */
static int
an_lines(struct annotation *an, struct lines *L)
{
	int have_lines = 0;

	for (size_t i = 0; i < an->n; i++) {
		struct insn *v = &an->v[i];

		v->has_line = lines_at(L, an->obj, v->addr, &v->line.file,
				       &v->line.line, &v->line.inlined);
		have_lines |= v->has_line;
	}
	return have_lines;
}

int
cmd_annotate(int argc, char **argv)
{
	struct view_opts vo = { 0, 0, NULL, 0, NULL };
	struct symtab_fetch fetch = { 0 };
	struct symtab_opts so = { .fetch = &fetch };
	struct annotation an = { 0 };
	struct pc_inputs in;
	struct runexe re;
	struct lines L;
	struct flat f;
	const char *name, *path;
	const uint8_t *id;
	size_t idlen;
	int r, have_lines = 0;

	if ((r = annotate_options(argc, argv, &vo, &so)) >= 0)
		return r;
	name = argv[argc - 1];
	open_inputs(&in, &re, argv + optind, argc - optind - 1, &vo, &so);
	flat_build(&f, &in.st, &in.runs[0].prof);
	an.func = pick_function(&in.st, &f, name);
	an.obj = in.st.nobjs ? in.st.func_obj[an.func] : 0;
	an.rate = f.rate;
	path = an.obj ? whole_object(in.objects, an.obj, &id, &idlen) : in.exe;
	if (!path)
		pc_fatal("'%s': its object has no file to disassemble",
			 in.st.funcs[an.func]);
	if (lines_build(&L, &in, &in.runs[0].prof, &so))
		exit(EXIT_BAD_INPUT);
	build(&an, &in, &in.runs[0].prof, path);
	have_lines = an_lines(&an, &L);
	if (lines_check(&L))
		exit(EXIT_BAD_INPUT);
	printf("%s%s%s: %.1f samples of %.0f (%.2f %%) at %u Hz, in %s\n\n",
	       text_name(in.st.funcs[an.func]), in.st.nobjs ? " in " : "",
	       in.st.nobjs ? text_name(in.st.objnames[an.obj]) : "", an.samples,
	       an.total, an.total > 0 ? 100 * an.samples / an.total : 0,
	       an.rate, text_name(path));
	printf("%c %9s %7s  %s\n", ' ', "samples", "share", vo.asm_ ? "line / instruction" :
	       "line");
	if (vo.asm_)
		print_asm(stdout, &an, &vo);
	else
		print_source(stdout, &an, &vo);
	if (!have_lines)
		pc_warn("note: '%s' has no line information (build with -g, or install its "
			"debug file)", path);
	for (size_t i = 0; i < an.n; i++)
		free(an.v[i].text);
	free(an.v);
	free(vo.dirs);
	lines_release(&L);
	flat_release(&f);
	inputs_close(&in);
	runexe_release(&re);
	symtab_fetch_end(&fetch);
	return 0;
}
