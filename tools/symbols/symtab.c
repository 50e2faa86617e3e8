/*
 * Symbols for pcprof, from ELF files through libelf: .symtab, else a
 * separate debug file (build-id path or .gnu_debuglink), else .dynsym; where
 * only .dynsym is there (a stripped program or library), the code it does
 * not cover gets functions from the unwind tables (one FDE, one function,
 * its extent from elfutils' libdw), named OBJECT+0xOFFSET. Debug files are
 * looked for by build-id and .gnu_debuglink, then on the debuginfod
 * servers of DEBUGINFOD_URLS (libdebuginfod).
 * The ELF file may be hostile: libelf bounds every section, and every index
 * or string taken from the file is checked before it is used.
 */
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/symtab.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif
#ifndef R_X86_64_JUMP_SLOT
#define R_X86_64_JUMP_SLOT 7
#endif

/* A symbol as read, before duplicates are dropped and extents settled. */
struct raw {
	uint64_t lo, size;
	char *name;		/* owned */
	int prio;		/* which of several names at one address wins;
				 * PRIO_LITERAL: a made-up name, shown as it is */
};

#define PRIO_LITERAL	(-1)

struct rawvec {
	struct raw *v;
	size_t n, cap;
};

/* What one ELF file offers. */
struct elfinfo {
	int machine;
	int has_symtab;
	uint8_t build_id[20];
	size_t build_id_len;
	char debuglink[256];
	uint64_t text_end;	/* end of the last executable section */
	uint64_t base;		/* lowest PT_LOAD address: offsets count from it */
};

static int
fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

static int
raw_push(struct rawvec *rv, uint64_t lo, uint64_t size, const char *name, int prio)
{
	if (rv->n == rv->cap) {
		size_t cap = rv->cap ? rv->cap * 2 : 1024;
		struct raw *v = realloc(rv->v, cap * sizeof(*v));

		if (!v)
			return -1;
		rv->v = v;
		rv->cap = cap;
	}
	if (!(rv->v[rv->n].name = strdup(name)))
		return -1;
	rv->v[rv->n].lo = lo;
	rv->v[rv->n].size = size;
	rv->v[rv->n].prio = prio;
	rv->n++;
	return 0;
}

static void
raw_free(struct rawvec *rv)
{
	for (size_t i = 0; i < rv->n; i++)
		free(rv->v[i].name);
	free(rv->v);
	memset(rv, 0, sizeof(*rv));
}

static int
is_exec_section(Elf *e, size_t shndx)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return 0;
	scn = elf_getscn(e, shndx);
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

/* Function symbols of one symbol section. */
static int
read_symbols(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, struct rawvec *rv)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n;

	if (!d || !sh->sh_entsize)
		return 0;
	n = d->d_size / sh->sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym s;
		const char *name;
		int type, bind, prio;

		if (!gelf_getsym(d, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		bind = GELF_ST_BIND(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !s.st_value)
			continue;
		if (!is_exec_section(e, s.st_shndx))
			continue;
		name = elf_strptr(e, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		prio = bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : 1;
		if (raw_push(rv, s.st_value, s.st_size, name, prio))
			return -1;
	}
	return 0;
}

static Elf_Scn *
section_named(Elf *e, const char *want, GElf_Shdr *out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, out))
			continue;
		name = elf_strptr(e, shstrndx, out->sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

/*
 * name@plt for each lazy-binding slot: x86-64 lays PLT entries out in the
 * order of .rela.plt, 16 bytes each, in .plt.sec when the binary has one
 * (IBT) and otherwise in .plt after its 16-byte header.
 */
static int
read_plt(Elf *e, struct rawvec *rv)
{
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rel = section_named(e, ".rela.plt", &rsh);
	Elf_Scn *plt = section_named(e, ".plt.sec", &psh);
	Elf_Scn *dyn;
	Elf_Data *rd;
	uint64_t base;
	size_t n;

	if (!rel || rsh.sh_type != SHT_RELA || !rsh.sh_entsize)
		return 0;
	if (plt) {
		base = psh.sh_addr;
	} else if ((plt = section_named(e, ".plt", &psh))) {
		base = psh.sh_addr + 16;
	} else {
		return 0;
	}
	if (psh.sh_type != SHT_PROGBITS && psh.sh_type != SHT_NOBITS)
		return 0;
	dyn = elf_getscn(e, rsh.sh_link);
	if (!dyn || !gelf_getshdr(dyn, &dsh) || dsh.sh_type != SHT_DYNSYM)
		return 0;
	rd = elf_getdata(rel, NULL);
	if (!rd)
		return 0;
	n = rd->d_size / rsh.sh_entsize;
	for (size_t i = 0; i < n; i++) {
		Elf_Data *dd = elf_getdata(dyn, NULL);
		GElf_Rela r;
		GElf_Sym s;
		const char *name;
		char buf[512];

		if (!gelf_getrela(rd, (int)i, &r) || !dd)
			break;
		if (GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT)
			continue;
		if (base + 16 * (i + 1) > psh.sh_addr + psh.sh_size)
			break;
		if (!gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &s))
			continue;
		name = elf_strptr(e, dsh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		snprintf(buf, sizeof(buf), "%s@plt", name);
		if (raw_push(rv, base + 16 * i, 16, buf, 0))
			return -1;
	}
	return 0;
}

static void
read_notes(Elf *e, struct elfinfo *info)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		if (!(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + noff, "GNU", 4) &&
			    nh.n_descsz > 0) {
				size_t k = nh.n_descsz < sizeof(info->build_id) ?
					   nh.n_descsz : sizeof(info->build_id);

				memcpy(info->build_id, (char *)d->d_buf + doff, k);
				info->build_id_len = k;
				return;
			}
		}
	}
}

