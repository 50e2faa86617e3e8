/*
 * pcprof diff: loading a side, every run of one build, into every
 * function's seconds a run (self, and total from the call graphs when the
 * metric needs it). Called by diff.c; calls nothing else of diff's.
 */
#include <stdlib.h>
#include <string.h>

#include "pcprof.h"
#include "diff.h"

/* Every run's profiles, checked against the side's executable: with
 * PC_SCOPE=all their manifests add the other objects' functions to the
 * table. */
static void
side_read_runs(struct side *s, const struct symtab_opts *so, struct gmon_profile *prof)
{
	static const uint8_t zero[GMON_BUILDID_SIZE];

	for (int r = 0; r < s->nruns; r++) {
		uint8_t id[GMON_BUILDID_SIZE];

		s->files[r] = select_files(&s->st, &s->args[r], 1, &s->nfiles[r]);
		profiles_load(&prof[r], s->files[r], s->nfiles[r]);
		/* a gate must not compare names read with the wrong symbols */
		if (gmon_profile_is_libpc(&prof[r], id) && memcmp(id, zero, sizeof(id)) &&
		    s->st.build_id_len >= GMON_BUILDID_SIZE &&
		    memcmp(id, s->st.build_id, sizeof(id)))
			pc_fatal("'%s': not a profile of '%s' (another build-id)",
				 s->files[r][0], s->exe);
		whole_load(&s->st, &prof[r], s->files[r], s->nfiles[r], s->exe, so);
	}
	whole_release();
	/* functions of one name in two objects stay apart: "name (object)" */
	for (size_t f = 0; s->st.nobjs && f < s->st.nfuncs; f++) {
		char buf[1024];
		const char *l = func_label(&s->st, (uint32_t)f, buf, sizeof(buf));

		if (l == buf) {
			free(s->st.funcs[f]);
			if (!(s->st.funcs[f] = strdup(buf)))
				pc_fatal("out of memory");
		}
	}
}

/* Run r's total seconds per function, from its call graph, into total. */
static void
side_totals(const struct side *s, int r, const struct gmon_profile *p,
	    const struct flat *f, double *total)
{
	struct callgraph cg;
	uint64_t outside;

	/* the records of samples outside the executable are not arcs */
	if (p->narcs <= gmon_profile_outside(p, &outside))
		pc_fatal("'%s': no call graph in the profile (recorded with PC_CALLGRAPH=0?); --metric total needs one",
			 s->files[r][0]);
	callgraph_build(&cg, &s->st, p, f);
	for (size_t i = 0; i < s->st.nfuncs; i++)
		total[i] = cg.total[i] / s->rate;
	callgraph_release(&cg);
}

void
diff_side_load(struct side *s, const struct symtab_opts *so, int need_total)
{
	struct gmon_profile *prof = calloc((size_t)s->nruns, sizeof(*prof));
	size_t nf;

	if (!prof)
		pc_fatal("out of memory");
	symbols_load_whole(&s->st, s->exe, so, s->args[0]);
	s->files = calloc((size_t)s->nruns, sizeof(*s->files));
	s->nfiles = calloc((size_t)s->nruns, sizeof(*s->nfiles));
	if (!s->files || !s->nfiles)
		pc_fatal("out of memory");
	side_read_runs(s, so, prof);
	nf = s->st.nfuncs ? s->st.nfuncs : 1;
	s->self = calloc((size_t)s->nruns * nf, sizeof(*s->self));
	s->program = calloc((size_t)s->nruns, sizeof(*s->program));
	if (need_total)
		s->total = calloc((size_t)s->nruns * nf, sizeof(*s->total));
	if (!s->self || !s->program || (need_total && !s->total))
		pc_fatal("out of memory");
	for (int r = 0; r < s->nruns; r++) {
		struct gmon_profile p = prof[r];
		struct flat f;
		double *self = s->self + (size_t)r * nf;

		if (r == 0)
			s->rate = p.hists[0].rate;
		else if (p.hists[0].rate != s->rate)
			pc_fatal("'%s': sampled at %u Hz, '%s' at %u Hz: the runs of one side must share a rate",
				 s->files[r][0], p.hists[0].rate, s->files[0][0], s->rate);
		if (s->rate == 0)
			pc_fatal("'%s': sampling rate 0", s->files[r][0]);
		flat_build(&f, &s->st, &p);
		if (f.total == 0)
			pc_fatal("'%s': the profile holds no samples", s->files[r][0]);
		for (size_t i = 0; i < f.nrows; i++)
			self[f.rows[i].func] = f.rows[i].samples / s->rate;
		s->program[r] = f.total / s->rate;
		if (need_total)
			side_totals(s, r, &p, &f, s->total + (size_t)r * nf);
		flat_release(&f);
		gmon_profile_release(&p);
	}
	free(prof);
}

void
diff_side_release(struct side *s)
{
	for (int r = 0; r < s->nruns; r++) {
		for (int i = 0; i < s->nfiles[r]; i++)
			free(s->files[r][i]);
		free(s->files[r]);
	}
	free(s->files);
	free(s->nfiles);
	free(s->self);
	free(s->total);
	free(s->program);
	symtab_release(&s->st);
}
