/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for the symbol tables (tools/symbols/symtab*.c): on ELF files
 * that cc builds into a temporary directory when the suite starts (functions
 * laid out in assembly, so that their addresses are known to the byte), on
 * stripped copies and separate debug files that strip and objcopy make of
 * them, on broken and hostile files, and on tables made by hand.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcprof.h"
#include "symbols/symtab_int.h"
#include "unit.h"

#define N(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * The program: functions of known sizes 64 or 16 bytes apart, each edge
 * case its own function:
 *   odd_end        3 bytes: ends at an odd address, padding after it
 *   bare_label     no size: reaches the next symbol, padding included
 *   split          with pieces split.cold and split.constprop.0.isra.0
 *   not.a.piece    a dot that is no compiler's suffix
 *   global_alias   also weak_alias and local_alias: the global one names it
 *   weak_two       also local_two: the weak one names it
 *   ns::thing::work(int), mangled, and its .cold piece
 * and main, which calls puts through the PLT.
 */
static const char prog_c[] =
	"#include <stdio.h>\n"
	"__asm__(\n"
	"\"	.pushsection .text\\n\"\n"
	"\"	.p2align 6\\n\"\n"
	"\"	.globl odd_end\\n\"\n"
	"\"	.type odd_end, %function\\n\"\n"
	"\"odd_end:\\n\"\n"
	"\"	.byte 0x90, 0x90, 0xc3\\n\"\n"
	"\"	.size odd_end, 3\\n\"\n"
	"\"	.p2align 6\\n\"\n"
	"\"	.type bare_label, %function\\n\"\n"
	"\"bare_label:\\n\"\n"
	"\"	.byte 0xc3\\n\"\n"
	"\"	.p2align 6\\n\"\n"
	"\"	.globl split\\n\"\n"
	"\"	.type split, %function\\n\"\n"
	"\"split:\\n\"\n"
	"\"	.byte 0x90, 0xc3\\n\"\n"
	"\"	.size split, 2\\n\"\n"
	"\"	.p2align 4\\n\"\n"
	"\"	.type split.cold, %function\\n\"\n"
	"\"split.cold:\\n\"\n"
	"\"	.byte 0xc3\\n\"\n"
	"\"	.size split.cold, 1\\n\"\n"
	"\"	.p2align 4\\n\"\n"
	"\"	.type split.constprop.0.isra.0, %function\\n\"\n"
	"\"split.constprop.0.isra.0:\\n\"\n"
	"\"	.byte 0xc3\\n\"\n"
	"\"	.size split.constprop.0.isra.0, 1\\n\"\n"
	"\"	.p2align 4\\n\"\n"
	"\"	.type not.a.piece, %function\\n\"\n"
	"\"not.a.piece:\\n\"\n"
	"\"	.byte 0xc3\\n\"\n"
	"\"	.size not.a.piece, 1\\n\"\n"
	"\"	.p2align 4\\n\"\n"
	"\"	.type local_alias, %function\\n\"\n"
	"\"	.weak weak_alias\\n\"\n"
	"\"	.type weak_alias, %function\\n\"\n"
	"\"	.globl global_alias\\n\"\n"
	"\"	.type global_alias, %function\\n\"\n"
	"\"local_alias:\\n\"\n"
	"\"weak_alias:\\n\"\n"
	"\"global_alias:\\n\"\n"
	"\"	.byte 0xc3\\n\"\n"
	"\"	.size local_alias, 1\\n\"\n"
	"\"	.size weak_alias, 1\\n\"\n"
	"\"	.size global_alias, 1\\n\"\n"
	"\"	.p2align 4\\n\"\n"
	"\"	.type local_two, %function\\n\"\n"
	"\"	.weak weak_two\\n\"\n"
	"\"	.type weak_two, %function\\n\"\n"
	"\"local_two:\\n\"\n"
	"\"weak_two:\\n\"\n"
	"\"	.byte 0xc3\\n\"\n"
	"\"	.size local_two, 1\\n\"\n"
	"\"	.size weak_two, 1\\n\"\n"
	"\"	.p2align 4\\n\"\n"
	"\"	.globl _ZN2ns5thing4workEi\\n\"\n"
	"\"	.type _ZN2ns5thing4workEi, %function\\n\"\n"
	"\"_ZN2ns5thing4workEi:\\n\"\n"
	"\"	.byte 0xc3\\n\"\n"
	"\"	.size _ZN2ns5thing4workEi, 1\\n\"\n"
	"\"	.p2align 4\\n\"\n"
	"\"	.type _ZN2ns5thing4workEi.cold, %function\\n\"\n"
	"\"_ZN2ns5thing4workEi.cold:\\n\"\n"
	"\"	.byte 0xc3\\n\"\n"
	"\"	.size _ZN2ns5thing4workEi.cold, 1\\n\"\n"
	"\"	.popsection\\n\");\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	puts(argv[0]);\n"
	"	return argc > 5;\n"
	"}\n";

