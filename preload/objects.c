/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * PC_SCOPE=all, the inventory: which shared objects the process has, where
 * their text is, and a histogram for each. An inventory is taken with
 * dl_iterate_phdr at start-up, when a thread is created, around dlclose,
 * and before the profile is written at exit (not at _exit, an exec or a
 * fatal signal, which may be in a signal handler). Objects loaded in
 * between are sampled all the same: the handler asks glibc's lock-free
 * _dl_find_object whether an address is in some object, and keeps such
 * PCs (and arcs ending there) at their runtime addresses until the next
 * inventory places them.
 *
 * A forked child takes no inventory: glibc does not reset the loader's
 * lock that dl_iterate_phdr takes in the child, so a fork that caught
 * another thread inside dl_iterate_phdr would hang the child's. Code a
 * child loads after the fork is counted under no object. Around fork,
 * libpc holds its own inventory lock, so that it never is the thread
 * caught there.
 *
 * dlopen itself is not interposed: glibc searches the caller's RUNPATH and
 * uses the caller's namespace, which a wrapper in libpc would change.
 * dlclose takes a handle only, so a wrapper around it changes nothing.
 *
 * Nothing here runs in the signal handler; the handler's side (finding an
 * object for a PC, counting, writing) is objfind.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pc.h"
#include "objects.h"
#include "live.h"

static struct pc_objects boot_objs;
struct pc_objects *pc_objs PC_HIDDEN = &boot_objs;

static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static int forked;		/* a fork child: no more inventories */
static int fork_held;		/* prepare took scan_lock */

static void fork_prepare(void);
static void fork_parent(void);
static int objects_full;	/* said once: the table is full */

/* The first GNU build-id note of an object, from its PT_NOTE segments. */
int
pc_note_build_id(const struct dl_phdr_info *info, uint8_t *id, size_t max)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *p, *end;
		size_t align;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_filesz;
		align = ph->p_align == 8 ? 8 : 4;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const unsigned char *name = p + sizeof(*n);
			const unsigned char *desc =
				name +
				((n->n_namesz + align - 1) & ~(align - 1));

			if (desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4)) {
				size_t k =
					n->n_descsz < max ? n->n_descsz : max;

				memcpy(id, desc, k);
				return (int)k;
			}
			p = desc + ((n->n_descsz + align - 1) & ~(align - 1));
		}
	}
	return 0;
}

static int
is_vdso(const struct dl_phdr_info *info)
{
	uintptr_t ehdr = (uintptr_t)getauxval(AT_SYSINFO_EHDR);

	/* the vDSO's program headers are those of the image the kernel
	 * mapped at AT_SYSINFO_EHDR */
	return ehdr && (uintptr_t)info->dlpi_phdr ==
		       ehdr + ((const ElfW(Ehdr) *)ehdr)->e_phoff;
}

/*
 * The vDSO is a whole ELF file in memory, section headers and symbols
 * included: written beside its profile (PROFILE+vdso.so), it names the
 * functions there. Its extent is where its section headers end, if that
 * lies within the pages of its first loaded segment.
 */
static void
vdso_image(struct pc_object *o, const struct dl_phdr_info *info)
{
	const ElfW(Ehdr) *e = (const ElfW(Ehdr) *)getauxval(AT_SYSINFO_EHDR);
	size_t len;

	if (!e || memcmp(e->e_ident, ELFMAG, SELFMAG) ||
	    e->e_shentsize != sizeof(ElfW(Shdr)))
		return;
	len = (size_t)e->e_shoff + (size_t)e->e_shnum * e->e_shentsize;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && ph->p_offset == 0) {
			/* the section headers follow the loaded part, in the
			 * same pages: the kernel maps the whole image */
			size_t page = (size_t)sysconf(_SC_PAGESIZE);
			size_t mapped = (ph->p_filesz + page - 1) & ~(page - 1);

			if (len <= mapped && len <= (1u << 20)) {
				/* a copy in the live file, for pc_recover */
				void *copy = pc_live_active() ?
						     pc_live_alloc(len, 1) :
						     NULL;

				if (copy && pc_live_back(copy, len))
					copy = NULL;

				if (copy)
					memcpy(copy, e, len);
				o->image = copy ? copy : e;
				o->image_len = len;
			}
			return;
		}
	}
}

