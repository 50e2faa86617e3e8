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
 * that never asks for a wall profile never maps it. This runs only in the
 * wall sampler's thread, never in a handler, so it may allocate (libunwind
 * does, on a cache miss).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <libunwind.h>

#include "pc.h"
#include "wall.h"

#define PAGE		4096
#define CACHED_PAGES	16

/* .eh_frame_hdr's encodings (LSB, "Exception Frame Header") */
#define DW_EH_PE_udata4		0x03
#define DW_EH_PE_sdata4		0x0b
#define DW_EH_PE_datarel	0x30

struct page {
	uintptr_t addr;		/* 0: empty */
	int ok;			/* read whole */
	unsigned char b[PAGE];
};

/* the wall sampler's thread is the only caller: no lock */
static struct page pages[CACHED_PAGES];
static unsigned next_page;
static pid_t self;
static uintptr_t reg_ip, reg_sp;

static unw_addr_space_t space;
static int (*u_init_remote)(unw_cursor_t *, unw_addr_space_t, void *);
static int (*u_step)(unw_cursor_t *);
static int (*u_get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
static int (*u_search)(unw_addr_space_t, unw_word_t, unw_dyn_info_t *, unw_proc_info_t *,
		       int, void *);
static int (*find_object)(void *, struct dl_find_object *);

/* The page at addr (page-aligned), read now or earlier in this walk. */
static const struct page *
page_at(uintptr_t addr)
{
	struct page *p;
	struct iovec local, remote;

	for (unsigned i = 0; i < CACHED_PAGES; i++)
		if (pages[i].addr == addr)
			return pages[i].ok ? &pages[i] : NULL;
	p = &pages[next_page++ % CACHED_PAGES];
	p->addr = addr;
	local.iov_base = p->b;
	local.iov_len = PAGE;
	remote.iov_base = (void *)addr;
	remote.iov_len = PAGE;
	p->ok = syscall(SYS_process_vm_readv, self, &local, 1UL, &remote, 1UL, 0UL) == PAGE;
	return p->ok ? p : NULL;
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
		const struct page *p = page_at(base);

		if (!p)
			return -1;
		memcpy(out, p->b + off, k);
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

int
pc_wall_unwind_init(void)
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
	int (*caching)(unw_addr_space_t, unw_caching_policy_t);
	void *h;

	self = getpid();
	if (space)
		return 0;
	find_object = (int (*)(void *, struct dl_find_object *))
		dlsym(RTLD_DEFAULT, "_dl_find_object");
	h = dlopen("libunwind-x86_64.so.8", RTLD_NOW | RTLD_LOCAL);
	if (!find_object || !h)
		return -1;
	create = (unw_addr_space_t (*)(unw_accessors_t *, int))
		dlsym(h, "_Ux86_64_create_addr_space");
	caching = (int (*)(unw_addr_space_t, unw_caching_policy_t))
		dlsym(h, "_Ux86_64_set_caching_policy");
	u_init_remote = (int (*)(unw_cursor_t *, unw_addr_space_t, void *))
		dlsym(h, "_Ux86_64_init_remote");
	u_step = (int (*)(unw_cursor_t *))dlsym(h, "_Ux86_64_step");
	u_get_reg = (int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))
		dlsym(h, "_Ux86_64_get_reg");
	u_search = (int (*)(unw_addr_space_t, unw_word_t, unw_dyn_info_t *,
			    unw_proc_info_t *, int, void *))
		dlsym(h, "_Ux86_64_dwarf_search_unwind_table");
	if (!create || !caching || !u_init_remote || !u_step || !u_get_reg || !u_search)
		return -1;
	if (!(space = create(&acc, 0)))
		return -1;
	/* the rules found for a pc are kept: a blocked thread is walked from
	 * the same few call sites again and again */
	caching(space, UNW_CACHE_GLOBAL);
	return 0;
}

int
pc_wall_unwind(uintptr_t ip0, uintptr_t sp, struct pc_frame *f, int max, int *how)
{
	unw_cursor_t c;
	int n = 0;

	for (unsigned i = 0; i < CACHED_PAGES; i++) {
		pages[i].addr = 0;
		pages[i].ok = 0;
	}
	reg_ip = ip0;
	reg_sp = sp;
	f[n].site = ip0;
	f[n++].entry = 0;
	*how = PC_WALL_CUT;
	if (!space || u_init_remote(&c, space, NULL) < 0)
		return n;
	while (n < max) {
		unw_word_t ip;
		int r = u_step(&c);

		if (r == 0) {
			*how = PC_WALL_FULL;
			return n;
		}
		if (r < 0 || u_get_reg(&c, UNW_REG_IP, &ip) < 0)
			return n;
		if (!ip) {
			*how = PC_WALL_FULL;
			return n;
		}
		f[n].site = ip;
		f[n++].entry = 0;
	}
	*how = PC_WALL_TRUNCATED;
	return n;
}
