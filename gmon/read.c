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
				return fail(err, r->offset, "histogram record overlaps another one (0x%llx-0x%llx)",
					    (unsigned long long)r->low, (unsigned long long)r->high);
			h = &p->hists[n++];
			h->low = r->low;
			h->high = r->high;
			h->nbins = r->nbins;
			h->rate = r->rate;
			strcpy(h->dimen, "seconds");
			h->abbrev = 's';
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

static int
parse(const unsigned char *b, size_t len, struct gmon_profile *p,
      struct gmon_error *err, struct rawhist **rawp)
{
	struct rawhist *raw = NULL;
	size_t nraw = 0, rawcap = 0, arccap = 0;
	size_t off = GMON_HEADER_SIZE;
	char dimen[GMON_DIMEN_SIZE + 1] = "";
	uint32_t first_rate = 0;
	int r;

	if (len < 4 || memcmp(b, GMON_MAGIC, 4))
		return fail(err, 0, "not a gmon.out file (bad magic)");
	if (len < GMON_HEADER_SIZE)
		return fail(err, len, "truncated header");
	p->version = (uint32_t)get_le(b + 4, 4);
	if (p->version > 1)
		return fail(err, 4, "unsupported gmon.out version %u", p->version);
	memcpy(p->spare, b + 8, GMON_SPARE_SIZE);

	while (off < len) {
		unsigned tag = b[off];
		size_t left = len - off - 1;
		const unsigned char *q = b + off + 1;

		switch (tag) {
		case GMON_TAG_TIME_HIST: {
			struct rawhist h;
			char d[GMON_DIMEN_SIZE + 1];

			if (left < GMON_HIST_HDR_SIZE)
				return fail(err, off, "truncated histogram record");
			h.low = get_le(q, 8);
			h.high = get_le(q + 8, 8);
			h.nbins = (uint32_t)get_le(q + 16, 4);
			h.rate = (uint32_t)get_le(q + 20, 4);
			memcpy(d, q + 24, GMON_DIMEN_SIZE);
			d[GMON_DIMEN_SIZE] = 0;
			h.offset = off;
			h.counts = q + GMON_HIST_HDR_SIZE;
			if ((left - GMON_HIST_HDR_SIZE) / 2 < h.nbins)
				return fail(err, off, "truncated histogram record (%u bins, %zu bytes left)",
					    h.nbins, left - GMON_HIST_HDR_SIZE);
			if (h.nbins == 0 || h.high <= h.low)
				return fail(err, off, "empty histogram range");
			if ((h.high - h.low) % h.nbins)
				return fail(err, off, "histogram bin size is not a whole number of bytes");
			if (nraw == 0) {
				memcpy(dimen, d, sizeof(d));
				first_rate = h.rate;
			} else if (strcmp(dimen, d)) {
				return fail(err, off, "histogram records with different dimensions");
			}
			if (first_rate == 0)
				return fail(err, off, "histogram with a sampling rate of 0");
			if ((r = grow(&raw, &rawcap, nraw + 1, sizeof(*raw))))
				goto out;
			raw[nraw++] = h;
			off += 1 + GMON_HIST_HDR_SIZE + 2 * (size_t)h.nbins;
			break;
		}
		case GMON_TAG_CG_ARC:
			if (left < GMON_ARC_SIZE)
				return fail(err, off, "truncated arc record");
			if ((r = grow(&p->arcs, &arccap, p->narcs + 1, sizeof(*p->arcs))))
				goto out;
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
			n = get_le(q, 4);
			if ((left - 4) / 16 < n)
				return fail(err, off, "truncated basic-block record");
			p->nbbrecords++;
			off += 1 + 4 + 16 * n;
			break;
		}
		default:
			return fail(err, off, "unknown record tag %u", tag);
		}
	}
	*rawp = raw;
	return build_hists(p, raw, nraw, err);
out:
	*rawp = raw;
	return r;
}

int
gmon_parse(const void *buf, size_t len, struct gmon_profile *p,
	   struct gmon_error *err)
{
	struct rawhist *raw = NULL;
	int r;

	memset(p, 0, sizeof(*p));
	r = parse(buf, len, p, err, &raw);
	free(raw);
	if (r)
		gmon_profile_release(p);
	if (r == -ENOMEM && err)
		fail(err, 0, "out of memory");
	return r;
}

static int
cmp_hist(const void *a, const void *b)
{
	const struct gmon_hist *x = a, *y = b;

	return x->low < y->low ? -1 : x->low > y->low;
}

int
gmon_profile_add(struct gmon_profile *p, const struct gmon_profile *q,
		 struct gmon_error *err)
{
	size_t n = p->nhists;
	struct gmon_hist *h;
	struct gmon_arc *a;

	h = realloc(p->hists, (p->nhists + q->nhists + 1) * sizeof(*h));
	if (!h)
		return -ENOMEM;
	p->hists = h;
	for (size_t j = 0; j < q->nhists; j++) {
		const struct gmon_hist *x = &q->hists[j];
		struct gmon_hist *same = NULL;

		/* p's original records are sorted and disjoint: bisect */
		size_t lo = 0, hi = p->nhists;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (h[mid].high <= x->low)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < p->nhists && h[lo].low < x->high) {
			if (h[lo].low != x->low || h[lo].high != x->high)
				return fail(err, 0, "histogram ranges overlap (0x%llx-0x%llx)",
					    (unsigned long long)x->low, (unsigned long long)x->high);
			if (h[lo].nbins != x->nbins)
				return fail(err, 0, "different bin sizes for range 0x%llx-0x%llx",
					    (unsigned long long)x->low, (unsigned long long)x->high);
			same = &h[lo];
		}
		if (same) {
			for (uint32_t k = 0; k < x->nbins; k++)
				same->counts[k] += x->counts[k];
			continue;
		}
		for (size_t k = p->nhists; k < n; k++)
			if (h[k].low < x->high && x->low < h[k].high)
				return fail(err, 0, "histogram ranges overlap (0x%llx-0x%llx)",
					    (unsigned long long)x->low, (unsigned long long)x->high);
		h[n] = *x;
		h[n].counts = malloc(x->nbins * sizeof(*x->counts));
		if (!h[n].counts)
			return -ENOMEM;
		memcpy(h[n].counts, x->counts, x->nbins * sizeof(*x->counts));
		n++;
	}
	p->nhists = n;
	qsort(p->hists, p->nhists, sizeof(*p->hists), cmp_hist);
	if (q->narcs) {
		a = realloc(p->arcs, (p->narcs + q->narcs) * sizeof(*a));
		if (!a)
			return -ENOMEM;
		memcpy(a + p->narcs, q->arcs, q->narcs * sizeof(*a));
		p->arcs = a;
		p->narcs += q->narcs;
	}
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
gmon_profile_is_libpc(const struct gmon_profile *p, uint8_t *build_id)
{
	if (p->spare[0] != GMON_PC_MARK0 || p->spare[1] != GMON_PC_MARK1)
		return 0;
	if (build_id)
		memcpy(build_id, p->spare + GMON_BUILDID_OFF, GMON_BUILDID_SIZE);
	return 1;
}