/* name made absolute against the working directory, into dst[size]; 0,
 * or -1 when it does not fit. */
static int
absolute_name(char *dst, size_t size, const char *name)
{
	size_t a, b = strlen(name);

	if (name[0] == '/' || !getcwd(dst, size)) {
		if (b >= size)
			return -1;
		memcpy(dst, name, b + 1);
		return 0;
	}
	a = strlen(dst);
	if (name[0] == '.' && name[1] == '/')
		name += 2, b -= 2;
	if (a + b + 2 > size)
		return -1;
	dst[a] = '/';
	memcpy(dst + a + 1, name, b + 1);
	return 0;
}

/* "libz.so.1" for "/usr/lib/x86_64-linux-gnu/libz.so.1", made safe for a
 * file name and distinct from every other object's. */
static void
file_suffix(struct pc_object *o, int self)
{
	const char *base = strrchr(o->path, '/');
	size_t n = 0;

	base = base ? base + 1 : o->path;
	for (const char *p = base; *p && n < sizeof(o->file) - 8; p++) {
		char c = *p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-' || c == '+'))
			c = '_';
		o->file[n++] = c;
	}
	if (n == 0 || o->file[0] == '.')
		o->file[n++] = '_';
	o->file[n] = 0;
	for (int k = 2;; k++) {
		int clash = 0;

		for (int i = 1; i < self && !clash; i++)
			clash = !strcmp(pc_objs->objs[i].file, o->file);
		if (!clash)
			return;
		o->file[n] = '~';
		pc_decimal(o->file + n + 1, (unsigned long)k);
	}
}

struct seg {
	uintptr_t vaddr, memsz;
};

static int
same_layout(const struct pc_object *o, const struct seg *s, int ns)
{
	const uintptr_t bin = pc_profil_bin_bytes(PC_SCALE);

	if (o->ntext != ns)
		return 0;
	for (int i = 0; i < ns; i++)
		if (o->text[i].link_low != (s[i].vaddr & ~(bin - 1)) ||
		    o->text[i].prof.bufsiz != (s[i].vaddr + s[i].memsz -
					       o->text[i].link_low + bin - 1) /
						      bin * sizeof(uint32_t))
			return 0;
	return 1;
}

static void
set_offsets(struct pc_object *o, uintptr_t bias)
{
	o->bias = bias;
	for (int i = 0; i < o->ntext; i++)
		o->text[i].prof.offset = bias + o->text[i].link_low;
}

/* The object's name for the manifest, into dst[size]: "[vdso]", its
 * absolute path, or "[anonymous]"; 0, or -1 when it does not fit. */
static int
object_path(char *dst, size_t size, const struct dl_phdr_info *info, int vdso)
{
	const char *name = vdso ? "[vdso]" :
			   info->dlpi_name && info->dlpi_name[0] ?
				  info->dlpi_name :
				  "[anonymous]";

	if (name[0] == '[') {		/* not a file: no directory */
		if (strlen(name) >= size)
			return -1;
		strcpy(dst, name);
		return 0;
	}
	return absolute_name(dst, size, name);
}

/* The object's executable segments (at most PC_OBJ_TEXT) into s; how
 * many. */
static int
exec_segments(const struct dl_phdr_info *info, struct seg *s)
{
	int ns = 0;

	for (int i = 0; i < info->dlpi_phnum && ns < PC_OBJ_TEXT; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
		    ph->p_memsz)
			s[ns++] = (struct seg){ ph->p_vaddr, ph->p_memsz };
	}
	return ns;
}