/* Everything one ELF image offers: notes, debuglink, symbols. */
static int
read_elf(Elf *e, struct elfinfo *info, struct rawvec *symtab,
	 struct rawvec *dynsym, struct rawvec *plt, char *err, size_t errlen)
{
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	memset(info, 0, sizeof(*info));
	if (elf_kind(e) != ELF_K_ELF)
		return fail(err, errlen, "not an ELF file");
	if (!gelf_getehdr(e, &eh))
		return fail(err, errlen, "bad ELF header: %s", elf_errmsg(-1));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64))
		return fail(err, errlen, "foreign ELF file (class %d, data %d, machine %d): "
			    "pcprof reads 64-bit little-endian x86-64 and AArch64 files",
			    eh.e_ident[EI_CLASS], eh.e_ident[EI_DATA], eh.e_machine);
	info->machine = eh.e_machine;
	read_notes(e, info);
	info->base = UINT64_MAX;
	{
		size_t nph = 0;

		if (elf_getphdrnum(e, &nph))
			nph = 0;
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    ph.p_vaddr < info->base)
				info->base = ph.p_vaddr;
		}
		if (info->base == UINT64_MAX)
			info->base = 0;
	}
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			return fail(err, errlen, "bad section header: %s", elf_errmsg(-1));
		if ((sh.sh_flags & SHF_EXECINSTR) && sh.sh_addr + sh.sh_size > info->text_end)
			info->text_end = sh.sh_addr + sh.sh_size;
		if (sh.sh_type == SHT_SYMTAB) {
			info->has_symtab = 1;
			if (symtab && read_symbols(e, scn, &sh, symtab))
				return fail(err, errlen, "out of memory");
		} else if (sh.sh_type == SHT_DYNSYM && dynsym) {
			if (read_symbols(e, scn, &sh, dynsym))
				return fail(err, errlen, "out of memory");
		}
	}
	if ((scn = section_named(e, ".gnu_debuglink", &sh)) && sh.sh_type != SHT_NOBITS) {
		Elf_Data *d = elf_getdata(scn, NULL);

		if (d && d->d_size > 0 && memchr(d->d_buf, 0, d->d_size) &&
		    strlen(d->d_buf) < sizeof(info->debuglink) && !strchr(d->d_buf, '/'))
			strcpy(info->debuglink, d->d_buf);
	}
	if (plt && info->machine == EM_X86_64 && read_plt(e, plt))
		return fail(err, errlen, "out of memory");
	return 0;
}

/* ------------------------------------------------------- names */

/* The function a compiler-split piece belongs to: foo.cold, foo.part.0,
 * foo.isra.0, foo.constprop.0.isra.0 and the like all give foo. */
static size_t
base_len(const char *name)
{
	static const char *const tags[] = {
		"cold", "part", "isra", "constprop", "lto_priv", "localalias",
	};
	const char *dot = strchr(name + 1, '.');

	while (dot) {
		const char *p = dot;
		int ok = 1;

		while (ok && *p == '.') {
			size_t k;

			p++;
			ok = 0;
			for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
				k = strlen(tags[i]);
				if (!strncmp(p, tags[i], k) && (p[k] == '.' || !p[k])) {
					p += k;
					ok = 1;
					break;
				}
			}
			if (!ok && *p >= '0' && *p <= '9') {
				while (*p >= '0' && *p <= '9')
					p++;
				ok = *p == '.' || !*p;
			}
		}
		if (ok && !*p)
			return (size_t)(dot - name);
		dot = strchr(dot + 1, '.');
	}
	return strlen(name);
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* libstdc++'s demangler, found at run time so that pcprof builds and runs
 * without a C++ toolchain; NULL when it is absent. */
static demangle_fn
demangler(void)
{
	static int tried;
	static demangle_fn fn;
	void *h;

	if (!tried) {
		tried = 1;
		h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (h)
			fn = (demangle_fn)dlsym(h, "__cxa_demangle");
	}
	return fn;
}

/* The length of name without a symbol version ("memcpy@@GLIBC_2.14",
 * "memcpy@GLIBC_2.2.5"), as .symtab of a shared library spells them. */
static size_t
unversioned_len(const char *name)
{
	const char *at = strchr(name, '@');

	if (!at || at == name)
		return strlen(name);
	if (at[1] == '@')
		at++;
	return at[1] >= 'A' && at[1] <= 'Z' ? (size_t)(strchr(name, '@') - name) : strlen(name);
}

static char *
display_name(const char *name, const struct symtab_opts *o)
{
	char *plain = strndup(name, unversioned_len(name));
	size_t k;
	char *base;
	demangle_fn dm;
	char *d;
	int status = -1;

	if (!plain)
		return NULL;
	k = o->keep_pieces ? strlen(plain) : base_len(plain);
	base = strndup(plain, k);
	free(plain);
	if (!base || o->no_demangle || strncmp(base, "_Z", 2) || !(dm = demangler()))
		return base;
	d = dm(base, NULL, NULL, &status);
	if (status == 0 && d) {
		char *sh = o->full_names ? d : symtab_short_name(d, o->keep_pieces);

		free(base);
		if (sh != d)
			free(d);
		return sh;
	}
	free(d);
	return base;
}

/* Whether name[i] starts the word "operator" (not part of a longer name). */
static int
at_operator(const char *name, size_t i)
{
	return !strncmp(name + i, "operator", 8) &&
	       (i == 0 || name[i - 1] == ':' || name[i - 1] == ' ') &&
	       !((name[i + 8] >= 'a' && name[i + 8] <= 'z') ||
		 (name[i + 8] >= 'A' && name[i + 8] <= 'Z') ||
		 (name[i + 8] >= '0' && name[i + 8] <= '9') || name[i + 8] == '_');
}

