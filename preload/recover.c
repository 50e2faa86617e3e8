/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pc_recover(): finish the live file (live.c) of a process that ended
 * without writing its profile, killed by SIGKILL or the OOM killer, or
 * ended by a raw exit_group, with libpc's own writer, so that the files
 * are exactly those the process would have written, its manifest saying
 * "ended killed". pcprof loads libpc.so with PC_RECOVER set (start.c's
 * constructor then does nothing) and calls it for each live file it
 * finds in a run directory.
 *
 * The file may be damaged or foreign, and the writer trusts what it
 * reads: every table, every pointer and every string is checked to lie
 * inside the mapping before the writer runs, and the pointers, which hold
 * the dead process's addresses, are moved to this one's. What is written
 * goes beside the live file, whatever path the file names.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pc.h"
#include "procread.h"
#include "objects.h"
#include "live.h"
#include "alloc.h"

/* The dead process's mappings of the file (its chunks, checked) and this
 * process's copy of the whole file, [copy, copy + len). Every table lies
 * past the header, so that moving a pointer never writes into what
 * another check read. */
struct span {
	struct pc_live_chunk chunk[PC_LIVE_CHUNKS];
	uint32_t n;
	uintptr_t copy;
	size_t len;
};

/* Where v, an address in the dead process of len bytes, is in the copy;
 * 0 when it does not lie wholly inside one chunk, past the header. */
static uintptr_t
locate(const struct span *s, uintptr_t v, size_t len)
{
	for (uint32_t i = 0; i < s->n; i++) {
		const struct pc_live_chunk *c = &s->chunk[i];
		uint64_t off;

		if (v < c->va || v - c->va >= c->len ||
		    len > c->len - (v - c->va))
			continue;
		off = c->off + (v - c->va);
		return off < sizeof(struct pc_live) ? 0 :
						      s->copy + (uintptr_t)off;
	}
	return 0;
}

/* Point *p, an address in the dead process of len bytes, into this one's
 * copy; -1 when it does not lie wholly inside, past the header. */
static int
move(const struct span *s, void *pp, size_t len)
{
	void **p = pp;
	uintptr_t v = locate(s, (uintptr_t)*p, len);

	if (!v)
		return -1;
	*p = (void *)v;
	return 0;
}

static int
string_inside(const char *s, size_t max)
{
	return memchr(s, 0, max) != NULL;
}

/* A string in the dead process's memory, moved and checked. */
static int
move_string(const struct span *s, char **p)
{
	uintptr_t v = locate(s, (uintptr_t)*p, 1);

	if (!v)
		return -1;
	*p = (char *)v;
	return string_inside(*p, s->copy + s->len - v) ? 0 : -1;
}

static int
check_texts(const struct span *s, struct pc_text *t, int n)
{
	for (int i = 0; i < n; i++) {
		if (t[i].prof.scale != PC_SCALE ||
		    t[i].prof.bufsiz > t[i].map_len ||
		    move(s, &t[i].prof.buf, t[i].map_len))
			return -1;
	}
	return 0;
}

static int
check_objects(const struct span *s, struct pc_objects *o)
{
	if (o->nobjs < 1 || o->nobjs > PC_MAX_OBJECTS ||
	    move(s, &o->objs, PC_MAX_OBJECTS * sizeof(struct pc_object)) ||
	    move(s, &o->pending, PC_PENDING * sizeof(struct pc_pending)))
		return -1;
	o->ranges[0] = o->ranges[1] = NULL; /* the writer does not read them */
	o->find_object = NULL;
	for (int i = 1; i < o->nobjs; i++) {
		struct pc_object *b = &o->objs[i];

		if (b->ntext < 0 || b->ntext > PC_OBJ_TEXT ||
		    b->build_id_len < 0 ||
		    b->build_id_len > (int)sizeof(b->build_id) ||
		    !string_inside(b->file, sizeof(b->file)) ||
		    strchr(b->file, '/') || !strcmp(b->file, "..") ||
		    move_string(s, &b->path) ||
		    check_texts(s, b->text, b->ntext))
			return -1;
		/* the vDSO's image: its copy in the file, if it has one */
		if (b->image && move(s, &b->image, b->image_len)) {
			b->image = NULL;
			b->image_len = 0;
		}
	}
	return 0;
}

static int
check_tables(const struct span *s, const struct pc_config *c,
	     struct pc_live_tables *t)
{
	size_t room = s->len;

	if (c->callgraph &&
	    (t->arcs_slots > room / sizeof(struct pc_arc) ||
	     move(s, &t->arcs, t->arcs_slots * sizeof(struct pc_arc))))
		return -1;
	if (c->callgraph && c->stacks &&
	    (t->stacks_words > room / 8 || t->stacks_slots > room / 4 ||
	     move(s, &t->stacks_arena, t->stacks_words * 8) ||
	     move(s, &t->stacks_index, t->stacks_slots * 4) ||
	     move(s, &t->stacks_names, t->stacks_names_len)))
		return -1;
	if (c->timeline &&
	    (t->timeline_len > room || t->timeline_rings_len > room ||
	     move(s, &t->timeline, t->timeline_len) ||
	     move(s, &t->timeline_rings, t->timeline_rings_len)))
		return -1;
	if (t->alloc_arena &&
	    (t->alloc_words > room / 8 || t->alloc_slots > room / 4 ||
	     move(s, &t->alloc_arena, t->alloc_words * 8) ||
	     move(s, &t->alloc_index, t->alloc_slots * 4)))
		return -1;
	return 0;
}

