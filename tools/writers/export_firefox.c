/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The export with its timeline in the Firefox Profiler's processed
 * format (docs-developer/processed-profile-format.md in
 * firefox-devtools/profiler), pinned to version 48, which the profiler's
 * loader upgrades to its own: one thread each, tables of its own
 * (strings, functions, frames, stacks), its samples with their times,
 * weights and CPU deltas, its markers with pcprof's marker schema, its
 * native allocations (PC_ALLOC's sampled allocations and their frees,
 * in bytes, where the timeline has them), and the counters of
 * pcprof_count. Names are resolved here (symbolicated).
 * Categories: CPU, and off-CPU with a subcategory per call waited in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "writers/export_out.h"
#include "writers/export_firefox.h"

#define FF_VERSION	48

static void *
ff_grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	*cap = need > *cap * 2 ? need : *cap * 2;
	p = pc_realloc(p, *cap * size);
	return p;
}

static uint32_t
str_add(struct ff_strings *s, const char *str)
{
	s->v = ff_grow(s->v, &s->cap, s->n + 1, sizeof(*s->v));
	s->v[s->n] = str;
	return (uint32_t)s->n++;
}

static uint32_t
str_of(struct ff_strings *s, const struct export *x, uint32_t i)
{
	if (!s->of_str[i])
		s->of_str[i] = str_add(s, x->strs[i]) + 1;
	return s->of_str[i] - 1;
}

/* A name not among the export's strings (a marker's): looked for among
 * the thread's. */
static uint32_t
str_named(struct ff_strings *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return (uint32_t)i;
	return str_add(s, name);
}

/* The wait that loc is, as an off-CPU subcategory (1 + index), or 0. */
static uint32_t
wait_sub(struct ff *f, uint32_t loc)
{
	const char *name = f->x->strs[f->x->funcs[f->x->locs[loc].func].name];

	if (strncmp(name, "[off-cpu", 8))
		return 0;
	for (size_t i = 0; i < f->nwaits; i++)
		if (!strcmp(f->waits[i], name))
			return (uint32_t)i + 1;
	f->waits = pc_realloc(f->waits, (f->nwaits + 1) * sizeof(*f->waits));
	f->waits[f->nwaits++] = name;
	return (uint32_t)f->nwaits;
}

/* Frame of location loc (UINT32_MAX: "[no stack recorded]"). */
static uint32_t
frame_of(struct ff_thread *t, uint32_t loc)
{
	uint32_t *none = &t->none_frame;

	if (loc == UINT32_MAX ? !*none : !t->frame_of[loc]) {
		t->frames = ff_grow(t->frames, &t->cap_frames, t->nframes + 1,
				    sizeof(*t->frames));
		t->frames[t->nframes++] = loc;
		*(loc == UINT32_MAX ? none : &t->frame_of[loc]) =
			(uint32_t)t->nframes;
	}
	return (loc == UINT32_MAX ? *none : t->frame_of[loc]) - 1;
}

static void
func_of(struct ff_thread *t, uint32_t func)
{
	if (!t->func_of[func]) {
		t->funcs = ff_grow(t->funcs, &t->cap_funcs, t->nfuncs + 1,
				   sizeof(*t->funcs));
		t->funcs[t->nfuncs++] = func;
		t->func_of[func] = (uint32_t)t->nfuncs;
	}
}

static void
hash_rebuild(struct ff_thread *t)
{
	size_t n = t->hash_slots ? t->hash_slots * 2 : 1024;

	free(t->hash);
	t->hash = pc_calloc(n, sizeof(*t->hash));
	t->hash_slots = n;
	for (size_t i = 0; i < t->nst; i++) {
		uint64_t h =
			((uint64_t)t->st[4 * i + 1] * 0x9e3779b97f4a7c15ULL) ^
			(uint64_t)t->st[4 * i] * 0x100000001b3ULL;

		for (size_t k = h % n; ; k = (k + 1) % n)
			if (!t->hash[k]) {
				t->hash[k] = (uint32_t)i + 1;
				break;
			}
	}
}