/* The entry, not yet seen by this scan, of the object at path with this
 * build-id and these segments, or NULL. */
static struct pc_object *
known_entry(const char *path, const uint8_t *id, int idlen, const struct seg *s,
	    int ns)
{
	for (int i = 1; i < pc_objs->nobjs; i++) {
		struct pc_object *o = &pc_objs->objs[i];

		if (!o->seen && !strcmp(o->path, path) &&
		    o->build_id_len == idlen &&
		    !memcmp(o->build_id, id, (size_t)idlen) &&
		    same_layout(o, s, ns))
			return o;
	}
	return NULL;
}

/* Counters for each of the ns executable segments s of a new object o;
 * -1, with none left mapped, when memory runs out. */
static int
map_texts(struct pc_object *o, const struct seg *s, int ns)
{
	const uintptr_t bin = pc_profil_bin_bytes(PC_SCALE);
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);

	for (int i = 0; i < ns; i++) {
		struct pc_text *t = &o->text[i];

		t->link_low = s[i].vaddr & ~(bin - 1);
		t->prof.scale = PC_SCALE;
		t->prof.bufsiz =
			(s[i].vaddr + s[i].memsz - t->link_low + bin - 1) /
			bin * sizeof(uint32_t);
		t->map_len = (t->prof.bufsiz + page - 1) & ~(page - 1);
		t->prof.buf = pc_live_alloc(t->map_len, 0);
		if (!t->prof.buf)
			return -1;	/* what was taken stays taken */
	}
	return 0;
}

static int
scan_one(struct dl_phdr_info *info, size_t size, void *data)
{
	int *first = data;
	struct seg s[PC_OBJ_TEXT];
	uint8_t id[20];
	int ns, idlen, vdso;
	struct pc_object *o;
	char path[PATH_MAX];

	(void)size;
	if (*first) {
		*first = 0;		/* the main program: pc->text */
		return 0;
	}
	if (!(ns = exec_segments(info, s)))
		return 0;
	vdso = is_vdso(info);
	idlen = pc_note_build_id(info, id, sizeof(id));
	if (object_path(path, sizeof(path), info, vdso))
		return 0;
	/* the same file loaded again (dlclose, then dlopen) takes its entry
	 * back: its link-time addresses, and so its counters, are the same */
	if ((o = known_entry(path, id, idlen, s, ns))) {
		set_offsets(o, info->dlpi_addr);
		o->loaded = o->seen = 1;
		return 0;
	}
	if (pc_objs->nobjs == PC_MAX_OBJECTS) {
		if (!objects_full++)
			pc_say("more than 1024 shared objects; later ones are not profiled",
			       "", "");
		return 0;
	}
	o = &pc_objs->objs[pc_objs->nobjs];
	if (pc_live_back(o, sizeof(*o)))
		return 0;	/* the live file is full: not profiled */
	memset(o, 0, sizeof(*o));
	/* the path is kept in libpc's own memory, never malloc'ed: at
	 * exit a leak checker must find nothing of libpc's */
	if (map_texts(o, s, ns) || !(o->path = pc_live_strdup(path)))
		return 0;
	o->ntext = ns;
	o->vdso = vdso;
	memcpy(o->build_id, id, (size_t)idlen);
	o->build_id_len = idlen;
	if (vdso) {
		vdso_image(o, info);
		strcpy(o->file, "vdso");
	} else {
		file_suffix(o, pc_objs->nobjs);
	}
	set_offsets(o, info->dlpi_addr);
	o->loaded = o->seen = 1;
	/* complete before it is counted: a snapshot written from a signal
	 * handler reads every entry below nobjs */
	__atomic_store_n(&pc_objs->nobjs, pc_objs->nobjs + 1, __ATOMIC_RELEASE);
	return 0;
}

static unsigned long long last_adds, last_subs;
static int counted;		/* last_adds and last_subs are known */