/* dst: the directory of the live file at live, and the last part of
 * path; -1 when it does not fit or names nothing. */
static int
beside(char *dst, size_t size, const char *live, const char *path)
{
	const char *ls = strrchr(live, '/'), *base = strrchr(path, '/');
	size_t dir = ls ? (size_t)(ls - live) + 1 : 0;

	base = base ? base + 1 : path;
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..") ||
	    dir + strlen(base) + 1 > size)
		return -1;
	for (const char *c = base; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return -1;	/* no name libpc would have made */
	memcpy(dst, live, dir);
	strcpy(dst + dir, base);
	return 0;
}

/* Everything the writer will read of the copy l of the live file at
 * path, checked and moved; the profile's path into out. 0 or -1. */
static int
check_file(const struct span *s, struct pc_live *l, const char *path, char *out,
	   size_t size)
{
	if (!s->n || l->st.ntext < 1 || l->st.ntext > PC_MAX_TEXT ||
	    l->config.hz < 1 || l->config.hz > PC_MAX_HZ ||
	    !string_inside(l->st.path, sizeof(l->st.path)) ||
	    !string_inside(l->st.stacks_path, sizeof(l->st.stacks_path)) ||
	    check_texts(s, l->st.text, l->st.ntext) ||
	    check_tables(s, &l->config, &l->tables) ||
	    (l->config.scope_all && check_objects(s, &l->objs)) ||
	    beside(out, size, path, l->st.path))
		return -1;
	if (l->st.stacks_path[0] &&
	    beside(l->st.stacks_path, sizeof(l->st.stacks_path), path,
		   l->st.stacks_path))
		return -1;
	/* once more, after every move: a path in the table of objects
	 * itself could have lost its end to a pointer moved after it */
	for (int i = 1; l->config.scope_all && i < l->objs.nobjs; i++) {
		const char *p = l->objs.objs[i].path;

		if (!string_inside(p, s->copy + s->len - (uintptr_t)p))
			return -1;
	}
	return 0;
}

/* The chunks of the dead process's mapping (live.c), checked to lie in
 * the copy l of len bytes: 0 or -1. */
static int
check_chunks(struct span *s, const struct pc_live *l, size_t len)
{
	s->n = l->nchunks;
	s->copy = (uintptr_t)l;
	s->len = len;
	if (!s->n || s->n > PC_LIVE_CHUNKS || l->chunk[0].off ||
	    l->chunk[0].va != l->base)
		return -1;
	memcpy(s->chunk, l->chunk, sizeof(s->chunk));
	for (uint32_t i = 0; i < s->n; i++)
		if (s->chunk[i].off > len ||
		    s->chunk[i].len > len - s->chunk[i].off)
			return -1;
	return 0;
}

static uint32_t *
spill_key(uint64_t key, void *arg)
{
	return (uint32_t *)locate(arg, (uintptr_t)key, sizeof(uint32_t));
}

/* The samples that waited for their page when the process died, added to
 * their counters in the copy: whether there were any (their pages may be
 * holes of the file, which the writer then reads too). */
static int
fold_spill(const struct span *s, struct pc_live *l)
{
	if (!l->spill ||
	    move(s, &l->spill, PC_LIVE_SPILL * sizeof(struct pc_spill)))
		return 0;
	return pc_live_fold_copy(l->spill, spill_key, (void *)s) > 0;
}

