/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof report with no EXE: the whole of a run, every process of it. Each
 * profile recorded with PC_SCOPE=all has its manifest beside it, which
 * names the program and the process; each is read as `pcprof report EXE
 * GMON` would read it, and the functions are summed over the processes by
 * object and name. The report opens with one line per process, which
 * runview_out.c prints.
 */
#include <stdlib.h>
#include <string.h>

#include "commands/options.h"
#include "inputs/operands.h"
#include "inputs/runfiles.h"
#include "inputs/runview.h"
#include "model/export.h"
#include "symbols/waits.h"
#include "writers/export_out.h"
#include "writers/runview_out.h"

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* The pid in a file named PREFIX.PROG.PID, or 0. */
/* One process from q, resolved (operands.c): its manifest taken. */
static void
add_proc(struct runview *v, struct operand_proc *q)
{
	const struct gmon_objects *o = q->man;
	struct runview_proc *p;

	v->procs = pc_realloc(v->procs, (v->nprocs + 1) * sizeof(*v->procs));
	p = &v->procs[v->nprocs++];
	memset(p, 0, sizeof(*p));
	p->profile = pc_strdup(q->profile);
	p->exe = pc_strdup(o->v[0].path);
	p->program = base_name(p->exe);
	p->pid = q->pid;
	p->threads = o->threads;
	p->rate = o->rate;
	p->have_cpu = o->have_cpu;
	p->started = o->started;
	p->cpu_start = o->cpu_start;
	p->cpu_stop = o->cpu_stop;
	p->cpu_write = o->cpu_write;
	p->ended = o->ended;
	p->end_signal = o->end_signal;
	p->signals = o->signals;
	p->signal_samples = o->signal_samples;
	p->timer = o->timer;
	p->timer_how = o->timer_how;
	p->timer_cost = o->timer_cost;
	p->manifest = q->man;
	q->man = NULL;
}

/* The manifest of process p, read by add_proc, to the run of in that
 * reads p's profile: read once. */
static void
give_manifest(struct pc_inputs *in, struct runview_proc *p)
{
	runfiles_adopt(&in->runs[0], 0, p->manifest);
	p->manifest = NULL;
}

/* How read_proc opens p's profile: as it is, and where its manifest is
 * read already, not looked for again. */
static int
open_flags(const struct runview_proc *p)
{
	return INPUTS_AS_GIVEN | (p->manifest ? INPUTS_WHOLE : 0);
}

static void
proc_release(struct runview_proc *p)
{
	free(p->profile);
	free(p->exe);
	if (p->manifest)
		gmon_objects_release(p->manifest);
	free(p->manifest);
}

static void
add_row(struct runview *v, const char *name, const char *object, double samples,
	uint32_t rate)
{
	struct runview_row *r;

	if (v->nrows == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 256;
		v->rows = pc_realloc(v->rows, v->cap * sizeof(*v->rows));
	}
	r = &v->rows[v->nrows++];
	r->name = pc_strdup(name);
	r->object = pc_strdup(object);
	r->samples = samples;
	r->seconds = samples / rate;
}

/* A wall-clock view of one process (in, loaded): its functions' rows
 * from the stacks, each wait a function (export.c); 0, or -1 after one
 * line. */
static int
read_proc_wall(struct runview *v, struct runview_proc *pr,
	       const struct pc_inputs *in, const struct symtab_opts *so)
{
	struct export x;
	struct symtab st;
	struct flat f;

	export_init(&x);
	x.clock = v->clock;
	if (export_add(&x, in, so, NULL, pr->program, pr->pid))
		return -1;
	export_flat(&x, &st, &f);
	export_wait_children(&x, &v->children, &v->nchildren, &v->cap_children);
	pr->shown = f.total / pr->rate;
	pr->off = f.off / pr->rate;
	for (size_t i = 0; i < f.nrows; i++) {
		uint32_t fn = f.rows[i].func;

		add_row(v, st.funcs[fn], st.objnames[st.func_obj[fn]],
			f.rows[i].samples, f.rate);
	}
	export_flat_release(&st, &f);
	export_release(&x);
	return 0;
}

/* Read one process and add its functions' samples to the view; 0, or -1
 * after one line. */
