/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The stack of a thread that is blocked in a system call, walked from
 * the outside (wall.c): from the pc and sp that /proc/self/task/TID/syscall
 * gives, through the call frame information, by libunwind's remote API.
 * Its accessors read this process's memory with process_vm_readv, never
 * directly: the thread may wake, return and unmap the stack under the
 * walk, and a read of it then fails instead of faulting (wall.c checks
 * afterwards that the thread did not run, and drops the sample if it did).
 * The unwind tables are found with _dl_find_object (lock-free, glibc 2.35)
 * and searched by libunwind (dwarf_search_unwind_table) over the same
 * reads. Only pc and sp are known: a frame whose CFA needs another
 * register (rbp, in code built with frame pointers, after the prologue)
 * ends the walk, and the stack is marked cut.
 *
 * libunwind is loaded with dlopen, as for PC_UNWIND=libunwind: a program
 * that never asks for a wall profile never maps it. It is loaded before
 * the sampler's thread starts, and its address space made; the walks run
 * in that thread only, never in a handler, and call no malloc (libunwind
 * takes what it needs on a cache miss from pools of its own, mapped at
 * its set-up): the thread has no arena of glibc's (wall_mem.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <libunwind.h>

#include "pc.h"
#include "wall.h"

#define PAGE		4096
#define CACHED_PAGES	16
#define STACK_SPAN	(8u << 20)	/* how far above sp a stack's words are checked */

/* .eh_frame_hdr's encodings (LSB, "Exception Frame Header") */
#define DW_EH_PE_udata4		0x03
#define DW_EH_PE_sdata4		0x0b
#define DW_EH_PE_datarel	0x30

/* A cached page's tag; its bytes are apart (page_bytes, obj_bytes), so
 * that a look for a page reads the tags' few cache lines, not a line and
 * a TLB entry a page: libunwind reads an FDE byte by byte, each through
 * access_mem, and a walk spent most of its 0.1 to 1.5 ms in that look. */
struct page {
	uintptr_t addr;		/* 0: empty */
	int ok;			/* read whole */
};

/* the wall sampler's thread is the only caller: no lock. The tags and
 * the bytes are mapped at init, wiped in a child of fork: shared with a
 * child, every page written afresh after a fork was a copy on write and
 * a TLB flush on every CPU, half a walk's time (40 to 90 us a page read,
 * in a program that forks, on this VM); a child finds the caches empty. */
static struct page *pages;			/* CACHED_PAGES */
static unsigned char (*page_bytes)[PAGE];	/* CACHED_PAGES */
static unsigned next_page;
/* Pages of the objects' (unwind tables, code) are kept from walk to walk:
 * a walk that read them all afresh spent most of its time there (sqlite3's
 * stacks, some 20 frames in three objects: 0.8 ms of the sampler's CPU a
 * walk). Those that are within the stack's span are the stack's: a thread
 * may have its stack in an object's .bss. */
#define OBJECT_PAGES	64
#define OBJECT_WALKS	1024	/* walks between two clearings: a dlclose'd
				 * object's pages go in time */
static struct page *obj_pages;			/* OBJECT_PAGES */
static unsigned char (*obj_bytes)[PAGE];	/* OBJECT_PAGES */
static unsigned next_obj, obj_walks;
static uintptr_t walk_sp;
static pid_t self;
static uintptr_t reg_ip, reg_sp, reg_bp;
static int have_bp;		/* reg_bp is known (found on the stack) */

/* The stack's words the last walk read, to check that they still hold
 * (pc_wall_walk_holds): a word above the first sp, as libunwind or the
 * frame record's search read it. */
#define READ_WORDS	256
static struct pc_wword *words;	/* READ_WORDS, mapped with the pages */
static unsigned nwords;
static int words_over;		/* more than READ_WORDS: the walk cannot be checked */

/* Walks known to be right (the thread did not run during them, or they
 * held), by a hash of their sp, pc and frames: a walk during which the
 * thread ran holds too where it found one of these again, frame for frame
 * (a torn walk, of a stack changing under it, finds another). */