/*
 * What is left of a name once its brackets are gone is words: a return
 * type before the name ("unsigned long shapes::accumulate"), qualifiers
 * after it ("area const"), or an operator spelled with a word ("operator
 * new", "operator unsigned long"). Keeps the name, in place.
 */
static void
short_words(char *out)
{
	static const char *const quals[] = { "const", "volatile", "&", "&&", "noexcept" };
	size_t from = 0, k;
	char *sp;

	/* trailing qualifiers */
	while ((sp = strrchr(out, ' '))) {
		int q = 0;

		for (size_t i = 0; i < sizeof(quals) / sizeof(quals[0]); i++)
			q |= !strcmp(sp + 1, quals[i]);
		if (!q)
			break;
		*sp = 0;
	}
	k = strlen(out);
	/* the name is the last word, or everything from the word that holds
	 * "operator" on; the spaces of "(anonymous namespace)" and
	 * "{lambda(int, int)#1}" do not separate words */
	for (size_t i = 0, depth = 0; i < k; i++) {
		if (out[i] == '(' || out[i] == '{')
			depth++;
		else if ((out[i] == ')' || out[i] == '}') && depth)
			depth--;
		if (depth)
			continue;
		if (at_operator(out, i))
			break;
		if (out[i] == ' ')
			from = i + 1;
	}
	if (from && from < k)
		memmove(out, out + from, k - from + 1);
}

/* The length of the operator's own symbols at name + j ("<<=", "()"). */
static size_t
operator_len(const char *name, size_t j, size_t end)
{
	static const char *const lt[] = { "<<=", "<=>", "<<", "<=", "<" };
	size_t start = j;

	if (name[j] == '(' && name[j + 1] == ')')
		return 2;
	if (name[j] == '<') {
		/* the longest that the parameters, a space or the template
		 * arguments follow: "operator<<std::string>" is operator<
		 * with arguments, "operator<< <T>" is operator<< */
		for (size_t i = 0; i < sizeof(lt) / sizeof(lt[0]); i++) {
			size_t l = strlen(lt[i]);
			char next = name[j + l];

			if (!strncmp(name + j, lt[i], l) &&
			    (next == '(' || next == ' ' || !next || (l == 1 && next == '<')))
				return l;
		}
		return 1;
	}
	/* ==, +, ->, [], " new[]", " unsigned long": up to the parameters
	 * or the template arguments */
	while (j < end && name[j] != '(' && name[j] != '<')
		j++;
	return j - start;
}

/* Follow c into or out of template arguments and parentheses (parameters,
 * or parentheses in arguments); 0 when it is neither. */
static int
nest(char c, int *angle, int *paren)
{
	if (c == '(')
		(*paren)++;
	else if (c == ')' && *paren)
		(*paren)--;
	else if (c == '<' && !*paren)
		(*angle)++;
	else if (c == '>' && !*paren && *angle)
		(*angle)--;
	else
		return 0;
	return 1;
}

/* Copy the operator's name at name[i..) ("operator>", "operator new[]") to
 * out at *k, without the spaces around it; the index after them. */
static size_t
copy_operator(const char *name, size_t i, size_t end, char *out, size_t *k)
{
	size_t j = i + 8 + operator_len(name, i + 8, end);

	memcpy(out + *k, name + i, j - i);
	*k += j - i;
	while (*k && out[*k - 1] == ' ')
		(*k)--;	/* "operator> <int>" */
	while (j < end && name[j] == ' ')
		j++;
	return j;
}

/* Copy name[i..) up to its matching '}' (or end) to out at *k; the index
 * after it. */
static size_t
copy_braces(const char *name, size_t i, size_t end, char *out, size_t *k)
{
	int depth = 0;

	do {
		depth += name[i] == '{';
		depth -= name[i] == '}';
		out[(*k)++] = name[i++];
	} while (i < end && depth > 0);
	return i;
}

/* Whether a shortened name of k bytes can stand for the whole: not what
 * cannot be shortened safely (a function returning a function pointer, a
 * conversion to one), which is shown whole. */
static int
shortened_well(const char *out, size_t k)
{
	return k && out[k - 1] != ' ' &&
	       ((out[0] >= 'a' && out[0] <= 'z') || (out[0] >= 'A' && out[0] <= 'Z') ||
		out[0] == '_' || out[0] == '~' || out[0] == '(' || out[0] == '{');
}

char *
symtab_short_name(const char *name, int keep_clones)
{
	size_t n = strlen(name), k = 0, end = n;
	const char *clone = strstr(name, " [clone ");
	char *out = malloc(n + 1);
	int angle = 0, paren = 0;

	if (!out)
		return NULL;
	if (clone)
		end = (size_t)(clone - name);	/* foo() [clone .cold] */
	for (size_t i = 0; i < end; i++) {
		char c = name[i];

		if (!angle && !paren && at_operator(name, i)) {
			i = copy_operator(name, i, end, out, &k) - 1;
			continue;
		}
		if (!angle && !paren && !strncmp(name + i, "(anonymous namespace)", 21)) {
			memcpy(out + k, name + i, 21);	/* a component */
			k += 21;
			i += 20;
			continue;
		}
		if (nest(c, &angle, &paren))
			continue;
		if (angle || paren)
			continue;
		if (c == '{') {
			/* {lambda(int)#1}: kept whole */
			i = copy_braces(name, i, end, out, &k) - 1;
			continue;
		}
		out[k++] = c;
	}
	out[k] = 0;
	short_words(out);
	k = strlen(out);
	if (!shortened_well(out, k)) {
		free(out);
		return strdup(name);
	}
	if (clone && keep_clones) {
		memmove(out + k, clone, n - end);	/* fits: k <= end */
		out[k + n - end] = 0;
	}
	return out;
}