/* The stack node of frame under prefix: found or added. */
static int64_t
stack_node(struct ff_thread *t, int64_t prefix, uint32_t frame, int cat,
	   uint32_t sub)
{
	uint64_t h = ((uint64_t)prefix * 0x9e3779b97f4a7c15ULL) ^
		     (uint64_t)frame * 0x100000001b3ULL;
	size_t k;

	if ((t->nst + 1) * 2 > t->hash_slots)
		hash_rebuild(t);
	for (k = h % t->hash_slots; t->hash[k]; k = (k + 1) % t->hash_slots) {
		const int64_t *e = &t->st[4 * (t->hash[k] - 1)];

		if (e[0] == frame && e[1] == prefix)
			return t->hash[k] - 1;
	}
	t->st = ff_grow(t->st, &t->cap_st, 4 * (t->nst + 1), sizeof(*t->st));
	t->st[4 * t->nst] = frame;
	t->st[4 * t->nst + 1] = prefix;
	t->st[4 * t->nst + 2] = cat;
	t->st[4 * t->nst + 3] = sub;
	t->hash[k] = (uint32_t)++t->nst;
	return (int64_t)t->nst - 1;
}

/* The stack node of a timeline stack (export_firefox.h). */
static int64_t
ff_stack(struct ff *f, struct ff_thread *t, const struct tl_group *g,
	 uint32_t stack, int off)
{
	const struct tl_stack *k;
	int64_t node = -1;

	if (stack >= g->nstacks || !g->stacks[stack].depth)
		return stack_node(t, -1, frame_of(t, UINT32_MAX), CAT_OTHER, 0);
	k = &g->stacks[stack];
	for (uint32_t d = k->depth; d-- > 0; ) {
		uint32_t loc = g->pool[k->first + d];
		uint32_t sub = off ? wait_sub(f, loc) : 0;

		func_of(t, f->x->locs[loc].func);
		node = stack_node(t, node, frame_of(t, loc),
				  off ? CAT_OFF : CAT_CPU, sub);
	}
	return node;
}

/* The samples array of thread t of group g. */
static void
write_samples(struct ff *f, struct ff_thread *t, FILE *out)
{
	const char *sep = "";
	size_t n = 0;

	fputs("\"samples\":{\"weightType\":\"samples\",\"stack\":[", out);
	for (size_t gi = 0; gi < f->tl->n; gi++) {
		const struct tl_group *g = &f->tl->v[gi];

		for (size_t i = 0; g->group == t->group && i < g->nsamples;
		     i++) {
			int64_t st;

			if (g->samples[i].tid != t->tid)
				continue;
			st = ff_stack(f, t, g, g->samples[i].stack,
				      g->samples[i].off);
			fprintf(out, "%s%lld", sep, (long long)st);
			sep = ",";
			n++;
		}
	}
	/* the columns in the same order */
#define COLUMN(key, fmt, expr) \
	do { \
		fputs("],\"" key "\":[", out); \
		sep = ""; \
		for (size_t gi = 0; gi < f->tl->n; gi++) { \
			const struct tl_group *g = &f->tl->v[gi]; \
			for (size_t i = 0; \
			     g->group == t->group && i < g->nsamples; i++) { \
				const struct tl_sample *s = &g->samples[i]; \
				if (s->tid != t->tid) \
					continue; \
				fprintf(out, "%s" fmt, sep, expr); \
				sep = ","; \
			} \
		} \
	} while (0)
	COLUMN("time", "%.6f", ff_ms(f, s->t));
	COLUMN("weight", "%.6g", s->weight);
	COLUMN("threadCPUDelta", "%llu", (unsigned long long)s->cpu_delta);
#undef COLUMN
	fprintf(out, "],\"length\":%zu}", n);
}

/* The markers of thread t (those of no thread: the process's main
 * thread's), counters left out. */