static uint64_t
ns_of(struct timespec t)
{
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The number after "\nKEY " in text (a manifest's head), or 0. */
static uint64_t
field_of(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	uint64_t v;

	if (!p)
		return 0;
	p += strlen(key);
	return pc_parse_u64(&p, UINT64_MAX, &v) ? 0 : v;
}

/* What profile's manifest says of the process that wrote it, from its
 * head (objwrite.c's lines): 2 it is l's process and it ended (the
 * profile is finished), 1 it is l's process and did not end (a snapshot
 * of its own), 0 another process's, -1 no manifest to tell. */
static int
manifest_says(const struct pc_live *l, const char *profile)
{
	char name[PATH_MAX], head[1024];

	if (gmon_objects_name(name, sizeof(name), profile) ||
	    pc_read_small(name, O_NOFOLLOW | O_NONBLOCK, head, sizeof(head),
			  NULL) <= 0)
		return -1;
	if (!strstr(head, "\npid ") || !strstr(head, "\nstarted "))
		return -1;
	if (field_of(head, "\npid ") != (uint64_t)l->head.pid ||
	    field_of(head, "\nstarted ") != ns_of(l->st.start))
		return 0;
	return strstr(head, "\nended ") ? 2 : 1;
}

/*
 * Whether the profile at out is to be left as it is rather than finished
 * over: -EEXIST when it is the finished profile of the same process (its
 * manifest says so), or, being another process's (or one that no manifest
 * names and that did not hold a snapshot of ours), it was written after
 * the live file's last write: a later run's profile, which a stale live
 * file never replaces. A snapshot of the same process is finished over.
 */
static int
newer_profile(const struct pc_live *l, const struct stat *live, const char *out)
{
	struct stat sb;
	int says;

	if (lstat(out, &sb) || !S_ISREG(sb.st_mode))
		return 0;
	says = manifest_says(l, out);
	if (says > 0)
		return says == 2 ? -EEXIST : 0;
	if (says < 0 && l->st.wrote_own)
		return 0;
	return ns_of(sb.st_mtim) > ns_of(live->st_mtim) ? -EEXIST : 0;
}

/* The header read and checked: 0, 1 for a file already written (removed
 * here), or -errno: -EINVAL no live file, -EPROTO another version's (the
 * head, gmon/live.c) or another build's, or cut short; -EBUSY for a head
 * its process rewrites on every read (pcprof's reader's check: the head
 * whole by its generation, gmon_live_head_load). */
static int
read_header(int fd, const char *path, const struct stat *st, struct pc_live *h)
{
	struct gmon_live_head head;
	uint32_t version;
	int r;

	if ((r = gmon_live_head_load(gmon_live_pread, &fd, &head, &version)))
		return r == -EAGAIN ? -EBUSY : r;
	if (pread(fd, h, sizeof(*h), 0) != (ssize_t)sizeof(*h))
		return -EINVAL;
	/* a file longer than its header says: killed as it grew */
	if (head.hdr_size != sizeof(*h) || h->size > (uint64_t)st->st_size)
		return -EPROTO;		/* another libpc's, or cut short */
	if (head.state == GMON_LIVE_DONE) {
		unlink(path);
		return 1;
	}
	if (head.state != GMON_LIVE_RUNNING || head.pid <= 0)
		return -EBADMSG;
	if (gmon_live_runs(&head, st->st_ino))
		return -EBUSY;
	return 0;
}

/* Write the profile of the checked copy l (of len bytes, file fd) to out,
 * with libpc's writer pointed at it; libpc's own state back after. */
static int
write_copy(struct pc_live *l, size_t len, int fd, const char *out)
{
	struct pc_state *was_pc = pc;
	struct pc_stats *was_stats = pc_stats;
	struct pc_objects *was_objs = pc_objs;
	struct pc_config was_cfg = *pc_cfg;
	int r = -EBADMSG;

	pc_config_recover(&l->config);
	pc = &l->st;
	pc_stats = &l->stats;
	pc_objs = &l->objs;
	if ((l->config.callgraph && pc_arcs_recover(&l->tables)) ||
	    (l->config.callgraph && l->config.stacks &&
	     pc_stacks_recover(&l->tables)) ||
	    (l->config.timeline && pc_timeline_recover(&l->tables)) ||
	    pc_alloc_recover(&l->tables))
		goto done;
	strcpy(pc->path, out);
	pc->ending = PC_END_KILLED;
	/* the file says which of its pages hold samples (live.c) */
	pc_live_span(l, len, fd);
	r = pc_dump(pc->path);
	pc_live_span(NULL, 0, -1);
done:
	/* this instance's own state back: at its exit, libpc's destructor
	 * reads it */
	pc = was_pc;
	pc_stats = was_stats;
	pc_objs = was_objs;
	pc_alloc_recover(NULL);
	pc_config_recover(&was_cfg);
	return r;
}

PC_EXPORT int
pc_recover(const char *path)
{
	struct pc_live head, *l;
	struct span s;
	struct stat st;
	char out[PATH_MAX];
	int fd, r;

	/* not in a process libpc profiles: its state is in use */
	if (pc->phase != PC_OFF)
		return -EALREADY;
	/* never waits on a FIFO, never follows a symlink */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size < sizeof(struct pc_live)) {
		close(fd);
		return -EINVAL;
	}
	if ((r = read_header(fd, path, &st, &head))) {
		close(fd);
		return r;
	}
	/* a private copy: the pointers are moved in it, the file stays */
	l = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		 fd, 0);
	if (l == MAP_FAILED) {
		close(fd);
		return -ENOMEM;
	}
	r = check_chunks(&s, l, (size_t)st.st_size) ||
			    check_file(&s, l, path, out, sizeof(out)) ?
		    -EBADMSG :
		    newer_profile(l, &st, out);
	if (r == 0)
		r = write_copy(l, (size_t)st.st_size,
			       fold_spill(&s, l) ? -1 : fd, out);
	if (r == 0)
		unlink(path);
	munmap(l, (size_t)st.st_size);
	close(fd);
	return r;
}