/* Open-addressed table of display names, giving each a function index. */
struct names {
	uint32_t *slot;		/* func index + 1, or 0 */
	size_t mask;
};

static uint64_t
hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static long
intern(struct symtab *st, struct names *nt, char *name)
{
	size_t i = hash_str(name) & nt->mask;

	while (nt->slot[i]) {
		uint32_t f = nt->slot[i] - 1;

		if (!strcmp(st->funcs[f], name)) {
			free(name);
			return f;
		}
		i = (i + 1) & nt->mask;
	}
	st->funcs[st->nfuncs] = name;
	nt->slot[i] = (uint32_t)++st->nfuncs;
	return (long)st->nfuncs - 1;
}

static int
cmp_raw(const void *a, const void *b)
{
	const struct raw *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->prio != y->prio)
		return y->prio - x->prio;
	/* a sized symbol says more than a bare label */
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Settle extents (st_size, else up to the next symbol) and names. */
static int
build(struct symtab *st, struct rawvec *rv, uint64_t text_end,
      const struct symtab_opts *o)
{
	struct names nt = { NULL, 0 };
	size_t n = 0, cap = 16;

	if (rv->n)
		qsort(rv->v, rv->n, sizeof(*rv->v), cmp_raw);
	while (cap < 2 * rv->n)
		cap *= 2;
	nt.slot = calloc(cap, sizeof(*nt.slot));
	nt.mask = cap - 1;
	st->syms = calloc(rv->n ? rv->n : 1, sizeof(*st->syms));
	st->funcs = calloc(rv->n ? rv->n : 1, sizeof(*st->funcs));
	if (!nt.slot || !st->syms || !st->funcs) {
		free(nt.slot);
		return -1;
	}
	for (size_t i = 0; i < rv->n; i++) {
		struct raw *r = &rv->v[i];
		uint64_t next = UINT64_MAX, hi;
		char *name;
		long f;

		if (i > 0 && rv->v[i - 1].lo == r->lo)
			continue;	/* an alias of the one kept */
		for (size_t j = i + 1; j < rv->n; j++)
			if (rv->v[j].lo > r->lo) {
				next = rv->v[j].lo;
				break;
			}
		if (r->size)
			hi = r->lo + r->size;
		else
			hi = next != UINT64_MAX ? next : (text_end > r->lo ? text_end : r->lo + 1);
		if (hi > next)
			hi = next;
		if (hi <= r->lo)
			continue;
		name = r->prio == PRIO_LITERAL ? strdup(r->name) : display_name(r->name, o);
		if (!name)
			goto nomem;
		f = intern(st, &nt, name);
		st->syms[n].lo = r->lo;
		st->syms[n].hi = hi;
		st->syms[n].func = (uint32_t)f;
		n++;
	}
	st->nsyms = n;
	free(nt.slot);
	return 0;
nomem:
	free(nt.slot);
	return -1;
}

/* ------------------------------------------------------- unwind tables */

/*
 * One DW_EH_PE-encoded value of .eh_frame at *p, which lies at address at;
 * datarel counts from hdr. Only the encodings that compilers write there
 * (4- and 8-byte, absolute, pc- or data-relative) are read; 0, or -1 for
 * anything else or a value past end.
 */
static int
eh_value(const unsigned char **p, const unsigned char *end, unsigned enc,
	 uint64_t at, uint64_t hdr, uint64_t *out)
{
	uint64_t v = 0, base;
	size_t len;

	switch (enc & 0x0f) {
	case 0x03: case 0x0b: len = 4; break;	/* udata4, sdata4 */
	case 0x00: case 0x04: case 0x0c: len = 8; break;	/* absptr, udata8, sdata8 */
	default: return -1;
	}
	switch (enc & 0x70) {
	case 0x00: base = 0; break;		/* absptr */
	case 0x10: base = at; break;		/* pcrel */
	case 0x30: base = hdr; break;		/* datarel */
	default: return -1;
	}
	if ((size_t)(end - *p) < len)
		return -1;
	for (size_t i = 0; i < len; i++)
		v |= (uint64_t)(*p)[i] << (8 * i);
	if ((enc & 0x0f) == 0x0b)
		v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
	*p += len;
	*out = base + v;
	return 0;
}

/*
 * The symbol in sorted rv that starts last at or before addr: of aliases
 * at one address, the first in cmp_raw's order (the name shown), and in
 * *size the largest extent any of them gives.
 */
static const struct raw *
raw_before(const struct rawvec *rv, uint64_t addr, uint64_t *size)
{
	size_t lo = 0, hi = rv->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rv->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	*size = 0;
	while (lo > 1 && rv->v[lo - 2].lo == rv->v[lo - 1].lo)
		lo--;
	for (size_t i = lo - 1; i < rv->n && rv->v[i].lo == rv->v[lo - 1].lo; i++)
		if (rv->v[i].size > *size)
			*size = rv->v[i].size;
	return &rv->v[lo - 1];
}

struct fde_range {
	uint64_t lo, hi;
};

static int
cmp_range(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi > y->hi ? -1 : x->hi < y->hi;	/* the widest first */
}

/* The size of a pointer of encoding enc in augmentation data, or 0 for
 * one that cannot be skipped. */
static size_t
enc_size(unsigned enc)
{
	switch (enc & 0x0f) {
	case 0x00: return 8;			/* absptr */
	case 0x02: case 0x0a: return 2;
	case 0x03: case 0x0b: return 4;
	case 0x04: case 0x0c: return 8;
	default: return 0;
	}
}

/* How a CIE's FDEs encode their addresses (its 'R'), or -1 where its
 * augmentation is not understood. */
