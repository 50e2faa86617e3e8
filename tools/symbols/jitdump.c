/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Names for JIT code from a jitdump, jit-PID.dump: perf's binary format
 * (tools/perf/util/jitdump.h), written by node --perf-prof, the JVM's
 * perf agents and other JITs. A 40-byte header (magic "JiTD", version 1,
 * header size, e_machine, pid, ...), then records, each with a 16-byte
 * prefix (id, size of the whole record, time): CODE_LOAD names the code at
 * an address, CODE_MOVE moves it, DEBUG_INFO gives its lines, others are
 * skipped by their size. Written with buffered stdio, so a running or
 * killed writer's file ends mid-record: a short last record is the end.
 * Everything else that does not hold together makes the file none to
 * believe, as a perf map that is not one (jitmap.c), and the same trust
 * rules apply: a plain file of the process's user that no one else may
 * write, written since the process started, read up to a bound.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcprof.h"
#include "symbols/jit.h"

#define JD_MAGIC	0x4A695444u
#define JD_HEADER	40u
#define JD_HEADER_MAX	4096u		/* a longer header is no jitdump's */
#define JD_FILE_MAX	(256u << 20)	/* bytes read at most, as of a perf map */
#define JD_PREFIX	16u
#define JD_LOAD		0u
#define JD_MOVE		1u
#define JD_DEBUG	2u
#define JD_LOAD_FIXED	56u
#define JD_MOVE_FIXED	64u	/* perf's struct jr_code_move: 16 + 4 + 4 + 5 x 8 */
#define JD_DEBUG_FIXED	32u
#define JD_ENTRY_MIN	17u		/* addr, line, discrim, "" */
#define JD_MOVE_LOOK	4096u		/* earlier loads a move searches */
/* V8 writes debug entries' addresses 0x40 (its ELF header) past the
 * code's; a line may lie at most this far past the code's start */
#define JD_DEBUG_BIAS	0x40u
#define JD_DEBUG_SPAN	(UINT64_C(1) << 32)

#if defined(__x86_64__)
#define JD_MACHINE	EM_X86_64
#elif defined(__aarch64__)
#define JD_MACHINE	EM_AARCH64
#elif defined(__i386__)
#define JD_MACHINE	EM_386
#elif defined(__riscv)
#define JD_MACHINE	EM_RISCV
#elif defined(__powerpc64__)
#define JD_MACHINE	EM_PPC64
#else
#define JD_MACHINE	0		/* not checked */
#endif

static uint32_t
rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t
rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static const char *
header(const unsigned char *b, size_t len, uint64_t pid, size_t *hsize)
{
	if (len < JD_HEADER)
		return "shorter than a jitdump's header";
	if (rd32(b) == __builtin_bswap32(JD_MAGIC))
		return "written in the other byte order (another machine's)";
	if (rd32(b) != JD_MAGIC)
		return "not a jitdump (no JiTD magic)";
	if (rd32(b + 4) != 1)
		return "a jitdump version other than 1";
	*hsize = rd32(b + 8);
	if (*hsize < JD_HEADER || *hsize > JD_HEADER_MAX || *hsize > len)
		return "a header size out of bounds";
	if (JD_MACHINE && rd32(b + 12) != JD_MACHINE)
		return "code of another machine (its e_machine)";
	if (pid && rd32(b + 20) != pid)
		return "written by another process (its pid)";
	if (rd64(b + 32) & ~UINT64_C(1))
		return "flags pcprof does not know";
	return NULL;
}

/* CODE_LOAD: fixed part, name, then code_size bytes of code. */
static const char *
code_load(const unsigned char *r, uint32_t size, struct jlines *l)
{
	uint64_t addr, csize;
	const unsigned char *nul;

	if (size < JD_LOAD_FIXED + 1)
		return "a CODE_LOAD record too short for its fields";
	addr = rd64(r + 32);
	csize = rd64(r + 40);
	if (csize > size - JD_LOAD_FIXED - 1)
		return "a CODE_LOAD record shorter than its code";
	nul = memchr(r + JD_LOAD_FIXED, 0,
		     size - JD_LOAD_FIXED - (size_t)csize);
	if (!nul)
		return "a CODE_LOAD record whose name has no end";
	if (addr + csize < addr)
		return "a CODE_LOAD record whose code wraps around the address space";
	if (csize)
		jit_add(l, addr, addr + csize, (const char *)r + JD_LOAD_FIXED,
			(size_t)(nul - (r + JD_LOAD_FIXED)));
	return NULL;
}

/* CODE_MOVE: the latest of the last JD_MOVE_LOOK loads at old_code_addr
 * is named again at new_code_addr. */
