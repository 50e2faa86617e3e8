/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Loading profiles and symbols for the subcommands, with one-line messages
 * that name the file, and the flat profile: samples credited to functions.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcprof.h"

static int
load_one(struct gmon_profile *p, const char *path, struct timespec *mtime)
{
	if (mtime ? pc_read_gmon_at(path, p, mtime) : pc_read_gmon(path, p))
		return -1;
	if (p->nhists == 0)
		return pc_error("'%s': no histogram in the profile", path);
	return 0;
}

int
profiles_load(struct gmon_profile *p, char **paths, int n)
{
	return profiles_load_at(p, paths, n, NULL);
}

int
profiles_load_at(struct gmon_profile *p, char **paths, int n,
		 struct timespec *mtimes)
{
	uint8_t id0[GMON_BUILDID_SIZE], id[GMON_BUILDID_SIZE];
	int pc0;

	if (load_one(p, paths[0], mtimes))
		return -1;
	pc0 = gmon_profile_is_libpc(p, id0);
	for (int i = 1; i < n; i++) {
		struct gmon_profile q;
		struct gmon_error err;
		char a[32], b[32];
		int r;

		if (load_one(&q, paths[i], mtimes ? mtimes + i : NULL))
			return -1;
		if (q.hists[0].rate != p->hists[0].rate)
			return pc_error(
				"'%s': sampled at %u Hz, '%s' at %u Hz: profiles at different rates cannot be summed",
				paths[i], q.hists[0].rate, paths[0],
				p->hists[0].rate);
		if (pc0 && gmon_profile_is_libpc(&q, id) &&
		    memcmp(id0, id, sizeof(id)))
			return pc_error(
				"'%s': from another executable than '%s' (build-id %s..., not %s...)",
				paths[i], paths[0], pc_hex(id, sizeof(id), a),
				pc_hex(id0, sizeof(id0), b));
		r = gmon_profile_add(p, &q, &err);
		if (r == -ENOMEM)
			return pc_error("'%s': out of memory", paths[i]);
		if (r)
			return pc_error("'%s': cannot be added to '%s': %s",
					paths[i], paths[0], err.what);
		gmon_profile_release(&q);
	}
	return 0;
}

int
flat_row_cmp(const void *a, const void *b)
{
	const struct flat_row *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

/* Whether symbol i stands for code no symbol covers: pcprof's own names
 * ("[libz.so.1]", "[no object]") are in brackets; a C name never is. */
static int
is_gap(const struct symtab *st, size_t i)
{
	return st->funcs[st->syms[i].func][0] == '[';
}

/* How many bytes of [a, e) the symbol covers. */
static uint64_t
overlap(const struct sym *sym, uint64_t a, uint64_t e)
{
	uint64_t lo = sym->lo > a ? sym->lo : a;
	uint64_t hi = sym->hi < e ? sym->hi : e;

	return hi > lo ? hi - lo : 0;
}

/*
 * Give c samples of the bin [a, e) to the symbols, from st->syms[s] on,
 * that cover it; 0 when none does. The samples were taken in code, not in
 * the padding that may share the bin: the bin holding a function's last
 * instruction is its alone, as gprof (whose functions reach to the next
 * symbol) has it. A bin across two functions is split by their bytes in
 * it.
 */
static int
credit_bin(const struct symtab *st, size_t s, uint64_t a, uint64_t e, double c,
	   flat_give_fn *give, void *arg)
{
	uint64_t covered = 0;
	size_t i;
	int gaps;

	for (i = s; i < st->nsyms && st->syms[i].lo < e; i++)
		if (!is_gap(st, i))
			covered += overlap(&st->syms[i], a, e);
	/* code no symbol covers ("[libz.so.1]", the rest of an object)
	 * takes a bin only where no function does */
	gaps = !covered;
	for (i = s; gaps && i < st->nsyms && st->syms[i].lo < e; i++)
		covered += overlap(&st->syms[i], a, e);
	if (!covered)
		return 0;
	for (i = s; i < st->nsyms && st->syms[i].lo < e; i++) {
		const struct sym *y = &st->syms[i];
		uint64_t n = overlap(y, a, e);

		if (n && (gaps || !is_gap(st, i)))
			give(arg, i, y->lo > a ? y->lo : a,
			     y->hi < e ? y->hi : e,
			     c * (double)n / (double)covered);
	}
	return 1;
}

double
flat_walk(const struct symtab *st, const struct gmon_profile *p,
	  flat_give_fn *give, void *arg, double *unknown)
{
	double total = 0;

	for (size_t h = 0; h < p->nhists; h++) {
		const struct gmon_hist *hist = &p->hists[h];
		uint64_t bin = (hist->high - hist->low) / hist->nbins;
		size_t s = symtab_first_after(st, hist->low);

		for (uint32_t k = 0; k < hist->nbins; k++) {
			uint64_t a = hist->low + k * bin;
			double c = (double)hist->counts[k];

			if (!hist->counts[k])
				continue;
			total += c;
			while (s < st->nsyms && st->syms[s].hi <= a)
				s++;
			if (!credit_bin(st, s, a, a + bin, c, give, arg))
				*unknown += c;
		}
	}
	return total;
}

struct per_func {
	const struct symtab *st;
	double *per;
};

static void
give_func(void *arg, size_t sym, uint64_t lo, uint64_t hi, double samples)
{
	struct per_func *pf = arg;

	(void)lo;
	(void)hi;
	pf->per[pf->st->syms[sym].func] += samples;
}

void
flat_build(struct flat *f, const struct symtab *st,
	   const struct gmon_profile *p)
{
	double *per = pc_calloc(st->nfuncs ? st->nfuncs : 1, sizeof(*per));
	struct per_func pf = { st, per };
	uint64_t out;

	memset(f, 0, sizeof(*f));
	f->rate = p->nhists ? p->hists[0].rate : 0;
	f->total = flat_walk(st, p, give_func, &pf, &f->unknown);
	gmon_profile_outside(p, &out);
	f->outside = (double)out;
	f->total += f->outside;
	f->rows = pc_malloc((st->nfuncs ? st->nfuncs : 1) * sizeof(*f->rows));
	for (size_t i = 0; i < st->nfuncs; i++)
		if (per[i] > 0) {
			f->rows[f->nrows].func = (uint32_t)i;
			f->rows[f->nrows].samples = per[i];
			f->nrows++;
		}
	qsort(f->rows, f->nrows, sizeof(*f->rows), flat_row_cmp);
	free(per);
}

void
flat_release(struct flat *f)
{
	free(f->rows);
	memset(f, 0, sizeof(*f));
}