static int
fde_encoding(const Dwarf_CIE *cie)
{
	const char *a = cie->augmentation;
	const uint8_t *d = cie->augmentation_data;
	size_t k = 0, n = cie->augmentation_data_size;
	int enc = 0x00;		/* absptr when there is no 'R' */

	if (!a || !a[0])
		return enc;
	if (a[0] != 'z' || (n && !d))
		return -1;
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			if (k >= n)
				return -1;
			enc = d[k++];
			break;
		case 'L':
			k++;
			break;
		case 'P': {
			size_t sz;

			if (k >= n || !(sz = enc_size(d[k])))
				return -1;
			k += 1 + sz;
			break;
		}
		case 'S': case 'B':
			break;
		default:
			return -1;
		}
		if (k > n)
			return -1;
	}
	return enc;
}

/*
 * Every FDE's [initial_location, +address_range) in .eh_frame, sorted; their
 * number in *np. Only the entries' headers are read (libdw's
 * dwarf_next_cfi): executing their instructions, as dwarf_cfi_addrframe
 * does, allocates by the register numbers they name, which a hostile file
 * sets at will (100 million: 1.6 GB, as fuzz_symtab found). NULL with *np
 * 0 where there is nothing to read, or when out of memory (*np 1).
 * Over 60 lines, and kept whole: one walk of the entries, in which each
 * CIE's pointer encoding is kept for the FDEs that follow it, and the
 * array grows as they come; fde_encoding reads the encoding apart.
 */
static struct fde_range *
eh_fdes(Elf *e, size_t *np)
{
	GElf_Shdr sh;
	Elf_Scn *scn = section_named(e, ".eh_frame", &sh);
	const unsigned char *ident = (const unsigned char *)elf_getident(e, NULL);
	struct { Dwarf_Off off; int enc; } *cies = NULL;
	struct fde_range *v = NULL;
	size_t n = 0, cap = 0, ncies = 0, ciecap = 0;
	Dwarf_Off off = 0, next;
	Elf_Data *d;

	*np = 0;
	/* lld types it SHT_X86_64_UNWIND */
	if (!scn || !ident || (sh.sh_type != SHT_PROGBITS && sh.sh_type != SHT_X86_64_UNWIND) ||
	    !(d = elf_getdata(scn, NULL)) || !d->d_buf || !d->d_size)
		return NULL;
	while (off < d->d_size) {
		Dwarf_CFI_Entry en;
		int r = dwarf_next_cfi(ident, d, 1, off, &next, &en);

		if (r == 1 || (r < 0 && (next == (Dwarf_Off)-1 || next <= off)))
			break;
		if (r == 0 && dwarf_cfi_cie_p(&en)) {
			if (ncies == ciecap) {
				void *g = realloc(cies, (ciecap = ciecap ? 2 * ciecap : 16) *
						  sizeof(*cies));

				if (!g)
					goto nomem;
				cies = g;
			}
			cies[ncies].off = off;
			cies[ncies++].enc = fde_encoding(&en.cie);
		} else if (r == 0) {
			/* CIEs come in section order: search them */
			size_t lo = 0, hi = ncies;
			const unsigned char *q = en.fde.start, *end = en.fde.end;
			uint64_t at = sh.sh_addr + (uint64_t)(q - (const unsigned char *)d->d_buf);
			uint64_t loc, len;

			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (cies[mid].off < en.fde.CIE_pointer)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < ncies && cies[lo].off == en.fde.CIE_pointer && cies[lo].enc >= 0 &&
			    eh_value(&q, end, (unsigned)cies[lo].enc, at, sh.sh_addr, &loc) == 0 &&
			    eh_value(&q, end, (unsigned)cies[lo].enc & 0x0f, 0, 0, &len) == 0 &&
			    len && loc + len > loc) {
				if (n == cap) {
					void *g = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof(*v));

					if (!g)
						goto nomem;
					v = g;
				}
				v[n++] = (struct fde_range){ loc, loc + len };
			}
		}
		off = next;
	}
	free(cies);
	if (n)
		qsort(v, n, sizeof(*v), cmp_range);
	else {
		free(v);
		v = NULL;
	}
	*np = n;
	return v;
nomem:
	free(cies);
	free(v);
	*np = 1;
	return NULL;
}

/*
 * Functions for the code that the symbols in rv (sorted) do not cover,
 * from the unwind tables: each FDE is one function, over the range its
 * header gives (what lies between two is padding), cut at the next one's
 * start. Each is named OBJ+0xOFFSET, with the exported symbol before it as
 * a hint. Pushed onto out; 0, or -1 when out of memory (tables that cannot
 * be read give no functions).
 */
static int
read_fdes(Elf *e, const char *obj, uint64_t base, uint64_t text_end,
	  const struct rawvec *rv, const struct symtab_opts *o, struct rawvec *out)
{
	size_t n;
	struct fde_range *fdes = eh_fdes(e, &n);
	int r = 0;

	if (!fdes)
		return n ? -1 : 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t start = fdes[i].lo, hi = fdes[i].hi, size = 0;
		const struct raw *near = raw_before(rv, start, &size);
		char name[512];

		if (i > 0 && fdes[i - 1].lo == start)
			continue;	/* listed twice: the widest came first */
		if (near && (near->lo == start || start - near->lo < size))
			continue;	/* a symbol has it */
		/* never into the next function, nor past the code */
		if (i + 1 < n && fdes[i + 1].lo < hi)
			hi = fdes[i + 1].lo;
		if (text_end && hi > text_end)
			hi = text_end;
		if (hi <= start || hi - start > (UINT64_C(1) << 32))
			continue;
		if (near && near->prio > 0) {
			char *hint = display_name(near->name, o);

			if (!hint) {
				r = -1;
				break;
			}
			snprintf(name, sizeof(name), "%s+0x%llx (after %.200s)", obj,
				 (unsigned long long)(start - base), hint);
			free(hint);
		} else {
			snprintf(name, sizeof(name), "%s+0x%llx", obj,
				 (unsigned long long)(start - base));
		}
		if ((r = raw_push(out, start, hi - start, name, PRIO_LITERAL)))
			break;
	}
	free(fdes);
	return r;
}

