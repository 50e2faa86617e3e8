/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading gmon.out into memory, for pcprof. The input may be hostile: every
 * length is checked against what is left of the buffer before it is used,
 * so allocation is bounded by a small multiple of the file's size.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmon.h"

/* A histogram record as found in the file, before equal ranges are summed. */
struct rawhist {
	uint64_t low, high;
	uint32_t nbins, rate;
	uint64_t offset;		/* of the tag byte, for messages */
	char dimen[GMON_DIMEN_SIZE + 1];
	char abbrev;
	const unsigned char *counts;	/* 2 * nbins bytes in the buffer */
};

static int
fail(struct gmon_error *err, uint64_t offset, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->offset = offset;
		va_start(ap, fmt);
		vsnprintf(err->what, sizeof(err->what), fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* The bytes read so far are a valid beginning that ends inside what
 * comes next: -EAGAIN, and err->need, where that ends. */
static int
short_of(struct gmon_error *err, uint64_t need)
{
	if (err) {
		err->offset = need;
		err->need = need;
		snprintf(err->what, sizeof(err->what), "more to read");
	}
	return -EAGAIN;
}

static uint64_t
get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int
cmp_raw(const void *a, const void *b)
{
	const struct rawhist *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	if (x->high != y->high)
		return x->high < y->high ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return 0;
}

/* Grow *v to hold at least n elements of size sz; cap bounds the total. */
static int
grow(void *v, size_t *cap, size_t n, size_t sz)
{
	void *p;
	size_t c = *cap ? *cap : 16;

	if (n <= *cap)
		return 0;
	while (c < n)
		c *= 2;
	p = realloc(*(void **)v, c * sz);
	if (!p)
		return -ENOMEM;
	*(void **)v = p;
	*cap = c;
	return 0;
}

/* Sum sorted raw records into p->hists; equal ranges add, overlaps fail. */
static int
build_hists(struct gmon_profile *p, struct rawhist *raw, size_t nraw,
	    struct gmon_error *err)
{
	size_t n = 0;

	if (nraw)
		qsort(raw, nraw, sizeof(*raw), cmp_raw);
	p->hists = calloc(nraw ? nraw : 1, sizeof(*p->hists));
	if (!p->hists)
		return -ENOMEM;
	for (size_t i = 0; i < nraw; i++) {
		struct rawhist *r = &raw[i];
		struct gmon_hist *h = n ? &p->hists[n - 1] : NULL;

		if (h && h->low == r->low && h->high == r->high) {
			if (h->nbins != r->nbins)
				return fail(err, r->offset, "histogram record with a different bin size for the same range");
		} else {
			if (h && r->low < h->high)
				return fail(
					err, r->offset,
					"histogram record overlaps another one (0x%llx-0x%llx)",
					(unsigned long long)r->low,
					(unsigned long long)r->high);
			h = &p->hists[n++];
			h->low = r->low;
			h->high = r->high;
			h->nbins = r->nbins;
			h->rate = r->rate;
			memcpy(h->dimen, r->dimen, sizeof(h->dimen));
			h->abbrev = r->abbrev;
			h->counts = calloc(r->nbins, sizeof(*h->counts));
			if (!h->counts)
				return -ENOMEM;
			p->nhists = n;
		}
		for (uint32_t k = 0; k < r->nbins; k++)
			h->counts[k] += get_le(r->counts + 2 * k, 2);
	}
	p->nhists = n;
	return 0;
}

/* Bytes of text per bin; gmon_parse has checked that it is whole. */
static uint64_t
bin_size(uint64_t low, uint64_t high, uint32_t nbins)
{
	return (high - low) / nbins;
}

/*
 * gprof takes the dimension, its abbreviation and the bin size from the
 * first histogram record and rejects any later record that differs, even
 * one for a disjoint range ("different scales in histogram records").
 */
static int
check_like_first(const struct rawhist *f, const struct rawhist *h,
		 struct gmon_error *err)
{
	uint64_t fb = bin_size(f->low, f->high, f->nbins);
	uint64_t hb = bin_size(h->low, h->high, h->nbins);

	if (strcmp(f->dimen, h->dimen))
		return fail(err, h->offset, "histogram records with different dimensions");
	if (f->abbrev != h->abbrev)
		return fail(err, h->offset, "histogram records with different dimension abbreviations");
	if (fb != hb)
		return fail(err, h->offset, "histogram records with different bin sizes (%llu and %llu bytes)",
			    (unsigned long long)fb, (unsigned long long)hb);
	/* one grid of bins for the whole file, as gmon_profile_add needs to
	 * sum it with another (libpc's records are runs of one grid) */
	if (fb && f->low % fb != h->low % fb)
		return fail(err, h->offset, "histogram records whose bins fall between each other's");
	return 0;
}

/*
 * Records go straight into *rawp, which the caller frees whatever happens,
 * so that no error path can leak them. Over 60 lines, and kept whole: one
 * case a tag, each checking its record against the bytes left in the file
 * (len) and then against those read (have), reads as the format does
 * (GMON.md's table), and the cases share the offset and the growing arrays
 * that a function per tag would pass around.
 */
static int
parse(const unsigned char *b, size_t have, size_t len, struct gmon_profile *p,
      struct gmon_error *err, struct rawhist **rawp)
{
	size_t nraw = 0, rawcap = 0, arccap = 0;
	size_t off = GMON_HEADER_SIZE;
	int r;

	if (len < 4 || memcmp(b, GMON_MAGIC, have < 4 ? have : 4))
		return fail(err, 0, "not a gmon.out file (bad magic)");
	if (have < GMON_HEADER_SIZE && have < len)
		return short_of(err, len < GMON_HEADER_SIZE ? len :
							      GMON_HEADER_SIZE);
	if (len < GMON_HEADER_SIZE)
		return fail(err, len, "truncated header");
	p->version = (uint32_t)get_le(b + 4, 4);
	if (p->version > 1)
		return fail(err, 4, "unsupported gmon.out version %u",
			    p->version);
	memcpy(p->spare, b + 8, GMON_SPARE_SIZE);

	while (off < len) {
		size_t left = len - off - 1, got;
		const unsigned char *q = b + off + 1;
		unsigned tag;

		if (off >= have)
			return short_of(err, off + 1);
		tag = b[off];
		got = have - off - 1;
		switch (tag) {
		case GMON_TAG_TIME_HIST: {
			struct rawhist h;

			if (left < GMON_HIST_HDR_SIZE)
				return fail(err, off, "truncated histogram record");
			if (got < GMON_HIST_HDR_SIZE)
				return short_of(err,
						off + 1 + GMON_HIST_HDR_SIZE);
			h.low = get_le(q, 8);
			h.high = get_le(q + 8, 8);
			h.nbins = (uint32_t)get_le(q + 16, 4);
			h.rate = (uint32_t)get_le(q + 20, 4);
			memcpy(h.dimen, q + 24, GMON_DIMEN_SIZE);
			h.dimen[GMON_DIMEN_SIZE] = 0;
			h.abbrev = (char)q[24 + GMON_DIMEN_SIZE];
			h.offset = off;
			h.counts = q + GMON_HIST_HDR_SIZE;
			if ((left - GMON_HIST_HDR_SIZE) / 2 < h.nbins)
				return fail(err, off, "truncated histogram record (%u bins, %zu bytes left)",
					    h.nbins, left - GMON_HIST_HDR_SIZE);
			if (h.nbins == 0 || h.high <= h.low)
				return fail(err, off, "empty histogram range");
			if ((h.high - h.low) % h.nbins)
				return fail(err, off, "histogram bin size is not a whole number of bytes");
			if (nraw == 0 && h.rate == 0)
				return fail(err, off, "histogram with a sampling rate of 0");
			if (nraw &&
			    (r = check_like_first(&(*rawp)[0], &h, err)))
				return r;
			if ((got - GMON_HIST_HDR_SIZE) / 2 < h.nbins)
				return short_of(err,
						off + 1 + GMON_HIST_HDR_SIZE +
							2 * (uint64_t)h.nbins);
			if ((r = grow(rawp, &rawcap, nraw + 1, sizeof(**rawp))))
				return r;
			(*rawp)[nraw++] = h;
			off += 1 + GMON_HIST_HDR_SIZE + 2 * (size_t)h.nbins;
			break;
		}
		case GMON_TAG_CG_ARC:
			if (left < GMON_ARC_SIZE)
				return fail(err, off, "truncated arc record");
			if (got < GMON_ARC_SIZE)
				return short_of(err, off + 1 + GMON_ARC_SIZE);
			if ((r = grow(&p->arcs, &arccap, p->narcs + 1,
				      sizeof(*p->arcs))))
				return r;
			p->arcs[p->narcs].from_pc = get_le(q, 8);
			p->arcs[p->narcs].self_pc = get_le(q + 8, 8);
			p->arcs[p->narcs].count = get_le(q + 16, 4);
			p->narcs++;
			off += 1 + GMON_ARC_SIZE;
			break;
		case GMON_TAG_BB_COUNT: {
			uint64_t n;

			if (left < 4)
				return fail(err, off, "truncated basic-block record");
			if (got < 4)
				return short_of(err, off + 1 + 4);
			n = get_le(q, 4);
			if ((left - 4) / 16 < n)
				return fail(err, off, "truncated basic-block record");
			if ((got - 4) / 16 < n)
				return short_of(err, off + 1 + 4 + 16 * n);
			p->nbbrecords++;
			off += 1 + 4 + 16 * n;
			break;
		}
		default:
			return fail(err, off, "unknown record tag %u", tag);
		}
	}
	return build_hists(p, *rawp, nraw, err);
}

int
gmon_parse(const void *buf, size_t len, struct gmon_profile *p,
	   struct gmon_error *err)
{
	return gmon_parse_part(buf, len, len, p, err);
}

int
gmon_parse_part(const void *buf, size_t have, size_t len,
		struct gmon_profile *p, struct gmon_error *err)
{
	struct rawhist *raw = NULL;
	int r;

	memset(p, 0, sizeof(*p));
	r = parse(buf, have < len ? have : len, len, p, err, &raw);
	free(raw);
	if (r)
		gmon_profile_release(p);
	if (r == -ENOMEM && err)
		fail(err, 0, "out of memory");
	return r;
}

/* Everything gmon_profile_add can reject, checked before p is changed. */
static int
check_add(const struct gmon_profile *p, const struct gmon_profile *q,
	  struct gmon_error *err)
{
	const struct gmon_hist *f = p->nhists ? &p->hists[0] :
		q->nhists ? &q->hists[0] : NULL;

	for (size_t j = 0; j < q->nhists; j++) {
		const struct gmon_hist *x = &q->hists[j];

		if (x->nbins == 0 || x->high <= x->low ||
		    (j && q->hists[j - 1].high > x->low))
			return fail(err, 0, "histogram records not sorted and disjoint");
		if (strcmp(f->dimen, x->dimen) || f->abbrev != x->abbrev)
			return fail(err, 0, "histogram records with different dimensions");
		if (bin_size(f->low, f->high, f->nbins) !=
		    bin_size(x->low, x->high, x->nbins))
			return fail(
				err, 0,
				"different bin sizes for range 0x%llx-0x%llx",
				(unsigned long long)x->low,
				(unsigned long long)x->high);
		if (x->low % bin_size(f->low, f->high, f->nbins) !=
		    f->low % bin_size(f->low, f->high, f->nbins))
			return fail(
				err, 0,
				"bins of range 0x%llx-0x%llx fall between another's",
				(unsigned long long)x->low,
				(unsigned long long)x->high);
	}
	return 0;
}

/*
 * p's and q's histograms (n of them, at least one), merged into *outp
 * (*noutp records): records that overlap or touch become one, their
 * counts summed. p is unchanged. 0, -ENOMEM, or -EINVAL when a summed
 * record would be too long.
 */
static int
merge_hists(const struct gmon_profile *p, const struct gmon_profile *q,
	    size_t n, struct gmon_hist **outp, size_t *noutp,
	    struct gmon_error *err)
{
	const struct gmon_hist **v = malloc(n * sizeof(*v));
	struct gmon_hist *out = calloc(n, sizeof(*out));
	size_t nout = 0;
	uint64_t bin;

	if (!v || !out) {
		free(v);
		free(out);
		return -ENOMEM;
	}
	/* both lists are sorted: merge them by low */
	for (size_t a = 0, b = 0, k = 0; k < n; k++)
		v[k] = b == q->nhists || (a < p->nhists &&
					  p->hists[a].low <= q->hists[b].low) ?
			       &p->hists[a++] :
			       &q->hists[b++];
	bin = bin_size(v[0]->low, v[0]->high, v[0]->nbins);
	for (size_t k = 0; k < n; ) {
		size_t e = k + 1;
		uint64_t low = v[k]->low, high = v[k]->high;
		struct gmon_hist *h = &out[nout];

		while (e < n && v[e]->low < high) {
			if (v[e]->high > high)
				high = v[e]->high;
			e++;
		}
		*h = *v[k];
		h->high = high;
		h->nbins = (uint32_t)((high - low) / bin);
		if ((high - low) / bin > UINT32_MAX ||
		    !(h->counts = calloc(h->nbins, sizeof(*h->counts)))) {
			while (nout > 0)
				free(out[--nout].counts);
			free(out);
			free(v);
			return (high - low) / bin > UINT32_MAX ?
				       fail(err, 0,
					    "summed range 0x%llx-0x%llx too long",
					    (unsigned long long)low,
					    (unsigned long long)high) :
				       -ENOMEM;
		}
		for (; k < e; k++)
			for (uint32_t i = 0; i < v[k]->nbins; i++)
				h->counts[(v[k]->low - low) / bin + i] +=
					v[k]->counts[i];
		nout++;
	}
	free(v);
	*outp = out;
	*noutp = nout;
	return 0;
}

/*
 * All checks and allocations come before p is changed, so that on any
 * error p is left as it was. p and q may be the same profile: the sum is
 * built in new arrays and p's old ones are freed last.
 *
 * Each file has disjoint records, but two files' records need not be the
 * same where they meet: libpc writes the runs of bins each process
 * sampled, so one process's record may cover part of another's. Records
 * that overlap are summed into one over their union (gprof refuses such
 * files; pcprof merge writes their sum as one it reads).
 */
int
gmon_profile_add(struct gmon_profile *p, const struct gmon_profile *q,
		 struct gmon_error *err)
{
	size_t n = p->nhists + q->nhists, nout = 0, qarcs = q->narcs;
	struct gmon_hist *out = NULL;
	int r;

	if ((r = check_add(p, q, err)))
		return r;
	if (qarcs) {
		struct gmon_arc *a =
			realloc(p->arcs, (p->narcs + qarcs) * sizeof(*a));

		if (!a)
			return -ENOMEM;
		p->arcs = a;	/* more room; p's arcs are unchanged */
	}
	if (n) {
		if ((r = merge_hists(p, q, n, &out, &nout, err)))
			return r;
		for (size_t i = 0; i < p->nhists; i++)
			free(p->hists[i].counts);
		free(p->hists);
		p->hists = out;
		p->nhists = nout;
	}
	if (qarcs)
		memcpy(p->arcs + p->narcs, q->arcs, qarcs * sizeof(*p->arcs));
	p->narcs += qarcs;
	return 0;
}

uint64_t
gmon_profile_samples(const struct gmon_profile *p)
{
	uint64_t t = 0;

	for (size_t i = 0; i < p->nhists; i++)
		for (uint32_t k = 0; k < p->hists[i].nbins; k++)
			t += p->hists[i].counts[k];
	return t;
}

void
gmon_profile_release(struct gmon_profile *p)
{
	for (size_t i = 0; i < p->nhists; i++)
		free(p->hists[i].counts);
	free(p->hists);
	free(p->arcs);
	memset(p, 0, sizeof(*p));
}

int
gmon_arc_is_outside(const struct gmon_profile *p, const struct gmon_arc *a)
{
	return a->from_pc == GMON_OUTSIDE_FROM &&
	       a->self_pc == GMON_OUTSIDE_SELF &&
	       gmon_profile_is_libpc(p, NULL);
}

size_t
gmon_profile_outside(const struct gmon_profile *p, uint64_t *samples)
{
	size_t n = 0;

	*samples = 0;
	for (size_t i = 0; i < p->narcs; i++)
		if (gmon_arc_is_outside(p, &p->arcs[i])) {
			*samples += p->arcs[i].count;
			n++;
		}
	return n;
}

int
gmon_profile_is_libpc(const struct gmon_profile *p, uint8_t *build_id)
{
	if (p->spare[0] != GMON_PC_MARK0 || p->spare[1] != GMON_PC_MARK1)
		return 0;
	if (build_id)
		memcpy(build_id, p->spare + GMON_BUILDID_OFF,
		       GMON_BUILDID_SIZE);
	return 1;
}

int
gmon_read_header(const void *h, size_t n, uint8_t build_id[GMON_BUILDID_SIZE])
{
	const unsigned char *b = h;

	if (n < GMON_HEADER_SIZE || memcmp(b, GMON_MAGIC, 4))
		return -1;
	if (b[8] != GMON_PC_MARK0 || b[9] != GMON_PC_MARK1)
		return 0;
	memcpy(build_id, b + 8 + GMON_BUILDID_OFF, GMON_BUILDID_SIZE);
	return 1;
}

/* Check every record of a stacks file of len bytes, have of them read;
 * count its stacks, thread records and stack words. 0, -EINVAL with err
 * filled in, or -EAGAIN (short_of). */
static int
stacks_count(const unsigned char *b, size_t have, size_t len, uint32_t version,
	     size_t head, size_t *n, size_t *nthreads, size_t *words,
	     struct gmon_error *err)
{
	size_t off = GMON_STACKS_HEADER_SIZE;

	while (off < len) {
		uint64_t depth;
		uint32_t flags;

		if (len - off < head)
			return fail(err, off, "truncated stack record");
		if (have - off < head)
			return short_of(err, off + head);
		depth = get_le(b + off + 8, 4);
		flags = (uint32_t)get_le(b + off + 12, 4);
		if (version > 1 && (flags & GMON_STACK_THREAD) && depth != 2)
			return fail(err, off, "thread record of %llu words",
				    (unsigned long long)depth);
		if (version > 2 && (flags & GMON_STACK_WALLINFO) &&
		    depth != GMON_WALLINFO_WORDS)
			return fail(err, off, "wall record of %llu words",
				    (unsigned long long)depth);
		if (depth == 0 || depth > GMON_STACK_MAX_DEPTH)
			return fail(err, off, "stack of depth %llu",
				    (unsigned long long)depth);
		if ((len - off - head) / 8 < depth)
			return fail(err, off, "truncated stack record");
		if ((have - off - head) / 8 < depth)
			return short_of(err, off + head + 8 * depth);
		if (version > 1 && (flags & GMON_STACK_THREAD)) {
			(*nthreads)++;
		} else if (version > 2 && (flags & GMON_STACK_WALLINFO)) {
			/* read into the header's figures */
		} else {
			*words += depth;
			(*n)++;
		}
		off += head + 8 * depth;
	}
	return 0;
}

/* The second pass over a stacks file that stacks_count found whole and
 * sound: its records into st, whose arrays it counted. */
static void
stacks_fill(const unsigned char *b, size_t len, uint32_t version, size_t head,
	    struct gmon_stacks *st)
{
	size_t off = GMON_STACKS_HEADER_SIZE, words = 0;

	while (off < len) {
		uint32_t depth = (uint32_t)get_le(b + off + 8, 4);
		uint32_t flags = (uint32_t)get_le(b + off + 12, 4);
		uint32_t tid =
			head > 16 ? (uint32_t)get_le(b + off + 16, 4) : 0;

		if (version > 1 && (flags & GMON_STACK_THREAD)) {
			struct gmon_thread *t = &st->threads[st->nthreads++];

			t->tid = tid;
			memcpy(t->name, b + off + head, GMON_THREAD_NAME_SIZE);
			t->name[GMON_THREAD_NAME_SIZE] = 0;
		} else if (version > 2 && (flags & GMON_STACK_WALLINFO)) {
			for (uint32_t d = 0; d < GMON_WALLINFO_WORDS; d++)
				st->wall[d] = get_le(b + off + head + 8 * d, 8);
		} else {
			struct gmon_stack *k = &st->v[st->n++];

			k->count = get_le(b + off, 8);
			k->depth = depth;
			/* version 1 had no thread records: not its flag */
			k->flags = version == 1 ? flags & ~GMON_STACK_THREAD :
						  flags;
			k->tid = tid;
			k->pcs = st->pool + words;
			for (uint32_t d = 0; d < depth; d++)
				st->pool[words++] =
					get_le(b + off + head + 8 * d, 8);
		}
		off += head + 8 * (size_t)depth;
	}
}

int
gmon_stacks_parse(const void *buf, size_t len, struct gmon_stacks *st,
		  struct gmon_error *err)
{
	return gmon_stacks_parse_part(buf, len, len, st, err);
}

int
gmon_stacks_parse_part(const void *buf, size_t have, size_t len,
		       struct gmon_stacks *st, struct gmon_error *err)
{
	const unsigned char *b = buf;
	size_t n = 0, nthreads = 0, words = 0, head;
	uint32_t version;
	int r;

	memset(st, 0, sizeof(*st));
	have = have < len ? have : len;
	if (len < 8 || memcmp(b, GMON_STACKS_MAGIC, have < 8 ? have : 8))
		return fail(err, 0, "not a pcprof stacks file (bad magic)");
	if (have < GMON_STACKS_HEADER_SIZE && have < len)
		return short_of(err, len < GMON_STACKS_HEADER_SIZE ? len :
				GMON_STACKS_HEADER_SIZE);
	if (len < GMON_STACKS_HEADER_SIZE)
		return fail(err, len, "truncated header");
	version = (uint32_t)get_le(b + 8, 4);
	if (version < 1 || version > GMON_STACKS_WALL_VERSION)
		return fail(err, 8, "unsupported stacks version %u",
			    (unsigned)version);
	head = version == 1 ? 16 : 24;	/* a record's bytes before its words */
	st->rate = (uint32_t)get_le(b + 12, 4);
	/* the flags are a version 3 file's; older files wrote 0 there */
	st->flags = version > 2 ?
			    (uint32_t)get_le(b + 24, 4) & GMON_STACKS_WALL :
			    0;
	memcpy(st->build_id, b + 16, GMON_BUILDID_SIZE);
	st->pid = (uint32_t)get_le(b + 28, 4);
	/* first pass: check every record and count, so that the second
	 * allocates exactly what the file holds; it ends with all of it read */
	if ((r = stacks_count(b, have, len, version, head, &n, &nthreads,
			      &words, err)))
		return r;
	st->v = calloc(n ? n : 1, sizeof(*st->v));
	st->pool = calloc(words ? words : 1, sizeof(*st->pool));
	st->threads = calloc(nthreads ? nthreads : 1, sizeof(*st->threads));
	if (!st->v || !st->pool || !st->threads) {
		gmon_stacks_release(st);
		return -ENOMEM;
	}
	stacks_fill(b, len, version, head, st);
	return 0;
}

void
gmon_stacks_release(struct gmon_stacks *st)
{
	free(st->v);
	free(st->pool);
	free(st->threads);
	memset(st, 0, sizeof(*st));
}