static int
read_proc(struct runview *v, struct runview_proc *pr,
	  const struct symtab_opts *so)
{
	struct pc_inputs in;
	struct symtab *st = &in.st;
	struct flat f;

	if (inputs_open(&in, pr->exe, &pr->profile, 1, so, open_flags(pr)))
		return -1;
	give_manifest(&in, pr);
	if (inputs_load(&in, so, 0))
		return -1;
	flat_build(&f, st, &in.runs[0].prof);
	if (!f.rate)
		f.rate = pr->rate ? pr->rate : 1;
	pr->rate = f.rate;
	pr->samples = f.total;
	pr->seconds = pr->shown = f.total / f.rate;
	if (v->clock != PC_CLOCK_CPU) {
		flat_release(&f);
		if (read_proc_wall(v, pr, &in, so))
			return -1;
		inputs_close(&in);
		return 0;
	}
	for (size_t i = 0; i < f.nrows; i++) {
		uint32_t fn = f.rows[i].func;
		const char *obj = st->nobjs ? st->objnames[st->func_obj[fn]] :
					      pr->program;

		add_row(v, st->funcs[fn], obj, f.rows[i].samples, f.rate);
	}
	if (f.unknown > 0)
		add_row(v, "[unknown]", pr->program, f.unknown, f.rate);
	if (f.outside > 0)
		add_row(v, "[outside the executable]",
			"[outside the executable]", f.outside, f.rate);
	flat_release(&f);
	inputs_close(&in);
	return 0;
}

static int
cmp_key(const void *a, const void *b)
{
	const struct runview_row *x = a, *y = b;
	int c = strcmp(x->object, y->object);

	return c ? c : strcmp(x->name, y->name);
}

/* Sum the rows of one object and name. */
static void
merge_rows(struct runview *v)
{
	size_t n = 0;

	if (!v->nrows)
		return;
	qsort(v->rows, v->nrows, sizeof(*v->rows), cmp_key);
	for (size_t i = 0; i < v->nrows; i++) {
		if (n && !cmp_key(&v->rows[n - 1], &v->rows[i])) {
			v->rows[n - 1].samples += v->rows[i].samples;
			v->rows[n - 1].seconds += v->rows[i].seconds;
			free(v->rows[i].name);
			free(v->rows[i].object);
			continue;
		}
		v->rows[n++] = v->rows[i];
	}
	v->nrows = n;
}

static int
cmp_image(const void *a, const void *b)
{
	const struct runview_proc *x = *(struct runview_proc *const *)a,
				  *y = *(struct runview_proc *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->started != y->started)
		return x->started < y->started ? -1 : 1;
	return x->cpu_start < y->cpu_start ? -1 : x->cpu_start > y->cpu_start;
}

/*
 * The CPU each image spent before libpc started in it. An exec keeps the
 * process's CPU clock, so an image's start counts from where the image
 * before it, of the same pid, that ended in an exec began writing its
 * manifest; the first image of a process counts from 0 (a process's clock
 * starts at its fork), and so does one whose predecessor took no sample
 * and wrote nothing, whose time is then part of this one's start. Done
 * over every process, before --process picks some.
 */
static void
time_before_start(struct runview *v)
{
	struct runview_proc **by = pc_calloc(v->nprocs + 1, sizeof(*by));

	for (size_t i = 0; i < v->nprocs; i++)
		by[i] = &v->procs[i];
	qsort(by, v->nprocs, sizeof(*by), cmp_image);
	for (size_t i = 0; i < v->nprocs; i++) {
		const struct runview_proc *prev = i ? by[i - 1] : NULL;
		struct runview_proc *p = by[i];
		uint64_t from = 0;

		if (!p->have_cpu)
			continue;
		/* the same process: an exec (or a manifest that does not say),
		 * and its clock went on (not a pid reused) */
		if (prev && prev->have_cpu && p->pid && prev->pid == p->pid &&
		    prev->cpu_write <= p->cpu_start &&
		    (prev->ended == GMON_ENDED_EXEC ||
		     prev->ended == GMON_ENDED_NOT_SAID))
			from = prev->cpu_write;
		p->before = (double)(p->cpu_start - from) / 1e9;
	}
	free(by);
}

/* What the clock saw of p after its start and the samples did not. */
static void
time_unsampled(struct runview_proc *p)
{
	double ran = (double)(p->cpu_stop - p->cpu_start) / 1e9;

	if (!p->have_cpu)
		return;
	p->tail = ran > p->seconds ? ran - p->seconds : 0;
	p->writing = (double)(p->cpu_write - p->cpu_stop) / 1e9;
}

