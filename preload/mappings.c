/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Code run from a second mapping of a file: V8 (node 20) maps its embedded
 * builtins again from the node executable, once per isolate, and runs
 * them there; a program may map a page of its own file again. The loader
 * never hears of such a copy, so its samples fell in no object
 * ("[anonymous code]").
 *
 * mmap and mmap64 are interposed to learn the copies as they are made: a
 * successful PROT_EXEC mapping of a regular file that is the main program
 * (or, with PC_SCOPE=all, a loaded object) holds a copy of the code of
 * each executable PT_LOAD segment whose file bytes it maps.
 * The file is known by device and inode (fstat), never by its path; its
 * program headers are read from the descriptor itself. The copies table
 * keeps, for each, its runtime range and what to add to a PC there to get
 * the same instruction in the loader's mapping, so that the handler turns
 * a copy's PC into the original's before anything else (sample.c,
 * objfind.c): the histogram, the arcs and the stacks count it where the
 * file's own code is, named by the file's symbols, as perf names them from
 * its mmap events. A copy is retired by a successful munmap or mremap that
 * touches it, or a mapping made over it (MAP_FIXED).
 *
 * The interposers return what the next definition returns, errno
 * included; the work is one atomic load for any other mapping, and an
 * fstat (and two preads, for a file that is a known object) for an
 * executable file mapping. Before start-up resolved the next definitions
 * (another library's constructor), they make the system call themselves,
 * as glibc's wrappers do, and learn nothing.
 *
 * mlockall and munlockall are interposed to learn whether later mappings
 * are locked (below).
 *
 * Not seen: copies made before libpc's constructor, by a raw system call,
 * or made executable later by mprotect; copies of files that are no known
 * object. Their samples stay in no object, as before.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pc.h"
#include "live.h"
#include "banned.h"

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP	4
#endif
#if UINTPTR_MAX > 0xffffffffu
#define ELF_CLASS	ELFCLASS64
#else
#define ELF_CLASS	ELFCLASS32
#endif

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);
typedef void *(*mremap_fn)(void *, size_t, size_t, int, ...);

static mmap_fn real_mmap, real_mmap64;
static munmap_fn real_munmap;
static mremap_fn real_mremap;
static int ready;		/* start-up is done: copies may be learned */
static dev_t exe_dev;
static ino_t exe_ino;
static int exe_known;		/* exe_dev, exe_ino hold: 1, or -1 unknown */

static int full_said;

/* The load bias of the file behind fd when it is the main program or a
 * loaded object; -1 when it is neither. */
static int
file_bias(int fd, uintptr_t *bias)
{
	struct stat sb, me;

	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode))
		return -1;
	if (!__atomic_load_n(&exe_known, __ATOMIC_ACQUIRE)) {
		int ok = stat("/proc/self/exe", &me) == 0;

		exe_dev = ok ? me.st_dev : 0;
		exe_ino = ok ? me.st_ino : 0;
		__atomic_store_n(&exe_known, ok ? 1 : -1, __ATOMIC_RELEASE);
	}
	if (exe_known == 1 && sb.st_dev == exe_dev && sb.st_ino == exe_ino) {
		*bias = pc_cfg->bias;
		return 0;
	}
	return pc_cfg->scope_all ?
		       pc_object_bias_of_file(sb.st_dev, sb.st_ino, bias) :
		       -1;
}

/* A copy of the file bytes [lo, hi) of segment ph, mapped at m from file
 * offset off: in the table, where it holds any. */
static void
copy_of_segment(const ElfW(Phdr) *ph, uintptr_t m, uintptr_t off, uintptr_t len,
		uintptr_t bias)
{
	uintptr_t lo = off > ph->p_offset ? off : ph->p_offset;
	uintptr_t end = ph->p_offset + ph->p_filesz;
	uintptr_t hi = off + len < end ? off + len : end;
	/* original = pc - m + off - p_offset + p_vaddr + bias, modulo 2^N */
	uintptr_t delta = off - ph->p_offset + ph->p_vaddr + bias - m;

	if (lo >= hi)
		return;
	if (pc_copy_add(m + (lo - off), m + (hi - off), delta) &&
	    !__atomic_exchange_n(&full_said, 1, __ATOMIC_RELAXED))
		pc_say("more than 64 copies of code mapped from files; later ones are not named",
		       "", "");
}

/*
 * A mapping of len bytes at m of fd's file from offset off, executable:
 * when the file is a known object, each of its executable segments whose
 * file bytes the mapping holds is a copy (headers read from fd itself,
 * 8 at a time: mmap may be called on a small stack).
 */