static void
write_markers(struct ff *f, struct ff_thread *t, FILE *out, uint64_t pid)
{
	size_t n = 0;
	int pass;

	fputs("\"markers\":{", out);
	for (pass = 0; pass < 6; pass++) {
		const char *sep = "";

		fprintf(out, "%s\"%s\":[", pass ? "]," : "",
			(const char *[]){ "name", "startTime", "endTime",
					  "phase", "category", "data" }[pass]);
		for (size_t gi = 0; gi < f->tl->n; gi++) {
			const struct tl_group *g = &f->tl->v[gi];

			for (size_t i = 0;
			     g->group == t->group && i < g->nmarkers; i++) {
				const struct tl_marker *m = &g->markers[i];
				int instant = m->kind == TL_INSTANT;

				if (m->kind == TL_COUNTER ||
				    (m->tid ? m->tid : pid) != t->tid)
					continue;
				fputs(sep, out);
				sep = ",";
				if (pass == 0)
					fprintf(out, "%u",
						str_named(&t->s, m->name));
				else if (pass == 1)
					fprintf(out, "%.6f",
						ff_ms(f, m->start));
				else if (pass == 2 && instant)
					fputs("null", out);
				else if (pass == 2)
					fprintf(out, "%.6f", ff_ms(f, m->end));
				else if (pass == 3)
					fputs(instant ? "0" : "1", out);
				else if (pass == 4)
					fputs("0", out);
				else
					fprintf(out, "{\"type\":\"pcprof\",\"source\":\"%s\"}",
						m->from_file ? "marker file" : "marker.h");
				n += pass == 0;
			}
		}
	}
	fprintf(out, "],\"length\":%zu}", n);
}

/* A column of n integers v[i * stride] (negative: null). */
static void
int_column(FILE *out, const char *key, const int64_t *v, size_t n,
	   size_t stride)
{
	fprintf(out, ",\"%s\":[", key);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		if (v[i * stride] < 0)
			fputs("null", out);
		else
			fprintf(out, "%lld", (long long)v[i * stride]);
	}
	fputc(']', out);
}

/* A column of n copies of one JSON value. */
static void
same_column(FILE *out, const char *key, const char *value, size_t n)
{
	fprintf(out, ",\"%s\":[", key);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%s", i ? "," : "", value);
	fputc(']', out);
}

/* The frame table: each frame's function, its category from the stack
 * nodes that hold it (an off-CPU wait's, else CPU). */
static void
write_frames(struct ff *f, struct ff_thread *t, FILE *out)
{
	const struct export *x = f->x;
	int64_t *col = pc_malloc((t->nframes + 1) * 3 * sizeof(*col));

	for (size_t i = 0; i < t->nframes; i++) {
		uint32_t loc = t->frames[i];

		col[3 * i] = loc == UINT32_MAX ? (int64_t)t->nfuncs - 1 :
			     (int64_t)t->func_of[x->locs[loc].func] - 1;
		col[3 * i + 1] = loc == UINT32_MAX ? CAT_OTHER : CAT_CPU;
		col[3 * i + 2] = 0;
	}
	for (size_t i = 0; i < t->nst; i++) {
		if (t->st[4 * i + 2] == CAT_OFF && t->st[4 * i + 3]) {
			col[3 * t->st[4 * i] + 1] = CAT_OFF;
			col[3 * t->st[4 * i] + 2] = t->st[4 * i + 3];
		}
	}
	fprintf(out, ",\"frameTable\":{\"length\":%zu", t->nframes);
	same_column(out, "address", "-1", t->nframes);
	same_column(out, "inlineDepth", "0", t->nframes);
	int_column(out, "category", col + 1, t->nframes, 3);
	int_column(out, "subcategory", col + 2, t->nframes, 3);
	int_column(out, "func", col, t->nframes, 3);
	same_column(out, "nativeSymbol", "null", t->nframes);
	same_column(out, "innerWindowID", "0", t->nframes);
	same_column(out, "implementation", "null", t->nframes);
	fputs(",\"line\":[", out);
	for (size_t i = 0; i < t->nframes; i++) {
		uint32_t loc = t->frames[i];

		if (loc != UINT32_MAX && x->locs[loc].line > 0)
			fprintf(out, "%s%d", i ? "," : "", x->locs[loc].line);
		else
			fprintf(out, "%snull", i ? "," : "");
	}
	fputc(']', out);
	same_column(out, "column", "null", t->nframes);
	fputc('}', out);
	free(col);
}