#define KNOWN_WALKS	512
static uint64_t *known;		/* KNOWN_WALKS, mapped with the pages */
static struct pc_frame *frames;	/* PC_WALL_FRAMES, the same */
static uint64_t last_walk;	/* the last walk's hash */
/* The last walk, kept for reuse once known right (pc_wall_walk_right) */
static struct {
	uintptr_t ip, sp;
	const struct pc_frame *f;
	int n, how;
} fresh;

static void
know(uint64_t h)
{
	if (known)
		known[h % KNOWN_WALKS] = h;
}

static void
note_word(uintptr_t addr, uintptr_t val)
{
	if (addr < walk_sp || addr - walk_sp >= STACK_SPAN)
		return;
	for (unsigned i = 0; i < nwords; i++)
		if (words[i].addr == addr)
			return;
	if (nwords == READ_WORDS || !words)
		words_over = 1;
	else
		words[nwords].addr = addr, words[nwords++].val = val;
}

/* The walks' words, known walks and frames, mapped with the pages: in
 * .bss, each page a walk wrote was copied after each fork of the
 * program's (30 to 50 us a page here, while the child lives). */
#define EXTRA_BYTES	(READ_WORDS * sizeof(struct pc_wword) + KNOWN_WALKS * sizeof(uint64_t) + \
			 PC_WALL_FRAMES * sizeof(struct pc_frame))

static unw_addr_space_t space;
static int (*u_init_remote)(unw_cursor_t *, unw_addr_space_t, void *);
static int (*u_step)(unw_cursor_t *);
static int (*u_get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
static int (*u_search)(unw_addr_space_t, unw_word_t, unw_dyn_info_t *, unw_proc_info_t *,
		       int, void *);
static int (*find_object)(void *, struct dl_find_object *);

static struct page *last;	/* the page looked for last, and its bytes */
static const unsigned char *last_b;

/* The bytes of the page at addr (page-aligned), read now or earlier in
 * this walk (or, an object's, in an earlier one); NULL where unreadable. */
static const unsigned char *
page_at(uintptr_t addr)
{
	struct dl_find_object o;
	struct page *set = pages;
	unsigned char (*bytes)[PAGE] = page_bytes;
	struct iovec local, remote;
	unsigned n = CACHED_PAGES, *next = &next_page, i;

	if (last && last->addr == addr)
		return last->ok ? last_b : NULL;
	if ((addr + PAGE < walk_sp || addr - walk_sp >= STACK_SPAN) &&
	    !find_object((void *)addr, &o)) {
		set = obj_pages;
		bytes = obj_bytes;
		n = OBJECT_PAGES;
		next = &next_obj;
	}
	for (i = 0; i < n && set[i].addr != addr; i++)
		;
	if (i == n) {
		i = (*next)++ % n;
		set[i].addr = addr;
		local.iov_base = bytes[i];
		local.iov_len = PAGE;
		remote.iov_base = (void *)addr;
		remote.iov_len = PAGE;
		set[i].ok = syscall(SYS_process_vm_readv, self, &local, 1UL, &remote, 1UL,
				    0UL) == PAGE;
	}
	last = &set[i];
	last_b = bytes[i];
	return set[i].ok ? bytes[i] : NULL;
}

/* n bytes at addr into buf; 0, or -1 where any is unreadable. */
static int
read_bytes(uintptr_t addr, void *buf, size_t n)
{
	unsigned char *out = buf;

	/* page 0 is never mapped, and 0 marks an empty cache slot */
	if (addr < PAGE)
		return -1;
	while (n) {
		uintptr_t base = addr & ~(uintptr_t)(PAGE - 1);
		size_t off = addr - base, k = PAGE - off < n ? PAGE - off : n;
		const unsigned char *b = page_at(base);

		if (!b)
			return -1;
		memcpy(out, b + off, k);
		out += k;
		addr += k;
		n -= k;
	}
	return 0;
}

static int
access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
	(void)as;
	(void)arg;
	if (write || read_bytes(addr, val, sizeof(*val)))
		return -UNW_EINVAL;
	note_word(addr, *val);
	return 0;
}

