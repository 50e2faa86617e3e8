/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The neutral profile that the exporters write (export.h), built from
 * loaded inputs: strings, objects, functions and locations interned in
 * hash tables, samples as runs of location indexes in one pool.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* asprintf */
#endif
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inputs/runfiles.h"
#include "model/export.h"
#include "model/lines.h"
#include "model/timeline.h"
#include "model/xtable.h"
#include "symbols/dwlines.h"
#include "symbols/symtab.h"
#include "symbols/waits.h"

#define NO_STACK_NAME	"[no stack recorded]"
#define OUTSIDE_NAME	"[outside the executable]"
#define LIBRARIES_NAME	"[libraries]"
#define UNKNOWN_NAME	"[unknown]"

struct xp_index {
	struct table strs, maps, funcs, locs;
	uint32_t *objmap;	/* per object of the current input: 1 + map */
	size_t nobjmap;
};

/* --------------------------------------------------------------- interning */

struct str_key {
	const struct export *x;
	const char *s;
};

static int
same_str(const void *arg, uint32_t i)
{
	const struct str_key *k = arg;

	return !strcmp(k->x->strs[i], k->s);
}

static uint32_t
intern(struct export *x, const char *s)
{
	struct str_key k = { x, s ? s : "" };
	uint64_t h = symtab_hash_name(k.s), *hp;
	uint32_t *slot = table_find(&x->ix->strs, h, same_str, &k, &hp);

	if (*slot)
		return *slot - 1;
	x->strs = xtable_grow_array(x->strs, &x->cap_strs, x->nstrs + 1, sizeof(*x->strs));
	x->strs[x->nstrs] = pc_strdup(k.s);
	*slot = (uint32_t)++x->nstrs;
	*hp = h;
	x->ix->strs.used++;
	return (uint32_t)x->nstrs - 1;
}

struct map_key {
	const struct export *x;
	uint32_t file, build_id;
};

static int
same_map(const void *arg, uint32_t i)
{
	const struct map_key *k = arg;

	return k->x->maps[i].file == k->file && k->x->maps[i].build_id == k->build_id;
}

/* 1 + the map of the object at path with build-id id. */
static uint32_t
map_intern(struct export *x, const char *path, const uint8_t *id, size_t idlen)
{
	char hex[2 * 64 + 1] = "";
	struct map_key k = { x, 0, 0 };
	uint64_t h, *hp;
	uint32_t *slot;

	if (idlen > 64)
		idlen = 64;
	k.file = intern(x, path);
	k.build_id = idlen ? intern(x, pc_hex(id, idlen, hex)) : 0;
	h = xtable_mix(k.file, k.build_id);
	slot = table_find(&x->ix->maps, h, same_map, &k, &hp);
	if (*slot != 0)
		return *slot;	/* 1 + its index */
	x->maps = xtable_grow_array(x->maps, &x->cap_maps, x->nmaps + 1, sizeof(*x->maps));
	x->maps[x->nmaps] = (struct xp_map){ k.file, k.build_id, UINT64_MAX, 0, 0 };
	*slot = (uint32_t)++x->nmaps;
	*hp = h;
	x->ix->maps.used++;
	return *slot;
}

struct func_key {
	const struct export *x;
	uint32_t name, map;
};

static int
same_func(const void *arg, uint32_t i)
{
	const struct func_key *k = arg;

	return k->x->funcs[i].name == k->name && k->x->funcs[i].map == k->map;
}

static uint32_t
func_intern(struct export *x, const char *name, uint32_t map)
{
	struct func_key k = { x, intern(x, name), map };
	uint64_t h = xtable_mix(k.name, k.map), *hp;
	uint32_t *slot = table_find(&x->ix->funcs, h, same_func, &k, &hp);

	if (*slot)
		return *slot - 1;
	x->funcs = xtable_grow_array(x->funcs, &x->cap_funcs, x->nfuncs + 1, sizeof(*x->funcs));
	x->funcs[x->nfuncs] = (struct xp_func){ k.name, map, 0, 0, 0 };
	*slot = (uint32_t)++x->nfuncs;
	*hp = h;
	x->ix->funcs.used++;
	return (uint32_t)x->nfuncs - 1;
}

struct loc_key {
	const struct export *x;
	uint32_t map, func;
	uint64_t addr;
};