static int
counts_moved(struct dl_phdr_info *info, size_t size, void *data)
{
	int *moved = data;

	/* dlpi_adds and dlpi_subs follow dlpi_phnum (glibc 2.4 and later) */
	if (size <
	    offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
		return 1;
	*moved = !counted || info->dlpi_adds != last_adds ||
		 info->dlpi_subs != last_subs;
	last_adds = info->dlpi_adds;
	last_subs = info->dlpi_subs;
	counted = 1;
	return 1;	/* the first object is enough */
}

static int
cmp_range(const void *a, const void *b)
{
	const struct pc_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * Publish the loaded objects' segments for the handler: fill the copy it is
 * not reading, then make it current. The sequence count makes a handler
 * that still reads that copy from an earlier switch notice and retry.
 */
static void
publish(void)
{
	int c = !__atomic_load_n(&pc_objs->range_cur, __ATOMIC_RELAXED);
	struct pc_range *r = pc_objs->ranges[c];
	uint32_t n = 0;

	/* the copy's pages in the live file first: a store to a page that
	 * is not backed would fault where the disk is full */
	if (pc_live_back(r, (size_t)pc_objs->nobjs * PC_OBJ_TEXT * sizeof(*r)))
		return;
	__atomic_fetch_add(&pc_objs->range_seq[c], 1,
			   __ATOMIC_RELEASE); /* odd */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (int i = 1; i < pc_objs->nobjs; i++) {
		const struct pc_object *o = &pc_objs->objs[i];

		if (!o->loaded)
			continue;
		for (int k = 0; k < o->ntext && n < PC_MAX_RANGES; k++) {
			const struct pc_text *t = &o->text[k];

			r[n++] = (struct pc_range){
				t->prof.offset,
				t->prof.offset + t->prof.bufsiz /
							 sizeof(uint32_t) *
							 pc_profil_bin_bytes(
								 t->prof.scale),
				o->bias, (uint32_t)i, (uint32_t)k
			};
		}
	}
	qsort(r, n, sizeof(*r), cmp_range);
	__atomic_store_n(&pc_objs->nranges[c], n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&pc_objs->range_seq[c], 1,
			   __ATOMIC_RELEASE); /* even */
	__atomic_store_n(&pc_objs->range_cur, c, __ATOMIC_RELEASE);
}

void
pc_objects_scan(void)
{
	sigset_t one, prev;
	int first = 1, moved = 1, saved = errno;

	pc_live_grow_now();	/* dlopen, dlclose, pthread_create */
	if (!pc_cfg->scope_all || pc_sandboxed() || getpid() != pc->pid ||
	    forked)
		return;
	pthread_mutex_lock(&scan_lock);
	/* the loader counts the objects it adds and removes: when neither
	 * count moved since the last inventory, nothing changed (the common
	 * case at pthread_create), and the first object tells */
	dl_iterate_phdr(counts_moved, &moved);
	if (!moved && !__atomic_load_n(&pc_objs->unplaced, __ATOMIC_RELAXED)) {
		pthread_mutex_unlock(&scan_lock);
		errno = saved;
		return;
	}
	/* our own signal is held while the table changes under this thread */
	sigemptyset(&one);
	sigaddset(&one, __atomic_load_n(&pc_sampling_sig, __ATOMIC_RELAXED));
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &one, &prev, _NSIG / 8);
	if (moved) {
		for (int i = 1; i < pc_objs->nobjs; i++)
			pc_objs->objs[i].seen = 0;
		dl_iterate_phdr(scan_one, &first);
		for (int i = 1; i < pc_objs->nobjs; i++)
			if (!pc_objs->objs[i].seen)
				pc_objs->objs[i].loaded = 0;
		publish();
	}
	/* the arcs' runtime ends too, if any sample was left to place */
	if (pc_objects_place_pending() && pc_cfg->callgraph)
		pc_arcs_place(pc_object_place);
	pthread_mutex_unlock(&scan_lock);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &prev, NULL, _NSIG / 8);
	errno = saved;
}