/* Only the pc and the sp of a blocked thread are known. */
static int
access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
	(void)as;
	(void)arg;
	if (write)
		return -UNW_EREADONLYREG;
	if (reg == UNW_X86_64_RIP)
		*val = reg_ip;
	else if (reg == UNW_X86_64_RSP)
		*val = reg_sp;
	else if (reg == UNW_X86_64_RBP && have_bp)
		*val = reg_bp;
	else
		return -UNW_EBADREG;
	return 0;
}

static int
access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
	(void)as;
	(void)reg;
	(void)val;
	(void)write;
	(void)arg;
	return -UNW_EBADREG;
}

static int
resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	(void)as;
	(void)c;
	(void)arg;
	return -UNW_EINVAL;
}

static int
no_dyn_info(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	(void)as;
	(void)addr;
	(void)arg;
	return -UNW_ENOINFO;
}

/* libunwind frees the table format's unwind info itself */
static void
put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	(void)as;
	(void)pi;
	(void)arg;
}

/* The unwind table of the object that holds ip, from its .eh_frame_hdr
 * (which the loader found: PT_GNU_EH_FRAME), in the one layout every
 * toolchain writes: a sorted table of 4-byte offsets from the header. */
static int
find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need, void *arg)
{
	struct dl_find_object o;
	unsigned char h[4];
	uint32_t count;
	uintptr_t hdr, p;
	unw_dyn_info_t di;

	if (find_object((void *)ip, &o) || !o.dlfo_eh_frame)
		return -UNW_ENOINFO;
	hdr = (uintptr_t)o.dlfo_eh_frame;
	/* version 1; eh_frame_ptr's encoding; fde_count's; the table's */
	if (read_bytes(hdr, h, 4) || h[0] != 1 ||
	    (h[1] & 0x0f) != DW_EH_PE_sdata4 || h[2] != DW_EH_PE_udata4 ||
	    h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return -UNW_ENOINFO;
	p = hdr + 4 + 4;
	if (read_bytes(p, &count, 4) || !count)
		return -UNW_ENOINFO;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = (unw_word_t)o.dlfo_map_start;
	di.end_ip = (unw_word_t)o.dlfo_map_end;
	di.u.rti.segbase = hdr;
	di.u.rti.table_data = p + 4;
	di.u.rti.table_len = (unw_word_t)count * 8 / sizeof(unw_word_t);
	return u_search(as, ip, &di, pi, need, arg);
}

static int (*u_caching)(unw_addr_space_t, unw_caching_policy_t);

/* In the thread that starts the sampler, before it starts (wall.c): the
 * loader and libunwind's address space allocate with malloc, which in
 * the sampler's thread would make it an arena of glibc's (wall_mem.c). */
int
pc_wall_unwind_load(void)
{
	static unw_accessors_t acc = {
		.find_proc_info = find_proc_info,
		.put_unwind_info = put_unwind_info,
		.get_dyn_info_list_addr = no_dyn_info,
		.access_mem = access_mem,
		.access_reg = access_reg,
		.access_fpreg = access_fpreg,
		.resume = resume,
	};
	unw_addr_space_t (*create)(unw_accessors_t *, int);
	void *h;

	if (space)
		return 0;
	if (pc_wall_reuse_map())
		return -1;
	/* the pages mapped here, not in libpc's .bss (320 KiB that every
	 * program, of any clock, would carry, and lock in mlockall) */
	if (!page_bytes) {
		size_t len = (CACHED_PAGES + OBJECT_PAGES + 1) * (size_t)PAGE + EXTRA_BYTES;
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (m == MAP_FAILED)
			return -1;
		/* older kernels: shared with a child, copied on write */
		(void)madvise(m, len, MADV_WIPEONFORK);
		page_bytes = m;
		obj_bytes = page_bytes + CACHED_PAGES;
		pages = (struct page *)(obj_bytes + OBJECT_PAGES);
		obj_pages = pages + CACHED_PAGES;
		words = (struct pc_wword *)(obj_bytes + OBJECT_PAGES + 1);
		known = (uint64_t *)(words + READ_WORDS);
		frames = (struct pc_frame *)(known + KNOWN_WALKS);
	}
	find_object = (int (*)(void *, struct dl_find_object *))
		dlsym(RTLD_DEFAULT, "_dl_find_object");
	h = dlopen("libunwind-x86_64.so.8", RTLD_NOW | RTLD_LOCAL);
	if (!find_object || !h)
		return -1;
	create = (unw_addr_space_t (*)(unw_accessors_t *, int))
		dlsym(h, "_Ux86_64_create_addr_space");
	u_caching = (int (*)(unw_addr_space_t, unw_caching_policy_t))
		dlsym(h, "_Ux86_64_set_caching_policy");
	u_init_remote = (int (*)(unw_cursor_t *, unw_addr_space_t, void *))
		dlsym(h, "_Ux86_64_init_remote");
	u_step = (int (*)(unw_cursor_t *))dlsym(h, "_Ux86_64_step");
	u_get_reg = (int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))
		dlsym(h, "_Ux86_64_get_reg");
	u_search = (int (*)(unw_addr_space_t, unw_word_t, unw_dyn_info_t *,
			    unw_proc_info_t *, int, void *))
		dlsym(h, "_Ux86_64_dwarf_search_unwind_table");
	if (!create || !u_caching || !u_init_remote || !u_step || !u_get_reg || !u_search)
		return -1;
	return (space = create(&acc, 0)) ? 0 : -1;
}