static int
same_loc(const void *arg, uint32_t i)
{
	const struct loc_key *k = arg;
	const struct xp_loc *l = &k->x->locs[i];

	return l->map == k->map && l->addr == k->addr && l->func == k->func;
}

/* --------------------------------------------------------------- building */

/* What export_add reads one input through. */
struct source {
	struct export *x;
	const struct pc_inputs *in;
	struct lines *L;	/* NULL where no object has lines */
};

/* 1 + the map of object obj of the input. */
static uint32_t
map_of(struct source *s, uint32_t obj)
{
	struct xp_index *ix = s->x->ix;
	const struct symtab *st = &s->in->st;

	if (obj >= ix->nobjmap) {
		size_t n = obj + 1;

		ix->objmap = pc_realloc(ix->objmap, n * sizeof(*ix->objmap));
		memset(ix->objmap + ix->nobjmap, 0, (n - ix->nobjmap) * sizeof(*ix->objmap));
		ix->nobjmap = n;
	}
	if (!ix->objmap[obj]) {
		const uint8_t *id = NULL;
		size_t idlen = 0;
		const char *path = NULL;

		if (obj == 0) {
			path = s->in->exe;
			id = st->build_id;
			idlen = st->build_id_len;
		} else {
			path = whole_object(s->in->objects, obj, &id, &idlen);
			if (!path)	/* "[vdso]", "[jit]": no file */
				path = obj < st->nobjs ? st->objnames[obj] : "[no object]";
		}
		ix->objmap[obj] = map_intern(s->x, path, id, idlen);
	}
	return ix->objmap[obj];
}

/* The location of a pseudo function (no object, no address). */
static uint32_t
pseudo_loc(struct export *x, const char *name)
{
	uint32_t f = func_intern(x, name, 0);
	struct loc_key k = { x, 0, f, 0 };
	uint64_t h = xtable_mix(xtable_mix(0, 0), f), *hp;
	uint32_t *slot = table_find(&x->ix->locs, h, same_loc, &k, &hp);

	if (*slot)
		return *slot - 1;
	x->locs = xtable_grow_array(x->locs, &x->cap_locs, x->nlocs + 1, sizeof(*x->locs));
	x->locs[x->nlocs] = (struct xp_loc){ 0, 0, f, 0, 0, 0, 0, 0, 0 };
	*slot = (uint32_t)++x->nlocs;
	*hp = h;
	x->ix->locs.used++;
	return (uint32_t)x->nlocs - 1;
}

uint32_t
export_no_stack_loc(struct export *x)
{
	return pseudo_loc(x, NO_STACK_NAME);
}

/* A function's source file is that of the first of its lines seen; its
 * start, the line it is declared at, the first that DWARF gives. */
static void
first_line(struct export *x, uint32_t f, uint32_t file, int line, int start)
{
	if (!x->funcs[f].file) {
		x->funcs[f].file = file;
		x->funcs[f].line = line;
	}
	if (!x->funcs[f].start_line)
		x->funcs[f].start_line = start;
}