/* ------------------------------------------------------- debug files */

static Elf *
open_elf(const char *path, int *fdp, char *err, size_t errlen)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	Elf *e;

	if (fd < 0) {
		fail(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		fail(err, errlen, S_ISDIR(sb.st_mode) ? "is a directory" : "not a regular file");
		close(fd);
		return NULL;
	}
	if (sb.st_size == 0) {
		fail(err, errlen, "empty file");
		close(fd);
		return NULL;
	}
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e) {
		fail(err, errlen, "cannot read as ELF: %s", elf_errmsg(-1));
		close(fd);
		return NULL;
	}
	*fdp = fd;
	return e;
}

/* Symbols from a separate debug file whose build-id matches, if any. */
static int
try_debug_file(struct symtab *st, const char *path, const struct elfinfo *want,
	       struct rawvec *rv)
{
	struct elfinfo info;
	char err[256];
	int fd;
	Elf *e = open_elf(path, &fd, err, sizeof(err));
	int ok = 0;

	if (!e)
		return 0;
	if (read_elf(e, &info, rv, NULL, NULL, err, sizeof(err)) == 0 &&
	    info.has_symtab && rv->n > 0 &&
	    (!want->build_id_len || (info.build_id_len == want->build_id_len &&
	     !memcmp(info.build_id, want->build_id, info.build_id_len)))) {
		ok = 1;
		st->debug_path = strdup(path);
	} else {
		raw_free(rv);
	}
	elf_end(e);
	close(fd);
	return ok;
}

static int
find_debug_file(struct symtab *st, const char *exe, const struct elfinfo *info,
		const struct symtab_opts *o, struct rawvec *rv)
{
	const char *root = o->debug_root ? o->debug_root : "/usr/lib/debug";
	char path[PATH_MAX * 2], dir[PATH_MAX];
	char *slash;

	if (info->build_id_len >= 2) {
		int n = snprintf(path, sizeof(path), "%s/.build-id/%02x/", root,
				 info->build_id[0]);

		for (size_t i = 1; i < info->build_id_len && n < (int)sizeof(path) - 8; i++)
			n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", info->build_id[i]);
		snprintf(path + n, sizeof(path) - (size_t)n, ".debug");
		if (try_debug_file(st, path, info, rv))
			return 1;
	}
	if (!info->debuglink[0] || !realpath(exe, dir))
		return 0;
	if ((slash = strrchr(dir, '/')))
		*slash = 0;
	snprintf(path, sizeof(path), "%s/%s", dir, info->debuglink);
	if (strcmp(path, exe) && try_debug_file(st, path, info, rv))
		return 1;
	snprintf(path, sizeof(path), "%s/.debug/%s", dir, info->debuglink);
	if (try_debug_file(st, path, info, rv))
		return 1;
	snprintf(path, sizeof(path), "%s%s/%s", root, dir, info->debuglink);
	return try_debug_file(st, path, info, rv);
}

/* ------------------------------------------------------- debuginfod */


/* Whether an error from libdebuginfod means its server was not reached,
 * rather than that it has no such file. */
static int
unreachable(int r)
{
	return r == -ECONNREFUSED || r == -ETIMEDOUT || r == -EHOSTUNREACH ||
	       r == -ENETUNREACH || r == -ECONNRESET || r == -EHOSTDOWN ||
	       r == -ENETDOWN || r == -EADDRNOTAVAIL || r == -EPROTO ||
	       r == -ECONNABORTED || r == -EAGAIN || r == -ETIME;
}

/*
 * The debug file of build-id from the debuginfod servers in
 * DEBUGINFOD_URLS, through elfutils' libdebuginfod and its cache
 * (DEBUGINFOD_CACHE_PATH). A server that cannot be reached is noted once
 * and not asked again; DEBUGINFOD_TIMEOUT bounds each wait, and
 * DEBUGINFOD_RETRY_LIMIT the tries (5 s and 1 retry unless they are set).
 */
static int
debuginfod_file(struct symtab *st, const struct elfinfo *info, struct rawvec *rv,
		struct symtab_fetch *f)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *path = NULL;
	int fd, ok = 0;

	if (!f || !urls || !*urls || f->down || info->build_id_len < 2)
		return 0;
	if (!f->client) {
		/* a server that does not answer holds a report up for at
		 * most twice the timeout */
		setenv("DEBUGINFOD_TIMEOUT", "5", 0);
		setenv("DEBUGINFOD_RETRY_LIMIT", "1", 0);
		if (!(f->client = debuginfod_begin())) {
			f->down = 1;
			snprintf(f->note, sizeof(f->note), "debuginfod: cannot start a client");
			return 0;
		}
	}
	fd = debuginfod_find_debuginfo(f->client, info->build_id, (int)info->build_id_len,
				       &path);
	if (fd >= 0) {
		close(fd);
		ok = try_debug_file(st, path, info, rv);
	} else if (unreachable(fd)) {
		const char *url = debuginfod_get_url(f->client);

		f->down = 1;
		snprintf(f->note, sizeof(f->note), "debuginfod: cannot reach %.300s: %s; "
			 "symbols from the files on this machine only", url ? url : urls,
			 strerror(-fd));
	}
	free(path);
	return ok;
}

const char *
symtab_fetch_note(struct symtab_fetch *f)
{
	if (!f || !f->note[0] || f->noted)
		return NULL;
	f->noted = 1;
	return f->note;
}

void
symtab_fetch_end(struct symtab_fetch *f)
{
	if (f && f->client) {
		debuginfod_end(f->client);
		f->client = NULL;
	}
}