static void
write_funcs(struct ff_thread *t, const struct export *x, FILE *out)
{
	int64_t *name = pc_malloc((t->nfuncs + 1) * 2 * sizeof(*name));

	for (size_t i = 0; i < t->nfuncs; i++) {
		uint32_t fn = t->funcs[i];

		name[2 * i] = fn == UINT32_MAX ? str_named(&t->s, "[no stack recorded]") :
			      str_of(&t->s, x, x->funcs[fn].name);
		name[2 * i + 1] =
			fn != UINT32_MAX && x->funcs[fn].file ?
				(int64_t)str_of(&t->s, x, x->funcs[fn].file) :
				-1;
	}
	fprintf(out, ",\"funcTable\":{\"length\":%zu", t->nfuncs);
	int_column(out, "name", name, t->nfuncs, 2);
	same_column(out, "isJS", "false", t->nfuncs);
	same_column(out, "relevantForJS", "false", t->nfuncs);
	same_column(out, "resource", "-1", t->nfuncs);
	int_column(out, "fileName", name + 1, t->nfuncs, 2);
	same_column(out, "lineNumber", "null", t->nfuncs);
	same_column(out, "columnNumber", "null", t->nfuncs);
	fputc('}', out);
	free(name);
}

/* The thread's tables (after its samples and markers, which fill them). */
static void
write_tables(struct ff *f, struct ff_thread *t, FILE *out)
{
	/* "[no stack recorded]"'s function last, where it is used */
	if (t->none_frame) {
		t->funcs = ff_grow(t->funcs, &t->cap_funcs, t->nfuncs + 1,
				   sizeof(*t->funcs));
		t->funcs[t->nfuncs++] = UINT32_MAX;
	}
	fprintf(out, ",\"stackTable\":{\"length\":%zu", t->nst);
	int_column(out, "frame", t->st, t->nst, 4);
	int_column(out, "prefix", t->st + 1, t->nst, 4);
	int_column(out, "category", t->st + 2, t->nst, 4);
	int_column(out, "subcategory", t->st + 3, t->nst, 4);
	fputc('}', out);
	write_frames(f, t, out);
	write_funcs(t, f->x, out);
	fputs(",\"resourceTable\":{\"length\":0,\"lib\":[],\"name\":[],\"host\":[],\"type\":[]}"
	      ",\"nativeSymbols\":{\"length\":0,\"libIndex\":[],\"address\":[],\"name\":[],"
	      "\"functionSize\":[]}", out);
	fputs(",\"stringArray\":[", out);
	for (size_t i = 0; i < t->s.n; i++) {
		if (i)
			fputc(',', out);
		json_string(out, t->s.v[i]);
	}
	fputc(']', out);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The thread tid of a process of pid, as a sortable key: by group, the
 * main thread (tid == pid) first. */
static uint64_t
thread_key(uint32_t group, uint32_t pid, uint32_t tid)
{
	return (uint64_t)group << 33 | (uint64_t)(tid != pid) << 32 | tid;
}

/* The threads of the timeline as keys, each process's main thread among
 * them (markers of no thread go there), sorted, each once. */
static size_t
list_threads(const struct ff *f, uint64_t **out)
{
	uint64_t *v = pc_realloc(NULL, sizeof(*v));
	size_t n = 0, cap = 1, k = 0;

	for (size_t gi = 0; gi < f->tl->n; gi++) {
		const struct tl_group *g = &f->tl->v[gi];
		uint32_t pid = g->head.pid;

		v = ff_grow(v, &cap,
			    n + 1 + g->nsamples + g->nmarkers + g->nallocs,
			    sizeof(*v));
		v[n++] = thread_key(g->group, pid, pid);
		for (size_t i = 0; i < g->nsamples; i++)
			v[n++] = thread_key(g->group, pid, g->samples[i].tid);
		for (size_t i = 0; i < g->nallocs; i++)
			v[n++] = thread_key(g->group, pid, g->allocs[i].tid);
		for (size_t i = 0; i < g->nmarkers; i++)
			v[n++] = thread_key(
				g->group, pid,
				g->markers[i].tid ? g->markers[i].tid : pid);
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!k || v[i] != v[k - 1])
			v[k++] = v[i];
	*out = v;
	return k;
}

/* The name libpc saw for thread tid of group, or NULL. */
static const char *
thread_name(const struct export *x, uint32_t group, uint32_t tid)
{
	for (size_t i = 0; i < x->nthreads; i++)
		if (x->threads[i].group == group && x->threads[i].tid == tid &&
		    x->threads[i].name)
			return x->strs[x->threads[i].name];
	return NULL;
}

/* The pid of group (its first timeline's). */
static uint32_t
group_pid(const struct ff *f, uint32_t group)
{
	for (size_t gi = 0; gi < f->tl->n; gi++)
		if (f->tl->v[gi].group == group)
			return f->tl->v[gi].head.pid;
	return 0;
}

static void
write_thread(struct ff *f, uint64_t key, FILE *out)
{
	const struct export *x = f->x;
	struct ff_thread t;
	uint32_t pid;
	const char *name;
	char tname[64];

	memset(&t, 0, sizeof(t));
	t.group = (uint32_t)(key >> 33);
	t.tid = (uint32_t)key;
	pid = group_pid(f, t.group);
	t.s.of_str = pc_calloc(x->nstrs + 1, sizeof(*t.s.of_str));
	t.func_of = pc_calloc(x->nfuncs + 1, sizeof(*t.func_of));
	t.frame_of = pc_calloc(x->nlocs + 1, sizeof(*t.frame_of));
	name = thread_name(x, t.group, t.tid);
	if (!name) {
		snprintf(tname, sizeof(tname), "thread %u", t.tid);
		name = tname;
	}
	fputs("{\"processType\":\"default\",\"processStartupTime\":0,"
	      "\"processShutdownTime\":null,\"registerTime\":0,\"unregisterTime\":null,"
	      "\"pausedRanges\":[],\"name\":", out);
	json_string(out, name);
	fputs(",\"processName\":", out);
	json_string(out, x->strs[x->groups[t.group].name]);
	fprintf(out, ",\"isMainThread\":%s,\"pid\":\"%u\",\"tid\":%u,",
		t.tid == pid ? "true" : "false", pid, t.tid);
	write_samples(f, &t, out);
	fputc(',', out);
	write_markers(f, &t, out, pid);
	ff_write_allocs(f, &t, ff_stack, out);
	write_tables(f, &t, out);
	fputc('}', out);
	free(t.s.v);
	free(t.s.of_str);
	free(t.func_of);
	free(t.frame_of);
	free(t.funcs);
	free(t.frames);
	free(t.st);
	free(t.hash);
}

/* pcprof_count's values: a counter for each name of each process, its
 * samples the changes (the profiler draws their sum). */
static void
write_counters(struct ff *f, const uint64_t *threads, size_t nthreads,
	       FILE *out)
{
	const char *sep = "";

	fputs(",\"counters\":[", out);
	for (size_t gi = 0; gi < f->tl->n; gi++) {
		const struct tl_group *g = &f->tl->v[gi];

		for (size_t i = 0; i < g->nmarkers; i++) {
			const struct tl_marker *m = &g->markers[i];
			size_t main = 0, n = 0;
			int64_t last = 0;
			int seen = 0;

			if (m->kind != TL_COUNTER)
				continue;
			for (size_t j = 0; j < i; j++)
				seen |= g->markers[j].kind == TL_COUNTER &&
					!strcmp(g->markers[j].name, m->name);
			if (seen)
				continue;
			for (size_t j = 0; j < nthreads; j++)
				if (threads[j] == thread_key(g->group,
							     g->head.pid,
							     g->head.pid))
					main = j;
			fprintf(out, "%s{\"name\":", sep);
			sep = ",";
			json_string(out, m->name);
			fprintf(out, ",\"category\":\"pcprof\",\"description\":\"pcprof_count\","
				"\"pid\":\"%u\",\"mainThreadIndex\":%zu,\"samples\":{\"time\":[",
				g->head.pid, main);
			for (size_t j = i, k = 0; j < g->nmarkers; j++)
				if (g->markers[j].kind == TL_COUNTER &&
				    !strcmp(g->markers[j].name, m->name))
					fprintf(out, "%s%.6f", k++ ? "," : "",
						ff_ms(f, g->markers[j].start));
			fputs("],\"count\":[", out);
			for (size_t j = i; j < g->nmarkers; j++)
				if (g->markers[j].kind == TL_COUNTER &&
				    !strcmp(g->markers[j].name, m->name)) {
					fprintf(out, "%s%lld", n++ ? "," : "",
						(long long)(g->markers[j].value -
							    last));
					last = g->markers[j].value;
				}
			fprintf(out, "],\"length\":%zu}}", n);
		}
	}
	fputc(']', out);
}

static void
write_meta(struct ff *f, FILE *out, const char *title)
{
	fprintf(out, "{\"meta\":{\"interval\":%.6f,\"startTime\":%.3f,"
		"\"profilingStartTime\":0,\"profilingEndTime\":%.6f,\"processType\":0,"
		"\"product\":", f->tl->v[0].head.interval_ns / 1e6,
		f->x->time_ns / 1e6, ff_ms(f, timelines_end(f->tl)));
	json_string(out, title);
	fprintf(out,
		",\"stackwalk\":1,\"version\":24,\"preprocessedProfileVersion\":%d,"
		"\"symbolicated\":true,\"platform\":\"Linux\",\"oscpu\":\"Linux\",\"abi\":\"\","
		"\"misc\":\"\",\"toolkit\":\"\",\"appBuildID\":\"\",\"sourceURL\":\"\","
		"\"physicalCPUs\":0,\"logicalCPUs\":0,\"CPUName\":\"\","
		"\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":\"ms\",\"threadCPUDelta\":\"ns\"},"
		"\"extensions\":{\"length\":0,\"id\":[],\"name\":[],\"baseURL\":[]},"
		"\"categories\":[{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]},"
		"{\"name\":\"CPU\",\"color\":\"blue\",\"subcategories\":[\"Other\"]},"
		"{\"name\":\"Off-CPU\",\"color\":\"purple\",\"subcategories\":[\"Other\"",
		FF_VERSION);
	for (size_t i = 0; i < f->nwaits; i++) {
		fputc(',', out);
		json_string(out, f->waits[i]);
	}
	fputs("]}],\"markerSchema\":[{\"name\":\"pcprof\",\"display\":[\"marker-chart\","
	      "\"marker-table\",\"timeline-overview\"],\"chartLabel\":\"{marker.name}\","
	      "\"tableLabel\":\"{marker.name}\",\"tooltipLabel\":\"{marker.name}\","
	      "\"data\":[{\"key\":\"source\",\"label\":\"Source\",\"format\":\"string\"}]}]}",
	      out);
}

int
export_firefox(const struct export *x, FILE *out, const char *title)
{
	struct ff f = { x, x->timeline, 0, NULL, 0 };
	uint64_t *threads;
	size_t n;
	char *body = NULL;
	size_t body_len = 0;
	FILE *b;

	if (!f.tl || !f.tl->n) {
		errno = EINVAL;		/* timeline_recorded says so first */
		return -1;
	}
	f.zero = timelines_zero(f.tl);
	n = list_threads(&f, &threads);
	/* the threads first, into memory: they find the waits the meta's
	 * categories list */
	b = pc_memstream(&body, &body_len);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', b);
		write_thread(&f, threads[i], b);
	}
	pc_memstream_close(b);
	write_meta(&f, out, title);
	fputs(",\"libs\":[],\"pages\":[],\"threads\":[", out);
	fwrite(body, 1, body_len, out);
	fputc(']', out);
	write_counters(&f, threads, n, out);
	fputs("}\n", out);
	free(body);
	free(threads);
	free(f.waits);
	return 0;
}