/* The location of address a of the input's symbol table. */
static uint32_t
loc_of(struct source *s, uint64_t a)
{
	struct export *x = s->x;
	const struct symtab *st = &s->in->st;
	uint32_t obj = st->nobjs ? (uint32_t)(a >> GMON_OBJ_SHIFT) : 0;
	uint64_t link = st->nobjs ? a & GMON_OBJ_ADDR_MASK : a;
	long sym = symtab_find(st, a);
	struct loc_key k = { x, 0, 0, link };
	uint64_t h, *hp;
	uint32_t *slot;
	struct xp_loc *l;
	struct xp_map *m;
	struct dwline dl;

	if (sym < 0)
		return pseudo_loc(x, UNKNOWN_NAME);
	k.map = map_of(s, obj);
	k.func = func_intern(x, st->funcs[st->syms[sym].func], k.map);
	h = xtable_mix(xtable_mix(k.map, link), k.func);
	slot = table_find(&x->ix->locs, h, same_loc, &k, &hp);
	if (*slot)
		return *slot - 1;
	x->locs = xtable_grow_array(x->locs, &x->cap_locs, x->nlocs + 1, sizeof(*x->locs));
	l = &x->locs[x->nlocs];
	*l = (struct xp_loc){ k.map, link, k.func, 0, 0, 0, 0, 0,
			      1 + (st->nobjs ? st->syms[sym].lo & GMON_OBJ_ADDR_MASK :
				   st->syms[sym].lo) };
	*slot = (uint32_t)++x->nlocs;
	*hp = h;
	x->ix->locs.used++;
	m = &x->maps[k.map - 1];
	if (link < m->lo)
		m->lo = link;
	if (link >= m->hi)
		m->hi = link + 1;
	if (s->L && lines_line_at(s->L, obj, link, &dl)) {
		l->file = intern(x, dl.file);
		l->line = dl.line;
		m->has_lines = 1;
		if (dl.inlined) {
			uint32_t f = func_intern(x, dl.inlined, k.map);

			l->inlined = f + 1;
			/* the line of the function that holds it: the call */
			l->call_file = dl.call_file ? intern(x, dl.call_file) : 0;
			l->call_line = dl.call_line;
			first_line(x, f, l->file, dl.line, dl.inlined_line);
			if (dl.call_file)
				first_line(x, k.func, l->call_file, dl.call_line,
					   dl.func_line);
		} else {
			first_line(x, k.func, l->file, dl.line, dl.func_line);
		}
		if (!x->funcs[k.func].start_line)
			x->funcs[k.func].start_line = dl.func_line;
	}
	return (uint32_t)x->nlocs - 1;
}

static void
add_sample_of(struct export *x, const uint32_t *locs, uint32_t depth, double count,
	      uint32_t thread, int off)
{
	struct xp_sample *sm;

	if (!(count > 0))
		return;
	x->samples = xtable_grow_array(x->samples, &x->cap_samples, x->nsamples + 1, sizeof(*x->samples));
	x->pool = xtable_grow_array(x->pool, &x->cap_pool, x->npool + depth, sizeof(*x->pool));
	sm = &x->samples[x->nsamples++];
	sm->first = x->npool;
	sm->depth = depth;
	sm->group = (uint32_t)x->ngroups - 1;
	sm->thread = thread;
	sm->off = off;
	sm->wait_pid = 0;
	sm->kind = 0;
	sm->count = count;
	memcpy(x->pool + x->npool, locs, depth * sizeof(*locs));
	x->npool += depth;
	x->groups[x->ngroups - 1].samples += count;
	if (thread) {
		x->threads[thread - 1].samples += count;
		if (off)
			x->threads[thread - 1].off += count;
	}
	x->total += count;
	if (off)
		x->off += count;
}

static void
add_sample(struct export *x, const uint32_t *locs, uint32_t depth, double count)
{
	add_sample_of(x, locs, depth, count, 0, 0);
}

/* 1 + the thread tid of the current group, named from ss's records. */
static uint32_t
thread_of(struct export *x, uint32_t tid, const struct gmon_stacks *ss)
{
	uint32_t g = (uint32_t)x->ngroups - 1;
	const char *name = NULL;

	if (!tid)
		return 0;
	/* a group's threads are the last added: look back to its first */
	for (size_t i = x->nthreads; i-- > 0 && x->threads[i].group == g; )
		if (x->threads[i].tid == tid)
			return (uint32_t)i + 1;
	for (size_t i = 0; i < ss->nthreads; i++)
		if (ss->threads[i].tid == tid)
			name = ss->threads[i].name;
	x->threads = xtable_grow_array(x->threads, &x->cap_threads, x->nthreads + 1, sizeof(*x->threads));
	x->threads[x->nthreads] = (struct xp_thread){ g, tid, name && name[0] ? intern(x, name) : 0,
						      0, 0 };
	return (uint32_t)++x->nthreads;
}

/* flat_walk's give: one location per sampled address (the bin's part of
 * the symbol). */
static void
give_loc(void *arg, size_t sym, uint64_t lo, uint64_t hi, double samples)
{
	struct source *s = arg;
	uint32_t loc;

	(void)sym;
	(void)hi;
	loc = loc_of(s, lo);
	add_sample(s->x, &loc, 1, samples);
}

