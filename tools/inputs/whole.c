/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The whole process (PC_SCOPE=all): beside each profile libpc wrote a
 * manifest, PROFILE.objects, that lists every shared object, names each
 * one's own gmon file and holds the arcs between objects. Here they are
 * folded into one address space that the rest of pcprof reads as if it
 * were one executable: object k's symbols, histograms and arc ends move to
 * k << 48 | link-time address, and every function knows its object.
 * Objects are the same across processes when their path and build-id are.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcprof.h"
#include "inputs/runfiles.h"


struct gobj {
	char *path;
	uint8_t id[20];
	size_t idlen;
	uint32_t index;
};

/*
 * The objects of one symbol table's address space, kept across the
 * manifests that whole_load reads into it: an object two manifests list is
 * placed once. For each profile of the latest call, its manifest's object
 * k is object remap[k] here (whole_addr).
 */
struct whole {
	struct gobj *gobjs;
	size_t ngobjs;
	uint32_t no_object_index;	/* "[anonymous code]", or UINT32_MAX */
	uint32_t **remaps;
	size_t *nremap;
	uint32_t *jit;		/* each file's "[jit]" object, or UINT32_MAX */
	int nfiles;
};

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

static int
newer_or_same(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

/* Whether path is a regular file, not reached through a symlink
 * (pc_open_regular): the vDSO's image in a run's directory. */
static int
is_regular(const char *path)
{
	const char *why;
	int fd = pc_open_regular(path, NULL, &why);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* Object st->nobjs into *g: named name, its uncovered code gap; 0, or -1
 * after one line. */
static int
add_object(struct symtab *st, struct symtab *src, const char *name,
	   const char *gap, const char *manifest, uint32_t *g)
{
	if (st->nobjs > GMON_OBJECTS_MAX)
		return pc_error("'%s': more objects than pcprof can place", manifest);
	if (symtab_objects_add(st, src, name, gap, GMON_OBJ_SHIFT, g))
		pc_oom();
	return 0;
}

/* Object ob's index in st, its symbols read where it has samples or
 * frames in the stacks (in_stacks): a wall profile's waits are mostly in
 * libc, which may have had no CPU sample at all. Into *gp: 0, or -1 after
 * one line. */
static int
object_index(struct whole *w, struct symtab *st, const struct gmon_object *ob,
	     const struct symtab_opts *so, const char *manifest, const char *dir,
	     int in_stacks, uint32_t *gp)
{
	struct symtab os;
	char err[512];
	const char *name;
	uint32_t g;
	int pseudo = ob->path[0] == '[', have = 0, bad;

	for (size_t i = 0; i < w->ngobjs; i++) {
		const struct gobj *o = &w->gobjs[i];

		if (!strcmp(o->path, ob->path) && o->idlen == ob->build_id_len &&
		    !memcmp(o->id, ob->build_id, ob->build_id_len))
			return *gp = o->index, 0;
	}
	name = pseudo ? ob->path : base_name(ob->path);
	memset(&os, 0, sizeof(os));
	if (!pseudo && (ob->file || in_stacks)) {
		if (!(have = !symtab_load(&os, ob->path, so, err, sizeof(err)))) {
			pc_warn("warning: '%s' (listed in '%s'): %s; its samples are shown as [%s]",
				ob->path, manifest, err, name);
			memset(&os, 0, sizeof(os));
		} else if (ob->build_id_len && os.build_id_len &&
			   (os.build_id_len != ob->build_id_len ||
			    memcmp(os.build_id, ob->build_id, ob->build_id_len))) {
			pc_warn("warning: '%s' is not the file that was profiled "
				"(its build-id changed); names may be wrong", ob->path);
		}
	}
	if (pseudo) {
		/* "[vdso]": the object has that name, and so has the code no
		 * symbol covers; libpc wrote the vDSO's image beside its
		 * profile (PROFILE+vdso.so) to name the rest */
		char *image = NULL;

		if (ob->file)
			image = pc_asprintf("%s/%s.so", dir, ob->file);
		have = image && is_regular(image) &&
		       !symtab_load(&os, image, so, err, sizeof(err));
		free(image);
		bad = add_object(st, have ? &os : NULL, name, name, manifest, &g);
	} else {
		char *gap;

		gap = pc_asprintf("[%s]", name);
		bad = add_object(st, have ? &os : NULL, name, gap, manifest, &g);
		free(gap);
	}
	if (bad)
		return -1;
	w->gobjs = pc_realloc(w->gobjs, (w->ngobjs + 1) * sizeof(*w->gobjs));
	w->gobjs[w->ngobjs].path = pc_strdup(ob->path);
	memcpy(w->gobjs[w->ngobjs].id, ob->build_id, ob->build_id_len);
	w->gobjs[w->ngobjs].idlen = ob->build_id_len;
	w->gobjs[w->ngobjs++].index = g;
	*gp = g;
	return 0;
}

/* One histogram bin of n samples at the start of object g's room; 0, or
 * -1 after one line. */
static int
add_samples(struct gmon_profile *p, uint32_t g, uint64_t n, const char *manifest)
{
	struct gmon_profile q;
	struct gmon_hist h;
	struct gmon_error err;
	uint64_t count = n;

	memset(&q, 0, sizeof(q));
	h = p->hists[0];
	h.low = (uint64_t)g << GMON_OBJ_SHIFT;
	h.high = h.low + (p->hists[0].high - p->hists[0].low) / p->hists[0].nbins;
	h.nbins = 1;
	h.counts = &count;
	q.hists = &h;
	q.nhists = 1;
	if (gmon_profile_add(p, &q, &err))
		return pc_error("'%s': cannot add its samples: %s", manifest, err.what);
	return 0;
}

/* Whether the file at path was last written before started (ns of
 * CLOCK_REALTIME, 0 if not known), with 3 s of grace: file times lag the
 * clock by a tick, and an archive may keep them to 2 s. */
static int
written_before(const char *path, uint64_t started)
{
	struct stat sb;

	return started && stat(path, &sb) == 0 &&
	       (uint64_t)sb.st_mtim.tv_sec * 1000000000u + (uint64_t)sb.st_mtim.tv_nsec +
	       UINT64_C(3000000000) < started;
}

/* q, object g's profile read from path, placed in g's room; 0, or -1
 * after one line. */
static int
place_object(struct gmon_profile *q, uint32_t g, const char *path)
{
	for (size_t i = 0; i < q->nhists; i++) {
		if (q->hists[i].high > GMON_OBJ_ADDR_MASK)
			return pc_error("'%s': histogram beyond the addresses an object can have",
					path);
		q->hists[i].low |= (uint64_t)g << GMON_OBJ_SHIFT;
		q->hists[i].high |= (uint64_t)g << GMON_OBJ_SHIFT;
	}
	for (size_t i = 0; i < q->narcs; i++) {
		if (q->arcs[i].from_pc > GMON_OBJ_ADDR_MASK || q->arcs[i].self_pc > GMON_OBJ_ADDR_MASK)
			return pc_error("'%s': arc beyond the addresses an object can have", path);
		q->arcs[i].from_pc |= (uint64_t)g << GMON_OBJ_SHIFT;
		q->arcs[i].self_pc |= (uint64_t)g << GMON_OBJ_SHIFT;
	}
	return 0;
}

/* Object ob's own profile file (in dir) added to p as object g; 0, or -1
 * after one line. */
static int
object_file(struct gmon_profile *p, const char *path, const struct gmon_object *ob,
	    uint32_t g, const char *manifest, uint64_t started)
{
	struct gmon_profile q;
	struct gmon_error err;
	uint8_t id[GMON_BUILDID_SIZE];
	int r;

	/* libpc writes an object's file after the image starts, and its
	 * manifest last */
	if (written_before(path, started))
		return pc_error("'%s': written before the process that '%s' records started "
				"(an earlier run's file)", path, manifest);
	if (pc_read_gmon(path, &q))
		return -1;
	if (gmon_profile_is_libpc(&q, id) && ob->build_id_len >= GMON_BUILDID_SIZE &&
	    memcmp(id, ob->build_id, GMON_BUILDID_SIZE))
		return pc_error("'%s': not the profile of '%s' that '%s' lists", path, ob->path,
				manifest);
	if (q.nhists && q.hists[0].rate != p->hists[0].rate)
		return pc_error("'%s': sampled at %u Hz, not %u Hz", path, q.hists[0].rate,
				p->hists[0].rate);
	if (place_object(&q, g, path))
		return -1;
	r = gmon_profile_add(p, &q, &err);
	if (r == -ENOMEM)
		return pc_error("'%s': out of memory", path);
	if (r)
		return pc_error("'%s': cannot be added: %s", path, err.what);
	gmon_profile_release(&q);
	return 0;
}

static int
add_object_file(struct gmon_profile *p, const char *dir, const struct gmon_object *ob,
		uint32_t g, const char *manifest, uint64_t started)
{
	char *path = pc_asprintf("%s/%s", dir, ob->file);
	int bad = object_file(p, path, ob, g, manifest, started);

	free(path);
	return bad;
}

static int
cmp_anon(const void *a, const void *b)
{
	const struct gmon_anon *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* Add the samples of anon[0..n), PCs close together, to p as one
 * histogram record of object g, bins of bin bytes; their count added to
 * *placed: 0, or -1 after one line. */
static int
jit_cluster(struct gmon_profile *p, uint32_t g, const struct gmon_anon *anon,
	    size_t n, uint64_t bin, const char *manifest, uint64_t *placed_out)
{
	uint64_t lo = anon[0].pc / bin * bin, hi = anon[n - 1].pc / bin * bin + bin;
	uint64_t placed = 0, *counts = pc_calloc((hi - lo) / bin, sizeof(*counts));
	struct gmon_profile q;
	struct gmon_error err;
	struct gmon_hist h;
	int r;

	for (size_t k = 0; k < n; k++) {
		counts[(anon[k].pc - lo) / bin] += anon[k].count;
		placed += anon[k].count;
	}
	memset(&q, 0, sizeof(q));
	h = p->hists[0];
	h.low = (uint64_t)g << GMON_OBJ_SHIFT | lo;
	h.high = (uint64_t)g << GMON_OBJ_SHIFT | hi;
	h.nbins = (uint32_t)((hi - lo) / bin);
	h.counts = counts;
	q.hists = &h;
	q.nhists = 1;
	r = gmon_profile_add(p, &q, &err);
	free(counts);
	if (r)
		return pc_error("'%s': cannot add its JIT samples: %s", manifest, err.what);
	*placed_out += placed;
	return 0;
}

/* The process's JIT names into js: its perf map, else its jitdump beside
 * the profile (dir) or in the current directory (where pcprof run ran
 * it); 0, or -1 for none to believe. */
static int
jit_names(const struct gmon_objects *o, const struct stat *ms, const char *dir,
	  struct symtab *js)
{
	char path[PATH_MAX];

	if (jitmap_load(o->pid, ms->st_uid, o->started, js, path, sizeof(path)) > 0)
		return 0;
	symtab_release(js);
	if (jitdump_load(dir, o->pid, ms->st_uid, o->started, js, path, sizeof(path)) > 0)
		return 0;
	symtab_release(js);
	if (strcmp(dir, ".") &&
	    jitdump_load(".", o->pid, ms->st_uid, o->started, js, path, sizeof(path)) > 0)
		return 0;
	symtab_release(js);
	return -1;
}

/*
 * Samples in no object that the process's perf map or jitdump names (JIT
 * code): an object "[jit]" of its functions (*g), the PCs no function
 * covers its "[anonymous code]". Returns the samples placed there (0
 * without names that can be believed) into *placed, each cluster of PCs
 * one histogram record: 0, or -1 after one line.
 */
static int
jit_samples(struct symtab *st, struct gmon_profile *p, struct gmon_objects *o,
	    const char *manifest, const struct stat *ms, const char *dir, uint32_t *g,
	    uint64_t *placed)
{
	const uint64_t bin = (p->hists[0].high - p->hists[0].low) / p->hists[0].nbins;
	struct symtab js;
	uint64_t total = 0;
	size_t i = 0;

	*placed = 0;
	if (!o->nanon || !o->pid || !bin)
		return 0;
	/* a snapshot taken while other threads sample may list a few more
	 * by PC than its total says: the total is raised to them */
	for (size_t k = 0; k < o->nanon; k++)
		total = o->anon[k].count > UINT64_MAX - total ? UINT64_MAX : total + o->anon[k].count;
	if (total > o->no_object)
		o->no_object = total;
	if (jit_names(o, ms, dir, &js))
		return 0;
	if (add_object(st, &js, "[jit]", "[anonymous code]", manifest, g))
		return -1;
	qsort(o->anon, o->nanon, sizeof(*o->anon), cmp_anon);
	while (i < o->nanon) {
		/* PCs less than 64 KiB apart share a record of at most 1 MiB */
		size_t j = i + 1;

		if (o->anon[i].pc >= (UINT64_C(1) << GMON_OBJ_SHIFT) - bin) {
			/* past an object's room (5-level paging): left unnamed */
			i++;
			continue;
		}
		while (j < o->nanon && o->anon[j].pc < (UINT64_C(1) << GMON_OBJ_SHIFT) - bin &&
		       o->anon[j].pc - o->anon[j - 1].pc < 65536 &&
		       o->anon[j].pc - o->anon[i].pc < (UINT64_C(1) << 20))
			j++;
		if (jit_cluster(p, *g, o->anon + i, j - i, bin, manifest, placed))
			return -1;
		i = j;
	}
	return 0;
}

static void
add_arcs(struct gmon_profile *p, const struct gmon_objects *o, const uint32_t *map)
{
	struct gmon_arc *v = pc_realloc(p->arcs, (p->narcs + o->narcs + 1) * sizeof(*v));

	p->arcs = v;
	for (size_t i = 0; i < o->narcs; i++) {
		struct gmon_arc a = o->arcs[i];

		a.from_pc = (uint64_t)map[a.from_pc >> GMON_OBJ_SHIFT] << GMON_OBJ_SHIFT | (a.from_pc & GMON_OBJ_ADDR_MASK);
		a.self_pc = (uint64_t)map[a.self_pc >> GMON_OBJ_SHIFT] << GMON_OBJ_SHIFT | (a.self_pc & GMON_OBJ_ADDR_MASK);
		p->arcs[p->narcs++] = a;
	}
}

/* A stripped executable's table: its samples are one "[name]". */
static void
stripped_exe(struct symtab *st, const char *exe)
{
	char *g;

	g = pc_asprintf("[%s]", base_name(exe));
	st->funcs[0] = g;
	st->func_obj[0] = 0;
	st->nfuncs = 1;
	st->syms[0] = (struct sym){ 0, UINT64_C(1) << GMON_OBJ_SHIFT, 0 };
	st->nsyms = 1;
}

/* Keep file's map of manifest indexes to table objects (n of them) and
 * its JIT code's object, for whole_addr. */
static void
keep_remap(struct whole *w, int file, uint32_t *map, size_t n, uint32_t jit)
{
	if (file >= w->nfiles) {
		w->remaps = pc_realloc(w->remaps, (size_t)(file + 1) * sizeof(*w->remaps));
		w->nremap = pc_realloc(w->nremap, (size_t)(file + 1) * sizeof(*w->nremap));
		w->jit = pc_realloc(w->jit, (size_t)(file + 1) * sizeof(*w->jit));
		for (int i = w->nfiles; i <= file; i++) {
			w->remaps[i] = NULL;
			w->nremap[i] = 0;
			w->jit[i] = UINT32_MAX;
		}
		w->nfiles = file + 1;
	}
	free(w->remaps[file]);	/* an earlier call's file of that number */
	w->remaps[file] = map;
	w->nremap[file] = n;
	w->jit[file] = jit;
}

/*
 * Which of the n objects of gmon's manifest the stacks beside it (if any)
 * have frames in, where some object has no samples of its own (o): an
 * array of n flags into *inp, or NULL for none; 0, or -1 after one line.
 */
static int
stack_objects(const char *gmon, const struct gmon_objects *o, char **inp)
{
	char path[4096], *in;
	struct gmon_stacks ss;
	size_t k = 1;
	int r;

	*inp = NULL;
	while (k < o->n && (o->v[k].file || o->v[k].path[0] == '['))
		k++;
	if (k == o->n || gmon_stacks_name(path, sizeof(path), gmon))
		return 0;
	/* read as the stacks always are (files.c: a regular file, no
	 * further than a valid beginning; one line and an error otherwise),
	 * none where there is no file */
	memset(&ss, 0, sizeof(ss));
	if ((r = pc_read_stacks_if(path, &ss)))
		return r == 1 ? 0 : -1;
	*inp = in = pc_calloc(o->n, 1);
	for (size_t i = 0; i < ss.n; i++)
		for (uint32_t d = 0; d < ss.v[i].depth; d++) {
			uint64_t obj = ss.v[i].pcs[d] >> GMON_OBJ_SHIFT;

			if (obj < o->n)
				in[obj] = 1;
		}
	gmon_stacks_release(&ss);
	return 0;
}

/* The objects of manifest o (1 on) placed in st, map[k] each one's, and
 * their samples added to p; 0, or -1 after one line. */
static int
add_objects(struct whole *w, struct symtab *st, struct gmon_profile *p,
	    const struct gmon_objects *o, const struct symtab_opts *so, const char *manifest,
	    const char *dir, const char *in_stacks, uint32_t *map)
{
	map[0] = 0;
	for (size_t k = 1; k < o->n; k++) {
		const struct gmon_object *ob = &o->v[k];

		if (object_index(w, st, ob, so, manifest, dir, in_stacks && in_stacks[k], &map[k]))
			return -1;
		if (ob->file) {
			if (add_object_file(p, dir, ob, map[k], manifest, o->started))
				return -1;
		} else if (ob->samples && add_samples(p, map[k], ob->samples, manifest)) {
			return -1;	/* the vDSO */
		}
	}
	return 0;
}

/* The samples in no object of o's: JIT code where names for it can be
 * believed, the rest "[anonymous code]"; 0, or -1 after one line. */
static int
add_no_object(struct whole *w, struct symtab *st, struct gmon_profile *p,
	      struct gmon_objects *o, const char *manifest, const struct stat *ms,
	      const char *dir, uint32_t *jit)
{
	uint64_t placed, left;

	if (!o->no_object)
		return 0;
	if (jit_samples(st, p, o, manifest, ms, dir, jit, &placed))
		return -1;
	left = o->no_object - placed;
	if (left && w->no_object_index == UINT32_MAX &&
	    add_object(st, NULL, "[anonymous code]", "[anonymous code]", manifest,
		       &w->no_object_index))
		return -1;
	if (left)
		return add_samples(p, w->no_object_index, left, manifest);
	return 0;
}

/* 1 where gmon's manifest was read and its objects added, 0 where it has
 * none to use, -1 after one line on bad input. */
static int
load_manifest(struct whole *w, struct symtab *st, struct pc_run *run, int file,
	      const char *exe, const struct symtab_opts *so)
{
	struct gmon_profile *p = &run->prof;
	const char *gmon = run->files[file];
	struct gmon_objects *o;
	struct stat ms, gs;
	char *manifest = runfiles_manifest_name(gmon), *dircopy;
	const char *dir;
	uint32_t *map, jit = UINT32_MAX;
	char *in_stacks;

	if (stat(manifest, &ms)) {
		free(manifest);
		return 0;
	}
	/* the profile's mtime as inputs_load read it, not looked up again */
	if (run->mtimes)
		gs.st_mtim = run->mtimes[file];
	if ((run->mtimes || stat(gmon, &gs) == 0) &&
	    !newer_or_same(&ms.st_mtim, &gs.st_mtim)) {
		pc_warn("note: '%s' is older than '%s' (from an earlier run); not used",
			manifest, gmon);
		free(manifest);
		return 0;
	}
	if (!(o = runfiles_manifest(run, file)))
		return -1;
	if (o->rate != p->hists[0].rate)
		return pc_error("'%s': sampled at %u Hz, '%s' at %u Hz", manifest, o->rate, gmon,
				p->hists[0].rate);
	if (!st->nobjs && symtab_objects_begin(st, base_name(exe)))
		pc_oom();
	if (st->nsyms == 0 && st->nfuncs == 0)
		stripped_exe(st, exe);
	map = pc_calloc(o->n, sizeof(*map));
	dircopy = pc_strdup(gmon);
	dir = dirname(dircopy);
	if (stack_objects(gmon, o, &in_stacks) ||
	    add_objects(w, st, p, o, so, manifest, dir, in_stacks, map) ||
	    add_no_object(w, st, p, o, manifest, &ms, dir, &jit))
		return -1;
	add_arcs(p, o, map);
	keep_remap(w, file, map, o->n, jit);
	free(in_stacks);
	free(dircopy);
	free(manifest);
	return 1;
}

struct whole *
whole_new(void)
{
	struct whole *w = pc_calloc(1, sizeof(*w));

	w->no_object_index = UINT32_MAX;
	return w;
}

int
whole_load(struct whole *w, struct symtab *st, struct pc_run *run, const char *exe,
	   const struct symtab_opts *so)
{
	int n = 0, r;

	for (int i = 0; i < run->nfiles; i++)
		if (run->manifest[i]) {
			if ((r = load_manifest(w, st, run, i, exe, so)) < 0)
				return -1;
			n += r;
		}
	symbols_notes(so);
	return n;
}

uint64_t
whole_addr(const struct whole *w, int file, uint64_t a)
{
	uint64_t k = a >> GMON_OBJ_SHIFT;

	if (!w || !k || file >= w->nfiles || !w->remaps[file])
		return a;
	if (k == GMON_OBJ_ANON) {
		/* a stack's frame in JIT code: its perf map's or jitdump's */
		k = w->jit[file] != UINT32_MAX ? w->jit[file] : w->no_object_index;
		return k == UINT32_MAX ? UINT64_MAX
				       : (uint64_t)k << GMON_OBJ_SHIFT | (a & GMON_OBJ_ADDR_MASK);
	}
	if (k >= w->nremap[file])
		return UINT64_MAX;	/* in no object pcprof knows */
	return (uint64_t)w->remaps[file][k] << GMON_OBJ_SHIFT | (a & GMON_OBJ_ADDR_MASK);
}

const char *
whole_object(const struct whole *w, uint32_t obj, const uint8_t **id, size_t *idlen)
{
	for (size_t i = 0; w && i < w->ngobjs; i++)
		if (w->gobjs[i].index == obj) {
			*id = w->gobjs[i].id;
			*idlen = w->gobjs[i].idlen;
			return w->gobjs[i].path[0] == '[' ? NULL : w->gobjs[i].path;
		}
	*id = NULL;
	*idlen = 0;
	return NULL;
}

void
whole_free(struct whole *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->ngobjs; i++)
		free(w->gobjs[i].path);
	free(w->gobjs);
	for (int i = 0; i < w->nfiles; i++)
		free(w->remaps[i]);
	free(w->remaps);
	free(w->nremap);
	free(w->jit);
	free(w);
}
