/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * PC_SCOPE=all, the writer's side: each object's gmon file, the vDSO's
 * image, and the run's manifest. AS-safe: it runs at exit, at exec and from
 * fatal-signal handlers, serialized by the lifecycle's state.
 *
 * The manifest, PATH.objects, is text, one record a line:
 *   pcprof-objects 1
 *   version V                  the libpc that wrote it (VERSION, 1.0.0 on)
 *   rate HZ
 *   pid PID                    the process that wrote it
 *   threads N                  threads sampled
 *   signals N SAMPLES          the timer's signals and the samples they
 *                              stood for (1 + each one's overrun), where
 *                              each stood for more than
 *                              GMON_SAMPLES_A_SIGNAL (a rate asked beyond
 *                              what the timer gives); else none
 *   no-object SAMPLES          samples in no object (JIT code, ...)
 *   started NS                 CLOCK_REALTIME when this image began (or
 *                              its process forked), in nanoseconds
 *   cpu START STOP WRITE       the process's CPU clock, in nanoseconds, when
 *                              this image began, when sampling stopped and
 *                              when this manifest was written
 *   ended exec|exit|signal N   how the image ended (none: a snapshot;
 *                              signal N: it died of signal N)
 *   timer KIND HOW COST        the timer threads got (posix, taskclock),
 *                              why (asked: PC_TIMER; measured: chosen by
 *                              a task-clock sample's cost, COST ns;
 *                              refused: task-clock was), COST 0 if not
 *                              measured
 *   object INDEX LOADED SAMPLES BUILD-ID FILE PATH
 *                              FILE: "gmon.out+libz.so.1", beside this one
 *   arc FROM SELF COUNT        between two objects, INDEX<<48 | address
 * INDEX 0 is the main program and FILE its gmon file; FILE is "-" for an
 * object with no file (nothing sampled); the vDSO's image is written too,
 * as FILE.so, to name its functions by; BUILD-ID is hex or
 * "-"; PATH is last on the line, with bytes below 0x21, '%' and 0x7f
 * written as %XX. A record is added only where a pcprof that skips it
 * (as pcprof does a lowercase word it does not know, from 1.0.0 on) still
 * reads the profile right; a change of meaning changes the magic.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"	/* PC_VERSION, from VERSION by the Makefile */
#include "pc.h"
#include "objects.h"
#include "banned.h"

/* ------------------------------------------------------------- writing */

/* One manifest line at a time: writing is serialized (pc->writer), and a
 * static buffer keeps a fatal signal's alternate stack small. */
static char text_buf[PATH_MAX * 4 + 1024];

static void
text_start(struct pc_line *t)
{
	t->buf = text_buf;
	t->size = sizeof(text_buf);
	t->len = 0;
}

static void
text_hex(struct pc_line *t, const uint8_t *b, size_t n)
{
	static const char x[] = "0123456789abcdef";

	for (size_t i = 0; i < n && t->len + 2 < t->size; i++) {
		t->buf[t->len++] = x[b[i] >> 4];
		t->buf[t->len++] = x[b[i] & 15];
	}
}

static void
text_x64(struct pc_line *t, uint64_t v)
{
	static const char x[] = "0123456789abcdef";
	char d[20];
	int n = 0;

	do
		d[n++] = x[v & 15];
	while ((v >>= 4));
	pc_line_str(t, "0x");
	while (n > 0 && t->len < t->size - 1)
		t->buf[t->len++] = d[--n];
}

static void
text_escaped(struct pc_line *t, const char *s)
{
	static const char x[] = "0123456789ABCDEF";

	for (; *s && t->len + 3 < t->size; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= 0x20 || c == '%' || c == 0x7f) {
			t->buf[t->len++] = '%';
			t->buf[t->len++] = x[c >> 4];
			t->buf[t->len++] = x[c & 15];
		} else {
			t->buf[t->len++] = (char)c;
		}
	}
}

static uint32_t writing;	/* the object write_object writes */
static unsigned char has_arcs[PC_MAX_OBJECTS / 8];