/* The call-graph arcs of the profile, between the export's functions. */
static void
add_arcs(struct source *s, const struct gmon_profile *p)
{
	const struct symtab *st = &s->in->st;
	struct export *x = s->x;
	struct callgraph cg;
	struct flat f;

	flat_build(&f, st, p);
	callgraph_build(&cg, st, p, &f);
	for (size_t i = 0; i < cg.narcs; i++) {
		const struct cg_arc *a = &cg.arcs[i];
		uint32_t from = st->nobjs ? st->func_obj[a->caller] : 0;
		uint32_t to = st->nobjs ? st->func_obj[a->callee] : 0;
		struct xp_arc *xa;

		if (!(a->samples > 0))
			continue;
		x->arcs = xtable_grow_array(x->arcs, &x->cap_arcs, x->narcs + 1, sizeof(*x->arcs));
		xa = &x->arcs[x->narcs++];
		xa->caller = func_intern(x, st->funcs[a->caller], map_of(s, from));
		xa->callee = func_intern(x, st->funcs[a->callee], map_of(s, to));
		xa->samples = a->samples;
	}
	callgraph_release(&cg);
	flat_release(&f);
}

/* The locations of stack k of the input's file i into locs (room for
 * k->depth + 1): an off-CPU stack's leaf is its wait. How many. */
static uint32_t
stack_locs(struct source *s, int i, const struct gmon_stack *k, uint32_t *locs)
{
	int off = (k->flags & GMON_STACK_OFFCPU) != 0;
	uint32_t d = 0;
	char wait[96];

	for (uint32_t f = 0; f < k->depth; f++)
		locs[d++] = off && f == 0 ? pseudo_loc(s->x, wait_site_name(k->pcs[0], wait,
									   sizeof(wait))) :
			    k->pcs[f] ? loc_of(s, inputs_addr(s->in, i, k->pcs[f])) :
			    pseudo_loc(s->x, LIBRARIES_NAME);
	if (k->flags & (GMON_STACK_TRUNCATED | GMON_STACK_CUT))
		locs[d++] = pseudo_loc(s->x, k->flags & GMON_STACK_TRUNCATED ? TRUNCATED_NAME :
				       CUT_NAME);
	return d;
}

/* An allocation profile's rate (bytes) into the export: the processes'
 * profiles summed must share it. 0, or -1 after one line. */
static int
alloc_rate_of(struct source *s, int i, const struct gmon_stacks *ss)
{
	if (s->x->alloc_rate && ss->rate != s->x->alloc_rate)
		return pc_error("'%s%s': sampled every %u bytes, not %llu as another process "
				"of the run: report one with --process PID",
				s->in->runs[0].files[i], GMON_ALLOC_SUFFIX,
				ss->rate, (unsigned long long)s->x->alloc_rate);
	s->x->alloc_rate = ss->rate;
	s->x->alloc_files++;
	return 0;
}

/* The CPU samples of the input's stacks files (the off-CPU records are
 * added as the export's clock says, and not counted) into *stacked; -1
 * where it has none. 0, or -1 after one line. */
static int
add_stacks(struct source *s, const char *stacks_file, double *stacked)
{
	const struct pc_run *run = &s->in->runs[0];
	struct xp_group *g = &s->x->groups[s->x->ngroups - 1];
	uint32_t *locs = NULL;
	size_t cap = 0;
	double n = -1;

	for (int i = 0; i < (stacks_file ? 1 : run->nfiles); i++) {
		struct gmon_stacks ss;

		int r = stacks_load(s->in, 0, i, stacks_file, stacks_file != NULL, &ss);

		if (r < 0) {
			free(locs);
			return -1;
		}
		if (r)
			continue;
		if (n < 0)
			n = 0;
		/* one process's stacks: the pid they record is the group's */
		if (!s->x->groups[s->x->ngroups - 1].pid && (stacks_file || run->nfiles == 1))
			s->x->groups[s->x->ngroups - 1].pid = ss.pid;
		if (CLOCK_IS_ALLOC(s->x->clock) && alloc_rate_of(s, i, &ss)) {
			free(locs);
			return -1;
		}
		if ((ss.flags & GMON_STACKS_WALL) && ss.wall[GMON_WALL_HZ_LOW] &&
		    (!g->wall_hz || ss.wall[GMON_WALL_HZ_LOW] < g->wall_hz))
			g->wall_hz = ss.wall[GMON_WALL_HZ_LOW];
		for (size_t j = 0; j < ss.n; j++) {
			const struct gmon_stack *k = &ss.v[j];
			int off = (k->flags & GMON_STACK_OFFCPU) != 0;
			double w = stack_weight(&ss, k, s->x->clock);
			uint32_t d, t, kind = GMON_ALLOC_KIND(k->flags);

			if (s->x->alloc_all && (k->flags & GMON_STACK_ALLOC))
				w = kind < GMON_ALLOC_KINDS ? (double)k->count : 0;

			if (!off)
				n += (double)k->count;
			if (!(w > 0))
				continue;
			locs = xtable_grow_array(locs, &cap, k->depth + 1, sizeof(*locs));
			d = stack_locs(s, i, k, locs);
			t = thread_of(s->x, k->tid, &ss);
			add_sample_of(s->x, locs, d, w, t, off);
			s->x->samples[s->x->nsamples - 1].kind = kind;
			/* a wait4's child: a label of the sample, not a frame */
			if (off)
				s->x->samples[s->x->nsamples - 1].wait_pid = wait_pid(k->pcs[0]);
		}
		gmon_stacks_release(&ss);
	}
	free(locs);
	*stacked = n;
	return 0;
}