int
pc_objects_init(void)
{
	/* the inventory first, the counters after: a fork child copies the
	 * one and starts the other at zero (live.c) */
	pc_objs->objs =
		pc_live_alloc(PC_MAX_OBJECTS * sizeof(struct pc_object), 1);
	pc_objs->ranges[0] =
		pc_live_alloc(PC_MAX_RANGES * sizeof(struct pc_range), 1);
	pc_objs->ranges[1] =
		pc_live_alloc(PC_MAX_RANGES * sizeof(struct pc_range), 1);
	pc_live_strdup("");	/* the strings' region, before any counter */
	pc_objs->pending =
		pc_live_alloc(PC_PENDING * sizeof(struct pc_pending), 0);
	if (!pc_objs->objs || !pc_objs->ranges[0] || !pc_objs->ranges[1] ||
	    !pc_objs->pending)
		return -ENOMEM;
	pc_objects_pending_init();
	/* the first entries' pages now, before the counters take the room
	 * a PC_LIVE_MAX leaves */
	pc_live_back(pc_objs->objs, 16 * sizeof(struct pc_object));
	pc_live_back(pc_objs->ranges[0], 64 * sizeof(struct pc_range));
	pc_live_back(pc_objs->ranges[1], 64 * sizeof(struct pc_range));
	pc_objs->find_object = (int (*)(void *, struct dl_find_object *))
		dlsym(RTLD_DEFAULT, "_dl_find_object");
	pc_objs->nobjs = 1;
	pthread_atfork(fork_prepare, fork_parent, NULL);
	pc_objects_scan();
	return 0;
}

/*
 * Before fork: wait for an inventory under way in another thread to end,
 * so that the child's loader lock is not held by libpc. Bounded: a fork
 * from a signal handler that interrupted this thread's own inventory
 * cannot wait for it (the child takes no inventory either way).
 */
static void
fork_prepare(void)
{
	struct timespec t = { 0, 100000 };

	fork_held = 0;
	for (int i = 0; i < 2000 && !fork_held; i++) {
		if (pthread_mutex_trylock(&scan_lock) == 0)
			fork_held = 1;
		else
			nanosleep(&t, NULL);
	}
}

static void
fork_parent(void)
{
	if (fork_held)
		pthread_mutex_unlock(&scan_lock);
	fork_held = 0;
}

void
pc_objects_clear(void)
{
	if (!pc_cfg->scope_all)
		return;
	pthread_mutex_init(&scan_lock,
			   NULL); /* a fork may have caught it held */
	fork_held = 0;
	forked = 1;
	/* a copy caught half rewritten by the fork stays unused */
	for (int c = 0; c < 2; c++)
		pc_objs->range_seq[c] = (pc_objs->range_seq[c] + 1) & ~1u;
	for (int i = 1; i < pc_objs->nobjs; i++) {
		struct pc_object *o = &pc_objs->objs[i];

		for (int k = 0; k < o->ntext; k++)
			madvise(o->text[k].prof.buf, o->text[k].map_len,
				MADV_DONTNEED);
		o->samples = 0;
	}
	madvise(pc_objs->pending, PC_PENDING * sizeof(struct pc_pending),
		MADV_DONTNEED);
	pc_objs->no_object = pc_objs->pending_dropped =
		pc_objs->pending_samples = pc_objs->unplaced = 0;
}

/*
 * dlclose: before, an inventory, so that the object's pending samples are
 * placed while it is still mapped; after, another, so that its address
 * range is not credited to it once something else is loaded there. Its
 * counters stay and are written at exit.
 */
PC_EXPORT int
dlclose(void *handle)
{
	static int (*real)(void *);
	int r;

	if (!real)
		real = (int (*)(void *))pc_next("dlclose");
	if (!real)
		return -1;
	pc_objects_scan();
	r = real(handle);
	if (r == 0) {
		int saved = errno;

		pc_objects_scan();
		errno = saved;
	}
	return r;
}