/* In the thread that starts libpc, before its timer is armed (the CPU is
 * libpc's, not the program's): the loader and libunwind allocate with
 * malloc, which the sampler's thread must not. */
void
pc_wall_load(void)
{
	int saved = errno;

	if (pc_cfg->clock_wall && pc_cfg->stacks && pc_wall_unwind_load())
		pc_say("cannot load libunwind's remote unwinder (libunwind-x86_64.so.8); "
		       "off-CPU samples without their stacks", "", "");
	errno = saved;
}

/*
 * In the sampler's thread, in its own descriptor table: libunwind's first
 * call that needs its set-up (the caching policy's) opens a pipe that it
 * keeps (its check of local memory, which remote walks never use), which
 * would be two descriptors of the program's for good, and maps its pools
 * (two pages; mmap, not malloc).
 */
int
pc_wall_unwind_init(void)
{
	self = getpid();
	if (!space)
		return -1;
	/* the rules found for a pc are kept: a blocked thread is walked from
	 * the same few call sites again and again */
	u_caching(space, UNW_CACHE_GLOBAL);
	return 0;
}

/*
 * Frame pointers. A function built with them computes its CFA from rbp
 * once its prologue is done, and rbp is a register: /proc does not give
 * it. libunwind finds it where a frame walked before saved it (the CFI
 * says where each callee-saved register was pushed), as in
 * pthread_cond_wait's frames; but most of libc's blocking calls (nanosleep,
 * read, poll, wait4, the mutex's lock wait) never touch rbp, so the program's
 * rbp is still in the register when the call blocks, and the walk stops at
 * the program's first frame. Its frame record (the caller's rbp, then the
 * return address, at rbp) is then looked for on the stack above that
 * frame's sp: the lowest pair whose return address follows a call, into
 * this function directly (a call rel32 whose target is the function's
 * start, from its FDE), or through a register or memory with a saved rbp
 * that points further up the stack to another such pair. The walk goes on
 * from there with rbp known.
 */
#define SCAN_BYTES	(16 * 1024)	/* how far above sp a frame record is looked for */
#define CHAIN_GAP	(1024 * 1024)	/* the most from one frame record to the next */
#define RESCUES		8		/* frame records looked for in one walk */

enum { NOT_CALL, CALL_DIRECT, CALL_INDIRECT };

/* What precedes a, a return address or not: a direct call (its target in
 * *to), a call through a register or memory (ff /2), or neither. */
static int
call_before(uintptr_t a, uintptr_t *to)
{
	struct dl_find_object o;
	unsigned char b[8];
	int32_t rel;

	if (a < 2 * PAGE || a >> 47 || find_object((void *)a, &o) || read_bytes(a - 8, b, 8))
		return NOT_CALL;
	if (b[3] == 0xe8) {
		memcpy(&rel, b + 4, 4);
		*to = a + (uintptr_t)(intptr_t)rel;
		return CALL_DIRECT;
	}
	/* ff with a modrm byte whose reg field is 2: 2 to 7 bytes long */
	for (int len = 2; len <= 7; len++)
		if (b[8 - len] == 0xff && (b[9 - len] & 0x38) == 0x10)
			return CALL_INDIRECT;
	return NOT_CALL;
}