/* A library with exported functions and a static one between them, for
 * the unwind tables of a stripped copy: the static one's hint names the
 * export before it, error. */
static const char lib_c[] =
	"__attribute__((noinline)) int\n"
	"error(int x)\n"
	"{\n"
	"	return x * 3;\n"
	"}\n"
	"__attribute__((noinline, noclone, used)) static int\n"
	"hidden_work(int x)\n"
	"{\n"
	"	volatile int v = x;\n"
	"	for (int i = 0; i < x; i++)\n"
	"		v += i * v;\n"
	"	return v;\n"
	"}\n"
	"int exported_fn(int x)\n"
	"{\n"
	"	return hidden_work(x) + 1;\n"
	"}\n";

/* Another program, whose debug file is not prog's. */
static const char other_c[] = "int main(void) { return 3; }\n";

static char dir[1024];		/* the programs, made by the fixture */
static char path_buf[8][2048];

/* dir/name in one of a few rotating buffers. */
static const char *
at(const char *name)
{
	static int k;
	char *p = path_buf[k++ % N(path_buf)];

	snprintf(p, sizeof(path_buf[0]), "%s/%s", dir, name);
	return p;
}

static void
sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Run a shell command in dir; it must succeed. */
static void
sh(const char *fmt, ...)
{
	char cmd[8192];
	int n = snprintf(cmd, sizeof(cmd), "cd '%s' && ", dir);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
	va_end(ap);
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
}