/* Only the processes that --process names: chosen[i] of procs[i]. */
static void
keep_chosen(struct runview *v, const struct operand_proc *chosen)
{
	size_t keep = 0;

	for (size_t i = 0; i < v->nprocs; i++) {
		if (!chosen[i].chosen) {
			proc_release(&v->procs[i]);
			continue;
		}
		v->procs[keep++] = v->procs[i];
	}
	v->nprocs = keep;
}

static void
view_release(struct runview *v)
{
	for (size_t i = 0; i < v->nrows; i++) {
		free(v->rows[i].name);
		free(v->rows[i].object);
	}
	free(v->rows);
	wait_children_free(v->children, v->nchildren);
	for (size_t i = 0; i < v->nprocs; i++)
		proc_release(&v->procs[i]);
	free(v->procs);
	memset(v, 0, sizeof(*v));
}

static int
cmp_proc(const void *a, const void *b)
{
	const struct runview_proc *x = a, *y = b;

	if (x->shown != y->shown)
		return x->shown > y->shown ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/*
 * The summed rows as a symbol table and a flat profile, so that the
 * report's own writers print them: function i is row i, in its object.
 */
static void
as_flat(const struct runview *v, struct symtab *st, struct flat *f,
	uint32_t rate)
{
	memset(st, 0, sizeof(*st));
	memset(f, 0, sizeof(*f));
	strcpy(st->source, ".symtab");
	st->nfuncs = v->nrows;
	st->funcs = pc_calloc(v->nrows + 1, sizeof(*st->funcs));
	st->func_obj = pc_calloc(v->nrows + 1, sizeof(*st->func_obj));
	st->objnames = pc_calloc(v->nrows + 1, sizeof(*st->objnames));
	f->rows = pc_calloc(v->nrows + 1, sizeof(*f->rows));
	f->rate = rate;
	for (size_t i = 0; i < v->nrows; i++) {
		if (wait_name_is(v->rows[i].name))
			f->off += v->rows[i].seconds * rate;
		/* rows are sorted by object: a new object starts a name */
		if (!st->nobjs ||
		    strcmp(st->objnames[st->nobjs - 1], v->rows[i].object))
			st->objnames[st->nobjs++] = v->rows[i].object;
		st->funcs[i] = v->rows[i].name;
		st->func_obj[i] = (uint32_t)(st->nobjs - 1);
		f->rows[f->nrows].func = (uint32_t)i;
		f->rows[f->nrows].samples = v->rows[i].seconds * rate;
		f->total += f->rows[f->nrows].samples;
		f->nrows++;
	}
	qsort(f->rows, f->nrows, sizeof(*f->rows), flat_row_cmp);
}

/* Read every process of v; their CPU seconds in *total, and the rate
 * they share in *ratep (1000000, microseconds, when they differ): 0, or
 * -1 after one line. */
static int
read_procs(struct runview *v, const struct symtab_opts *so, double *total,
	   uint32_t *ratep)
{
	uint32_t rate = 0;

	for (size_t i = 0; i < v->nprocs; i++) {
		if (read_proc(v, &v->procs[i], so))
			return -1;
		time_unsampled(&v->procs[i]);
		*total += v->procs[i].shown;
		v->cpu_total += v->procs[i].seconds;
		if (!rate)
			rate = v->procs[i].rate;
		else if (rate != v->procs[i].rate)
			rate = 1000000;	/* mixed rates: count in microseconds */
	}
	*ratep = rate;
	return 0;
}

/* Every process of the run into one file for another tool (export.h), in
 * the order of their profiles' names. 0, or -1 after one line. */
static int
export_run(struct runview *v, const struct report_opts *r,
	   const struct symtab_opts *so, FILE *out, const char *title)
{
	struct export x;

	if (export_refuse(r))
		return -1;
	export_init(&x);
	for (size_t i = 0; i < v->nprocs; i++) {
		struct runview_proc *pr = &v->procs[i];
		struct pc_inputs in;

		if (inputs_open(&in, pr->exe, &pr->profile, 1, so,
				open_flags(pr)))
			return -1;
		give_manifest(&in, pr);
		if (inputs_load(&in, so, 0))
			return -1;
		x.clock = v->clock;
		if (export_add(&x, &in, so, NULL, pr->program, pr->pid))
			return -1;
		inputs_close(&in);
	}
	if (export_finish(&x, r, out, title))
		return -1;
	export_release(&x);
	return 0;
}

/* The view's clock, asked for asked: a run of which some process recorded
 * a wall-clock profile (wall) is shown in wall time by default, as it is
 * under an allocation metric (the processes' list before the allocation
 * profile, in JSON); into v->clock: 0, or -1 after one line. */
static int
run_clock(struct runview *v, enum pc_clock asked, const char *where, int wall)
{
	if (CLOCK_IS_ALLOC(asked))
		asked = PC_CLOCK_AUTO;
	if (asked == PC_CLOCK_AUTO)
		asked = wall ? PC_CLOCK_WALL : PC_CLOCK_CPU;
	else if (!wall && asked != PC_CLOCK_CPU)
		return pc_error(
			"'%s': a CPU profile, with no off-CPU time for --clock %s "
			"(record with pcprof run --clock wall, or PC_CLOCK=wall)",
			where, clock_word(asked));
	v->clock = asked;
	return 0;
}

/* The processes of the run that o resolved and r asks for, into v, and
 * the clock of its report; 0, or -1 after one line. */
static int
view_open(struct runview *v, struct operands *o, const struct report_opts *r)
{
	for (size_t i = 0; i < o->nprocs; i++)
		add_proc(v, &o->procs[i]);
	time_before_start(v);
	keep_chosen(v, o->procs);
	return run_clock(v, r->clock, o->ops[0], o->wall);
}

int
runview_json_resolved(struct operands *o, const struct report_opts *r,
		      const struct symtab_opts *so, FILE *out)
{
	struct runview v = { 0 };
	double total = 0;
	uint32_t rate;

	if (view_open(&v, o, r))
		return -1;
	v.all_processes = r->all_processes;
	if (read_procs(&v, so, &total, &rate))
		return -1;
	qsort(v.procs, v.nprocs, sizeof(*v.procs), cmp_proc);
	runview_print_json(out, &v, total);
	view_release(&v);
	return 0;
}

int
runview_report_resolved(struct operands *o, struct report_opts *r,
			const struct symtab_opts *so, FILE *out)
{
	char **paths = o->ops;
	struct runview v = { 0 };
	struct symtab st;
	struct flat f;
	double total = 0;
	uint32_t rate;

	if (!FORMAT_IS_EXPORT(r->format) && !r->by_thread && !r->thread &&
	    !r->timeline && !r->window &&
	    (r->format == FORMAT_FOLDED || r->callgraph || r->lines))
		return pc_error("%s of a whole run: name the executable (pcprof report EXE GMON)",
				r->format == FORMAT_FOLDED ? "--format folded" :
				r->callgraph ? "--callgraph" : "--lines");
	if (view_open(&v, o, r))
		return -1;
	r->exe = "the run";
	r->files = paths;
	r->nfiles = o->n;
	r->clock = v.clock;
	if (FORMAT_IS_EXPORT(r->format) || r->by_thread || r->thread ||
	    r->timeline || r->window) {
		if (export_run(&v, r, so, out, paths[0]))
			return -1;
		view_release(&v);
		return 0;
	}
	v.all_processes = r->all_processes;
	if (read_procs(&v, so, &total, &rate))
		return -1;
	qsort(v.procs, v.nprocs, sizeof(*v.procs), cmp_proc);
	merge_rows(&v);
	as_flat(&v, &st, &f, rate);
	if (r->format == FORMAT_TEXT)
		runview_print_text(out, &v, paths[0], total);
	else if (r->format == FORMAT_JSON)
		runview_print_json(out, &v, total);
	if (f.total == 0)
		pc_warn("warning: '%s': the profiles hold no samples",
			paths[0]);
	wait_children_sort(v.children, v.nchildren);
	r->children = v.children;
	r->nchildren = v.nchildren;
	report_print(out, &f, &st, NULL, r);
	r->children = NULL;
	r->nchildren = 0;
	if (r->format == FORMAT_JSON)
		fputs("}\n", out);
	/* the names belong to the rows */
	free(st.funcs);
	free(st.func_obj);
	free(st.objnames);
	free(f.rows);
	view_release(&v);
	return 0;
}