/* When the process started and when its profile was written, from the
 * manifest and the file: for pprof's time and duration. 0, or -1 after
 * one line. */
static int
add_times(struct export *x, const struct pc_run *run, struct xp_group *g)
{
	for (int i = 0; i < run->nfiles; i++) {
		const struct gmon_objects *o;
		struct stat sb;
		uint64_t end;

		if (!run->manifest[i] || stat(run->files[i], &sb))
			continue;
		if (!(o = runfiles_manifest(run, i)))
			return -1;
		end = (uint64_t)sb.st_mtim.tv_sec * 1000000000u + (uint64_t)sb.st_mtim.tv_nsec;
		if (o->started && (!x->time_ns || o->started < x->time_ns))
			x->time_ns = o->started;
		if (end > x->end_ns)
			x->end_ns = end;
		if (!g->pid && run->nfiles == 1)
			g->pid = o->pid;
	}
	x->duration_ns = x->time_ns && x->end_ns > x->time_ns ? x->end_ns - x->time_ns : 0;
	return 0;
}

/* A timeline's stack as the export's locations (model/timeline.h). */
static uint32_t
tl_locs(void *arg, int file, const struct gmon_stack *k, uint32_t *locs)
{
	return stack_locs(arg, file, k, locs);
}

static void
give_none(void *arg, size_t sym, uint64_t lo, uint64_t hi, double samples)
{
	(void)arg;
	(void)sym;
	(void)lo;
	(void)hi;
	(void)samples;
}

void
export_init(struct export *x)
{
	memset(x, 0, sizeof(*x));
	x->ix = pc_calloc(1, sizeof(*x->ix));
	intern(x, "");
	x->clock = PC_CLOCK_CPU;
	/* the writers' own strings */
	intern(x, "samples");
	intern(x, "count");
	intern(x, "cpu");
	intern(x, "nanoseconds");
	intern(x, "process");
	intern(x, "pid");
	intern(x, "thread");
	intern(x, "tid");
	intern(x, "wait_pid");
	intern(x, "wall");
}

const char *
export_format_name(enum format format)
{
	return format == FORMAT_PPROF ? "pprof" : format == FORMAT_SPEEDSCOPE ? "speedscope" :
	       format == FORMAT_FIREFOX ? "firefox" :
	       "callgrind";
}

int
export_refuse(const struct report_opts *r)
{
	if (r->by_thread && FORMAT_IS_EXPORT(r->format))
		return pc_error("--by-thread: a table, in text, json or csv; the formats for "
				"other tools hold every thread already");
	if ((r->by_thread || r->thread) && r->format == FORMAT_FOLDED)
		return pc_error("%s: not with --format folded (--format speedscope or pprof keep "
				"the threads' stacks)", r->by_thread ? "--by-thread" : "--thread");
	if (r->window && (r->format == FORMAT_GMON || r->callgraph || r->by_object ||
			  r->lines || r->alloc || CLOCK_IS_ALLOC(r->clock)))
		return pc_error("--from, --to, --marker: a profile of the timeline's stacks, not "
				"with %s", r->format == FORMAT_GMON ? "--format gmon" :
				r->callgraph ? "--callgraph" : r->by_object ? "--by-object" :
				r->lines ? "--lines" : "--alloc or --metric");
	if (r->callgraph || r->by_object || r->lines)
		return pc_error("%s%s: not with %s", r->by_thread || r->thread ?
				"--by-thread or " : "--format ", r->by_thread || r->thread ?
				"--thread" : export_format_name(r->format),
				r->by_object ? "--by-object" : r->callgraph ? "--callgraph" :
				"--lines");
	return 0;
}