/* Whether a and b are in the same object. */
static int
same_object(uintptr_t a, uintptr_t b)
{
	struct dl_find_object o;

	return !find_object((void *)a, &o) && (uintptr_t)o.dlfo_map_start <= b &&
	       b < (uintptr_t)o.dlfo_map_end;
}

/* Where the frame record of the function entered at entry, stopped at ip
 * and sp, is: its address, or 0. The first frame of a thread's program, a
 * function that a library (start_thread, __libc_start_call_main) called
 * through a pointer, has a saved rbp that is the library's, anything: its
 * record is taken in a second look, the lowest whose return address
 * follows an indirect call in another object. */
static uintptr_t
find_record(uintptr_t ip, uintptr_t sp, uintptr_t entry)
{
	uintptr_t outer = 0;

	for (uintptr_t a = sp; a < sp + SCAN_BYTES; a += 8) {
		uintptr_t v[2], w[2], to = 0;
		int k;

		if (read_bytes(a, v, sizeof(v)))
			break;
		if ((k = call_before(v[1], &to)) == CALL_DIRECT && entry && to == entry)
			return a;
		if (k != CALL_INDIRECT)
			continue;
		/* the saved rbp must lead on to another record */
		if (v[0] > a + 16 && v[0] - a < CHAIN_GAP &&
		    !read_bytes(v[0], w, sizeof(w)) && call_before(w[1], &to) != NOT_CALL)
			return a;
		if (!outer && !same_object(ip, v[1]))
			outer = a;
	}
	return outer;
}

/* The entry of the function that holds ip, from its FDE; 0 if none. */
static uintptr_t
entry_of(uintptr_t ip)
{
	unw_proc_info_t pi;

	memset(&pi, 0, sizeof(pi));
	if (find_proc_info(space, ip, &pi, 0, NULL) < 0)
		return 0;
	return pi.start_ip;
}

/* The walk stopped at the frame at ip, sp: start it again there with rbp
 * found on the stack; 0, or -1 where no frame record is found. */
static int
rescue(unw_cursor_t *c, uintptr_t ip, uintptr_t sp)
{
	uintptr_t rec = find_record(ip, sp, entry_of(ip - 1)), v[2];

	if (!rec)
		return -1;
	reg_ip = ip;
	reg_sp = sp;
	reg_bp = rec;
	have_bp = 1;
	/* the record the walk goes on from must hold too */
	if (read_bytes(rec, v, sizeof(v)))
		return -1;
	note_word(rec, v[0]);
	note_word(rec + 8, v[1]);
	return u_init_remote(c, space, NULL) < 0 ? -1 : 0;
}

/* The stack's pages are read afresh by each walk, and each check. */
static void
forget_stack(void)
{
	last = NULL;
	for (unsigned i = 0; pages && i < CACHED_PAGES; i++) {
		pages[i].addr = 0;
		pages[i].ok = 0;
	}
}

static int
walk(uintptr_t ip0, uintptr_t sp, struct pc_frame *f, int max, int *how)
{
	unw_cursor_t c;
	uintptr_t cur_ip = ip0, cur_sp = sp;
	int n = 0, rescues = 0;

	forget_stack();
	reg_ip = ip0;
	reg_sp = sp;
	have_bp = 0;
	walk_sp = sp;
	nwords = 0;
	words_over = 0;
	f[n].site = ip0;
	f[n++].entry = 0;
	*how = PC_WALL_CUT;
	if (!space || u_init_remote(&c, space, NULL) < 0)
		return n;
	while (n < max) {
		unw_word_t ip, nsp;
		int r = u_step(&c);

		/* stopped at a frame that needs rbp (not the first: libc's) */
		if (r < 0 && n > 1 && rescues++ < RESCUES && !rescue(&c, cur_ip, cur_sp))
			r = u_step(&c);
		if (r == 0) {
			*how = PC_WALL_FULL;
			return n;
		}
		if (r < 0 || u_get_reg(&c, UNW_REG_IP, &ip) < 0 ||
		    u_get_reg(&c, UNW_REG_SP, &nsp) < 0)
			return n;
		if (!ip) {
			*how = PC_WALL_FULL;
			return n;
		}
		cur_ip = ip;
		cur_sp = nsp;
		f[n].site = ip;
		f[n++].entry = 0;
	}
	*how = PC_WALL_TRUNCATED;
	return n;
}