/* ------------------------------------------------------- loading */

/*
 * A stripped object's functions from its unwind tables, added to use (its
 * exported symbols, if any), through fdes; st->source says so: ".dynsym
 * and unwind tables", or "unwind tables" for an object that exports none
 * (before, the exported count was taken after the unwind tables' functions
 * were added, and the second label never showed). -1 when memory runs out.
 */
static int
add_fdes(struct symtab *st, Elf *e, const char *path, const struct elfinfo *info,
	 const struct symtab_opts *o, struct rawvec *use, struct rawvec *fdes)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	const char *obj = slash ? slash + 1 : path ? path : "[memory]";
	size_t k = strlen(obj);
	int exported = !strcmp(st->source, ".dynsym");	/* else "no symbols" */

	/* libpc's copy of the vDSO, PROFILE+vdso.so, is the vDSO */
	if (k > 8 && !strcmp(obj + k - 8, "+vdso.so"))
		obj = "[vdso]";
	if (use->n)
		qsort(use->v, use->n, sizeof(*use->v), cmp_raw);
	if (read_fdes(e, obj, info->base, info->text_end, use, o, fdes))
		return -1;
	for (size_t i = 0; i < fdes->n; i++)
		if (raw_push(use, fdes->v[i].lo, fdes->v[i].size, fdes->v[i].name,
			     PRIO_LITERAL))
			return -1;
	if (fdes->n)
		strcpy(st->source, exported ? ".dynsym and unwind tables" :
		       "unwind tables");
	return 0;
}

static int
load(struct symtab *st, Elf *e, const char *path, const struct symtab_opts *opts,
     char *err, size_t errlen)
{
	static const struct symtab_opts none;
	const struct symtab_opts *o = opts ? opts : &none;
	struct rawvec symtab = { 0 }, dynsym = { 0 }, plt = { 0 }, dbg = { 0 }, fdes = { 0 };
	struct rawvec *use;
	struct elfinfo info;
	int r = -1;

	memset(st, 0, sizeof(*st));
	if (read_elf(e, &info, &symtab, &dynsym, &plt, err, errlen))
		goto out;
	memcpy(st->build_id, info.build_id, sizeof(st->build_id));
	st->build_id_len = info.build_id_len;
	if (symtab.n) {
		use = &symtab;
		strcpy(st->source, ".symtab");
	} else if (path && find_debug_file(st, path, &info, o, &dbg)) {
		use = &dbg;
		strcpy(st->source, "debug file");
	} else if (path && debuginfod_file(st, &info, &dbg, o->fetch)) {
		use = &dbg;
		strcpy(st->source, "debuginfod");
	} else {
		/* stripped: the exported functions, if any, and the rest
		 * from the unwind tables below */
		use = &dynsym;
		strcpy(st->source, dynsym.n ? ".dynsym" : "no symbols");
	}
	for (size_t i = 0; i < plt.n; i++)
		if (raw_push(use, plt.v[i].lo, plt.v[i].size, plt.v[i].name, 0))
			goto nomem;
	if (use == &dynsym && add_fdes(st, e, path, &info, o, use, &fdes))
		goto nomem;
	if (build(st, use, info.text_end, o))
		goto nomem;
	r = 0;
	goto out;
nomem:
	fail(err, errlen, "out of memory");
out:
	raw_free(&symtab);
	raw_free(&dynsym);
	raw_free(&plt);
	raw_free(&dbg);
	raw_free(&fdes);
	if (r)
		symtab_release(st);
	return r;
}

int
symtab_load(struct symtab *st, const char *path, const struct symtab_opts *opts,
	    char *err, size_t errlen)
{
	int fd, r;
	Elf *e;

	elf_version(EV_CURRENT);
	memset(st, 0, sizeof(*st));
	if (!(e = open_elf(path, &fd, err, errlen)))
		return -1;
	r = load(st, e, path, opts, err, errlen);
	elf_end(e);
	close(fd);
	return r;
}

int
symtab_load_mem(struct symtab *st, const void *buf, size_t len,
		const struct symtab_opts *opts, char *err, size_t errlen)
{
	Elf *e;
	int r;

	elf_version(EV_CURRENT);
	memset(st, 0, sizeof(*st));
	if (!(e = elf_memory((char *)buf, len)))
		return fail(err, errlen, "cannot read as ELF: %s", elf_errmsg(-1));
	r = load(st, e, NULL, opts, err, errlen);
	elf_end(e);
	return r;
}

size_t
symtab_first_after(const struct symtab *st, uint64_t addr)
{
	size_t lo = 0, hi = st->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->syms[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

long
symtab_find(const struct symtab *st, uint64_t addr)
{
	size_t i = symtab_first_after(st, addr);

	return i < st->nsyms && st->syms[i].lo <= addr ? (long)i : -1;
}

void
symtab_release(struct symtab *st)
{
	for (size_t i = 0; i < st->nfuncs; i++)
		free(st->funcs[i]);
	free(st->funcs);
	free(st->syms);
	free(st->debug_path);
	free(st->func_obj);
	for (size_t i = 0; i < st->nobjs; i++)
		free(st->objnames[i]);
	free(st->objnames);
	memset(st, 0, sizeof(*st));
}

int
elf_probe_dynamic(const char *path)
{
	char err[256];
	size_t n;
	int fd, r = 0;
	Elf *e;

	elf_version(EV_CURRENT);
	if (!(e = open_elf(path, &fd, err, sizeof(err))))
		return -1;
	if (elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &n)) {
		r = -1;
		goto out;
	}
	/* LD_PRELOAD is the dynamic linker's: no PT_INTERP, no preloading
	 * (this covers static-pie too) */
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
			r = 1;
	}
out:
	elf_end(e);
	close(fd);
	return r;
}

