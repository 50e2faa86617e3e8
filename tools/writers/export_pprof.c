/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pprof's format: the export as a gzipped perftools.profiles.Profile, the
 * message that go tool pprof, Grafana Pyroscope and Parca read. The
 * protobuf code is generated from tools/writers/profile.proto by protoc-c
 * (protobuf-c, Debian's libprotobuf-c) and the gzip stream is zlib's.
 *
 * An allocation profile has the four sample types of Go's heap profiles
 * instead (alloc_objects, alloc_space, inuse_objects, inuse_space).
 * Two sample types, samples/count and cpu/nanoseconds (the period is a
 * group's 1e9 / rate), as Go's own CPU profiles have them; a wall-clock
 * view's second is wall/nanoseconds (its off-CPU time in samples of the
 * same rate, so one period is one sample of either). Each sample
 * carries its process as the labels "process" (the program) and "pid",
 * and where the stacks recorded it its thread as "thread" (its name) and
 * "tid"; an off-CPU sample in wait4 or waitid, the child it waited for as
 * "wait_pid" (its leaf, "[off-cpu: wait4]", names the waiting site alone).
 * Addresses are link-time addresses in their object, one mapping an
 * object, and every location already has its function: no tool need
 * symbolize the file again.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "writers/export_out.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

static void *
alloc(size_t n, size_t size)
{
	void *p = pc_calloc(n ? n : 1, size);

	return p;
}

/* The index of s in the export's strings, which must hold it. */
static int64_t
str_of(const struct export *x, const char *s)
{
	for (size_t i = 0; i < x->nstrs; i++)
		if (!strcmp(x->strs[i], s))
			return (int64_t)i;
	return 0;
}

/* Everything the message points at, freed together. */
struct pieces {
	ValueType vt[5];
	ValueType *vtp[4];
	Mapping *maps, **mapp;
	Function *funcs, **funcp;
	Location *locs, **locp;
	Line *lines, **linep;
	Sample *samples, **samplep;
	Label *labels, **labelp;
	uint64_t *locids;
	int64_t *values;
};

static void
build_maps(const struct export *x, Profile *pr, struct pieces *pc)
{
	pc->maps = alloc(x->nmaps, sizeof(*pc->maps));
	pc->mapp = alloc(x->nmaps, sizeof(*pc->mapp));
	for (size_t i = 0; i < x->nmaps; i++) {
		const struct xp_map *m = &x->maps[i];
		Mapping *o = &pc->maps[i];

		perftools__profiles__mapping__init(o);
		o->id = i + 1;
		o->memory_start = m->lo == UINT64_MAX ? 0 : m->lo;
		o->memory_limit = m->hi;
		o->filename = m->file;
		o->build_id = m->build_id;
		o->has_functions = 1;
		o->has_filenames = o->has_line_numbers = o->has_inline_frames =
			m->has_lines;
		pc->mapp[i] = o;
	}
	pr->n_mapping = x->nmaps;
	pr->mapping = pc->mapp;
	pc->funcs = alloc(x->nfuncs, sizeof(*pc->funcs));
	pc->funcp = alloc(x->nfuncs, sizeof(*pc->funcp));
	for (size_t i = 0; i < x->nfuncs; i++) {
		Function *o = &pc->funcs[i];

		perftools__profiles__function__init(o);
		o->id = i + 1;
		o->name = o->system_name = x->funcs[i].name;
		o->filename = x->funcs[i].file;
		o->start_line = x->funcs[i].start_line;
		pc->funcp[i] = o;
	}
	pr->n_function = x->nfuncs;
	pr->function = pc->funcp;
}

static void
build_locations(const struct export *x, Profile *pr, struct pieces *pc)
{
	size_t nlines = 0;

	for (size_t i = 0; i < x->nlocs; i++)
		nlines += 1 + (x->locs[i].inlined != 0);
	pc->locs = alloc(x->nlocs, sizeof(*pc->locs));
	pc->locp = alloc(x->nlocs, sizeof(*pc->locp));
	pc->lines = alloc(nlines, sizeof(*pc->lines));
	pc->linep = alloc(nlines, sizeof(*pc->linep));
	nlines = 0;
	for (size_t i = 0; i < x->nlocs; i++) {
		const struct xp_loc *l = &x->locs[i];
		Location *o = &pc->locs[i];
		Line *ln = &pc->lines[nlines];

		perftools__profiles__location__init(o);
		o->id = i + 1;
		o->mapping_id = l->map;
		o->address = l->addr;
		o->line = &pc->linep[nlines];
		/* the inlined function first, at its line; then the function
		 * it was inlined into, at the line that calls it */
		perftools__profiles__line__init(ln);
		ln->function_id = (l->inlined ? l->inlined - 1 : l->func) + 1;
		ln->line = l->line;
		pc->linep[nlines++] = ln;
		if (l->inlined) {
			ln = &pc->lines[nlines];
			perftools__profiles__line__init(ln);
			ln->function_id = l->func + 1;
			ln->line = l->call_line;
			pc->linep[nlines++] = ln;
		}
		o->n_line = (size_t)(&pc->linep[nlines] - o->line);
		pc->locp[i] = o;
	}
	pr->n_location = x->nlocs;
	pr->location = pc->locp;
}

/* A sample's labels: its process (program and pid) and its thread (name
 * and tid), where known. */
static size_t
put_labels(const struct export *x, const struct xp_sample *s, Label *lb,
	   Label **lp)
{
	static const char *const keys[] = { "process", "pid", "thread", "tid", "wait_pid" };
	const struct xp_group *g = &x->groups[s->group];
	const struct xp_thread *t =
		s->thread ? &x->threads[s->thread - 1] : NULL;
	size_t n = 0;

	for (int k = 0; k < 5; k++) {
		int64_t str = 0, num = 0;

		if (k == 0)
			str = g->name;
		else if (k == 1)
			num = (int64_t)g->pid;
		else if (k == 2 && t)
			str = t->name;
		else if (k == 3 && t)
			num = (int64_t)t->tid;
		else if (k == 4)
			num = (int64_t)s->wait_pid;
		if (!str && !num)
			continue;
		perftools__profiles__label__init(&lb[n]);
		lb[n].key = str_of(x, keys[k]);
		lb[n].str = str;
		lb[n].num = num;
		lp[n] = &lb[n];
		n++;
	}
	return n;
}

static void
build_samples(const struct export *x, Profile *pr, struct pieces *pc)
{
	size_t used = 0;
	double sum = 0;

	pc->samples = alloc(x->nsamples, sizeof(*pc->samples));
	pc->samplep = alloc(x->nsamples, sizeof(*pc->samplep));
	pc->labels = alloc(5 * x->nsamples, sizeof(*pc->labels));
	pc->labelp = alloc(5 * x->nsamples, sizeof(*pc->labelp));
	pc->locids = alloc(x->npool, sizeof(*pc->locids));
	pc->values = alloc(4 * x->nsamples, sizeof(*pc->values));
	for (size_t i = 0; i < x->npool; i++)
		pc->locids[i] = x->pool[i] + 1;
	for (size_t i = 0; i < x->nsamples; i++) {
		const struct xp_sample *s = &x->samples[i];
		const struct xp_group *g = &x->groups[s->group];
		Sample *o;

		if (!(s->count > 0) ||
		    (x->alloc_all && s->kind > GMON_INUSE_BYTES))
			continue; /* left out (--thread), or a count of samples */
		o = &pc->samples[used];
		perftools__profiles__sample__init(o);
		o->n_location_id = s->depth;
		o->location_id = pc->locids + s->first;
		if (x->alloc_all) {
			/* a heap profile's four values, this sample's of one */
			o->n_value = 4;
			o->value = pc->values + 4 * i;
			o->value[s->kind & 3] = llround(s->count);
			goto labels;
		}
		o->n_value = 2;
		o->value = pc->values + 2 * i;
		/* whole samples that add up: a bin two functions share gives
		 * each a fraction, and the rounding is carried */
		o->value[0] = llround(sum + s->count) - llround(sum);
		sum += s->count;
		/* wall time is kept to the nanosecond: an off-CPU record's
		 * is a measured time, not a count of whole samples */
		o->value[1] = llround((x->clock == PC_CLOCK_CPU ?
					       (double)o->value[0] :
					       s->count) *
				      1e9 / g->rate);
labels:
		o->label = &pc->labelp[5 * i];
		o->n_label = put_labels(x, s, &pc->labels[5 * i], o->label);
		pc->samplep[used++] = o;
	}
	pr->n_sample = used;
	pr->sample = pc->samplep;
}

static void
pieces_free(struct pieces *pc)
{
	free(pc->maps);
	free(pc->mapp);
	free(pc->funcs);
	free(pc->funcp);
	free(pc->locs);
	free(pc->locp);
	free(pc->lines);
	free(pc->linep);
	free(pc->samples);
	free(pc->samplep);
	free(pc->labels);
	free(pc->labelp);
	free(pc->locids);
	free(pc->values);
}

/* buf[0..len) gzipped onto out, at the fastest level (as Go writes its own
 * profiles): a third of the time, a few percent more bytes. */
static int
gzip_out(const uint8_t *buf, size_t len, FILE *out)
{
	static unsigned char chunk[65536];
	z_stream z;
	int r;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		errno = ENOMEM;
		return -1;
	}
	z.next_in = (unsigned char *)buf;
	do {
		size_t n = len - (size_t)(z.next_in - buf);

		z.avail_in = n > UINT32_MAX ? UINT32_MAX : (uInt)n;
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		r = deflate(&z, z.avail_in == n ? Z_FINISH : Z_NO_FLUSH);
		if (fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out) !=
		    sizeof(chunk) - z.avail_out) {
			deflateEnd(&z);
			return -1;
		}
	} while (r == Z_OK || r == Z_BUF_ERROR);
	deflateEnd(&z);
	if (r != Z_STREAM_END) {
		errno = EIO;
		return -1;
	}
	return 0;
}