static int words_hold(void);

/* The walk kept for ip and sp, if every stack word it read holds: its
 * frames (and its words, the last walk's for pc_wall_walk_holds), or 0. */
static int
reuse(uintptr_t ip, uintptr_t sp, struct pc_frame *f, int max, int *how)
{
	const struct pc_wword *w;
	unsigned nw;
	int n = pc_wall_reuse_get(ip, sp, f, max, how, &w, &nw);

	if (!n || !words || nw > READ_WORDS)
		return 0;
	memcpy(words, w, nw * sizeof(*w));
	nwords = nw;
	words_over = 0;
	walk_sp = sp;
	have_bp = 0;
	return words_hold() ? n : 0;
}

int
pc_wall_unwind(uintptr_t ip, uintptr_t sp, struct pc_frame *f, int max, int *how)
{
	uint64_t h;
	int n;

	if (++obj_walks % OBJECT_WALKS == 0 && obj_pages) {
		for (unsigned i = 0; i < OBJECT_PAGES; i++) {
			obj_pages[i].addr = 0;
			obj_pages[i].ok = 0;
		}
		pc_wall_reuse_clear();
	}
	last_walk = 0;
	fresh.n = 0;
	if (!(n = reuse(ip, sp, f, max, how))) {
		pc_wall_walking(1);
		n = walk(ip, sp, f, max, how);
		pc_wall_walking(0);
		/* a walk that found rbp on the stack read words it did not
		 * note (find_record's scan): not kept */
		if (!words_over && !have_bp && words) {
			fresh.ip = ip, fresh.sp = sp, fresh.f = f;
			fresh.n = n, fresh.how = *how;
		}
	}
	h = 14695981039346656037u ^ sp ^ (uint64_t)*how << 60;

	/* FNV-1a over the frames' pcs; 0 means none */
	for (int i = 0; i < n; i++)
		h = (h ^ f[i].site) * 1099511628211u;
	last_walk = h ? h : 1;
	return n;
}

/* Whether every stack word the last walk read holds the same now, read
 * afresh. */
static int
words_hold(void)
{
	if (words_over || !pages)
		return 0;
	forget_stack();
	for (unsigned i = 0; i < nwords; i++) {
		uintptr_t v;

		if (read_bytes(words[i].addr, &v, sizeof(v)) || v != words[i].val)
			return 0;
	}
	return 1;
}

void
pc_wall_walk_right(void)
{
	if (!last_walk)
		return;
	know(last_walk);
	if (fresh.n)
		pc_wall_reuse_put(fresh.ip, fresh.sp, fresh.f, fresh.n, fresh.how,
				  words, nwords);
	fresh.n = 0;
}

int
pc_wall_walk_holds(uint32_t tid, long nr, const unsigned long arg[6], unsigned long sp,
		  unsigned long ip)
{
	char name[48], line[256];
	unsigned long a[6], sp2, ip2;
	long nr2;
	ssize_t n;
	int fd;

	/* a stack known, frame for frame: a torn walk finds another */
	if (known && known[last_walk % KNOWN_WALKS] == last_walk)
		return 1;
	snprintf(name, sizeof(name), "/proc/self/task/%u/syscall", tid);
	if ((fd = open(name, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	line[n] = 0;
	/* in the call again (or still), every word the walk read the same:
	 * right if the thread stayed off the CPU through this check (words
	 * read while it ran elsewhere, in another call's frames, are not) */
	return pc_wall_parse_syscall(line, &nr2, a, &sp2, &ip2) == 9 &&
	       nr2 == nr && sp2 == sp && ip2 == ip && !memcmp(a, arg, sizeof(a)) &&
	       words_hold() ? 2 : 0;
}

struct pc_frame *
pc_wall_frames(void)
{
	return frames;
}