static void
learn(uintptr_t m, size_t len, int fd, off_t off)
{
	ElfW(Ehdr) e;
	ElfW(Phdr) ph[8];
	uintptr_t bias;

	if (off < 0 || len == 0 || file_bias(fd, &bias) ||
	    pread(fd, &e, sizeof(e), 0) != (ssize_t)sizeof(e) ||
	    memcmp(e.e_ident, ELFMAG, SELFMAG) ||
	    e.e_ident[EI_CLASS] != ELF_CLASS ||
	    e.e_phentsize != sizeof(ElfW(Phdr)))
		return;
	for (size_t i = 0; i < e.e_phnum && i < 64; i += 8) {
		size_t n = e.e_phnum - i < 8 ? e.e_phnum - i : 8;
		off_t at = (off_t)(e.e_phoff + i * sizeof(ph[0]));

		if (pread(fd, ph, n * sizeof(ph[0]), at) !=
		    (ssize_t)(n * sizeof(ph[0])))
			return;
		for (size_t k = 0; k < n; k++)
			if (ph[k].p_type == PT_LOAD && (ph[k].p_flags & PF_X))
				copy_of_segment(&ph[k], m, (uintptr_t)off, len,
						bias);
	}
}

/*
 * mmap through f, the next definition (or, before start-up resolved it,
 * the system call as glibc's wrapper makes it: the kernel refuses an
 * offset that is not page-aligned with EINVAL, as the wrapper does); then
 * what a new mapping changes for the copies, errno kept.
 */
static void *
map_through(mmap_fn f, void *a, size_t len, int prot, int flags, int fd,
	    off_t off)
{
	void *r = f ? f(a, len, prot, flags, fd, off) :
		  (void *)syscall(SYS_mmap, a, len, prot, flags, fd, off);
	int saved = errno;

	if (r == MAP_FAILED)
		return r;
	/* the live file's growth where no grower thread runs (livegrower.c) */
	pc_live_grow_now();
	/* a mapping over a copy (MAP_FIXED) replaced it */
	pc_copies_retire((uintptr_t)r, len);
	if ((prot & PROT_EXEC) && fd >= 0 && !(flags & MAP_ANONYMOUS) &&
	    __atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		learn((uintptr_t)r, len, fd, off);
	errno = saved;
	return r;
}

/* By their symbols: with _FILE_OFFSET_BITS=64 the header names mmap64
 * for mmap (the same function on a 64-bit system). */
PC_EXPORT void *interposed_mmap(void *a, size_t len, int prot, int flags,
				int fd, off_t off) __asm__("mmap");
PC_EXPORT void *interposed_mmap64(void *a, size_t len, int prot, int flags,
				  int fd, off_t off) __asm__("mmap64");

void *
interposed_mmap(void *a, size_t len, int prot, int flags, int fd, off_t off)
{
	return map_through(__atomic_load_n(&real_mmap, __ATOMIC_ACQUIRE), a,
			   len, prot, flags, fd, off);
}

void *
interposed_mmap64(void *a, size_t len, int prot, int flags, int fd, off_t off)
{
	return map_through(__atomic_load_n(&real_mmap64, __ATOMIC_ACQUIRE), a,
			   len, prot, flags, fd, off);
}

PC_EXPORT int
munmap(void *a, size_t len)
{
	munmap_fn f = __atomic_load_n(&real_munmap, __ATOMIC_ACQUIRE);
	int r = f ? f(a, len) : (int)syscall(SYS_munmap, a, len);

	if (r == 0) {
		int saved = errno;

		pc_copies_retire((uintptr_t)a, len);
		pc_live_grow_now();
		errno = saved;
	}
	return r;
}

PC_EXPORT void *
mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	mremap_fn f = __atomic_load_n(&real_mremap, __ATOMIC_ACQUIRE);
	void *want = NULL, *r;
	va_list ap;

	/* the new address is passed with MREMAP_FIXED (and read by newer
	 * glibc with MREMAP_DONTUNMAP, as a hint) */
	if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	r = f ? f(old, old_len, new_len, flags, want) :
	    (void *)syscall(SYS_mremap, old, old_len, new_len, flags, want);
	if (r != MAP_FAILED) {
		int saved = errno;

		if (!(flags & MREMAP_DONTUNMAP))
			pc_copies_retire((uintptr_t)old, old_len);
		pc_copies_retire((uintptr_t)r, new_len);
		pc_live_grow_now();
		errno = saved;
	}
	return r;
}

/*
 * mlockall with MCL_FUTURE locks every later mapping, and each counts
 * against RLIMIT_MEMLOCK with the program's own: from then on the live
 * file maps no more of itself (livemap.c), so that libpc never takes
 * the room the program locked for its allocations. A plain system call,
 * as glibc's wrapper is.
 */
PC_EXPORT int
mlockall(int flags)
{
	int was = pc_live_map_locked(-1), r, saved;

	/* before the call: a round a sample runs as it returns maps nothing */
	if (flags & MCL_FUTURE)
		pc_live_map_locked(1);
	r = (int)syscall(SYS_mlockall, flags);
	saved = errno;
	if (r)
		pc_live_map_locked(was);
	errno = saved;
	return r;
}

PC_EXPORT int
munlockall(void)
{
	int r = (int)syscall(SYS_munlockall);

	if (r == 0)
		pc_live_map_locked(0);
	return r;
}

void
pc_mappings_resolve(void)
{
	__atomic_store_n(&real_mmap, (mmap_fn)pc_next("mmap"),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&real_mmap64, (mmap_fn)pc_next("mmap64"),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&real_munmap, (munmap_fn)pc_next("munmap"),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&real_mremap, (mremap_fn)pc_next("mremap"),
			 __ATOMIC_RELEASE);
}

void
pc_mappings_start(void)
{
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
}