static const char *
code_move(const unsigned char *r, uint32_t size, struct jlines *l)
{
	uint64_t from, to, csize;

	if (size < JD_MOVE_FIXED)
		return "a CODE_MOVE record too short for its fields";
	from = rd64(r + 32);
	to = rd64(r + 40);
	csize = rd64(r + 48);
	if (to + csize < to)
		return "a CODE_MOVE record whose code wraps around the address space";
	for (size_t i = l->n, k = 0; csize && i > 0 && k < JD_MOVE_LOOK;
	     i--, k++)
		if (l->v[i - 1].lo == from) {
			/* the name is copied first: jit_add may move l->v */
			char *name = pc_strdup(jit_name(l, i - 1));

			jit_add(l, to, to + csize, name, strlen(name));
			free(name);
			break;
		}
	return NULL;
}

/*
 * DEBUG_INFO: nr_entry lines of the code at code_addr, each {u64 addr, i32
 * line, i32 discrim, name NUL-terminated}. The number of entries that hold
 * together: each within the record, at an address just past the code's
 * start; 0 when one does not (V8 11.3 writes freed memory into file
 * names, so that a walk goes out of step). Never an error: lines are a
 * help, names come from CODE_LOAD.
 */
static size_t
debug_info(const unsigned char *r, uint32_t size)
{
	uint64_t code, nr;
	size_t off = JD_DEBUG_FIXED;

	if (size < JD_DEBUG_FIXED)
		return 0;
	code = rd64(r + 16);
	nr = rd64(r + 24);
	if (nr > (size - JD_DEBUG_FIXED) / JD_ENTRY_MIN)
		return 0;
	for (uint64_t k = 0; k < nr; k++) {
		const unsigned char *nul;
		uint64_t a;

		if (size - off < JD_ENTRY_MIN)
			return 0;
		a = rd64(r + off);
		if (a < code || a - code < JD_DEBUG_BIAS ||
		    a - code >= JD_DEBUG_SPAN)
			return 0;
		if (!(nul = memchr(r + off + 16, 0, size - off - 16)))
			return 0;
		if (r[off + 16] == 0xff && nul == r + off + 17 && k == 0)
			return 0;	/* "same file as before" first */
		off = (size_t)(nul - r) + 1;
	}
	return (size_t)nr;
}

const char *
jitdump_parse(const unsigned char *b, size_t len, uint64_t pid,
	      struct jlines *l, size_t *lines)
{
	size_t off;
	const char *why = header(b, len, pid, &off);

	*lines = 0;
	while (!why && len - off >= JD_PREFIX) {
		const unsigned char *r = b + off;
		uint32_t id = rd32(r), size = rd32(r + 4);

		if (size < JD_PREFIX)
			return "a record shorter than its prefix";
		if (size > len - off)
			break;	/* the record being written: the end */
		if (id == JD_LOAD)
			why = code_load(r, size, l);
		else if (id == JD_MOVE)
			why = code_move(r, size, l);
		else if (id == JD_DEBUG)
			*lines += debug_info(r, size);
		off += size;
	}
	return why;
}

/* The first JD_FILE_MAX bytes of the file open on fd into *buf; its
 * length, or -1 with errno. */
static ssize_t
read_all(int fd, unsigned char **buf)
{
	size_t len = 0, cap = 1u << 20;
	unsigned char *b = pc_realloc(NULL, cap);

	for (;;) {
		ssize_t r;

		if (len == cap) {
			if (cap >= JD_FILE_MAX)
				break;
			cap *= 2;
			b = pc_realloc(b, cap);
		}
		r = read(fd, b + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(b);
			return -1;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	*buf = b;
	return (ssize_t)len;
}

int
jitdump_load(const char *dir, uint64_t pid, uid_t uid, uint64_t started,
	     struct symtab *st, char *path, size_t pathlen)
{
	struct jlines l = { 0 };
	unsigned char *buf;
	const char *why;
	size_t lines;
	ssize_t len;
	int fd;

	memset(st, 0, sizeof(*st));
	snprintf(path, pathlen, "%s/jit-%llu.dump", dir,
		 (unsigned long long)pid);
	if ((fd = pc_open_regular(path, NULL, &why)) < 0) {
		if (errno != ENOENT)
			pc_warn("note: '%s' ignored: %s; JIT code left unnamed",
				path, why);
		return -1;
	}
	if ((why = jit_untrusted(fd, uid, started)) ||
	    (len = read_all(fd, &buf)) < 0) {
		pc_warn("note: '%s' ignored: %s; JIT code left unnamed", path,
			why ? why : strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	why = jitdump_parse(buf, (size_t)len, pid, &l, &lines);
	free(buf);
	if (why) {
		pc_warn("note: '%s' ignored: %s; JIT code left unnamed", path,
			why);
		jit_free(&l);
		return -1;
	}
	if (l.left_out)
		pc_warn("note: '%s': only its first %zu functions read (a bound of %u functions, "
			"%u MiB of names); JIT code past them left unnamed",
			path, l.n, JIT_ENTRIES_MAX, JIT_NAMES_MAX >> 20);
	jit_disjoint(&l, st, "jitdump");
	return (int)st->nsyms;
}