/* An allocation profile's: the four sample types of Go's heap profiles,
 * the metric asked for the default, and the period the sampling rate in
 * bytes. */
static void
alloc_types(const struct export *x, Profile *pr, struct pieces *pc)
{
	static const char *const names[] = { "alloc_objects", "alloc_space", "inuse_objects",
					      "inuse_space" };

	for (int i = 0; i < 4; i++) {
		perftools__profiles__value_type__init(&pc->vt[i]);
		pc->vt[i].type = str_of(x, names[i]);
		pc->vt[i].unit = str_of(x, i & 1 ? "bytes" : "count");
		pc->vtp[i] = &pc->vt[i];
	}
	perftools__profiles__value_type__init(&pc->vt[4]);
	pc->vt[4].type = str_of(x, "space");
	pc->vt[4].unit = str_of(x, "bytes");
	pr->n_sample_type = 4;
	pr->period_type = &pc->vt[4];
	pr->period = (int64_t)x->alloc_rate;
	pr->default_sample_type =
		str_of(x, names[CLOCK_ALLOC_KIND(x->clock) & 3]);
}

int
export_pprof(const struct export *x, FILE *out)
{
	Profile pr = PERFTOOLS__PROFILES__PROFILE__INIT;
	struct pieces pc;
	uint32_t rate = x->ngroups ? x->groups[0].rate : 1;
	uint8_t *buf;
	size_t len;
	int r;

	memset(&pc, 0, sizeof(pc));
	for (int i = 0; i < 3; i++)
		perftools__profiles__value_type__init(&pc.vt[i]);
	pc.vt[0].type = str_of(x, "samples");
	pc.vt[0].unit = str_of(x, "count");
	pc.vt[1].type = pc.vt[2].type =
		str_of(x, x->clock == PC_CLOCK_CPU ? "cpu" : "wall");
	pc.vt[1].unit = pc.vt[2].unit = str_of(x, "nanoseconds");
	pc.vtp[0] = &pc.vt[0];
	pc.vtp[1] = &pc.vt[1];
	pr.n_sample_type = 2;
	pr.sample_type = pc.vtp;
	pr.period_type = &pc.vt[2];
	pr.period = (int64_t)(1e9 / (rate ? rate : 1) + 0.5);
	if (x->alloc_all)
		alloc_types(x, &pr, &pc);
	pr.time_nanos = (int64_t)x->time_ns;
	pr.duration_nanos = (int64_t)x->duration_ns;
	pr.n_string_table = x->nstrs;
	pr.string_table = x->strs;
	build_maps(x, &pr, &pc);
	build_locations(x, &pr, &pc);
	build_samples(x, &pr, &pc);
	len = perftools__profiles__profile__get_packed_size(&pr);
	buf = alloc(len, 1);
	perftools__profiles__profile__pack(&pr, buf);
	pieces_free(&pc);
	r = gzip_out(buf, len, out);
	free(buf);
	return r;
}