char *
elf_needed(const char *path)
{
	char err[256], *v = NULL;
	size_t len = 0;
	Elf_Scn *scn = NULL;
	int fd;
	Elf *e;

	elf_version(EV_CURRENT);
	if (!(e = open_elf(path, &fd, err, sizeof(err))))
		return NULL;
	while (elf_kind(e) == ELF_K_ELF && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		GElf_Shdr sh;
		GElf_Dyn dyn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC ||
		    !(d = elf_getdata(scn, NULL)) || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;
			char *w;

			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_NEEDED ||
			    !(name = elf_strptr(e, sh.sh_link, dyn.d_un.d_val)))
				continue;
			if (!(w = realloc(v, len + strlen(name) + 2)))
				break;
			v = w;
			strcpy(v + len, name);
			len += strlen(name) + 1;
		}
		break;	/* one dynamic section */
	}
	if (v)
		v[len] = 0;
	elf_end(e);
	close(fd);
	return v;
}

char *
symtab_debug_file_of(const char *path, const struct symtab_opts *o)
{
	static const struct symtab_opts none;
	struct rawvec a = { 0 }, b = { 0 }, c = { 0 }, dbg = { 0 };
	struct symtab tmp;
	struct elfinfo info;
	char err[256], *found = NULL;
	int fd;
	Elf *e;

	elf_version(EV_CURRENT);
	if (!(e = open_elf(path, &fd, err, sizeof(err))))
		return NULL;
	memset(&tmp, 0, sizeof(tmp));
	if (!o)
		o = &none;
	if (read_elf(e, &info, &a, &b, &c, err, sizeof(err)) == 0 &&
	    (find_debug_file(&tmp, path, &info, o, &dbg) ||
	     debuginfod_file(&tmp, &info, &dbg, o->fetch))) {
		found = tmp.debug_path;
		tmp.debug_path = NULL;
	}
	raw_free(&a);
	raw_free(&b);
	raw_free(&c);
	raw_free(&dbg);
	elf_end(e);
	close(fd);
	return found;
}

int
elf_build_id(const char *path, uint8_t *id, size_t max)
{
	struct elfinfo info;
	char err[256];
	int fd;
	Elf *e;

	elf_version(EV_CURRENT);
	if (!(e = open_elf(path, &fd, err, sizeof(err))))
		return -1;
	memset(&info, 0, sizeof(info));
	if (elf_kind(e) == ELF_K_ELF)
		read_notes(e, &info);
	elf_end(e);
	close(fd);
	if (info.build_id_len > max)
		info.build_id_len = max;
	memcpy(id, info.build_id, info.build_id_len);
	return (int)info.build_id_len;
}

static int
push_name(struct symtab *st, const char *name)
{
	char **v = realloc(st->objnames, (st->nobjs + 1) * sizeof(*v));

	if (!v)
		return -1;
	st->objnames = v;
	if (!(v[st->nobjs] = strdup(name)))
		return -1;
	st->nobjs++;
	return 0;
}

int
symtab_objects_begin(struct symtab *st, const char *name)
{
	if (st->nobjs)
		return 0;
	st->func_obj = calloc(st->nfuncs ? st->nfuncs : 1, sizeof(*st->func_obj));
	if (!st->func_obj)
		return -1;
	return push_name(st, name);
}

int
symtab_objects_add(struct symtab *st, struct symtab *src, const char *name,
		   const char *gap_name, int shift, uint32_t *objp)
{
	uint32_t obj = (uint32_t)st->nobjs;
	uint64_t base = (uint64_t)obj << shift, end = base + (UINT64_C(1) << shift);
	size_t ns = src ? src->nsyms : 0, nf = src ? src->nfuncs : 0;
	size_t room = st->nsyms + 2 * ns + 1;
	struct sym *syms;
	char **funcs;
	uint32_t *fo, gap = 0;
	uint64_t at = base;

	if (shift < 1 || shift > 63 || (uint64_t)obj >= UINT64_C(1) << (64 - shift))
		return -1;	/* no room for another object */
	if (push_name(st, name))
		return -1;
	syms = realloc(st->syms, room * sizeof(*syms));
	if (syms)
		st->syms = syms;
	funcs = realloc(st->funcs, (st->nfuncs + nf + 1) * sizeof(*funcs));
	if (funcs)
		st->funcs = funcs;
	fo = realloc(st->func_obj, (st->nfuncs + nf + 1) * sizeof(*fo));
	if (fo)
		st->func_obj = fo;
	if (!syms || !funcs || !fo)
		return -1;
	gap = (uint32_t)st->nfuncs;
	if (!(st->funcs[st->nfuncs] = strdup(gap_name)))
		return -1;
	st->func_obj[st->nfuncs++] = obj;
	for (size_t i = 0; i < ns; i++) {
		uint64_t lo = base + src->syms[i].lo, hi = base + src->syms[i].hi;

		if (src->syms[i].hi > end - base || lo < at)
			continue;	/* past the object's room, or overlapping */
		if (lo > at)
			st->syms[st->nsyms++] = (struct sym){ at, lo, gap };
		st->syms[st->nsyms++] = (struct sym){ lo, hi,
			(uint32_t)st->nfuncs + src->syms[i].func };
		at = hi;
	}
	if (at < end)
		st->syms[st->nsyms++] = (struct sym){ at, end, gap };
	for (size_t i = 0; i < nf; i++) {
		st->funcs[st->nfuncs + i] = src->funcs[i];
		st->func_obj[st->nfuncs + i] = obj;
		src->funcs[i] = NULL;
	}
	st->nfuncs += nf;
	if (src)
		symtab_release(src);
	if (objp)
		*objp = obj;
	return 0;
}