/* An allocation profile's group g: the writers' own strings, and a unit
 * of one (bytes or objects). */
static void
alloc_words(struct export *x, struct xp_group *g)
{
	intern(x, "alloc_objects");
	intern(x, "alloc_space");
	intern(x, "inuse_objects");
	intern(x, "inuse_space");
	intern(x, "space");
	intern(x, "bytes");
	g->rate = 1;
}

int
export_add(struct export *x, const struct pc_inputs *in, const struct symtab_opts *so,
	   const char *stacks_file, const char *program, uint64_t pid)
{
	const struct gmon_profile *p = &in->runs[0].prof;
	struct source s = { x, in, NULL };
	struct xp_group *g;
	struct lines L;
	double unknown = 0, total, stacked;
	uint64_t outside;

	if (!x->source)
		x->source = pc_strdup(in->runs[0].files[0]);
	x->groups = xtable_grow_array(x->groups, &x->cap_groups, x->ngroups + 1, sizeof(*x->groups));
	g = &x->groups[x->ngroups++];
	*g = (struct xp_group){ intern(x, program), pid, p->nhists ? p->hists[0].rate : 0, 0, 0 };
	free(x->ix->objmap);
	x->ix->objmap = NULL;
	x->ix->nobjmap = 0;
	map_of(&s, 0);		/* the program's object first: pprof's "File:" */
	if (lines_build(&L, in, p, so))
		return -1;
	if (L.have_lines)
		s.L = &L;
	gmon_profile_outside(p, &outside);
	if (CLOCK_IS_ALLOC(x->clock))
		alloc_words(x, g);
	if (add_stacks(&s, stacks_file, &stacked))
		return -1;
	if (x->clock == PC_CLOCK_OFF || CLOCK_IS_ALLOC(x->clock)) {
		/* the waits alone: no CPU sample, stacked or not */
		x->stacks = 1;
	} else if (stacked >= 0) {
		x->stacks = 1;
		total = flat_walk(&in->st, p, give_none, NULL, &unknown) + (double)outside;
		if (total > stacked)
			add_sample(x, (uint32_t[]){ pseudo_loc(x, NO_STACK_NAME) }, 1,
				   total - stacked);
	} else {
		flat_walk(&in->st, p, give_loc, &s, &unknown);
		add_sample(x, (uint32_t[]){ pseudo_loc(x, UNKNOWN_NAME) }, 1, unknown);
		add_sample(x, (uint32_t[]){ pseudo_loc(x, OUTSIDE_NAME) }, 1, (double)outside);
		add_arcs(&s, p);
	}
	g = &x->groups[x->ngroups - 1];
	if (!g->rate)
		g->rate = 1;
	if (add_times(x, &in->runs[0], g))
		return -1;
	for (int i = 0; i < in->runs[0].nfiles; i++)
		if (timelines_add(x, in->runs[0].files[i], i, (uint32_t)x->ngroups - 1, tl_locs,
				  &s))
			return -1;
	if (lines_check(&L))
		return -1;
	lines_release(&L);
	return 0;
}

void
export_release(struct export *x)
{
	for (size_t i = 0; i < x->nstrs; i++)
		free(x->strs[i]);
	free(x->strs);
	free(x->maps);
	free(x->funcs);
	free(x->locs);
	free(x->samples);
	free(x->pool);
	free(x->groups);
	free(x->arcs);
	free(x->threads);
	timelines_release(x->timeline);
	free(x->timeline);
	free(x->source);
	if (x->ix) {
		table_free(&x->ix->strs);
		table_free(&x->ix->maps);
		table_free(&x->ix->funcs);
		table_free(&x->ix->locs);
		free(x->ix->objmap);
		free(x->ix);
	}
	memset(x, 0, sizeof(*x));
}