static void
mark_arc(uint64_t from, uint64_t self, uint64_t c, void *arg)
{
	uint64_t a = from >> PC_OBJ_SHIFT, b = self >> PC_OBJ_SHIFT;

	(void)arg;
	if (c && a == b && a < PC_MAX_OBJECTS)
		has_arcs[a / 8] |= (unsigned char)(1u << (a % 8));
}

static int
write_object(struct gmon_sink *s)
{
	const struct pc_object *o = &pc_objs->objs[writing];
	uint8_t spare[GMON_SPARE_SIZE];
	size_t k = (size_t)o->build_id_len < GMON_BUILDID_SIZE ?
		   (size_t)o->build_id_len : GMON_BUILDID_SIZE;

	memcpy(spare, pc_cfg->spare, GMON_BUILDID_OFF);
	memset(spare + GMON_BUILDID_OFF, 0, GMON_SPARE_SIZE - GMON_BUILDID_OFF);
	memcpy(spare + GMON_BUILDID_OFF, o->build_id, k);
	gmon_sink_header(s, spare);
	pc_dump_texts(s, o->text, o->ntext);
	/* one pass over the arc table per object that has arcs of its own */
	if (pc_cfg->callgraph &&
	    (has_arcs[writing / 8] & (1u << (writing % 8))))
		pc_arcs_write(s, writing);
	return s->error;
}

static int
write_image(struct gmon_sink *s)
{
	const struct pc_object *o = &pc_objs->objs[writing];

	return gmon_sink_bytes(s, o->image, o->image_len);
}

static const char *manifest_main;	/* the main gmon file's path */
static int dump_nobjs;			/* the objects this write covers */
static int wrote[PC_MAX_OBJECTS / 8 * 8];

static void
write_cross_arc(uint64_t from, uint64_t self, uint64_t c, void *arg)
{
	struct gmon_sink *s = arg;
	struct pc_line t;

	if (!c || from >> PC_OBJ_SHIFT == self >> PC_OBJ_SHIFT ||
	    from >> PC_OBJ_SHIFT >= PC_MAX_OBJECTS ||
	    self >> PC_OBJ_SHIFT >= PC_MAX_OBJECTS)
		return; /* own arcs are in the gmon files; unplaced ones are
			   lost */
	text_start(&t);
	pc_line_str(&t, "arc ");
	text_x64(&t, from);
	pc_line_str(&t, " ");
	text_x64(&t, self);
	pc_line_str(&t, " ");
	pc_line_u64(&t, c);
	pc_line_str(&t, "\n");
	gmon_sink_bytes(s, t.buf, t.len);
}

static void
object_line(struct gmon_sink *s, int i, int loaded, uint64_t samples,
	    const uint8_t *id, int idlen, const char *prefix, const char *file,
	    const char *path)
{
	struct pc_line t;

	text_start(&t);
	pc_line_str(&t, "object ");
	pc_line_u64(&t, (uint64_t)i);
	pc_line_str(&t, loaded ? " 1 " : " 0 ");
	pc_line_u64(&t, samples);
	pc_line_str(&t, " ");
	if (idlen > 0)
		text_hex(&t, id, (size_t)idlen);
	else
		pc_line_str(&t, "-");
	pc_line_str(&t, " ");
	if (file && *file && prefix) {
		text_escaped(&t, prefix);
		pc_line_str(&t, GMON_OBJECT_SEP);
	}
	text_escaped(&t, file && *file ? file : "-");
	pc_line_str(&t, " ");
	text_escaped(&t, path && *path ? path : "-");
	t.len = t.len < t.size - 1 ? t.len : t.size - 1;
	t.buf[t.len++] = '\n';	/* whatever came before, the record ends */
	gmon_sink_bytes(s, t.buf, t.len);
}

