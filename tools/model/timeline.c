/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading PROFILE.timeline (preload/timeline.h) and samply's marker files
 * into the export's timeline (model/timeline.h), its stacks as the
 * export's locations (so here, in the model, above the inputs). The file may be hostile:
 * each record's length is checked against the file and its kind, ids out
 * of range are "no stack", and a damaged file is one line and status 2.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pcprof.h"
#include "model/export.h"
#include "model/timeline.h"
#include "../gmon/gmon.h"

#define MAX_DEPTH	4096

struct reading {
	const char *path;
	unsigned char *buf;
	size_t len;
	uint64_t *ids;		/* stack ids, by index into g->stacks */
	char *names[PC_TL_NAMES + 1];
};

static void *
xgrow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	*cap = need > *cap * 2 ? need : *cap * 2;
	p = pc_realloc(p, *cap * size);
	return p;
}

/* The file at path into *buf (NULL where there is none), *len bytes; 0,
 * or -1 after one line. */
static int
read_all(const char *path, unsigned char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat sb;

	*buf = NULL;
	if (!f)
		return 0;
	if (fstat(fileno(f), &sb) || sb.st_size < 0 || sb.st_size > (1LL << 34)) {
		fclose(f);
		return pc_error("'%s': not a timeline file", path);
	}
	*buf = pc_malloc((size_t)sb.st_size + 1);
	*len = fread(*buf, 1, (size_t)sb.st_size, f);
	fclose(f);
	return 0;
}

/* The stack of a PC_TL_STACK record as the export's locations; 0, or -1
 * after one line. */
static int
add_stack(struct reading *r, struct tl_group *g, const unsigned char *p, uint32_t len,
	  int file, tl_locs_fn locs, void *arg, size_t *cap, size_t *cap_pool)
{
	uint32_t w[4];
	uint64_t id;
	struct gmon_stack k;
	static uint32_t buf[MAX_DEPTH + 1];

	if (len < 24)
		return pc_error("'%s': a stack record of %u bytes", r->path, len);
	memcpy(&id, p, 8);
	memcpy(w, p + 8, 16);
	if (w[2] > MAX_DEPTH || (uint64_t)w[2] * 8 != len - 24)
		return pc_error("'%s': a stack of %u frames in %u bytes", r->path, w[2], len);
	k.count = 0;
	k.flags = w[0];
	k.tid = w[1];
	k.depth = w[2];
	k.pcs = (const uint64_t *)(const void *)(p + 24);
	g->stacks = xgrow(g->stacks, cap, g->nstacks + 1, sizeof(*g->stacks));
	r->ids = pc_realloc(r->ids, *cap * sizeof(*r->ids));
	{
		uint32_t d = k.depth ? locs(arg, file, &k, buf) : 0;

		g->pool = xgrow(g->pool, cap_pool, g->npool + d, sizeof(*g->pool));
		memcpy(g->pool + g->npool, buf, d * sizeof(*buf));
		g->stacks[g->nstacks] = (struct tl_stack){ g->npool, d };
		g->npool += d;
	}
	r->ids[g->nstacks++] = id;
	return 0;
}

static int
cmp_id(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The index of stack id, or UINT32_MAX: ids sorted with their index. */
static uint32_t
stack_of(const uint64_t *byid, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (byid[2 * mid] < id)
			lo = mid + 1;
		else if (byid[2 * mid] > id)
			hi = mid;
		else
			return (uint32_t)byid[2 * mid + 1];
	}
	return UINT32_MAX;
}