static void
put(const char *name, const void *buf, size_t len)
{
	FILE *f = fopen(at(name), "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

static unsigned char *
slurp(const char *name, size_t *len)
{
	FILE *f = fopen(at(name), "r");
	unsigned char *buf;
	long n;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_gt(n, 0);
	rewind(f);
	buf = malloc((size_t)n);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/*
 * Built once for the tests of the tcase, in the parent process:
 *   prog            the program, with .symtab and a build-id
 *   prog-stripped   strip's copy: .dynsym (imports only) and unwind tables
 *   link/prog       stripped, with a .gnu_debuglink to link/prog.debug
 *   bid/prog        stripped, its debug file under root/.build-id/
 *   wrong/prog      stripped, its debuglink naming another build's debug file
 *   libt.so, libt-stripped.so   the library and strip's copy
 */
static void
programs_build(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/pc-unit-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	put("prog.c", prog_c, strlen(prog_c));
	put("lib.c", lib_c, strlen(lib_c));
	sh("cc -O1 -g -fPIE -pie -Wl,--build-id=sha1 -o prog prog.c");
	put("other.c", other_c, strlen(other_c));
	sh("cc -O1 -g -fPIE -pie -Wl,--build-id=sha1 -o other other.c");
	sh("cc -O1 -g -fPIC -shared -Wl,--build-id=sha1 -o libt.so lib.c");
	sh("strip -o prog-stripped prog && strip -o libt-stripped.so libt.so");
	sh("mkdir link bid wrong && objcopy --only-keep-debug prog link/prog.debug &&"
	   " strip -o link/prog prog && cd link &&"
	   " objcopy --add-gnu-debuglink=prog.debug prog");
	sh("cp prog-stripped bid/prog && mkdir -p root/.build-id && cp link/prog.debug root/");
	sh("objcopy --only-keep-debug other other.debug && cp link/prog wrong/prog &&"
	   " cp other.debug wrong/prog.debug");
}

static int
rm_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	return remove(path);
}

static void
programs_remove(void)
{
	if (dir[0])
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	dir[0] = 0;
}

/* What symtab_load promises of any table it returns. */
static void
check_table(const struct symtab *st)
{
	for (size_t i = 0; i < st->nsyms; i++) {
		ck_assert_msg(st->syms[i].lo < st->syms[i].hi,
			      "symbol %zu empty", i);
		ck_assert_uint_lt(st->syms[i].func, st->nfuncs);
		ck_assert_msg(i == 0 || st->syms[i - 1].hi <= st->syms[i].lo,
			      "symbols %zu and %zu overlap", i - 1, i);
	}
	for (size_t i = 0; i < st->nfuncs; i++)
		ck_assert(st->funcs[i] && st->funcs[i][0]);
}

static void
load(struct symtab *st, const char *name, const struct symtab_opts *o)
{
	char err[256] = "";

	ck_assert_msg(symtab_load(st, at(name), o, err, sizeof(err)) == 0, "%s: %s",
		      name, err);
	check_table(st);
}

/* The k-th symbol (by address) of the function named name, or NULL. */
static const struct sym *
sym_of(const struct symtab *st, const char *name, int k)
{
	for (size_t i = 0; i < st->nsyms; i++)
		if (!strcmp(st->funcs[st->syms[i].func], name) && k-- == 0)
			return &st->syms[i];
	return NULL;
}

static const struct sym *
must(const struct symtab *st, const char *name, int k)
{
	const struct sym *s = sym_of(st, name, k);

	ck_assert_msg(s, "no symbol %d of '%s' (source %s)", k, name,
		      st->source);
	return s;
}

static int
has_func(const struct symtab *st, const char *name)
{
	for (size_t i = 0; i < st->nfuncs; i++)
		if (!strcmp(st->funcs[i], name))
			return 1;
	return 0;
}

/* The function at addr, by name, or NULL where no symbol covers it. */
static const char *
name_at(const struct symtab *st, uint64_t addr)
{
	long i = symtab_find(st, addr);

	return i < 0 ? NULL : st->funcs[st->syms[i].func];
}

START_TEST(test_symtab_reads_extents_to_the_byte)
{
	struct symtab st;
	const struct sym *odd, *bare, *split;

	load(&st, "prog", NULL);
	ck_assert_str_eq(st.source, ".symtab");
	ck_assert_ptr_null(st.debug_path);
	ck_assert_uint_eq(st.build_id_len, 20);
	odd = must(&st, "odd_end", 0);
	bare = must(&st, "bare_label", 0);
	split = must(&st, "split", 0);
	ck_assert_uint_eq(odd->lo % 64, 0);
	ck_assert_uint_eq(odd->hi, odd->lo + 3);
	ck_assert_str_eq(name_at(&st, odd->lo), "odd_end");
	ck_assert_str_eq(name_at(&st, odd->lo + 2), "odd_end");
	/* the padding after an odd end is no function's */
	ck_assert_ptr_null(name_at(&st, odd->lo + 3));
	ck_assert_ptr_null(name_at(&st, odd->lo + 63));
	ck_assert_uint_eq(bare->lo, odd->lo + 64);
	/* a label without a size reaches the next symbol */
	ck_assert_uint_eq(bare->hi, bare->lo + 64);
	ck_assert_uint_eq(split->lo, bare->hi);
	ck_assert_str_eq(name_at(&st, bare->lo + 63), "bare_label");
	ck_assert_uint_eq(split->hi, split->lo + 2);
	ck_assert_ptr_null(name_at(&st, 0));
	ck_assert_ptr_null(name_at(&st, 1));
	symtab_release(&st);
	ck_assert_uint_eq(st.nsyms, 0);
	ck_assert_ptr_null(st.syms);
}
END_TEST

START_TEST(test_symtab_folds_pieces_unless_asked)
{
	static const struct symtab_opts keep = { .keep_pieces = 1 };
	struct symtab st;
	const struct sym *split;

	load(&st, "prog", NULL);
	split = must(&st, "split", 0);
	/* split, split.cold and split.constprop.0.isra.0: one function */
	ck_assert_uint_eq(must(&st, "split", 1)->lo, split->lo + 16);
	ck_assert_uint_eq(must(&st, "split", 2)->lo, split->lo + 32);
	ck_assert_ptr_null(sym_of(&st, "split", 3));
	ck_assert(!has_func(&st, "split.cold"));
	ck_assert_uint_eq(must(&st, "not.a.piece", 0)->lo, split->lo + 48);
	symtab_release(&st);

	load(&st, "prog", &keep);
	split = must(&st, "split", 0);
	ck_assert_ptr_null(sym_of(&st, "split", 1));
	ck_assert_uint_eq(must(&st, "split.cold", 0)->lo, split->lo + 16);
	ck_assert_uint_eq(must(&st, "split.constprop.0.isra.0", 0)->lo,
			  split->lo + 32);
	ck_assert(has_func(&st, "not.a.piece"));
	symtab_release(&st);
}
END_TEST

/* Of names at one address the global wins, then the weak, then the local. */
START_TEST(test_symtab_names_aliases_by_binding)
{
	struct symtab st;
	const struct sym *g, *w;

	load(&st, "prog", NULL);
	g = must(&st, "global_alias", 0);
	w = must(&st, "weak_two", 0);
	ck_assert_uint_eq(g->lo, must(&st, "not.a.piece", 0)->lo + 16);
	ck_assert_uint_eq(w->lo, g->lo + 16);
	ck_assert(!has_func(&st, "weak_alias") &&
		  !has_func(&st, "local_alias"));
	ck_assert(!has_func(&st, "local_two"));
	symtab_release(&st);
}
END_TEST

START_TEST(test_symtab_demangles_and_shortens_cxx_names)
{
	static const struct symtab_opts full = { .full_names = 1 };
	static const struct symtab_opts raw = { .no_demangle = 1 };
	static const struct symtab_opts keep = { .keep_pieces = 1 };
	struct symtab st;
	const struct sym *w;

	load(&st, "prog", NULL);
	w = must(&st, "ns::thing::work", 0);
	ck_assert_uint_eq(w->lo, must(&st, "weak_two", 0)->lo + 16);
	/* the .cold piece folds into it before demangling */
	ck_assert_uint_eq(must(&st, "ns::thing::work", 1)->lo, w->lo + 16);
	symtab_release(&st);
	load(&st, "prog", &full);
	ck_assert(has_func(&st, "ns::thing::work(int)"));
	symtab_release(&st);
	load(&st, "prog", &raw);
	ck_assert_ptr_nonnull(sym_of(&st, "_ZN2ns5thing4workEi", 1));
	symtab_release(&st);
	load(&st, "prog", &keep);
	ck_assert(has_func(&st, "ns::thing::work"));
	ck_assert(has_func(&st, "ns::thing::work [clone .cold]"));
	symtab_release(&st);
}
END_TEST

START_TEST(test_symtab_names_plt_stubs)
{
#if defined(__x86_64__)
	struct symtab st;
	uint64_t lo;

	load(&st, "prog", NULL);
	lo = must(&st, "puts@plt", 0)->lo;
	ck_assert_uint_eq(must(&st, "puts@plt", 0)->hi, lo + 16);
	symtab_release(&st);
	/* from .dynsym and .rela.plt, which strip keeps */
	load(&st, "prog-stripped", NULL);
	ck_assert_uint_eq(must(&st, "puts@plt", 0)->lo, lo);
	symtab_release(&st);
#endif
}
END_TEST

/*
 * A stripped program exports nothing: its functions come from the unwind
 * tables, one per FDE, named after the file and their offset. Code with no
 * FDE (the assembly above) is no function's.
 */
START_TEST(test_symtab_stripped_program_uses_unwind_tables)
{
	struct symtab st, sst;
	const struct sym *m;
	char want[64];

	load(&st, "prog", NULL);
	m = must(&st, "main", 0);
	load(&sst, "prog-stripped", NULL);
	ck_assert_str_eq(sst.source, "unwind tables");
	ck_assert(sst.build_id_len == st.build_id_len &&
		  !memcmp(sst.build_id, st.build_id, st.build_id_len));
	snprintf(want, sizeof(want), "prog-stripped+0x%llx",
		 (unsigned long long)m->lo);
	ck_assert_str_eq(name_at(&sst, m->lo), want);
	ck_assert_uint_eq(sst.syms[symtab_find(&sst, m->lo)].lo, m->lo);
	ck_assert_uint_eq(sst.syms[symtab_find(&sst, m->lo)].hi, m->hi);
	ck_assert_ptr_null(name_at(&sst, must(&st, "odd_end", 0)->lo));
	ck_assert(!has_func(&sst, "main"));
	symtab_release(&sst);
	symtab_release(&st);
}
END_TEST

/* A stripped library: exported functions by name, the static one from
 * the unwind tables at the extent .symtab gave it. */
START_TEST(test_symtab_stripped_library_keeps_exports)
{
	struct symtab st, sst;
	const struct sym *h, *x;
	const char *name;
	char want[64];
	size_t k;

	load(&st, "libt.so", NULL);
	h = must(&st, "hidden_work", 0);
	x = must(&st, "exported_fn", 0);
	load(&sst, "libt-stripped.so", NULL);
	ck_assert_str_eq(sst.source, ".dynsym and unwind tables");
	ck_assert(!has_func(&sst, "hidden_work"));
	ck_assert_uint_eq(must(&sst, "exported_fn", 0)->lo, x->lo);
	ck_assert_uint_eq(must(&sst, "exported_fn", 0)->hi, x->hi);
	name = name_at(&sst, h->lo);
	ck_assert_ptr_nonnull(name);
	k = (size_t)snprintf(want, sizeof(want), "libt-stripped.so+0x%llx",
			     (unsigned long long)h->lo);
	ck_assert_msg(!strncmp(name, want, k) && (!name[k] || name[k] == ' '),
		      "'%s', want '%s'", name, want);
	/* the hint quotes the export before it: a symbol named error must
	 * not read as an error path */
	ck_assert_msg(!strcmp(name + k, " (after 'error')"), "'%s': want the hint "
		      "\" (after 'error')\"", name);
	ck_assert_uint_eq(sst.syms[symtab_find(&sst, h->lo)].lo, h->lo);
	ck_assert_uint_eq(sst.syms[symtab_find(&sst, h->lo)].hi, h->hi);
	symtab_release(&sst);
	symtab_release(&st);
}
END_TEST

/* The symbols of a stripped program from its debug file, found by
 * .gnu_debuglink beside it or by build-id under the debug root. */
START_TEST(test_symtab_finds_debug_files)
{
	struct symtab st, dst;
	struct symtab_opts o = { 0 };
	char root[2048], id[48], bid[4096], want[PATH_MAX];

	snprintf(root, sizeof(root), "%s/root", dir);
	o.debug_root = root;
	load(&st, "prog", &o);
	load(&dst, "link/prog", &o);
	ck_assert_str_eq(dst.source, "debug file");
	ck_assert_ptr_nonnull(dst.debug_path);
	ck_assert_ptr_nonnull(realpath(at("link/prog.debug"), want));
	ck_assert_str_eq(dst.debug_path, want);
	ck_assert_uint_eq(must(&dst, "odd_end", 0)->lo,
			  must(&st, "odd_end", 0)->lo);
	ck_assert_uint_eq(must(&dst, "split", 2)->lo,
			  must(&st, "split", 2)->lo);
	symtab_release(&dst);

	/* root/.build-id/xx/yyyy....debug */
	for (size_t i = 0; i < st.build_id_len; i++)
		sprintf(id + 2 * i, "%02x", st.build_id[i]);
	sh("mkdir -p root/.build-id/%.2s && mv root/prog.debug root/.build-id/%.2s/%s.debug",
	   id, id, id + 2);
	snprintf(bid, sizeof(bid), "%s/.build-id/%.2s/%s.debug", root, id,
		 id + 2);
	load(&dst, "bid/prog", &o);
	ck_assert_str_eq(dst.source, "debug file");
	ck_assert_str_eq(dst.debug_path, bid);
	ck_assert_uint_eq(must(&dst, "main", 0)->lo, must(&st, "main", 0)->lo);
	symtab_release(&dst);
	sh("mv root/.build-id/%.2s/%s.debug root/prog.debug", id, id + 2);
	symtab_release(&st);
}
END_TEST

/* A debug file of another build is not believed. */
START_TEST(test_symtab_refuses_debug_file_of_another_build)
{
	struct symtab st;
	struct symtab_opts o = { .debug_root = "/nonexistent" };

	load(&st, "wrong/prog", &o);
	ck_assert_str_eq(st.source, "unwind tables");
	ck_assert_ptr_null(st.debug_path);
	ck_assert(!has_func(&st, "odd_end"));
	symtab_release(&st);
}
END_TEST

static void
load_fails(const char *path, const char *want)
{
	struct symtab st;
	char err[256] = "";

	ck_assert_int_eq(symtab_load(&st, path, NULL, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, want), "'%s': error '%s', want '%s'", path,
		      err, want);
	ck_assert_uint_eq(st.nsyms, 0);
	ck_assert_ptr_null(st.syms);
}

START_TEST(test_symtab_load_refuses_what_is_no_elf_file)
{
	static const char text[] = "#!/bin/sh\necho not ELF\n";

	put("text", text, sizeof(text) - 1);
	put("empty", "", 0);
	load_fails(at("text"), "not an ELF file");
	load_fails(at("empty"), "empty file");
	load_fails(dir, "is a directory");
	load_fails(at("missing"), strerror(ENOENT));
	load_fails("/dev/null", "not a regular file");
}
END_TEST

/* The header of a 32-bit, big-endian or i386 file: a foreign file. */
START_TEST(test_symtab_load_refuses_foreign_elf)
{
	static const struct { int off, byte; } edits[] = {
		{ 4, 1 },	/* EI_CLASS: ELFCLASS32 */
		{ 5, 2 },	/* EI_DATA: ELFDATA2MSB */
		{ 18, 3 },	/* e_machine: EM_386 */
	};
	size_t len;
	unsigned char *buf = slurp("prog", &len);

	for (size_t i = 0; i < N(edits); i++) {
		unsigned char *copy = malloc(len);
		struct symtab st;
		char err[256] = "";

		ck_assert_ptr_nonnull(copy);
		memcpy(copy, buf, len);
		copy[edits[i].off] = (unsigned char)edits[i].byte;
		put("foreign", copy, len);
		ck_assert_int_eq(
			symtab_load(&st, at("foreign"), NULL, err, sizeof(err)),
			-1);
		ck_assert_msg(strstr(err, "foreign ELF file") || strstr(err, "bad ELF header"),
			      "edit %zu: %s", i, err);
		ck_assert_int_eq(
			symtab_load_mem(&st, copy, len, NULL, err, sizeof(err)),
			-1);
		free(copy);
	}
	free(buf);
}
END_TEST

/*
 * Every prefix of the program and of its stripped copy (the section
 * headers are at the end: most prefixes have none), and copies with bytes
 * changed at random: each loads or fails with a reason, never crashes, and
 * what loads keeps the table's promises.
 */
START_TEST(test_symtab_survives_truncated_and_corrupt_files)
{
	static const char *const files[] = { "prog", "prog-stripped", "libt-stripped.so" };
	uint64_t x = 88172645463325252ull;

	for (size_t f = 0; f < N(files); f++) {
		size_t len;
		unsigned char *buf = slurp(files[f], &len);
		unsigned char *copy = malloc(len);
		struct symtab st;
		char err[256];

		ck_assert_ptr_nonnull(copy);
		for (size_t n = 0; n < len; n += n < 256 ? 1 : 97) {
			memcpy(copy, buf, n);
			err[0] = 0;
			if (symtab_load_mem(&st, copy, n, NULL, err,
					    sizeof(err)) == 0) {
				check_table(&st);
				symtab_release(&st);
			} else {
				ck_assert_msg(err[0],
					      "%s, %zu bytes: no reason",
					      files[f], n);
			}
		}
		/* cut short of its section headers, a file has no symbols
		 * to give: today an empty table, which the report notes,
		 * rather than an error; never symbols made up */
		put("truncated", buf, len - 1);
		err[0] = 0;
		if (symtab_load(&st, at("truncated"), NULL, err, sizeof(err)) ==
		    0) {
			ck_assert_uint_eq(st.nsyms, 0);
			ck_assert_str_eq(st.source, "no symbols");
			symtab_release(&st);
		} else {
			ck_assert(err[0]);
		}
		for (int k = 0; k < 300; k++) {
			memcpy(copy, buf, len);
			for (int j = 0; j < 8; j++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				copy[x % len] = (unsigned char)(x >> 40);
			}
			err[0] = 0;
			if (symtab_load_mem(&st, copy, len, NULL, err,
					    sizeof(err)) == 0) {
				check_table(&st);
				symtab_release(&st);
			} else {
				ck_assert_msg(err[0],
					      "%s, mutation %d: no reason",
					      files[f], k);
			}
		}
		free(copy);
		free(buf);
	}
}
END_TEST

START_TEST(test_elf_probe_dynamic_tells_what_can_preload)
{
	static const char text[] = "not ELF\n";

	put("text", text, sizeof(text) - 1);
	ck_assert_int_eq(elf_probe_dynamic(at("prog")), 1);
	ck_assert_int_eq(elf_probe_dynamic(at("prog-stripped")), 1);
	/* a library has no dynamic linker of its own */
	ck_assert_int_eq(elf_probe_dynamic(at("libt.so")), 0);
	ck_assert_int_eq(elf_probe_dynamic(at("text")), -1);
	ck_assert_int_eq(elf_probe_dynamic(at("missing")), -1);
}
END_TEST

/*
 * Demangled names as pprof shows them. Edge cases: templates, parameters
 * and qualifiers; return types; clones kept or not; operators spelled with
 * brackets and words; lambdas and anonymous namespaces, whose brackets
 * stay; and what cannot be shortened safely (a function returning a
 * function pointer), which comes back whole.
 */
static const struct {
	const char *name, *want, *want_clones;
} short_cases[] = {
	{ "std::vector<int>::push_back(int const&)", "std::vector::push_back",
	  NULL },
	{ "foo()", "foo", NULL },
	{ "plain", "plain", NULL },
	{ "foo(int) [clone .cold]", "foo", "foo [clone .cold]" },
	{ "ns::f(int) [clone .isra.0] [clone .cold]", "ns::f",
	  "ns::f [clone .isra.0] [clone .cold]" },
	{ "work(int) [clone ._omp_fn.0]", "work [clone ._omp_fn.0]", NULL },
	{ "work(int) [clone ._omp_fn.1] [clone .cold]",
	  "work [clone ._omp_fn.1]", "work [clone ._omp_fn.1] [clone .cold]" },
	{ "unsigned long shapes::accumulate<float>(float const*, int)",
	  "shapes::accumulate", NULL },
	{ "shapes::circle::area() const", "shapes::circle::area", NULL },
	{ "std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
	  "<std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, "
	  "char const*)",
	  "std::operator<<", NULL },
	{ "bool operator< <int>(pair<int> const&, pair<int> const&)",
	  "operator<", NULL },
	{ "ns::klass::operator()(int) const", "ns::klass::operator()", NULL },
	{ "operator new[](unsigned long)", "operator new[]", NULL },
	{ "ns::klass::operator unsigned long() const",
	  "ns::klass::operator unsigned long", NULL },
	{ "ns::klass::operator->() const", "ns::klass::operator->", NULL },
	{ "(anonymous namespace)::helper(int)", "(anonymous namespace)::helper",
	  NULL },
	{ "main::{lambda(int, int)#1}::operator()(int, int) const",
	  "main::{lambda(int, int)#1}::operator()", NULL },
	{ "void (*signal_handler(int))(int)",
	  "void (*signal_handler(int))(int)", NULL },
};

START_TEST(test_symtab_short_name_as_pprof_shows_it)
{
	const char *want = short_cases[_i].want;
	const char *clones = short_cases[_i].want_clones ?
				     short_cases[_i].want_clones :
				     want;
	char *s = symtab_short_name(short_cases[_i].name, 0);
	char *k = symtab_short_name(short_cases[_i].name, 1);

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(k);
	ck_assert_msg(!strcmp(s, want), "'%s': '%s', want '%s'",
		      short_cases[_i].name, s, want);
	ck_assert_msg(!strcmp(k, clones),
		      "'%s' keeping clones: '%s', want '%s'",
		      short_cases[_i].name, k, clones);
	free(s);
	free(k);
}
END_TEST

/*
 * The names symbols show, pieces folded or kept. Edge cases: a piece's
 * tags with numbers after them; a bare number, which is no piece (gcc's
 * OpenMP regions, a nested function); a piece of a region; a symbol
 * version; a mangled region.
 */
static const struct {
	const char *name, *want, *want_kept;
} display_cases[] = {
	{ "split.cold", "split", "split.cold" },
	{ "split.constprop.0.isra.0", "split", "split.constprop.0.isra.0" },
	{ "f.lto_priv.0", "f", "f.lto_priv.0" },
	{ "work._omp_fn.0", "work._omp_fn.0", "work._omp_fn.0" },
	{ "work._omp_fn.1", "work._omp_fn.1", "work._omp_fn.1" },
	{ "work._omp_fn.1.cold", "work._omp_fn.1", "work._omp_fn.1.cold" },
	{ "inner.0", "inner.0", "inner.0" },
	{ "not.a.piece", "not.a.piece", "not.a.piece" },
	{ "memcpy@@GLIBC_2.14", "memcpy", "memcpy" },
	{ "_Z4worki._omp_fn.2", "work [clone ._omp_fn.2]", "work [clone ._omp_fn.2]" },
};

START_TEST(test_symtab_display_name_keeps_numbered_regions)
{
	static const struct symtab_opts fold = { 0 },
					keep = { .keep_pieces = 1 };
	const char *want = display_cases[_i].want,
		   *name = display_cases[_i].name;
	const char *kept = display_cases[_i].want_kept;
	char *s = sym_display_name(name, &fold);
	char *k = sym_display_name(name, &keep);

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(k);
	ck_assert_msg(!strcmp(s, want), "'%s': '%s', want '%s'", name, s, want);
	ck_assert_msg(!strcmp(k, kept), "'%s' kept: '%s', want '%s'", name, k,
		      kept);
	free(s);
	free(k);
}
END_TEST

/* Lookups in a table made by hand: at each edge of each symbol, in the
 * gap between two, past the last, and in an empty table. */
START_TEST(test_symtab_find_at_the_edges)
{
	static const struct unit_sym syms[] = {
		{ 0x1000, 0x1003, "a" },
		{ 0x1003, 0x1010, "b" },
		{ 0x1020, 0x1030, "c" },
	};
	static const struct {
		uint64_t addr;
		long find;
		size_t after;
	} cases[] = {
		{ 0, -1, 0 },      { 0xfff, -1, 0 },  { 0x1000, 0, 0 },
		{ 0x1002, 0, 0 },  { 0x1003, 1, 1 },  { 0x100f, 1, 1 },
		{ 0x1010, -1, 2 }, { 0x101f, -1, 2 }, { 0x1020, 2, 2 },
		{ 0x102f, 2, 2 },  { 0x1030, -1, 3 }, { UINT64_MAX, -1, 3 },
	};
	struct symtab st;

	unit_symtab(&st, syms, N(syms));
	for (size_t i = 0; i < N(cases); i++) {
		ck_assert_msg(symtab_find(&st, cases[i].addr) == cases[i].find,
			      "find %#llx: %ld",
			      (unsigned long long)cases[i].addr,
			      symtab_find(&st, cases[i].addr));
		ck_assert_uint_eq(symtab_first_after(&st, cases[i].addr),
				  cases[i].after);
	}
	symtab_release(&st);
	unit_symtab(&st, NULL, 0);
	ck_assert_int_eq(symtab_find(&st, 0x1000), -1);
	ck_assert_uint_eq(symtab_first_after(&st, 0x1000), 0);
	symtab_release(&st);
}
END_TEST

/*
 * A whole process (PC_SCOPE=all): each object's symbols moved to its own
 * range, the code between them named after the object, and its functions
 * labelled with it.
 */
START_TEST(test_symtab_objects_place_each_object_apart)
{
	static const struct unit_sym exe[] = { { 0x1000, 0x1100, "main" } };
	static const struct unit_sym lib[] = {
		{ 0x100, 0x200, "inflate" }, { 0x300, 0x400, "deflate" },
	};
	const uint64_t base = UINT64_C(1) << GMON_OBJ_SHIFT;
	struct symtab st, src;
	uint32_t obj = 99;
	char buf[256];

	unit_symtab(&st, exe, N(exe));
	ck_assert_int_eq(symtab_objects_begin(&st, "prog"), 0);
	ck_assert_uint_eq(st.nobjs, 1);
	unit_symtab(&src, lib, N(lib));
	ck_assert_int_eq(symtab_objects_add(&st, &src, "libz.so.1", "[libz.so.1]",
					    GMON_OBJ_SHIFT, &obj), 0);
	ck_assert_uint_eq(obj, 1);
	ck_assert_ptr_null(src.syms);
	check_table(&st);
	ck_assert_str_eq(name_at(&st, 0x1050), "main");
	ck_assert_str_eq(name_at(&st, base), "[libz.so.1]");
	ck_assert_str_eq(name_at(&st, base + 0x150), "inflate");
	ck_assert_str_eq(name_at(&st, base + 0x250), "[libz.so.1]");
	ck_assert_str_eq(name_at(&st, base + 0x3ff), "deflate");
	ck_assert_str_eq(name_at(&st, 2 * base - 1), "[libz.so.1]");
	ck_assert_ptr_null(name_at(&st, 0x2000));
	ck_assert_str_eq(
		func_label(&st, st.syms[symtab_find(&st, base + 0x150)].func,
			   buf, sizeof(buf)),
		"inflate (libz.so.1)");
	ck_assert_str_eq(func_label(&st, st.syms[symtab_find(&st, base)].func,
				    buf, sizeof(buf)),
			 "[libz.so.1]");
	ck_assert_str_eq(func_label(&st, st.syms[symtab_find(&st, 0x1000)].func,
				    buf, sizeof(buf)),
			 "main");
	/* an object without symbols is one gap */
	ck_assert_int_eq(symtab_objects_add(&st, NULL, "[vdso]", "[vdso]",
					    GMON_OBJ_SHIFT, &obj),
			 0);
	ck_assert_uint_eq(obj, 2);
	ck_assert_str_eq(name_at(&st, 2 * base + 0x10), "[vdso]");
	ck_assert_str_eq(st.objnames[2], "[vdso]");
	check_table(&st);
	symtab_release(&st);
}
END_TEST

Suite *
symtab_suite(void)
{
	Suite *s = suite_create("symtab");
	TCase *t = tcase_create("tables");
	void *h;

	tcase_add_loop_test(t, test_symtab_short_name_as_pprof_shows_it, 0,
			    (int)N(short_cases));
	tcase_add_loop_test(t, test_symtab_display_name_keeps_numbered_regions,
			    0,
			    sizeof(display_cases) / sizeof(display_cases[0]));
	tcase_add_test(t, test_symtab_find_at_the_edges);
	tcase_add_test(t, test_symtab_objects_place_each_object_apart);
	suite_add_tcase(s, t);

	if (!unit_have("command -v cc >/dev/null && command -v strip >/dev/null &&"
		       " command -v objcopy >/dev/null")) {
		unit_skip("symtab: the tests on ELF files", "cc, strip or objcopy not found");
		return s;
	}
	t = tcase_create("elf");
	tcase_add_unchecked_fixture(t, programs_build, programs_remove);
	tcase_add_test(t, test_symtab_reads_extents_to_the_byte);
	tcase_add_test(t, test_symtab_folds_pieces_unless_asked);
	tcase_add_test(t, test_symtab_names_aliases_by_binding);
	if ((h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL))) {
		dlclose(h);
		tcase_add_test(t, test_symtab_demangles_and_shortens_cxx_names);
	} else {
		unit_skip("test_symtab_demangles_and_shortens_cxx_names",
			  "no libstdc++.so.6 to demangle with");
	}
	tcase_add_test(t, test_symtab_names_plt_stubs);
	tcase_add_test(t, test_symtab_stripped_program_uses_unwind_tables);
	tcase_add_test(t, test_symtab_stripped_library_keeps_exports);
	tcase_add_test(t, test_symtab_finds_debug_files);
	tcase_add_test(t, test_symtab_refuses_debug_file_of_another_build);
	tcase_add_test(t, test_symtab_load_refuses_what_is_no_elf_file);
	tcase_add_test(t, test_symtab_load_refuses_foreign_elf);
	tcase_add_test(t, test_symtab_survives_truncated_and_corrupt_files);
	tcase_add_test(t, test_elf_probe_dynamic_tells_what_can_preload);
	tcase_set_timeout(t, 120);
	suite_add_tcase(s, t);
	return s;
}
