/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for tools/symbols/jitdump.c: jitdumps made by hand, one
 * well-formed as node 20 writes them (DEBUG_INFO with V8's +0x40
 * addresses, an UNWINDING_INFO, CODE_LOAD not padded to 8, a CODE_MOVE,
 * an id pcprof does not know, a short last record), then each header
 * field and record size broken in turn: every one is refused with its
 * reason or read as far as it holds together, never read past. Then the
 * file rules shared with perf maps: a file others may write, a symbolic
 * link and another pid's file are not believed.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcprof.h"
#include "symbols/jit.h"
#include "unit.h"

#define PID	4242u

struct buf {
	unsigned char b[4096];
	size_t n;
};

static void
put(struct buf *b, const void *p, size_t n)
{
	ck_assert(b->n + n <= sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void
put32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void
put64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void
header(struct buf *b)
{
	b->n = 0;
	put32(b, 0x4A695444u);
	put32(b, 1);
	put32(b, 40);
#if defined(__x86_64__)
	put32(b, EM_X86_64);
#elif defined(__aarch64__)
	put32(b, EM_AARCH64);
#else
	put32(b, 0);
#endif
	put32(b, 0xDEADBEEFu);
	put32(b, PID);
	put64(b, 1796198241462954u);
	put64(b, 0);
}

static void
prefix(struct buf *b, uint32_t id, uint32_t size)
{
	put32(b, id);
	put32(b, size);
	put64(b, 123456789u);
}

static size_t
load(struct buf *b, uint64_t addr, const char *name, uint64_t csize)
{
	size_t at = b->n, len = strlen(name) + 1;

	prefix(b, 0, (uint32_t)(56 + len + csize));
	put32(b, PID);
	put32(b, PID);
	put64(b, addr);
	put64(b, addr);
	put64(b, csize);
	put64(b, 7);
	put(b, name, len);
	for (uint64_t i = 0; i < csize; i++)
		put(b, "\xcc", 1);
	return at;
}

/* node's DEBUG_INFO for code at addr: two entries, the second "same file" */
static size_t
debug(struct buf *b, uint64_t addr, const char *file)
{
	size_t at = b->n, len = strlen(file) + 1;
	size_t size = 32 + 16 + len + 16 + 2, pad = (8 - size % 8) % 8;

	prefix(b, 2, (uint32_t)(size + pad));
	put64(b, addr);
	put64(b, 2);
	put64(b, addr + 0x40);
	put32(b, 1);
	put32(b, 19);
	put(b, file, len);
	put64(b, addr + 0x40 + 6);
	put32(b, 2);
	put32(b, 3);
	put(b, "\xff", 2);
	put(b, "\0\0\0\0\0\0\0", pad);
	return at;
}

/* The well-formed dump; *load_at is where its first CODE_LOAD starts. */
static void
good(struct buf *b, size_t *load_at, size_t *debug_at)
{
	header(b);
	*debug_at = debug(b, 0x7f0000001000u, "/srv/app/fib.js");
	prefix(b, 4, 64);	/* UNWINDING_INFO, empty, as node writes */
	put64(b, 20);
	put64(b, 20);
	put64(b, 0);
	put64(b, 0);
	put64(b, 0);
	put64(b, 0);
	*load_at = load(b, 0x7f0000001000u, "JS:*fib /srv/app/fib.js:1:13", 21);
	load(b, 0x7f0000002000u, "JS:^fib /srv/app/fib.js:1:13", 3);
	prefix(b, 9, 24);	/* an id of a later version: skipped */
	put64(b, 0);
	prefix(b, 1, 64);	/* CODE_MOVE of the second */
	put32(b, PID);
	put32(b, PID);
	put64(b, 0x7f0000003000u);
	put64(b, 0x7f0000002000u);
	put64(b, 0x7f0000003000u);
	put64(b, 3);
	put64(b, 8);
	prefix(b, 0, 500);	/* being written when the process died */
	put64(b, 0);
}

static const char *
parse(const struct buf *b, struct jlines *l, size_t *lines)
{
	memset(l, 0, sizeof(*l));
	return jitdump_parse(b->b, b->n, PID, l, lines);
}

START_TEST(test_node_style_dump)
{
	struct buf b;
	struct jlines l;
	size_t lines, at, dat;

	good(&b, &at, &dat);
	ck_assert_ptr_null(parse(&b, &l, &lines));
	ck_assert_uint_eq(l.n, 3);
	ck_assert_str_eq(jit_name(&l, 0), "JS:*fib /srv/app/fib.js:1:13");
	ck_assert_uint_eq(l.v[0].lo, 0x7f0000001000u);
	ck_assert_uint_eq(l.v[0].hi, 0x7f0000001000u + 21);
	ck_assert_str_eq(jit_name(&l, 2), "JS:^fib /srv/app/fib.js:1:13");
	ck_assert_uint_eq(l.v[2].lo, 0x7f0000003000u);
	ck_assert_uint_eq(lines, 2);
	jit_free(&l);
	/* any other pid's, or pid not known */
	ck_assert_ptr_nonnull(jitdump_parse(b.b, b.n, PID + 1, &l, &lines));
	jit_free(&l);
	ck_assert_ptr_null(jitdump_parse(b.b, b.n, 0, &l, &lines));
	jit_free(&l);
}
END_TEST

/* Cut at every length: a short header is refused, any cut after it reads
 * the records before the cut. Under ASan, nothing is read past. */
START_TEST(test_every_truncation)
{
	struct buf b;
	size_t at, dat, lines, prev = 0;

	good(&b, &at, &dat);
	for (size_t n = 0; n <= b.n; n++) {
		struct jlines l = { 0 };
		unsigned char *copy = malloc(n ? n : 1);
		const char *why;

		memcpy(copy, b.b, n);
		why = jitdump_parse(copy, n, PID, &l, &lines);
		if (n < 40)
			ck_assert_ptr_nonnull(why);
		else
			ck_assert_msg(!why && l.n >= prev, "cut at %zu: %s", n,
				      why ? why : "");
		prev = l.n;
		jit_free(&l);
		free(copy);
	}
	ck_assert_uint_eq(prev, 3);
}
END_TEST

/* One field of the good dump set to v (4 or 8 bytes at off): the reason
 * it is refused holds expect, or it is read with n functions. */
static void
broken(size_t off, uint64_t v, int wide, const char *expect, size_t n)
{
	struct buf b;
	struct jlines l;
	size_t lines, at, dat;
	const char *why;

	good(&b, &at, &dat);
	if (wide)
		memcpy(b.b + off, &v, 8);
	else
		memcpy(b.b + off, &(uint32_t){ (uint32_t)v }, 4);
	why = parse(&b, &l, &lines);
	if (expect)
		ck_assert_msg(why && strstr(why, expect), "at %zu: %s", off,
			      why ? why : "NULL");
	else
		ck_assert_msg(!why && l.n == n, "at %zu: %s, %zu", off,
			      why ? why : "", l.n);
	jit_free(&l);
}

START_TEST(test_bad_headers)
{
	broken(0, 0x12345678u, 0, "magic", 0);
	broken(0, 0x4454694Au, 0, "byte order", 0);
	broken(4, 2, 0, "version", 0);
	broken(8, 39, 0, "header size", 0);
	broken(8, 5000, 0, "header size", 0);
	broken(8, UINT32_MAX, 0, "header size", 0);
#if defined(__x86_64__) || defined(__aarch64__)
	broken(12, EM_ARM, 0, "machine", 0);
#endif
	broken(20, PID + 1, 0, "another process", 0);
	broken(32, 4, 1, "flags", 0);
	broken(32, 1, 1, NULL, 3);	/* JITDUMP_FLAGS_ARCH_TIMESTAMP */
}
END_TEST

START_TEST(test_bad_records)
{
	struct buf b;
	size_t at, dat;

	good(&b, &at, &dat);
	broken(at + 4, 8, 0, "shorter than its prefix", 0);
	broken(at + 4, 0, 0, "shorter than its prefix", 0);
	/* larger than the file: the end, as a record being written */
	broken(at + 4, UINT32_MAX, 0, NULL, 0);
	broken(at + 4, 56, 0, "too short", 0);
	/* code larger than the record, by far and by one */
	broken(at + 40, UINT64_MAX, 1, "shorter than its code", 0);
	broken(at + 40, 50, 1, "shorter than its code", 0);
	/* code taking the name's NUL */
	broken(at + 40, 22, 1, "name has no end", 0);
	/* code wrapping around */
	broken(at + 32, UINT64_MAX - 4, 1, "wraps", 0);
	/* an empty function: no name, the rest read */
	broken(at + 40, 0, 1, NULL, 2);
	/* DEBUG_INFO never refuses the file: bad lines are dropped */
	broken(dat + 24, UINT64_MAX, 1, NULL, 3);
	/* one entry more than it holds: walks into its padding */
	broken(dat + 24, 3, 1, NULL, 3);
}
END_TEST

/* V8 11.3's freed memory in a file name: a NUL inside the name puts the
 * walk out of step; the record's lines are dropped, names stay. */
START_TEST(test_v8_garbage_in_debug_names)
{
	struct buf b;
	struct jlines l;
	size_t lines, at, dat;

	good(&b, &at, &dat);
	memcpy(b.b + dat + 32 + 16, "\xa7\x36\x04\0\0\0\0\0\xe2\xac", 10);
	ck_assert_ptr_null(parse(&b, &l, &lines));
	ck_assert_uint_eq(lines, 0);
	ck_assert_uint_eq(l.n, 3);
	jit_free(&l);
}
END_TEST

static char dir[] = "/tmp/check_jitdump.XXXXXX";

static int
load_file(const struct buf *b, mode_t mode, int symlinked, struct symtab *st)
{
	char path[256], target[256];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "%s/jit-%u.dump", dir, PID);
	snprintf(target, sizeof(target), "%s/real", dir);
	unlink(path);
	unlink(target);
	ck_assert_ptr_nonnull(f = fopen(symlinked ? target : path, "w"));
	ck_assert_uint_eq(fwrite(b->b, 1, b->n, f), b->n);
	fclose(f);
	ck_assert_int_eq(chmod(symlinked ? target : path, mode), 0);
	if (symlinked)
		ck_assert_int_eq(symlink(target, path), 0);
	n = jitdump_load(dir, PID, getuid(), 0, st, path, sizeof(path));
	return n;
}

START_TEST(test_file_rules)
{
	struct buf b;
	struct symtab st;
	size_t at, dat;
	char cmd[300];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	good(&b, &at, &dat);
	ck_assert_int_eq(load_file(&b, 0644, 0, &st), 3);
	ck_assert_str_eq(st.source, "jitdump");
	ck_assert_str_eq(st.funcs[st.syms[0].func], "JS:*fib /srv/app/fib.js:1:13");
	symtab_release(&st);
	ck_assert_int_eq(load_file(&b, 0664, 0, &st), -1);
	symtab_release(&st);
	ck_assert_int_eq(load_file(&b, 0644, 1, &st), -1);
	symtab_release(&st);
	b.b[20] ^= 1;	/* another pid's */
	ck_assert_int_eq(load_file(&b, 0644, 0, &st), -1);
	symtab_release(&st);
	/* a FIFO of that name, no writer: refused at once, never waited on */
	{
		char path[256];

		snprintf(path, sizeof(path), "%s/jit-%u.dump", dir, PID);
		unlink(path);
		ck_assert_int_eq(mkfifo(path, 0644), 0);
		ck_assert_int_eq(jitdump_load(dir, PID, getuid(), 0, &st, path,
					      sizeof(path)),
				 -1);
		symtab_release(&st);
		/* and a perf map: this process's, which writes none */
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		ck_assert_int_eq(mkfifo(path, 0644), 0);
		ck_assert_int_eq(jitmap_load((uint64_t)getpid(), getuid(), 0,
					     &st, path, sizeof(path)),
				 -1);
		symtab_release(&st);
		unlink(path);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/*
 * What perf maps and jitdumps become (jitmap.c), whatever their order:
 * - two functions at one address: the later line wins;
 * - two that overlap: the earlier ends where the later starts;
 * - one wholly inside another that starts before it: it takes its part;
 * - a name with a NUL in it ends there; one over JIT_NAME_MAX is cut;
 * - past JIT_ENTRIES_MAX functions, jit_add refuses and counts them.
 */
START_TEST(test_jit_lines_become_disjoint_functions)
{
	static const struct {
		uint64_t lo, hi;
		const char *name;
	} in[] = {
		{ 0x3000, 0x3100, "late" }, { 0x1000, 0x1100, "first" },
		{ 0x1000, 0x1080, "again" }, { 0x1040, 0x1200, "overlap" },
		{ 0x2000, 0x2400, "outer" }, { 0x2100, 0x2200, "inner" },
	};
	static const struct {
		uint64_t lo, hi;
		const char *name;
	} want[] = {
		{ 0x1000, 0x1040, "again" }, { 0x1040, 0x1200, "overlap" },
		{ 0x2000, 0x2100, "outer" }, { 0x2100, 0x2200, "inner" },
		{ 0x3000, 0x3100, "late" },
	};
	struct jlines l = { 0 };
	struct symtab st;
	char big[JIT_NAME_MAX + 100];
	size_t refused = 0;

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		ck_assert_int_eq(jit_add(&l, in[i].lo, in[i].hi, in[i].name,
					 strlen(in[i].name)), 0);
	memset(&st, 0, sizeof(st));
	jit_disjoint(&l, &st, "perf map");
	ck_assert_ptr_null(l.v);
	ck_assert_uint_eq(st.nsyms, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < st.nsyms; i++) {
		ck_assert_uint_eq(st.syms[i].lo, want[i].lo);
		ck_assert_uint_eq(st.syms[i].hi, want[i].hi);
		ck_assert_str_eq(st.funcs[st.syms[i].func], want[i].name);
	}
	symtab_release(&st);

	memset(big, 'x', sizeof(big));
	ck_assert_int_eq(jit_add(&l, 1, 2, "nul\0after", 9), 0);
	ck_assert_int_eq(jit_add(&l, 2, 3, big, sizeof(big)), 0);
	ck_assert_str_eq(jit_name(&l, 0), "nul");
	ck_assert_uint_eq(strlen(jit_name(&l, 1)), JIT_NAME_MAX);
	for (size_t i = 2; i < JIT_ENTRIES_MAX; i++)
		refused += jit_add(&l, 16 * i, 16 * i + 8, "f", 1) != 0;
	ck_assert_uint_eq(refused, 0);
	ck_assert_int_eq(jit_add(&l, 0, 8, "over", 4), -1);
	ck_assert_uint_eq(l.n, JIT_ENTRIES_MAX);
	ck_assert_uint_eq(l.left_out, 1);
	jit_free(&l);
}
END_TEST

Suite *
jitdump_suite(void)
{
	Suite *s = suite_create("jitdump");
	TCase *t = tcase_create("core");

	tcase_add_test(t, test_node_style_dump);
	tcase_add_test(t, test_every_truncation);
	tcase_add_test(t, test_bad_headers);
	tcase_add_test(t, test_bad_records);
	tcase_add_test(t, test_v8_garbage_in_debug_names);
	tcase_add_test(t, test_file_rules);
	tcase_add_test(t, test_jit_lines_become_disjoint_functions);
	suite_add_tcase(s, t);
	return s;
}