static int
cmp_sample(const void *a, const void *b)
{
	const struct tl_sample *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

static int
cmp_marker(const void *a, const void *b)
{
	const struct tl_marker *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static char *
xstrndup(const char *s, size_t n)
{
	char *d = pc_strndup(s, n);

	return d;
}

static void
add_marker(struct tl_group *g, size_t *cap, struct tl_marker m)
{
	g->markers = xgrow(g->markers, cap, g->nmarkers + 1, sizeof(*g->markers));
	g->markers[g->nmarkers++] = m;
}

/* Begins paired with their ends, by thread and name (nested: the last
 * begin open); a begin never ended ends at the last time seen, an end
 * with no begin is left out. */
static void
pair_marks(struct reading *r, struct tl_group *g, const struct pc_tl_entry *m, size_t n,
	   size_t *cap)
{
	size_t *open = pc_calloc(n ? n : 1, sizeof(*open)), nopen = 0;

	for (size_t i = 0; i < n; i++) {
		const struct pc_tl_entry *e = &m[i];
		const char *name = e->where <= PC_TL_NAMES && r->names[e->where] ?
				   r->names[e->where] : "[no name]";
		int kind = (e->kind & 0xff) == PC_TL_COUNT ? TL_COUNTER : TL_INSTANT;

		if ((e->kind & 0xff) == PC_TL_BEGIN) {
			open[nopen++] = i;
			continue;
		}
		if ((e->kind & 0xff) == PC_TL_END) {
			for (size_t j = nopen; j-- > 0; ) {
				const struct pc_tl_entry *b = &m[open[j]];

				if (b->tid == e->tid && b->where == e->where) {
					add_marker(g, cap, (struct tl_marker){ b->t, e->t, e->tid,
						   xstrndup(name, strlen(name)), TL_INTERVAL, 0, 0 });
					memmove(open + j, open + j + 1, (nopen - j - 1) * sizeof(*open));
					nopen--;
					break;
				}
			}
			continue;
		}
		add_marker(g, cap, (struct tl_marker){ e->t, e->t, e->tid,
			   xstrndup(name, strlen(name)), kind, (int64_t)e->value, 0 });
	}
	for (size_t j = 0; j < nopen; j++) {
		const struct pc_tl_entry *b = &m[open[j]];
		const char *name = b->where <= PC_TL_NAMES && r->names[b->where] ?
				   r->names[b->where] : "[no name]";

		add_marker(g, cap, (struct tl_marker){ b->t, g->head.end_ns > b->t ? g->head.end_ns :
						       b->t, b->tid, xstrndup(name, strlen(name)),
						       TL_INTERVAL, 0, 0 });
	}
	free(open);
}

/* samply's marker file beside path: marker-PID.txt, lines of
 * "START_NS END_NS NAME". */
static void
read_marker_file(const char *path, struct tl_group *g, size_t *cap)
{
	const char *slash = strrchr(path, '/');
	char name[4096], line[1024];
	FILE *f;
	int dir = slash ? (int)(slash - path) + 1 : 0;

	snprintf(name, sizeof(name), "%.*smarker-%u.txt", dir, path, g->head.pid);
	if (!(f = fopen(name, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;
		int n = 0;

		if (sscanf(line, "%llu %llu %n", &a, &b, &n) < 2 || !n || b < a)
			continue;
		line[strcspn(line, "\r\n")] = 0;
		add_marker(g, cap, (struct tl_marker){ a, b, 0, xstrndup(line + n, strlen(line + n)),
						       a == b ? TL_INSTANT : TL_INTERVAL, 0, 1 });
	}
	fclose(f);
}

static int
cmp_tid_time(const void *a, const void *b)
{
	const struct pc_tl_entry *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

/* g's stack ids, each with its index, sorted for stack_of. */
static uint64_t *
stacks_by_id(const struct reading *r, const struct tl_group *g)
{
	uint64_t *byid = pc_malloc((g->nstacks ? g->nstacks : 1) * 2 * sizeof(*byid));

	for (size_t i = 0; i < g->nstacks; i++) {
		byid[2 * i] = r->ids[i];
		byid[2 * i + 1] = i;
	}
	qsort(byid, g->nstacks, 2 * sizeof(*byid), cmp_id);
	return byid;
}

static int
cmp_time(const void *a, const void *b)
{
	const struct pc_tl_entry *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

/* A free of g's at addr by thread tid taken back (PC_TL_UNFREE): left
 * out. It is among the thread's last events: a hostile file's search
 * stays short. */
static void
unfree(struct tl_group *g, uint64_t addr, uint32_t tid)
{
	struct tl_alloc *v = g->allocs;

	for (size_t j = g->nallocs; j-- > 0 && g->nallocs - j <= 1024; )
		if (v[j].addr == addr && v[j].bytes < 0 && v[j].tid == tid) {
			memmove(v + j, v + j + 1,
				(g->nallocs - j - 1) * sizeof(*v));
			g->nallocs--;
			return;
		}
}

/* The allocation events e[0, n) as g's, by time: an allocation's bytes,
 * a free's taken back. */
static void
add_allocs(struct reading *r, struct tl_group *g, struct pc_tl_entry *e,
	   size_t n)
{
	uint64_t *byid = stacks_by_id(r, g);

	g->allocs = pc_calloc(n ? n : 1, sizeof(*g->allocs));
	qsort(e, n, sizeof(*e), cmp_time);
	for (size_t i = 0; i < n; i++) {
		struct tl_alloc *a = &g->allocs[g->nallocs];
		uint32_t kind = e[i].kind & 0xff;
		int64_t bytes = (int64_t)e[i].where;

		if (kind == PC_TL_UNFREE)
			unfree(g, e[i].value, e[i].tid);
		if ((kind != PC_TL_MALLOC && kind != PC_TL_FREE) || bytes < 0)
			continue;
		a->t = e[i].t;
		a->tid = e[i].tid;
		a->addr = e[i].value;
		a->bytes = kind == PC_TL_FREE ? -bytes : bytes;
		a->stack = stack_of(byid, g->nstacks,
				    PC_TL_ALLOC_STACK | e[i].weight);
		g->nallocs++;
	}
	free(byid);
}

/* The raw samples e[0, n) as g's: stacks found, each thread's CPU delta
 * from its previous kept CPU sample, off-CPU ns in samples. */
static void
add_samples(struct reading *r, struct tl_group *g, struct pc_tl_entry *e, size_t n)
{
	uint64_t *byid = stacks_by_id(r, g);
	double rate = g->head.interval_ns ? 1.0 / (double)g->head.interval_ns : 0.001;

	g->samples = pc_calloc(n ? n : 1, sizeof(*g->samples));
	qsort(e, n, sizeof(*e), cmp_tid_time);
	for (size_t i = 0; i < n; i++) {
		struct tl_sample *s = &g->samples[g->nsamples];
		uint32_t kind = e[i].kind & 0xff;
		uint64_t last = 0;

		if (kind != PC_TL_CPU && kind != PC_TL_PC && kind != PC_TL_OFF)
			continue;
		s->t = e[i].t;
		s->tid = e[i].tid;
		s->off = kind == PC_TL_OFF;
		s->stack = kind == PC_TL_PC ? UINT32_MAX : stack_of(byid, g->nstacks, e[i].where);
		s->pc = kind == PC_TL_PC ? e[i].where : 0;
		if (s->off) {
			s->weight = (double)(int64_t)e[i].value * rate;
		} else {
			s->weight = e[i].weight;
			g->cpu_samples += s->weight;
			/* the thread's previous CPU sample's CPU time */
			for (size_t j = i; j-- > 0 && e[j].tid == e[i].tid; )
				if ((e[j].kind & 0xff) != PC_TL_OFF) {
					last = e[j].value;
					break;
				}
			s->cpu_delta = e[i].value > last ? e[i].value - last : 0;
		}
		g->nsamples++;
	}
	qsort(g->samples, g->nsamples, sizeof(*g->samples), cmp_sample);
	free(byid);
}

/* Each CPU sample with no stack but its pc (PC_CALLGRAPH=0) gets a
 * stack of that one frame, so that it is named. */
static void
pc_stacks(struct tl_group *g, int file, tl_locs_fn locs, void *arg)
{
	size_t cap = g->nstacks, cap_pool = g->npool;
	uint32_t buf[2];

	for (size_t i = 0; i < g->nsamples; i++) {
		struct tl_sample *s = &g->samples[i];
		struct gmon_stack k = { 0 };
		uint32_t d;

		if (s->stack != UINT32_MAX || !s->pc)
			continue;
		k.tid = s->tid;
		k.depth = 1;
		k.pcs = &s->pc;
		d = locs(arg, file, &k, buf);
		g->stacks = xgrow(g->stacks, &cap, g->nstacks + 1, sizeof(*g->stacks));
		g->pool = xgrow(g->pool, &cap_pool, g->npool + d, sizeof(*g->pool));
		memcpy(g->pool + g->npool, buf, d * sizeof(*buf));
		g->stacks[g->nstacks] = (struct tl_stack){ g->npool, d };
		g->npool += d;
		s->stack = (uint32_t)g->nstacks++;
	}
}

/* What the records of one timeline file gather as they are read. */
struct taken {
	struct pc_tl_entry *raw, *mk, *al;
	size_t nraw, capraw, nmk, capmk, nal, capal, cap, cap_pool;
};

/* One entry at p into *v. */
static void
take_entry(struct pc_tl_entry **v, size_t *n, size_t *cap,
	   const unsigned char *p)
{
	*v = xgrow(*v, cap, *n + 1, sizeof(**v));
	memcpy(&(*v)[(*n)++], p, sizeof(**v));
}

/* One record at p of len bytes; 0, or -1 after one line. */
static int
take_record(struct reading *r, struct tl_group *g, uint32_t tag, const unsigned char *p,
	    uint32_t len, struct taken *t)
{
	uint64_t id;

	switch (tag) {
	case PC_TL_SAMPLE:
	case PC_TL_MARK:
	case PC_TL_ALLOC:
		if (len != sizeof(struct pc_tl_entry))
			return pc_error("'%s': an entry of %u bytes", r->path, len);
		if (tag == PC_TL_SAMPLE)
			take_entry(&t->raw, &t->nraw, &t->capraw, p);
		else if (tag == PC_TL_MARK)
			take_entry(&t->mk, &t->nmk, &t->capmk, p);
		else
			take_entry(&t->al, &t->nal, &t->capal, p);
		break;
	case PC_TL_ALLOCS:
		if (len != sizeof(g->alloc_head))
			return pc_error("'%s': allocation counts of %u bytes",
					r->path, len);
		memcpy(&g->alloc_head, p, len);
		g->has_allocs = 1;
		break;
	case PC_TL_NAME:
		if (len < 8)
			return pc_error("'%s': a name record of %u bytes", r->path, len);
		memcpy(&id, p, 8);
		if (id >= 1 && id <= PC_TL_NAMES && !r->names[id])
			r->names[id] = xstrndup((const char *)p + 8, len - 8);
		break;
	case PC_TL_HEAD:
		if (len != sizeof(g->head))
			return pc_error("'%s': a header of %u bytes", r->path, len);
		memcpy(&g->head, p, len);
		break;
	default:
		break;		/* a later build's: left out */
	}
	return 0;
}

/* A new, empty timeline of the export's group. */
static struct tl_group *
new_group(struct export *x, uint32_t group)
{
	struct tl_group *g;

	if (!x->timeline)
		x->timeline = pc_calloc(1, sizeof(*x->timeline));
	x->timeline->v = pc_realloc(x->timeline->v, (x->timeline->n + 1) * sizeof(*g));
	g = &x->timeline->v[x->timeline->n++];
	memset(g, 0, sizeof(*g));
	g->group = group;
	return g;
}

/* The records of r (its file name) into g and t; 0, or -1 after one line. */
static int
read_records(struct reading *r, struct tl_group *g, const char *name, int file,
	     tl_locs_fn locs, void *arg, struct taken *t)
{
	size_t at = 0;
	int ended = 0, bad;

	while (at < r->len) {
		struct pc_tl_rec h;

		if (r->len - at < sizeof(h))
			return pc_error("'%s': truncated at byte %zu", name, at);
		memcpy(&h, r->buf + at, sizeof(h));
		at += sizeof(h);
		if (h.len > r->len - at)
			return pc_error("'%s': truncated record at byte %zu", name, at);
		if (ended)
			return pc_error("'%s': a record after the end at byte %zu", name, at);
		ended = h.tag == PC_TL_LAST;
		if (h.tag == PC_TL_STACK)
			bad = add_stack(r, g, r->buf + at, h.len, file, locs, arg, &t->cap,
					&t->cap_pool);
		else
			bad = take_record(r, g, h.tag, r->buf + at, h.len, t);
		if (bad)
			return -1;
		at += h.len;
	}
	if (!ended)
		return pc_error("'%s': cut short (no end record)", name);
	return 0;
}

int
timelines_add(struct export *x, const char *path, int file, uint32_t group,
	      tl_locs_fn locs, void *arg)
{
	char name[4096];
	struct reading r = { name, NULL, 0, NULL, { NULL } };
	struct tl_group *g;
	struct taken t = { 0 };
	struct pc_tl_entry *raw, *mk;
	size_t nraw, nmk, capm = 0;

	snprintf(name, sizeof(name), "%s%s", path, PC_TL_SUFFIX);
	if (read_all(name, &r.buf, &r.len))
		return -1;
	if (!r.buf)
		return 0;
	if (r.len < sizeof(struct pc_tl_rec) + sizeof(struct pc_tl_head) ||
	    memcmp(r.buf + sizeof(struct pc_tl_rec), PC_TL_MAGIC, 16))
		return pc_error("'%s': not a timeline file", name);
	g = new_group(x, group);
	if (read_records(&r, g, name, file, locs, arg, &t))
		return -1;
	raw = t.raw;
	nraw = t.nraw;
	mk = t.mk;
	nmk = t.nmk;
	add_samples(&r, g, raw, nraw);
	add_allocs(&r, g, t.al, t.nal);
	pc_stacks(g, file, locs, arg);
	pair_marks(&r, g, mk, nmk, &capm);
	read_marker_file(path, g, &capm);
	qsort(g->markers, g->nmarkers, sizeof(*g->markers), cmp_marker);
	g->first_t = g->head.start_ns;
	g->last_t = g->head.end_ns;
	for (size_t i = 0; i < g->nmarkers; i++)
		if (g->markers[i].end > g->last_t)
			g->last_t = g->markers[i].end;
	for (size_t i = 1; i <= PC_TL_NAMES; i++)
		free(r.names[i]);
	free(r.ids);
	free(raw);
	free(mk);
	free(t.al);
	free(r.buf);
	return 0;
}

uint64_t
timelines_zero(const struct timelines *t)
{
	uint64_t z = UINT64_MAX;

	for (size_t i = 0; t && i < t->n; i++)
		if (t->v[i].first_t < z)
			z = t->v[i].first_t;
	return z == UINT64_MAX ? 0 : z;
}

uint64_t
timelines_end(const struct timelines *t)
{
	uint64_t e = 0;

	for (size_t i = 0; t && i < t->n; i++)
		if (t->v[i].last_t > e)
			e = t->v[i].last_t;
	return e;
}

void
timelines_release(struct timelines *t)
{
	for (size_t i = 0; t && i < t->n; i++) {
		struct tl_group *g = &t->v[i];

		for (size_t j = 0; j < g->nmarkers; j++)
			free(g->markers[j].name);
		free(g->markers);
		free(g->samples);
		free(g->allocs);
		free(g->stacks);
		free(g->pool);
	}
	if (t)
		free(t->v);
}