static uint64_t
ns_of(struct timespec t)
{
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void
pc_note_cpu_stop(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	__atomic_store_n(&pc->cpu_stop_ns, ns_of(ts), __ATOMIC_RELEASE);
}

/* "\nsignals N SAMPLES" where each of the timer's signals stood for more
 * than GMON_SAMPLES_A_SIGNAL samples (a rate beyond what the timer gives,
 * which pcprof then says); else nothing, and the manifest reads as it
 * did to an older pcprof. */
static void
line_signals(struct pc_line *t)
{
	uint64_t signals =
		__atomic_load_n(&pc_stats->signals, __ATOMIC_RELAXED);
	uint64_t samples =
		__atomic_load_n(&pc_stats->samples, __ATOMIC_RELAXED);

	if (!signals || samples <= GMON_SAMPLES_A_SIGNAL * signals)
		return;
	pc_line_str(t, "\nsignals ");
	pc_line_u64(t, signals);
	pc_line_str(t, " ");
	pc_line_u64(t, samples);
}

/* The manifest's header: rate, pid, threads, the samples in no object,
 * the clocks and how the image ended. */
static void
manifest_header(struct gmon_sink *s)
{
	uint64_t unplaced =
		pc_objs->pending_dropped + pc_objs->no_object +
		__atomic_load_n(&pc_objs->pending_samples, __ATOMIC_RELAXED);
	/* the stop first, then the clock: a stop noted by a thread that
	 * ends sampling while a snapshot is written is never after now; a
	 * snapshot's sampling has not stopped (0): now, for both */
	uint64_t stop = __atomic_load_n(&pc->cpu_stop_ns, __ATOMIC_ACQUIRE),
		 now;
	struct timespec ts;
	struct pc_line t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	now = ns_of(ts);
	if (!stop || stop > now)
		stop = now;
	text_start(&t);
	pc_line_str(&t, GMON_OBJECTS_MAGIC "\nversion " PC_VERSION "\nrate ");
	pc_line_u64(&t, (uint64_t)pc_cfg->hz);
	pc_line_str(&t, "\npid ");
	pc_line_u64(&t, (uint64_t)pc->pid);
	pc_line_str(&t, "\nthreads ");
	pc_line_u64(&t, __atomic_load_n(&pc_stats->threads, __ATOMIC_RELAXED));
	line_signals(&t);
	pc_line_str(&t, "\nno-object ");
	pc_line_u64(&t, unplaced);
	pc_line_str(&t, "\nstarted ");
	pc_line_u64(&t, ns_of(pc->start));
	/* a killed process's clock at its end is not known */
	if (pc->ending != PC_END_KILLED) {
		pc_line_str(&t, "\ncpu ");
		pc_line_u64(&t, ns_of(pc->cpu_start));
		pc_line_str(&t, " ");
		pc_line_u64(&t, stop);
		pc_line_str(&t, " ");
		pc_line_u64(&t, now);
	}
	/* how the image ends: an exec's next image, of the same pid, counts
	 * its start-up from here */
	if (pc->ending != PC_END_RUNNING)
		pc_line_str(&t, pc->ending == PC_END_EXEC ? "\nended exec" :
			    pc->ending == PC_END_KILLED ? "\nended killed" :
			    pc->ending == PC_END_SIGNAL ? "\nended signal " : "\nended exit");
	if (pc->ending == PC_END_SIGNAL)
		pc_line_u64(&t, (uint64_t)pc->end_signal);
	pc_line_str(&t, pc_timer_kind() == PC_TIMER_TASKCLOCK ? "\ntimer taskclock " :
		    "\ntimer posix ");
	pc_line_str(&t, pc_timer_refused() ? "refused " :
		    pc_cfg->timer_how == GMON_TIMER_MEASURED ? "measured " : "asked ");
	pc_line_u64(&t, (uint64_t)pc_cfg->timer_cost_ns);
	pc_line_str(&t, "\n");
	gmon_sink_bytes(s, t.buf, t.len);
}

/* The samples at PCs in no object, by PC: "anon PC COUNT" lines. */
static int
anon_in(size_t lo, size_t hi, void *arg)
{
	struct gmon_sink *s = arg;
	struct pc_line t;

	for (size_t i = lo / sizeof(struct pc_pending);
	     i < hi / sizeof(struct pc_pending) && !s->error; i++) {
		const struct pc_pending *p = &pc_objs->pending[i];
		uint64_t c;

		if (!pc_slot_ready(&p->state) ||
		    !(c = __atomic_load_n(&p->count, __ATOMIC_RELAXED)))
			continue;
		text_start(&t);
		pc_line_str(&t, "anon ");
		text_x64(&t, (uint64_t)p->pc);
		pc_line_str(&t, " ");
		pc_line_u64(&t, c);
		pc_line_str(&t, "\n");
		gmon_sink_bytes(s, t.buf, t.len);
	}
	return s->error;
}

/* The samples in no object, by PC. The pending table (1.5 MiB) is read
 * only where a sample wrote: reading it all faulted in every page of it
 * in the live file, some 6 ms of CPU after the manifest's clock, which no
 * report could account for. */
static void
manifest_anon(struct gmon_sink *s)
{
	pc_live_each_written(pc_objs->pending,
			     PC_PENDING * sizeof(pc_objs->pending[0]), anon_in,
			     s);
}

static int
write_manifest(struct gmon_sink *s)
{
	const char *base = strrchr(manifest_main, '/');
	int nobjs = dump_nobjs;

	manifest_header(s);
	object_line(s, 0, 1, pc_stats->samples - pc_stats->outside,
		    pc_cfg->spare + GMON_BUILDID_OFF, GMON_BUILDID_SIZE, NULL,
		    base ? base + 1 : manifest_main, pc_cfg->exe);
	for (int i = 1; i < nobjs; i++) {
		const struct pc_object *o = &pc_objs->objs[i];

		object_line(s, i, o->loaded, o->samples, o->build_id,
			    o->build_id_len, base ? base + 1 : manifest_main,
			    wrote[i] ? o->file : NULL, o->path);
	}
	if (pc_cfg->callgraph)
		pc_arcs_each(write_cross_arc, s);
	manifest_anon(s);
	return s->error;
}

void
pc_objects_unlink(const char *path)
{
	char name[PATH_MAX];
	int nobjs = dump_nobjs;

	if (!pc_cfg->scope_all)
		return;
	for (int i = 1; i < nobjs; i++) {
		if (!wrote[i])
			continue;
		if (!gmon_object_name(name, sizeof(name), path,
				      pc_objs->objs[i].file))
			unlink(name);
		if (pc_objs->objs[i].vdso &&
		    !gmon_object_name(name, sizeof(name), path, "vdso.so"))
			unlink(name);
		wrote[i] = 0;
	}
	if (!gmon_objects_name(name, sizeof(name), path))
		unlink(name);
}

int
pc_objects_dump(const char *path)
{
	char name[PATH_MAX];
	struct stat st;
	int r;

	if (gmon_objects_name(name, sizeof(name), path))
		return -ENAMETOOLONG;
	int nobjs = dump_nobjs =
		__atomic_load_n(&pc_objs->nobjs, __ATOMIC_ACQUIRE);

	if (!pc_cfg->scope_all) {
		/* a manifest from an earlier PC_SCOPE=all run is not this one's
		 */
		if (lstat(name, &st) == 0 && S_ISREG(st.st_mode))
			unlink(name);
		return 0;
	}
	memset(has_arcs, 0, sizeof(has_arcs));
	if (pc_cfg->callgraph)
		pc_arcs_each(mark_arc, NULL);
	for (int i = 1; i < nobjs; i++) {
		const struct pc_object *o = &pc_objs->objs[i];
		char file[PATH_MAX];

		wrote[i] = 0;
		if ((o->vdso && !o->image) ||
		    (!o->samples && !(has_arcs[i / 8] & (1u << (i % 8)))))
			continue;
		if (gmon_object_name(file, sizeof(file), path, o->file))
			continue;
		writing = (uint32_t)i;
		r = pc_dump_file(file, write_object);
		if (r)
			pc_dump_summary(file, r);
		else
			wrote[i] = 1;
		/* the vDSO's image, to name its functions by */
		if (!r && o->vdso &&
		    gmon_object_name(file, sizeof(file), path, "vdso.so") ==
			    0 &&
		    (r = pc_dump_file(file, write_image)))
			pc_dump_summary(file, r);
	}
	manifest_main = path;
	r = pc_dump_file(name, write_manifest);
	if (r)
		pc_dump_summary(name, r);
	return r;
}
