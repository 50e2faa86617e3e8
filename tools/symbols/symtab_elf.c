/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reads one ELF file with libelf: its function symbols (.symtab, .dynsym),
 * x86-64 PLT stubs as name@plt, the build-id note and .gnu_debuglink, and
 * what `pcprof run` asks of a program (PT_INTERP, DT_NEEDED, build-id).
 * Called by the other symtab*.c files, and through symtab.h by run.c,
 * findexe.c and lines.c. The file may be hostile: libelf bounds every
 * section, and every index or string taken from it is checked before use.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/symtab_int.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif
#ifndef R_X86_64_JUMP_SLOT
#define R_X86_64_JUMP_SLOT 7
#endif

int
sym_fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

int
sym_raw_push(struct rawvec *rv, uint64_t lo, uint64_t size, const char *name, int prio)
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

void
sym_raw_free(struct rawvec *rv)
{
	for (size_t i = 0; i < rv->n; i++)
		free(rv->v[i].name);
	free(rv->v);
	memset(rv, 0, sizeof(*rv));
}

int
sym_raw_cmp(const void *a, const void *b)
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
		if (sym_raw_push(rv, s.st_value, s.st_size, name, prio))
			return -1;
	}
	return 0;
}

Elf_Scn *
sym_section(Elf *e, const char *want, GElf_Shdr *out)
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
	Elf_Scn *rel = sym_section(e, ".rela.plt", &rsh);
	Elf_Scn *plt = sym_section(e, ".plt.sec", &psh);
	Elf_Scn *dyn;
	Elf_Data *rd;
	uint64_t base;
	size_t n;

	if (!rel || rsh.sh_type != SHT_RELA || !rsh.sh_entsize)
		return 0;
	if (plt) {
		base = psh.sh_addr;
	} else if ((plt = sym_section(e, ".plt", &psh))) {
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
		if (sym_raw_push(rv, base + 16 * i, 16, buf, 0))
			return -1;
	}
	return 0;
}

static void
sym_read_notes(Elf *e, struct elfinfo *info)
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
int
sym_read_elf(Elf *e, struct elfinfo *info, struct rawvec *symtab,
	 struct rawvec *dynsym, struct rawvec *plt, char *err, size_t errlen)
{
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	memset(info, 0, sizeof(*info));
	if (elf_kind(e) != ELF_K_ELF)
		return sym_fail(err, errlen, "not an ELF file");
	if (!gelf_getehdr(e, &eh))
		return sym_fail(err, errlen, "bad ELF header: %s", elf_errmsg(-1));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64))
		return sym_fail(err, errlen, "foreign ELF file (class %d, data %d, machine %d): "
			    "pcprof reads 64-bit little-endian x86-64 and AArch64 files",
			    eh.e_ident[EI_CLASS], eh.e_ident[EI_DATA], eh.e_machine);
	info->machine = eh.e_machine;
	sym_read_notes(e, info);
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
			return sym_fail(err, errlen, "bad section header: %s", elf_errmsg(-1));
		if ((sh.sh_flags & SHF_EXECINSTR) && sh.sh_addr + sh.sh_size > info->text_end)
			info->text_end = sh.sh_addr + sh.sh_size;
		if (sh.sh_type == SHT_SYMTAB) {
			info->has_symtab = 1;
			if (symtab && read_symbols(e, scn, &sh, symtab))
				return sym_fail(err, errlen, "out of memory");
		} else if (sh.sh_type == SHT_DYNSYM && dynsym) {
			if (read_symbols(e, scn, &sh, dynsym))
				return sym_fail(err, errlen, "out of memory");
		}
	}
	if ((scn = sym_section(e, ".gnu_debuglink", &sh)) && sh.sh_type != SHT_NOBITS) {
		Elf_Data *d = elf_getdata(scn, NULL);

		if (d && d->d_size > 0 && memchr(d->d_buf, 0, d->d_size) &&
		    strlen(d->d_buf) < sizeof(info->debuglink) && !strchr(d->d_buf, '/'))
			strcpy(info->debuglink, d->d_buf);
	}
	if (plt && info->machine == EM_X86_64 && read_plt(e, plt))
		return sym_fail(err, errlen, "out of memory");
	return 0;
}

Elf *
sym_open_elf(const char *path, int *fdp, char *err, size_t errlen)
{
	struct stat sb;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	Elf *e;

	if (fd < 0) {
		sym_fail(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		sym_fail(err, errlen, S_ISDIR(sb.st_mode) ? "is a directory" : "not a regular file");
		close(fd);
		return NULL;
	}
	if (sb.st_size == 0) {
		sym_fail(err, errlen, "empty file");
		close(fd);
		return NULL;
	}
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e) {
		sym_fail(err, errlen, "cannot read as ELF: %s", elf_errmsg(-1));
		close(fd);
		return NULL;
	}
	*fdp = fd;
	return e;
}

int
elf_probe_dynamic(const char *path)
{
	char err[256];
	size_t n;
	int fd, r = 0;
	Elf *e;

	elf_version(EV_CURRENT);
	if (!(e = sym_open_elf(path, &fd, err, sizeof(err))))
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
	if (!(e = sym_open_elf(path, &fd, err, sizeof(err))))
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

int
elf_build_id(const char *path, uint8_t *id, size_t max)
{
	struct elfinfo info;
	char err[256];
	int fd;
	Elf *e;

	elf_version(EV_CURRENT);
	if (!(e = sym_open_elf(path, &fd, err, sizeof(err))))
		return -1;
	memset(&info, 0, sizeof(info));
	if (elf_kind(e) == ELF_K_ELF)
		sym_read_notes(e, &info);
	elf_end(e);
	close(fd);
	if (info.build_id_len > max)
		info.build_id_len = max;
	memcpy(id, info.build_id, info.build_id_len);
	return (int)info.build_id_len;
}
