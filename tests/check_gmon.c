/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for gmon/: the writer's exact bytes, the layout of 32-bit
 * counters into 16-bit records, the reader's round trip and its rejections,
 * and gprof's own reading of a file written here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../gmon/gmon.h"
#include "unit.h"

#if defined(__SANITIZE_ADDRESS__)
#define PC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PC_ASAN 1
#endif
#endif

/* Mirrors write.c: a zero gap this long costs more than a record header. */
#define GAP_BINS	((1 + GMON_HIST_HDR_SIZE) / 2 + 1)

/* ------------------------------------------------------------ helpers */

/* A gmon file written through a sink into a memfd, then read back. */
struct capture {
	int fd;
	struct gmon_sink sink;
	unsigned char *buf;
	size_t len;
};

static void
capture_init(struct capture *c, const uint8_t *spare)
{
	c->fd = memfd_create("gmon", 0);
	ck_assert_int_ge(c->fd, 0);
	c->buf = NULL;
	c->len = 0;
	gmon_sink_init(&c->sink, c->fd);
	ck_assert_int_eq(gmon_sink_header(&c->sink, spare), 0);
}

static void
capture_finish(struct capture *c)
{
	off_t end;

	ck_assert_int_eq(gmon_sink_flush(&c->sink), 0);
	end = lseek(c->fd, 0, SEEK_END);
	ck_assert_int_ge(end, 0);
	ck_assert_uint_eq((uint64_t)end, c->sink.bytes);
	c->len = (size_t)end;
	c->buf = malloc(c->len ? c->len : 1);
	ck_assert_ptr_nonnull(c->buf);
	ck_assert_int_eq(pread(c->fd, c->buf, c->len, 0), (ssize_t)c->len);
}

static void
capture_release(struct capture *c)
{
	free(c->buf);
	close(c->fd);
}

/* A file built byte by byte, for input the writer would never produce. */
struct bytes {
	unsigned char b[4096];
	size_t len;
};

static void
put_le(struct bytes *f, uint64_t v, int n)
{
	ck_assert_uint_le(f->len + n, sizeof(f->b));
	for (int i = 0; i < n; i++)
		f->b[f->len++] = (unsigned char)(v >> (8 * i));
}

static void
put_raw(struct bytes *f, const void *p, size_t n)
{
	ck_assert_uint_le(f->len + n, sizeof(f->b));
	memcpy(f->b + f->len, p, n);
	f->len += n;
}

static void
file_header(struct bytes *f, uint32_t version)
{
	f->len = 0;
	put_raw(f, "gmon", 4);
	put_le(f, version, 4);
	put_le(f, 0, 4);
	put_le(f, 0, 4);
	put_le(f, 0, 4);
}

/* A histogram header; ncounts counts follow, count i being i + 1. */
static size_t
file_hist(struct bytes *f, uint64_t low, uint64_t high, uint32_t nbins,
	  uint32_t rate, const char *dimen, char abbrev, uint32_t ncounts)
{
	char d[GMON_DIMEN_SIZE] = { 0 };
	size_t at = f->len;

	memcpy(d, dimen, strlen(dimen));
	put_le(f, GMON_TAG_TIME_HIST, 1);
	put_le(f, low, 8);
	put_le(f, high, 8);
	put_le(f, nbins, 4);
	put_le(f, rate, 4);
	put_raw(f, d, sizeof(d));
	put_le(f, (unsigned char)abbrev, 1);
	for (uint32_t i = 0; i < ncounts; i++)
		put_le(f, i + 1, 2);
	return at;
}

static size_t
file_arc(struct bytes *f, uint64_t from, uint64_t self, uint32_t count)
{
	size_t at = f->len;

	put_le(f, GMON_TAG_CG_ARC, 1);
	put_le(f, from, 8);
	put_le(f, self, 8);
	put_le(f, count, 4);
	return at;
}

/* A histogram record as the writer laid it out, read back naively. */
struct rec {
	uint64_t low, high;
	uint32_t nbins, rate;
	const unsigned char *counts;
};

/* Walks the histogram records of a file known to be well formed. */
static size_t
walk_records(const unsigned char *b, size_t len, struct rec *out, size_t max)
{
	size_t off = GMON_HEADER_SIZE, n = 0;

	while (off < len) {
		const unsigned char *q = b + off + 1;
		struct rec r;

		if (b[off] != GMON_TAG_TIME_HIST)
			ck_abort_msg("tag %u at %zu: not a histogram", b[off],
				     off);
		memset(&r, 0, sizeof(r));
		for (int i = 7; i >= 0; i--) {
			r.low = r.low << 8 | q[i];
			r.high = r.high << 8 | q[8 + i];
		}
		r.nbins = q[16] | q[17] << 8 | q[18] << 16 |
			  (uint32_t)q[19] << 24;
		r.rate = q[20] | q[21] << 8 | q[22] << 16 |
			 (uint32_t)q[23] << 24;
		r.counts = q + GMON_HIST_HDR_SIZE;
		if (n < max)
			out[n] = r;
		n++;
		off += 1 + GMON_HIST_HDR_SIZE + 2 * (size_t)r.nbins;
	}
	ck_assert_uint_eq(off, len);
	return n;
}

static int
cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->low != y->low)
		return x->low < y->low ? -1 : 1;
	return x->high < y->high ? -1 : x->high > y->high;
}

/* Parse buf, which must be valid. */
static void
parse_ok(const void *buf, size_t len, struct gmon_profile *p)
{
	struct gmon_error err = { 0, 0, "" };
	int r = gmon_parse(buf, len, p, &err);

	ck_assert_msg(r == 0, "gmon_parse: %d at %llu: %s", r,
		      (unsigned long long)err.offset, err.what);
}

/* Parse buf, which must be rejected at offset with a message holding what. */
static void
parse_bad(const void *buf, size_t len, uint64_t offset, const char *what)
{
	struct gmon_profile p;
	struct gmon_error err = { 12345, 0, "" };

	ck_assert_int_eq(gmon_parse(buf, len, &p, &err), -EINVAL);
	ck_assert_msg(strstr(err.what, what), "message '%s' lacks '%s'",
		      err.what, what);
	ck_assert_uint_eq(err.offset, offset);
	/* released on failure: nothing left to free */
	ck_assert_ptr_null(p.hists);
	ck_assert_ptr_null(p.arcs);
	ck_assert_uint_eq(p.nhists, 0);
	ck_assert_uint_eq(p.narcs, 0);
	/* and a NULL err is allowed */
	ck_assert_int_eq(gmon_parse(buf, len, &p, NULL), -EINVAL);
}

/*
 * Write counts[0..n) with gmon_sink_counts, check every record the writer
 * produced against the rules gprof needs, and check that the parsed counts
 * add back to the input bin for bin. Returns the number of records.
 */
static long
counts_round_trip(uint64_t low, unsigned bin, const uint32_t *counts, size_t n)
{
	struct capture c;
	struct gmon_profile p;
	uint64_t *got = calloc(n ? n : 1, sizeof(*got));
	uint64_t want = 0;
	size_t nrec;
	struct rec *recs;
	long r;

	ck_assert_ptr_nonnull(got);
	capture_init(&c, NULL);
	r = gmon_sink_counts(&c.sink, low, bin, 250, counts, n);
	ck_assert_int_ge(r, 0);
	capture_finish(&c);

	nrec = walk_records(c.buf, c.len, NULL, 0);
	ck_assert_uint_eq(nrec, (size_t)r);
	recs = calloc(nrec ? nrec : 1, sizeof(*recs));
	ck_assert_ptr_nonnull(recs);
	walk_records(c.buf, c.len, recs, nrec);
	/*
	 * Plain ifs in these loops: every passing ck_assert is a write(2) to
	 * Check's pipe, and there are 65537 records for a UINT32_MAX count.
	 */
	for (size_t i = 0; i < nrec; i++) {
		const struct rec *x = &recs[i];

		if (x->nbins == 0 ||
		    x->high - x->low != (uint64_t)x->nbins * bin ||
		    x->low < low || x->high > low + n * bin ||
		    (x->low - low) % bin || x->rate != 250)
			ck_abort_msg(
				"record %zu: [0x%llx, 0x%llx), %u bins, rate %u; "
				"want %u-byte bins inside [0x%llx, 0x%llx), rate 250",
				i, (unsigned long long)x->low,
				(unsigned long long)x->high, x->nbins, x->rate,
				bin, (unsigned long long)low,
				(unsigned long long)(low + n * bin));
	}
	/* sorted, each range equals the one before or starts past its end */
	qsort(recs, nrec, sizeof(*recs), cmp_rec);
	for (size_t i = 1; i < nrec; i++) {
		const struct rec *x = &recs[i], *y = &recs[i - 1];

		if (x->low == y->low ? x->high != y->high : y->high > x->low)
			ck_abort_msg(
				"records [0x%llx, 0x%llx) and [0x%llx, 0x%llx) overlap",
				(unsigned long long)y->low,
				(unsigned long long)y->high,
				(unsigned long long)x->low,
				(unsigned long long)x->high);
	}

	parse_ok(c.buf, c.len, &p);
	for (size_t i = 0; i < p.nhists; i++) {
		const struct gmon_hist *h = &p.hists[i];
		size_t first = (size_t)((h->low - low) / bin);

		if (h->high - h->low != (uint64_t)h->nbins * bin)
			ck_abort_msg(
				"parsed range [0x%llx, 0x%llx) is not %u bins of %u",
				(unsigned long long)h->low,
				(unsigned long long)h->high, h->nbins, bin);
		for (uint32_t k = 0; k < h->nbins; k++)
			got[first + k] += h->counts[k];
	}
	for (size_t i = 0; i < n; i++) {
		if (got[i] != counts[i])
			ck_abort_msg("bin %zu: wrote %u, read %llu", i,
				     counts[i], (unsigned long long)got[i]);
		want += counts[i];
	}
	ck_assert_uint_eq(gmon_profile_samples(&p), want);

	gmon_profile_release(&p);
	free(recs);
	free(got);
	capture_release(&c);
	return r;
}

/* ------------------------------------------------------------ writer */

START_TEST(test_sink_writes_gprof_layout)
{
	static const unsigned char want[] = {
		'g', 'm', 'o', 'n', 1, 0, 0, 0,
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
		/* histogram: tag, low, high, nbins, rate, dimen, abbrev */
		0,
		0x00, 0x10, 0x40, 0, 0, 0, 0, 0,
		0x06, 0x10, 0x40, 0, 0, 0, 0, 0,
		3, 0, 0, 0,
		0xe8, 0x03, 0, 0,
		's', 'e', 'c', 'o', 'n', 'd', 's', 0, 0, 0, 0, 0, 0, 0, 0,
		's',
		0x01, 0x00, 0xff, 0xff, 0x34, 0x12,
		/* arc: tag, from, self, count */
		1,
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
		0x10, 0x20, 0x40, 0, 0, 0, 0, 0,
		0xff, 0xff, 0xff, 0xff,
	};
	static const uint8_t spare[GMON_SPARE_SIZE] = {
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
	};
	static const uint16_t counts[3] = { 1, 65535, 0x1234 };
	struct capture c;

	capture_init(&c, spare);
	ck_assert_int_eq(gmon_sink_hist(&c.sink, 0x401000, 0x401006, 1000,
					counts, 3), 0);
	ck_assert_int_eq(gmon_sink_arc(&c.sink, 0x1122334455667788ull,
				       0x402010, UINT32_MAX), 0);
	capture_finish(&c);
	ck_assert_uint_eq(c.len, sizeof(want));
	ck_assert_mem_eq(c.buf, want, sizeof(want));
	capture_release(&c);
}
END_TEST

START_TEST(test_sink_header_without_spare_is_zeros)
{
	static const uint8_t zero[GMON_SPARE_SIZE];
	struct capture c;

	capture_init(&c, NULL);
	capture_finish(&c);
	ck_assert_uint_eq(c.len, GMON_HEADER_SIZE);
	ck_assert_mem_eq(c.buf, "gmon\1\0\0\0", 8);
	ck_assert_mem_eq(c.buf + 8, zero, GMON_SPARE_SIZE);
	capture_release(&c);
}
END_TEST

START_TEST(test_sink_error_sticks)
{
	struct gmon_sink s;
	int fd = open("/dev/null", O_RDONLY);	/* write(2) gives EBADF */

	ck_assert_int_ge(fd, 0);
	gmon_sink_init(&s, fd);
	ck_assert_int_eq(gmon_sink_header(&s, NULL), 0);	/* buffered */
	ck_assert_int_eq(gmon_sink_flush(&s), -EBADF);
	ck_assert_uint_eq(s.len, 0);
	/* later calls change nothing and report the first error */
	ck_assert_int_eq(gmon_sink_arc(&s, 1, 2, 3), -EBADF);
	ck_assert_uint_eq(s.len, 0);
	ck_assert_uint_eq(s.bytes, GMON_HEADER_SIZE);
	ck_assert_int_eq(gmon_sink_flush(&s), -EBADF);
	close(fd);
}
END_TEST

START_TEST(test_sink_counts_reports_write_error)
{
	static uint32_t counts[8192];
	struct gmon_sink s;
	int fd = open("/dev/null", O_RDONLY);

	ck_assert_int_ge(fd, 0);
	for (size_t i = 0; i < 8192; i++)
		counts[i] = 1;
	gmon_sink_init(&s, fd);
	/* 16 KB of counts overflow the 8 KB buffer, so a write happens */
	ck_assert_int_eq(gmon_sink_counts(&s, 0x1000, 2, 100, counts, 8192),
			 -EBADF);
	close(fd);
}
END_TEST

/*
 * Edge cases of gmon_sink_counts, one row each; ranges are in bins:
 * - no bins at all, and only zeros: no records
 * - one bin at index 0, and at n - 1: one record of one bin, exactly there
 * - leading and trailing zeros are trimmed
 * - bins of 1, 4 and 8 bytes, low at a multiple of the bin
 * - a zero gap of GAP_BINS - 1 bins is kept inside one record; one of
 *   GAP_BINS splits the run in two
 * - low not a multiple of the bin, a bin of 0, 3 or 6: -EINVAL, nothing written
 * - 65535 fits one record; 65536 needs a second record for the same range
 * - a tall bin between short ones gets a segment of its own, and only that
 *   segment repeats
 */
struct nz {
	size_t at;
	uint32_t v;
};

struct range {
	size_t a, b;		/* bins [a, b) */
	int times;		/* records with this range */
};

static const struct counts_case {
	const char *name;
	uint64_t low;
	unsigned bin;
	size_t n;
	struct nz nz[4];	/* ends at v == 0 */
	long ret;
	struct range r[4];	/* ends at times == 0 */
} counts_cases[] = {
	{ "no bins", 0x1000, 2, 0, { { 0, 0 } }, 0, { { 0, 0, 0 } } },
	{ "all zeros", 0x1000, 2, 100, { { 0, 0 } }, 0, { { 0, 0, 0 } } },
	{ "bin 0 only", 0x1000, 2, 100, { { 0, 7 } }, 1, { { 0, 1, 1 } } },
	{ "bin n-1 only", 0x1000, 2, 100, { { 99, 7 } }, 1, { { 99, 100, 1 } } },
	{ "zeros trimmed",
	  0x1000,
	  2,
	  100,
	  { { 10, 1 }, { 12, 2 } },
	  1,
	  { { 10, 13, 1 } } },
	{ "1-byte bins", 0x1001, 1, 50, { { 3, 4 } }, 1, { { 3, 4, 1 } } },
	{ "4-byte bins",
	  0x401000,
	  4,
	  64,
	  { { 5, 9 }, { 6, 9 } },
	  1,
	  { { 5, 7, 1 } } },
	{ "8-byte bins", 0x8, 8, 64, { { 63, 1 } }, 1, { { 63, 64, 1 } } },
	{ "gap merged",
	  0x1000,
	  2,
	  100,
	  { { 0, 1 }, { GAP_BINS, 1 } },
	  1,
	  { { 0, GAP_BINS + 1, 1 } } },
	{ "gap split",
	  0x1000,
	  2,
	  100,
	  { { 0, 1 }, { GAP_BINS + 1, 1 } },
	  2,
	  { { 0, 1, 1 }, { GAP_BINS + 1, GAP_BINS + 2, 1 } } },
	{ "low unaligned",
	  0x1002,
	  4,
	  10,
	  { { 0, 1 } },
	  -EINVAL,
	  { { 0, 0, 0 } } },
	{ "bin 0", 0x1000, 0, 10, { { 0, 1 } }, -EINVAL, { { 0, 0, 0 } } },
	{ "bin 3", 0x1002, 3, 10, { { 0, 1 } }, -EINVAL, { { 0, 0, 0 } } },
	{ "bin 6", 0x1002, 6, 10, { { 0, 1 } }, -EINVAL, { { 0, 0, 0 } } },
	{ "65535", 0x1000, 2, 10, { { 4, 65535 } }, 1, { { 4, 5, 1 } } },
	{ "65536", 0x1000, 2, 10, { { 4, 65536 } }, 2, { { 4, 5, 2 } } },
	{ "tall between short",
	  0x1000,
	  2,
	  10,
	  { { 2, 5 }, { 3, 70000 }, { 4, 5 } },
	  4,
	  { { 2, 3, 1 }, { 3, 4, 2 }, { 4, 5, 1 } } },
};

START_TEST(test_sink_counts_edge_cases)
{
	const struct counts_case *t = &counts_cases[_i];
	uint32_t counts[128] = { 0 };
	struct rec recs[16];
	struct capture c;
	size_t nrec, nwant = 0;
	long r;

	for (const struct nz *z = t->nz; z->v; z++)
		counts[z->at] = z->v;
	capture_init(&c, NULL);
	r = gmon_sink_counts(&c.sink, t->low, t->bin, 100, counts, t->n);
	ck_assert_msg(r == t->ret, "%s: returned %ld, want %ld", t->name, r,
		      t->ret);
	capture_finish(&c);
	nrec = walk_records(c.buf, c.len, recs, 16);
	ck_assert_uint_eq(nrec, t->ret > 0 ? (size_t)t->ret : 0);
	for (const struct range *w = t->r; w->times; w++) {
		int seen = 0;

		for (size_t i = 0; i < nrec && i < 16; i++)
			if (recs[i].low == t->low + w->a * t->bin &&
			    recs[i].high == t->low + w->b * t->bin) {
				ck_assert_uint_eq(recs[i].nbins, w->b - w->a);
				seen++;
			}
		ck_assert_msg(seen == w->times, "%s: range [%zu, %zu) in %d records, want %d",
			      t->name, w->a, w->b, seen, w->times);
		nwant += (size_t)w->times;
	}
	ck_assert_uint_eq(nrec, nwant);
	capture_release(&c);
	if (t->ret >= 0)
		counts_round_trip(t->low, t->bin, counts, t->n);
}
END_TEST

/* Values that straddle multiples of 65535, each alone in one bin. */
START_TEST(test_gmon_carries_counts_above_65535)
{
	static const uint32_t tall[] = {
		65535, 65536, 131070, 131071, 200000, UINT32_MAX - 65534,
		UINT32_MAX,
	};

	for (size_t i = 0; i < sizeof(tall) / sizeof(tall[0]); i++) {
		uint32_t counts[9] = { 0 };
		long want = (long)(((uint64_t)tall[i] + 65534) / 65535);

		counts[4] = tall[i];
		ck_assert_int_eq(counts_round_trip(0x2000, 2, counts, 9), want);
	}
}
END_TEST

START_TEST(test_gmon_carries_tall_neighbours_exactly)
{
	uint32_t counts[12] = { 3, 0, 200000, 65535, 65536, 131070, UINT32_MAX,
				0, 0, 1, 0, 65535 };

	/*
	 * Bins 2..6 are one tall segment; UINT32_MAX is 65537 x 65535, so it
	 * repeats 65537 times. Bins 0..1 and 7..11 take one record each.
	 */
	ck_assert_int_eq(counts_round_trip(0x400000, 4, counts, 12), 65539);
}
END_TEST

/* A small xorshift generator, so that failures can be replayed. */
static uint64_t
next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

START_TEST(test_gmon_sparse_counts_sum_back_exactly)
{
	static const unsigned bins[] = { 1, 2, 4, 8, 16 };
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	for (int round = 0; round < 300; round++) {
		size_t n = 1 + next_rand(&seed) % 3000;
		unsigned bin = bins[next_rand(&seed) % 5];
		uint64_t low = (next_rand(&seed) % 0x1000000) * bin;
		unsigned density = 1 + next_rand(&seed) % 40;	/* percent */
		uint32_t *counts = calloc(n, sizeof(*counts));

		ck_assert_ptr_nonnull(counts);
		for (size_t i = 0; i < n; i++) {
			uint64_t x = next_rand(&seed);

			if (x % 100 >= density)
				continue;
			switch ((x >> 8) % 16) {
			case 0:		/* a few levels of 65535 */
				counts[i] =
					(uint32_t)(65000 + (x >> 16) % 300000);
				break;
			case 1:		/* right at the 16-bit edge */
				counts[i] = (uint32_t)(65534 + (x >> 16) % 4);
				break;
			default:
				counts[i] = (uint32_t)(1 + (x >> 16) % 1000);
			}
		}
		counts_round_trip(low, bin, counts, n);
		free(counts);
	}
}
END_TEST

/* ------------------------------------------------------------ reader */

START_TEST(test_gmon_round_trip_keeps_everything)
{
	static const uint8_t spare[GMON_SPARE_SIZE] = {
		'p', 'c', GMON_PC_FORMAT, 2, 0xde, 0xad, 0xbe, 0xef,
		0x01, 0x23, 0x45, 0x67
	};
	static const uint16_t a[4] = { 0, 65535, 1, 2 };
	uint32_t wide[40] = { 0 };
	struct capture c;
	struct gmon_profile p;
	const struct gmon_hist *h;

	wide[0] = 10;
	wide[39] = 70000;
	capture_init(&c, spare);
	/* disjoint ranges, written high first */
	ck_assert_int_eq(gmon_sink_hist(&c.sink, 0x3000, 0x3008, 1000, a, 4),
			 0);
	ck_assert_int_eq(gmon_sink_arc(&c.sink, 0x3002, 0x1010, 7), 0);
	ck_assert_int_eq(gmon_sink_counts(&c.sink, 0x1000, 2, 1000, wide, 40),
			 3);
	ck_assert_int_eq(gmon_sink_arc(&c.sink, 0x1000, 0x3004, UINT32_MAX), 0);
	capture_finish(&c);

	parse_ok(c.buf, c.len, &p);
	ck_assert_uint_eq(p.version, 1);
	ck_assert_mem_eq(p.spare, spare, GMON_SPARE_SIZE);
	ck_assert_int_eq(p.nbbrecords, 0);
	ck_assert_uint_eq(p.nhists, 3);

	/* gap of 38 zero bins: split into [0x1000, 0x1002) and [0x104e, 0x1050)
	 */
	h = &p.hists[0];
	ck_assert_uint_eq(h->low, 0x1000);
	ck_assert_uint_eq(h->high, 0x1002);
	ck_assert_uint_eq(h->nbins, 1);
	ck_assert_uint_eq(h->counts[0], 10);
	h = &p.hists[1];
	ck_assert_uint_eq(h->low, 0x104e);
	ck_assert_uint_eq(h->high, 0x1050);
	ck_assert_uint_eq(h->nbins, 1);
	ck_assert_uint_eq(h->counts[0], 70000);
	h = &p.hists[2];
	ck_assert_uint_eq(h->low, 0x3000);
	ck_assert_uint_eq(h->high, 0x3008);
	ck_assert_uint_eq(h->nbins, 4);
	ck_assert_uint_eq(h->counts[0], 0);
	ck_assert_uint_eq(h->counts[1], 65535);
	ck_assert_uint_eq(h->counts[2], 1);
	ck_assert_uint_eq(h->counts[3], 2);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_uint_eq(p.hists[i].rate, 1000);
		ck_assert_str_eq(p.hists[i].dimen, "seconds");
		ck_assert_int_eq(p.hists[i].abbrev, 's');
	}
	ck_assert_uint_eq(gmon_profile_samples(&p), 10 + 70000 + 65538);

	ck_assert_uint_eq(p.narcs, 2);
	ck_assert_uint_eq(p.arcs[0].from_pc, 0x3002);
	ck_assert_uint_eq(p.arcs[0].self_pc, 0x1010);
	ck_assert_uint_eq(p.arcs[0].count, 7);
	ck_assert_uint_eq(p.arcs[1].from_pc, 0x1000);
	ck_assert_uint_eq(p.arcs[1].self_pc, 0x3004);
	ck_assert_uint_eq(p.arcs[1].count, UINT32_MAX);

	gmon_profile_release(&p);
	ck_assert_ptr_null(p.hists);
	ck_assert_uint_eq(p.nhists, 0);
	capture_release(&c);
}
END_TEST

START_TEST(test_read_sums_records_of_the_same_range)
{
	struct bytes f;
	struct gmon_profile p;

	file_header(&f, 1);
	file_hist(&f, 0x2000, 0x2008, 4, 100, "seconds", 's', 4);
	file_arc(&f, 1, 2, 3);
	file_hist(&f, 0x2000, 0x2008, 4, 250, "seconds", 's', 4);
	file_hist(&f, 0x2000, 0x2008, 4, 100, "seconds", 's', 4);
	parse_ok(f.b, f.len, &p);
	ck_assert_uint_eq(p.nhists, 1);
	ck_assert_uint_eq(p.hists[0].nbins, 4);
	for (uint32_t k = 0; k < 4; k++)
		ck_assert_uint_eq(p.hists[0].counts[k], 3 * (k + 1));
	/* the first record's rate wins, as in gprof */
	ck_assert_uint_eq(p.hists[0].rate, 100);
	ck_assert_uint_eq(gmon_profile_samples(&p), 30);
	ck_assert_uint_eq(p.narcs, 1);
	gmon_profile_release(&p);
}
END_TEST

START_TEST(test_read_sorts_disjoint_records_in_any_order)
{
	struct bytes f;
	struct gmon_profile p;

	file_header(&f, 0);	/* version 0 is accepted too */
	file_hist(&f, 0x5000, 0x5004, 2, 100, "seconds", 's', 2);
	file_hist(&f, 0x1000, 0x1006, 3, 100, "seconds", 's', 3);
	file_hist(&f, 0x5004, 0x5008, 2, 100, "seconds", 's', 2); /* adjacent */
	file_hist(&f, 0x3000, 0x3002, 1, 100, "seconds", 's', 1);
	parse_ok(f.b, f.len, &p);
	ck_assert_uint_eq(p.version, 0);
	ck_assert_uint_eq(p.nhists, 4);
	ck_assert_uint_eq(p.hists[0].low, 0x1000);
	ck_assert_uint_eq(p.hists[0].nbins, 3);
	ck_assert_uint_eq(p.hists[0].counts[2], 3);
	ck_assert_uint_eq(p.hists[1].low, 0x3000);
	ck_assert_uint_eq(p.hists[2].low, 0x5000);
	ck_assert_uint_eq(p.hists[3].low, 0x5004);
	ck_assert_uint_eq(p.hists[3].high, 0x5008);
	ck_assert_uint_eq(gmon_profile_samples(&p), 3 + 6 + 1 + 3);
	gmon_profile_release(&p);
}
END_TEST

START_TEST(test_read_keeps_dimension_and_skips_bb_records)
{
	struct bytes f;
	struct gmon_profile p;

	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1004, 2, 1000000, "cycles", 'c', 2);
	/* a basic-block record of two (address, count) pairs */
	put_le(&f, GMON_TAG_BB_COUNT, 1);
	put_le(&f, 2, 4);
	for (int i = 0; i < 4; i++)
		put_le(&f, 0x1111, 8);
	put_le(&f, GMON_TAG_BB_COUNT, 1);
	put_le(&f, 0, 4);
	file_arc(&f, 0x1000, 0x1002, 9);
	parse_ok(f.b, f.len, &p);
	ck_assert_int_eq(p.nbbrecords, 2);
	ck_assert_uint_eq(p.nhists, 1);
	ck_assert_str_eq(p.hists[0].dimen, "cycles");
	ck_assert_int_eq(p.hists[0].abbrev, 'c');
	ck_assert_uint_eq(p.hists[0].rate, 1000000);
	ck_assert_uint_eq(p.narcs, 1);
	ck_assert_uint_eq(p.arcs[0].count, 9);
	gmon_profile_release(&p);
}
END_TEST

START_TEST(test_read_accepts_header_only)
{
	struct bytes f;
	struct gmon_profile p;

	file_header(&f, 1);
	parse_ok(f.b, f.len, &p);
	ck_assert_uint_eq(p.nhists, 0);
	ck_assert_uint_eq(p.narcs, 0);
	ck_assert_uint_eq(gmon_profile_samples(&p), 0);
	gmon_profile_release(&p);
}
END_TEST

START_TEST(test_read_rejects_empty_buffer)
{
	parse_bad("", 0, 0, "bad magic");
}
END_TEST

START_TEST(test_read_rejects_bad_magic)
{
	struct bytes f;

	file_header(&f, 1);
	f.b[3] = 'x';
	parse_bad(f.b, f.len, 0, "bad magic");
	parse_bad("gmo", 3, 0, "bad magic");
}
END_TEST

START_TEST(test_read_rejects_truncated_header)
{
	struct bytes f;

	file_header(&f, 1);
	parse_bad(f.b, 4, 4, "truncated header");
	parse_bad(f.b, GMON_HEADER_SIZE - 1, GMON_HEADER_SIZE - 1,
		  "truncated header");
}
END_TEST

START_TEST(test_read_rejects_version_2)
{
	struct bytes f;

	file_header(&f, 2);
	parse_bad(f.b, f.len, 4, "unsupported gmon.out version 2");
}
END_TEST

START_TEST(test_read_rejects_unknown_tag)
{
	struct bytes f;
	size_t at;

	file_header(&f, 1);
	file_arc(&f, 1, 2, 3);
	at = f.len;
	put_le(&f, 3, 1);
	put_le(&f, 0, 8);
	parse_bad(f.b, f.len, at, "unknown record tag 3");
}
END_TEST

START_TEST(test_read_rejects_truncated_histogram_header)
{
	struct bytes f;

	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1004, 2, 100, "seconds", 's', 0);
	/* one byte short of the 40-byte header after the tag */
	parse_bad(f.b, f.len - 1, GMON_HEADER_SIZE,
		  "truncated histogram record");
	parse_bad(f.b, GMON_HEADER_SIZE + 1, GMON_HEADER_SIZE,
		  "truncated histogram record");
}
END_TEST

START_TEST(test_read_rejects_truncated_histogram_counts)
{
	struct bytes f;
	size_t at;

	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1004, 2, 100, "seconds", 's', 2);
	at = file_hist(&f, 0x2000, 0x2010, 8, 100, "seconds", 's', 8);
	parse_bad(f.b, f.len - 1, at, "truncated histogram record (8 bins, 15 bytes left)");
	parse_bad(f.b, f.len - 2, at, "truncated histogram record (8 bins, 14 bytes left)");
}
END_TEST

/*
 * 0xffffffff bins promised by a 60-byte file: rejected before anything is
 * allocated for them. Outside ASan, an address-space limit makes a 32 GB
 * allocation fail with -ENOMEM instead of the expected -EINVAL.
 */
START_TEST(test_read_rejects_huge_bin_count_without_allocating)
{
	struct bytes f;
	struct rlimit old, lim;
	int limited = 0;

	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1000 + 2 * (uint64_t)UINT32_MAX, UINT32_MAX,
		  100, "seconds", 's', 0);
	put_le(&f, 0, 8);
#ifndef PC_ASAN
	if (getrlimit(RLIMIT_AS, &old) == 0) {
		lim = old;
		lim.rlim_cur = (rlim_t)4 << 30;
		if (old.rlim_cur == RLIM_INFINITY ||
		    old.rlim_cur > lim.rlim_cur)
			limited = setrlimit(RLIMIT_AS, &lim) == 0;
	}
#else
	(void)lim;
#endif
	parse_bad(f.b, f.len, GMON_HEADER_SIZE,
		  "truncated histogram record (4294967295 bins, 8 bytes left)");
	if (limited)
		setrlimit(RLIMIT_AS, &old);
}
END_TEST

START_TEST(test_read_rejects_empty_range)
{
	struct bytes f;
	size_t at;

	file_header(&f, 1);
	at = file_hist(&f, 0x2000, 0x2000, 2, 100, "seconds", 's', 2);
	parse_bad(f.b, f.len, at, "empty histogram range");
	file_header(&f, 1);
	at = file_hist(&f, 0x2000, 0x1000, 2, 100, "seconds", 's', 2);
	parse_bad(f.b, f.len, at, "empty histogram range");
	file_header(&f, 1);
	at = file_hist(&f, 0x1000, 0x2000, 0, 100, "seconds", 's', 0);
	parse_bad(f.b, f.len, at, "empty histogram range");
}
END_TEST

START_TEST(test_read_rejects_fractional_bin_size)
{
	struct bytes f;
	size_t at;

	file_header(&f, 1);
	at = file_hist(&f, 0x1000, 0x100a, 4, 100, "seconds", 's', 4);
	parse_bad(f.b, f.len, at, "not a whole number of bytes");
}
END_TEST

START_TEST(test_read_rejects_rate_of_zero)
{
	struct bytes f;
	size_t at;

	file_header(&f, 1);
	at = file_hist(&f, 0x1000, 0x1008, 4, 0, "seconds", 's', 4);
	parse_bad(f.b, f.len, at, "sampling rate of 0");
}
END_TEST

START_TEST(test_read_rejects_partial_overlap)
{
	struct bytes f;
	size_t at;

	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1100, 128, 100, "seconds", 's', 128);
	at = file_hist(&f, 0x1080, 0x1180, 128, 100, "seconds", 's', 128);
	parse_bad(f.b, f.len, at, "overlaps another one (0x1080-0x1180)");

	/* the same pair in the other order: the higher record is blamed */
	file_header(&f, 1);
	at = file_hist(&f, 0x1080, 0x1180, 128, 100, "seconds", 's', 128);
	file_hist(&f, 0x1000, 0x1100, 128, 100, "seconds", 's', 128);
	parse_bad(f.b, f.len, at, "overlaps another one (0x1080-0x1180)");

	/* same low, longer range */
	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1100, 128, 100, "seconds", 's', 128);
	at = file_hist(&f, 0x1000, 0x1200, 256, 100, "seconds", 's', 256);
	parse_bad(f.b, f.len, at, "overlaps another one (0x1000-0x1200)");
}
END_TEST

START_TEST(test_read_rejects_different_bin_count_for_same_range)
{
	struct bytes f;
	size_t at;

	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1010, 8, 100, "seconds", 's', 8);
	at = file_hist(&f, 0x1000, 0x1010, 4, 100, "seconds", 's', 4);
	parse_bad(f.b, f.len, at, "different bin sizes (2 and 4 bytes)");
}
END_TEST

/* gprof 2.40: "different scales in histogram records", even when disjoint. */
START_TEST(test_read_rejects_different_bin_size_for_disjoint_ranges)
{
	struct bytes f;
	size_t at;

	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1010, 8, 100, "seconds", 's', 8);
	at = file_hist(&f, 0x2000, 0x2010, 4, 100, "seconds", 's', 4);
	parse_bad(f.b, f.len, at, "different bin sizes (2 and 4 bytes)");
}
END_TEST

START_TEST(test_read_rejects_different_dimen)
{
	struct bytes f;
	size_t at;

	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1004, 2, 100, "seconds", 's', 2);
	at = file_hist(&f, 0x2000, 0x2004, 2, 100, "cycles", 's', 2);
	parse_bad(f.b, f.len, at, "different dimensions");

	/* gprof also rejects a changed abbreviation */
	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1004, 2, 100, "seconds", 's', 2);
	at = file_hist(&f, 0x2000, 0x2004, 2, 100, "seconds", 'x', 2);
	parse_bad(f.b, f.len, at, "different dimension abbreviations");
}
END_TEST

START_TEST(test_read_rejects_truncated_arc)
{
	struct bytes f;
	size_t at;

	file_header(&f, 1);
	file_arc(&f, 1, 2, 3);
	at = file_arc(&f, 4, 5, 6);
	for (size_t cut = 1; cut < 1 + GMON_ARC_SIZE; cut++)
		parse_bad(f.b, at + cut, at, "truncated arc record");
}
END_TEST

START_TEST(test_read_rejects_truncated_bb_record)
{
	struct bytes f;
	size_t at;

	file_header(&f, 1);
	at = f.len;
	put_le(&f, GMON_TAG_BB_COUNT, 1);
	put_le(&f, 2, 4);
	put_le(&f, 0x1000, 8);
	put_le(&f, 1, 8);
	put_le(&f, 0x1004, 8);
	put_le(&f, 1, 8);
	parse_bad(f.b, f.len - 1, at, "truncated basic-block record");
	parse_bad(f.b, at + 3, at, "truncated basic-block record");
	/* and 0xffffffff blocks in a small file */
	f.b[at + 1] = f.b[at + 2] = f.b[at + 3] = f.b[at + 4] = 0xff;
	parse_bad(f.b, f.len, at, "truncated basic-block record");
}
END_TEST

/* ------------------------------------------------------------ profiles */

static void
parse_bytes(struct bytes *f, struct gmon_profile *p)
{
	parse_ok(f->b, f->len, p);
}

START_TEST(test_add_sums_equal_ranges)
{
	struct bytes f;
	struct gmon_profile p, q;

	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1008, 4, 100, "seconds", 's', 4);
	file_hist(&f, 0x2000, 0x2004, 2, 100, "seconds", 's', 2);
	parse_bytes(&f, &p);
	parse_bytes(&f, &q);
	ck_assert_int_eq(gmon_profile_add(&p, &q, NULL), 0);
	ck_assert_uint_eq(p.nhists, 2);
	for (uint32_t k = 0; k < 4; k++)
		ck_assert_uint_eq(p.hists[0].counts[k], 2 * (k + 1));
	ck_assert_uint_eq(p.hists[1].counts[1], 4);
	ck_assert_uint_eq(gmon_profile_samples(&p), 2 * 13);
	/* q is untouched */
	ck_assert_uint_eq(gmon_profile_samples(&q), 13);
	gmon_profile_release(&p);
	gmon_profile_release(&q);
}
END_TEST

START_TEST(test_add_inserts_disjoint_ranges_sorted)
{
	struct bytes f;
	struct gmon_profile p, q;
	static const uint64_t lows[] = { 0x1000, 0x2000, 0x2004, 0x3000,
					 0x9000 };

	file_header(&f, 1);
	file_hist(&f, 0x2000, 0x2004, 2, 100, "seconds", 's', 2);
	file_hist(&f, 0x9000, 0x9002, 1, 100, "seconds", 's', 1);
	parse_bytes(&f, &p);
	file_header(&f, 1);
	file_hist(&f, 0x3000, 0x3004, 2, 100, "seconds", 's', 2);
	file_hist(&f, 0x1000, 0x1008, 4, 100, "seconds", 's', 4);
	file_hist(&f, 0x2004, 0x2008, 2, 100, "seconds", 's', 2);
	parse_bytes(&f, &q);
	ck_assert_int_eq(gmon_profile_add(&p, &q, NULL), 0);
	ck_assert_uint_eq(p.nhists, 5);
	for (size_t i = 0; i < 5; i++) {
		ck_assert_uint_eq(p.hists[i].low, lows[i]);
		if (i)
			ck_assert_uint_le(p.hists[i - 1].high, p.hists[i].low);
	}
	ck_assert_uint_eq(p.hists[0].counts[3], 4);
	ck_assert_uint_eq(gmon_profile_samples(&p), 3 + 1 + 3 + 10 + 3);
	gmon_profile_release(&p);
	gmon_profile_release(&q);
}
END_TEST

START_TEST(test_add_sums_partial_overlap_over_the_union)
{
	struct bytes f;
	struct gmon_profile p, q;
	struct gmon_error err = { 0, 0, "" };

	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1008, 4, 100, "seconds", 's', 4);
	file_hist(&f, 0x2000, 0x2008, 4, 100, "seconds", 's', 4);
	file_arc(&f, 1, 2, 3);
	parse_bytes(&f, &p);
	/* an equal range, a new one, then a partial overlap, as two
	 * processes' files cut the same text differently */
	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1008, 4, 100, "seconds", 's', 4);
	file_hist(&f, 0x1800, 0x1802, 1, 100, "seconds", 's', 1);
	file_hist(&f, 0x2004, 0x200c, 4, 100, "seconds", 's', 4);
	file_arc(&f, 4, 5, 6);
	parse_bytes(&f, &q);
	ck_assert_int_eq(gmon_profile_add(&p, &q, &err), 0);
	ck_assert_uint_eq(p.nhists, 3);
	ck_assert_uint_eq(p.narcs, 2);
	ck_assert_uint_eq(gmon_profile_samples(&p), 41);
	/* 0x2000-0x2008 (1 2 3 4) and 0x2004-0x200c (1 2 3 4), bin by bin */
	ck_assert_uint_eq(p.hists[2].low, 0x2000);
	ck_assert_uint_eq(p.hists[2].high, 0x200c);
	ck_assert_uint_eq(p.hists[2].nbins, 6);
	{
		static const uint64_t want[6] = { 1, 2, 4, 6, 3, 4 };

		for (int i = 0; i < 6; i++)
			ck_assert_uint_eq(p.hists[2].counts[i], want[i]);
	}
	gmon_profile_release(&q);
	/* bins that fall between another record's: refused, p left alone */
	file_header(&f, 1);
	file_hist(&f, 0x2003, 0x2005, 1, 100, "seconds", 's', 1);
	parse_bytes(&f, &q);
	ck_assert_int_eq(gmon_profile_add(&p, &q, &err), -EINVAL);
	ck_assert_msg(strstr(err.what, "fall between"), "%s", err.what);
	ck_assert_uint_eq(p.nhists, 3);
	ck_assert_uint_eq(gmon_profile_samples(&p), 41);
	gmon_profile_release(&p);
	gmon_profile_release(&q);
}
END_TEST

START_TEST(test_add_rejects_different_bin_size)
{
	struct bytes f;
	struct gmon_profile p, q;
	struct gmon_error err = { 0, 0, "" };

	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1008, 4, 100, "seconds", 's', 4);
	parse_bytes(&f, &p);
	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1008, 2, 100, "seconds", 's', 2);
	parse_bytes(&f, &q);
	ck_assert_int_eq(gmon_profile_add(&p, &q, &err), -EINVAL);
	ck_assert_msg(strstr(err.what, "different bin sizes"), "%s", err.what);
	ck_assert_uint_eq(gmon_profile_samples(&p), 10);
	gmon_profile_release(&q);
	file_header(&f, 1);
	file_hist(&f, 0x4000, 0x4008, 2, 100, "seconds", 's', 2);
	parse_bytes(&f, &q);
	ck_assert_int_eq(gmon_profile_add(&p, &q, &err), -EINVAL);
	gmon_profile_release(&p);
	gmon_profile_release(&q);
}
END_TEST

START_TEST(test_add_concatenates_arcs)
{
	struct bytes f;
	struct gmon_profile p, q;

	file_header(&f, 1);
	file_arc(&f, 0x10, 0x20, 1);
	file_arc(&f, 0x30, 0x40, 2);
	parse_bytes(&f, &p);
	file_header(&f, 1);
	file_arc(&f, 0x10, 0x20, 5);
	parse_bytes(&f, &q);
	ck_assert_int_eq(gmon_profile_add(&p, &q, NULL), 0);
	ck_assert_uint_eq(p.narcs, 3);
	ck_assert_uint_eq(p.arcs[0].count, 1);
	ck_assert_uint_eq(p.arcs[1].from_pc, 0x30);
	ck_assert_uint_eq(p.arcs[2].from_pc, 0x10);
	ck_assert_uint_eq(p.arcs[2].self_pc, 0x20);
	ck_assert_uint_eq(p.arcs[2].count, 5);
	gmon_profile_release(&p);
	gmon_profile_release(&q);
}
END_TEST

START_TEST(test_add_into_empty_profile_copies)
{
	struct bytes f;
	struct gmon_profile p, q;

	memset(&p, 0, sizeof(p));
	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1008, 4, 100, "seconds", 's', 4);
	file_arc(&f, 0x10, 0x20, 1);
	parse_bytes(&f, &q);
	ck_assert_int_eq(gmon_profile_add(&p, &q, NULL), 0);
	ck_assert_uint_eq(p.nhists, 1);
	ck_assert_ptr_ne(p.hists[0].counts, q.hists[0].counts);
	ck_assert_mem_eq(p.hists[0].counts, q.hists[0].counts,
			 4 * sizeof(uint64_t));
	ck_assert_uint_eq(p.narcs, 1);
	gmon_profile_release(&q);
	/* the copy owns its counts */
	ck_assert_uint_eq(gmon_profile_samples(&p), 10);
	gmon_profile_release(&p);
}
END_TEST

START_TEST(test_add_to_itself_doubles)
{
	struct bytes f;
	struct gmon_profile p;

	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1008, 4, 100, "seconds", 's', 4);
	file_arc(&f, 0x10, 0x20, 1);
	file_arc(&f, 0x30, 0x40, 2);
	parse_bytes(&f, &p);
	ck_assert_int_eq(gmon_profile_add(&p, &p, NULL), 0);
	ck_assert_uint_eq(gmon_profile_samples(&p), 20);
	ck_assert_uint_eq(p.narcs, 4);
	ck_assert_uint_eq(p.arcs[3].from_pc, 0x30);
	ck_assert_uint_eq(p.arcs[3].count, 2);
	gmon_profile_release(&p);
}
END_TEST

START_TEST(test_is_libpc_reads_mark_and_build_id)
{
	static const uint8_t spare[GMON_SPARE_SIZE] = {
		'p', 'c', GMON_PC_FORMAT, 1, 1, 2, 3, 4, 5, 6, 7, 8
	};
	struct bytes f;
	struct gmon_profile p;
	uint8_t id[GMON_BUILDID_SIZE];

	file_header(&f, 1);
	memcpy(f.b + 8, spare, sizeof(spare));
	parse_bytes(&f, &p);
	memset(id, 0xee, sizeof(id));
	ck_assert_int_eq(gmon_profile_is_libpc(&p, id), 1);
	ck_assert_mem_eq(id, "\1\2\3\4\5\6\7\10", GMON_BUILDID_SIZE);
	ck_assert_int_eq(gmon_profile_is_libpc(&p, NULL), 1);
	gmon_profile_release(&p);
}
END_TEST

START_TEST(test_is_libpc_false_without_mark)
{
	struct bytes f;
	struct gmon_profile p;
	uint8_t id[GMON_BUILDID_SIZE];

	memset(id, 0xee, sizeof(id));
	file_header(&f, 1);
	parse_bytes(&f, &p);
	ck_assert_int_eq(gmon_profile_is_libpc(&p, id), 0);
	ck_assert_uint_eq(id[0], 0xee);	/* untouched */
	gmon_profile_release(&p);
	/* half a mark is no mark */
	f.b[8] = 'p';
	parse_bytes(&f, &p);
	ck_assert_int_eq(gmon_profile_is_libpc(&p, id), 0);
	gmon_profile_release(&p);
	f.b[8] = 'c';
	f.b[9] = 'p';
	parse_bytes(&f, &p);
	ck_assert_int_eq(gmon_profile_is_libpc(&p, NULL), 0);
	gmon_profile_release(&p);
}
END_TEST

/* ------------------------------------------------------------ gprof */

/* Runs cmd and returns its first line of output matching want, or 0. */
static int
run_line(const char *cmd, const char *want, char *line, size_t size)
{
	char buf[512];
	FILE *f = popen(cmd, "r");
	int found = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(buf, sizeof(buf), f))
		if (!found && strstr(buf, want)) {
			snprintf(line, size, "%s", buf);
			found = 1;
		}
	pclose(f);
	return found;
}

static uint64_t
symbol_address(const char *dir, const char *name)
{
	char cmd[512], line[512], want[64];
	unsigned long long a;

	snprintf(cmd, sizeof(cmd), "nm %s/t", dir);
	snprintf(want, sizeof(want), " T %s\n", name);
	ck_assert_msg(run_line(cmd, want, line, sizeof(line)), "no %s in nm",
		      name);
	ck_assert_int_eq(sscanf(line, "%llx", &a), 1);
	return a;
}

/* gprof's self seconds for name in the flat profile of dir/t, dir/gmon.out. */
static double
gprof_seconds(const char *dir, const char *name)
{
	char cmd[512], line[512], want[64], got[64];
	double pct, cum, self;

	snprintf(cmd, sizeof(cmd), "gprof -b -p %s/t %s/gmon.out 2>&1", dir,
		 dir);
	snprintf(want, sizeof(want), " %s\n", name);
	ck_assert_msg(run_line(cmd, want, line, sizeof(line)),
		      "%s not in gprof's output", name);
	ck_assert_int_eq(
		sscanf(line, "%lf %lf %lf %63s", &pct, &cum, &self, got), 4);
	ck_assert_str_eq(got, name);
	return self;
}

/*
 * Two functions of a program compiled here, a histogram with a known count
 * at each (one far above 65535), and gprof's flat profile must show
 * count / rate seconds for each, for 2- and 4-byte bins.
 */
START_TEST(test_gprof_reads_counts_above_65535)
{
	static const char prog[] =
		"#define F __attribute__((noinline, aligned(16)))\n"
		"volatile int v;\n"
		"F void f1(void) { for (int i = 0; i < 100; i++) v += i; }\n"
		"F void f2(void) { for (int i = 0; i < 100; i++) v ^= i; }\n"
		"int main(void) { f1(); f2(); return 0; }\n";
	char dir[] = "/tmp/check_gmon.XXXXXX";
	char cmd[512], path[300];
	uint64_t f1, f2, low;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.c", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(prog, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "${CC:-cc} -O1 -o %s/t %s/t.c", dir, dir);
	ck_assert_int_eq(system(cmd), 0);
	f1 = symbol_address(dir, "f1");
	f2 = symbol_address(dir, "f2");
	ck_assert_uint_gt(f2, f1);
	ck_assert_uint_eq(f1 % 16, 0);
	low = f1;

	for (unsigned bin = 2; bin <= 4; bin += 2) {
		size_t n = (size_t)((f2 - low) / bin) + 4;
		uint32_t *counts = calloc(n, sizeof(*counts));
		struct gmon_sink s;
		int fd;

		ck_assert_ptr_nonnull(counts);
		counts[0] = 200000; /* f1: 2000 s at 100 Hz */
		counts[(f2 - low) / bin] = 65536;	/* f2: 655.37 s */
		counts[(f2 - low) / bin + 1] = 1;
		snprintf(path, sizeof(path), "%s/gmon.out", dir);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		ck_assert_int_ge(fd, 0);
		gmon_sink_init(&s, fd);
		gmon_sink_header(&s, NULL);
		ck_assert_int_ge(gmon_sink_counts(&s, low, bin, 100, counts, n),
				 3);
		ck_assert_int_eq(gmon_sink_flush(&s), 0);
		close(fd);
		free(counts);

		ck_assert_double_eq_tol(gprof_seconds(dir, "f1"), 2000.00,
					0.005);
		ck_assert_double_eq_tol(gprof_seconds(dir, "f2"), 655.37,
					0.005);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ------------------------------------------------ the objects manifest */

static const char manifest_ok[] =
	"pcprof-objects 1\n"
	"version 1.0.0\n"
	"rate 1000\n"
	"pid 4242\n"
	"threads 3\n"
	"signals 133 501\n"
	"no-object 3\n"
	"started 1764582000123456789\n"
	"cpu 1200000 91000000 93500000\n"
	"ended exec\n"
	"timer posix measured 18250\n"
	"object 0 1 597 c5a09cc747ba300b gmon.out /work/a%20b/uselib\n"
	"object 1 1 29 b0af71 - [vdso]\n"
	"object 2 0 1374 ea9d gmon.out+libhot.so /x/libhot.so\n"
	"arc 0x11ad 0x2000000001130 981\n"
	"anon 0x7f3a00001040 2\n";

START_TEST(test_objects_parse_reads_every_record)
{
	struct gmon_objects o;
	struct gmon_error err;

	ck_assert_int_eq(
		gmon_objects_parse(manifest_ok, strlen(manifest_ok), &o, &err),
		0);
	ck_assert_uint_eq(o.rate, 1000);
	ck_assert_str_eq(o.version, "1.0.0");
	ck_assert_uint_eq(o.pid, 4242);
	ck_assert_uint_eq(o.threads, 3);
	ck_assert_uint_eq(o.no_object, 3);
	ck_assert_uint_eq(o.signals, 133);
	ck_assert_uint_eq(o.signal_samples, 501);
	ck_assert_uint_eq(o.started, 1764582000123456789ULL);
	ck_assert_int_eq(o.have_cpu, 1);
	ck_assert_uint_eq(o.cpu_start, 1200000);
	ck_assert_uint_eq(o.cpu_stop, 91000000);
	ck_assert_uint_eq(o.cpu_write, 93500000);
	ck_assert_int_eq(o.ended, GMON_ENDED_EXEC);
	ck_assert_int_eq(o.timer, GMON_TIMER_POSIX);
	ck_assert_int_eq(o.timer_how, GMON_TIMER_MEASURED);
	ck_assert_uint_eq(o.timer_cost, 18250);
	ck_assert_uint_eq(o.n, 3);
	ck_assert_str_eq(o.v[0].path, "/work/a b/uselib");
	ck_assert_str_eq(o.v[0].file, "gmon.out");
	ck_assert_uint_eq(o.v[0].build_id_len, 8);
	ck_assert_ptr_null(o.v[1].file);
	ck_assert_int_eq(o.v[2].loaded, 0);
	ck_assert_uint_eq(o.v[2].samples, 1374);
	ck_assert_uint_eq(o.narcs, 1);
	ck_assert_uint_eq(o.arcs[0].self_pc, 0x2000000001130ULL);
	ck_assert_uint_eq(o.arcs[0].count, 981);
	ck_assert_uint_eq(o.nanon, 1);
	ck_assert_uint_eq(o.anon[0].pc, 0x7f3a00001040ULL);
	ck_assert_uint_eq(o.anon[0].count, 2);
	gmon_objects_release(&o);
}
END_TEST

/* A record this pcprof does not know, of a newer libpc's, is skipped, and
 * the rest read as before; a manifest without a version line (libpc before
 * 1.0.0) says none. */
START_TEST(test_objects_parse_skips_a_newer_libpc_record)
{
	char buf[1024];
	const char *at = strstr(manifest_ok, "version 1.0.0\n");
	struct gmon_objects o;
	struct gmon_error err;
	size_t k = (size_t)(at - manifest_ok);

	memcpy(buf, manifest_ok, k);
	strcpy(buf + k, "frobs-2 7 x%20y\n");
	strcat(buf, at + strlen("version 1.0.0\n"));
	ck_assert_int_eq(gmon_objects_parse(buf, strlen(buf), &o, &err), 0);
	ck_assert_str_eq(o.version, "");
	ck_assert_uint_eq(o.rate, 1000);
	ck_assert_uint_eq(o.n, 3);
	ck_assert_uint_eq(o.nanon, 1);
	gmon_objects_release(&o);
}
END_TEST

/* Each edit of the good manifest must be refused, with a message. */
static void
objects_refused(const char *from, const char *to, const char *what)
{
	char buf[1024];
	const char *at = strstr(manifest_ok, from);
	struct gmon_objects o;
	struct gmon_error err;
	size_t k;

	ck_assert_ptr_nonnull(at);
	k = (size_t)(at - manifest_ok);
	memcpy(buf, manifest_ok, k);
	strcpy(buf + k, to);
	strcat(buf, at + strlen(from));
	memset(&err, 0, sizeof(err));
	ck_assert_int_eq(gmon_objects_parse(buf, strlen(buf), &o, &err),
			 -EINVAL);
	ck_assert_msg(strstr(err.what, what), "'%s' for %s", err.what, to);
}

START_TEST(test_objects_parse_refuses_bad_input)
{
	objects_refused("pcprof-objects 1", "pcprof-objects 2", "not a pcprof");
	objects_refused("gmon.out+libhot.so", "../gmon.out", "bad file name");
	objects_refused("gmon.out+libhot.so", "..", "bad file name");
	objects_refused("a%20b", "a%2", "bad path");
	objects_refused("a%20b", "a%00b", "bad path");
	objects_refused("object 2 ", "object 5 ", "out of order");
	objects_refused("0x2000000001130", "0x5000000001130", "not listed");
	objects_refused("rate 1000", "rate 0", "bad rate");
	objects_refused("pid 4242", "pid 0", "bad pid");
	objects_refused("threads 3", "threads x", "bad thread count");
	objects_refused("0x7f3a00001040 2", "0x7f3a00001040 0", "bad anon");
	objects_refused("0x7f3a00001040 2", "0x7f3a0000104g 2", "bad anon");
	objects_refused("0x7f3a00001040 2", "0x7f3a00001040", "bad anon");
	objects_refused("pid 4242", "pid 4242 1", "bad pid");
	objects_refused("pid 4242", "pid 99999999999", "bad pid");
	objects_refused("rate 1000", "rate 99999999999999999999", "bad rate");
	objects_refused("b0af71", "b0af7", "bad build-id");
	objects_refused("040 2\n", "040 2", "truncated");
	/* a record of a newer libpc's is a lowercase word; anything else is
	 * no record at all */
	objects_refused("no-object 3", "Hello 3", "unknown record");
	objects_refused("no-object 3", "hel%lo 3", "unknown record");
	objects_refused("no-object 3", "4ever 3", "unknown record");
	objects_refused("no-object 3\n", "\n", "unknown record");
	objects_refused("version 1.0.0", "version", "bad version");
	objects_refused("version 1.0.0", "version 1.0.0 rc1", "bad version");
	objects_refused("version 1.0.0", "version 1.0.0\x7f", "bad version");
	objects_refused("version 1.0.0",
			"version 0123456789abcdef0123456789abcdef",
			"bad version");
	objects_refused("/x/libhot.so", "/x/libhot.so extra", "extra fields");
	/* the three readings of one clock come in order */
	objects_refused("cpu 1200000 91000000", "cpu 92000000 91000000", "bad cpu");
	objects_refused("91000000 93500000", "91000000 90000000", "bad cpu");
	objects_refused("cpu 1200000 91000000 93500000", "cpu 1200000 91000000",
			"bad cpu");
	objects_refused("93500000\n", "93500000 1\n", "bad cpu");
	objects_refused("started 1764582000123456789", "started x",
			"bad start");
	objects_refused("ended exec", "ended", "bad ending");
	objects_refused("ended exec", "ended fork", "bad ending");
	objects_refused("ended exec", "ended exec 1", "bad ending");
	objects_refused("timer posix", "timer hrtimer", "bad timer");
	objects_refused("posix measured", "posix guessed", "bad timer");
	objects_refused("measured 18250", "measured", "bad timer");
	objects_refused("measured 18250", "measured 18250 1", "bad timer");
	objects_refused("measured 18250", "measured -1", "bad timer");
	objects_refused("ended exec", "ended signal", "bad ending");
	objects_refused("ended exec", "ended signal 0", "bad ending");
	objects_refused("ended exec", "ended signal 200", "bad ending");
	objects_refused("ended exec", "ended signal 2 3", "bad ending");
	objects_refused("ended exec", "ended signal INT", "bad ending");
	objects_refused("signals 133 501", "signals 133", "bad signals");
	objects_refused("signals 133 501", "signals 600 501", "bad signals");
}
END_TEST

/* A process that died of a fatal signal: "ended signal N". */
START_TEST(test_objects_parse_reads_a_signal_death)
{
	char buf[1024];
	const char *at = strstr(manifest_ok, "ended exec");
	struct gmon_objects o;
	struct gmon_error err;

	memcpy(buf, manifest_ok, (size_t)(at - manifest_ok));
	strcpy(buf + (at - manifest_ok), "ended signal 2");
	strcat(buf, at + strlen("ended exec"));
	ck_assert_int_eq(gmon_objects_parse(buf, strlen(buf), &o, &err), 0);
	ck_assert_int_eq(o.ended, GMON_ENDED_SIGNAL);
	ck_assert_int_eq(o.end_signal, 2);
	gmon_objects_release(&o);
}
END_TEST


/* ------------------------------------------------------------ stacks */

/* A stacks file written through a sink into a memfd, as libpc writes it. */
static unsigned char *
stacks_capture(void (*write)(struct gmon_sink *), size_t *len)
{
	struct gmon_sink sink;
	unsigned char *buf;
	int fd = memfd_create("stacks", 0);

	ck_assert_int_ge(fd, 0);
	gmon_sink_init(&sink, fd);
	write(&sink);
	ck_assert_int_eq(gmon_sink_flush(&sink), 0);
	*len = (size_t)sink.bytes;
	buf = malloc(*len);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pread(fd, buf, *len, 0), (ssize_t)*len);
	close(fd);
	return buf;
}

static void
write_two_threads(struct gmon_sink *s)
{
	static const uint8_t id[GMON_BUILDID_SIZE] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static const uint64_t a[3] = { 0x1140, 0x1180, 0 }, b[1] = { 0x2000 };
	char one[GMON_THREAD_NAME_SIZE] = "pc-one", full[GMON_THREAD_NAME_SIZE];

	memset(full, 'x', sizeof(full));	/* 16 bytes, no NUL */
	ck_assert_int_eq(gmon_sink_stacks_header(s, 4000, id, 4242, 0), 0);
	ck_assert_int_eq(gmon_sink_thread(s, 101, one), 0);
	ck_assert_int_eq(gmon_sink_thread(s, 102, full), 0);
	ck_assert_int_eq(gmon_sink_stack(s, 7, 0, 101, a, 3), 0);
	ck_assert_int_eq(
		gmon_sink_stack(s, 1ull << 40, GMON_STACK_TRUNCATED, 102, b, 1),
		0);
}

START_TEST(test_stacks_round_trip_keeps_threads_and_tids)
{
	struct gmon_stacks st;
	struct gmon_error err;
	size_t len;
	unsigned char *buf = stacks_capture(write_two_threads, &len);

	ck_assert_int_eq(gmon_stacks_parse(buf, len, &st, &err), 0);
	ck_assert_uint_eq(st.rate, 4000);
	ck_assert_uint_eq(st.pid, 4242);
	ck_assert_uint_eq(st.build_id[7], 8);
	ck_assert_uint_eq(st.n, 2);
	ck_assert_uint_eq(st.nthreads, 2);
	ck_assert_uint_eq(st.threads[0].tid, 101);
	ck_assert_str_eq(st.threads[0].name, "pc-one");
	ck_assert_uint_eq(st.threads[1].tid, 102);
	ck_assert_str_eq(st.threads[1].name, "xxxxxxxxxxxxxxxx");
	ck_assert_uint_eq(st.v[0].count, 7);
	ck_assert_uint_eq(st.v[0].tid, 101);
	ck_assert_uint_eq(st.v[0].depth, 3);
	ck_assert_uint_eq(st.v[0].pcs[1], 0x1180);
	ck_assert_uint_eq(st.v[0].pcs[2], 0);
	ck_assert_uint_eq(st.v[1].count, 1ull << 40);
	ck_assert_uint_eq(st.v[1].flags, GMON_STACK_TRUNCATED);
	ck_assert_uint_eq(st.v[1].tid, 102);
	ck_assert_uint_eq(st.v[1].pcs[0], 0x2000);
	gmon_stacks_release(&st);
	/* every cut short of the end is refused, never read past */
	for (size_t cut = GMON_STACKS_HEADER_SIZE + 1; cut < len; cut++)
		if (cut != GMON_STACKS_HEADER_SIZE + 40 &&
		    cut != GMON_STACKS_HEADER_SIZE + 80 &&
		    cut != GMON_STACKS_HEADER_SIZE + 80 + 48)
			ck_assert_int_eq(gmon_stacks_parse(buf, cut, &st, &err),
					 -EINVAL);
	free(buf);
}
END_TEST

START_TEST(test_stacks_reads_version_1_without_tids)
{
	struct bytes b = { .len = 0 };
	struct gmon_stacks st;
	struct gmon_error err;

	put_raw(&b, "pcstacks", 8);
	put_le(&b, 1, 4);
	put_le(&b, 1000, 4);
	put_raw(&b, "\0\0\0\0\0\0\0\0", 8);
	put_le(&b, 0, 4);
	put_le(&b, 99, 4);
	put_le(&b, 5, 8); /* count, depth 2, flags 2: in version 1 a stack */
	put_le(&b, 2, 4);
	put_le(&b, GMON_STACK_THREAD, 4);
	put_le(&b, 0x1140, 8);
	put_le(&b, 0x1180, 8);
	ck_assert_int_eq(gmon_stacks_parse(b.b, b.len, &st, &err), 0);
	ck_assert_uint_eq(st.n, 1);
	ck_assert_uint_eq(st.nthreads, 0);
	ck_assert_uint_eq(st.v[0].tid, 0);
	ck_assert_uint_eq(st.v[0].flags, 0);
	ck_assert_uint_eq(st.v[0].pcs[1], 0x1180);
	gmon_stacks_release(&st);
}
END_TEST

START_TEST(test_stacks_rejects_a_thread_record_of_other_size)
{
	struct bytes b = { .len = 0 };
	struct gmon_stacks st;
	struct gmon_error err;

	put_raw(&b, "pcstacks", 8);
	put_le(&b, 2, 4);
	put_le(&b, 1000, 4);
	put_raw(&b, "\0\0\0\0\0\0\0\0", 8);
	put_le(&b, 0, 4);
	put_le(&b, 99, 4);
	put_le(&b, 0, 8);
	put_le(&b, 3, 4);
	put_le(&b, GMON_STACK_THREAD, 4);
	put_le(&b, 7, 4);
	put_le(&b, 0, 4);
	put_raw(&b, "abcdefghabcdefghabcdefgh", 24);
	ck_assert_int_eq(gmon_stacks_parse(b.b, b.len, &st, &err), -EINVAL);
	ck_assert_str_eq(err.what, "thread record of 3 words");
	ck_assert_uint_eq(err.offset, GMON_STACKS_HEADER_SIZE);
	ck_assert_ptr_null(st.v);
}
END_TEST

/* ------------------------------------------------ reading part by part */

enum { KIND_GMON, KIND_STACKS, KIND_OBJECTS };

/* The kind's _part parser on have bytes of a file of len; on success, a
 * digest of what it read in *sum. */
static int
parse_kind(int kind, const void *b, size_t have, size_t len,
	   struct gmon_error *err, uint64_t *sum)
{
	struct gmon_profile p;
	struct gmon_stacks st;
	struct gmon_objects o;
	int r;

	if (kind == KIND_GMON) {
		if (!(r = gmon_parse_part(b, have, len, &p, err))) {
			*sum = gmon_profile_samples(&p) + 1000 * p.narcs +
			       1000000 * p.nhists;
			gmon_profile_release(&p);
		}
	} else if (kind == KIND_STACKS) {
		if (!(r = gmon_stacks_parse_part(b, have, len, &st, err))) {
			*sum = st.n + 1000 * st.nthreads +
			       (st.n ? st.v[st.n - 1].count : 0);
			gmon_stacks_release(&st);
		}
	} else if (!(r = gmon_objects_parse_part(b, have, len, &o, err))) {
		*sum = o.n + 1000 * o.narcs + 1000000 * o.nanon + o.rate;
		gmon_objects_release(&o);
	}
	return r;
}

struct outcome {
	int r;
	uint64_t offset, sum;
	char what[96];
};

/*
 * What files.c's reader ends with, its first read first bytes: parse
 * what was read (a copy of that much alone, so that a read past it is
 * the sanitizers' to see) and, while the parser asks for more, read to
 * what it needs and at least twice as far.
 */
static struct outcome
read_in_parts(int kind, const unsigned char *b, size_t len, size_t first)
{
	struct gmon_error err = { 0, 0, "" };
	struct outcome o = { 0, 0, 0, "" };
	size_t have = first < len ? first : len;

	for (;;) {
		unsigned char *part = malloc(have ? have : 1);

		ck_assert_ptr_nonnull(part);
		memcpy(part, b, have);
		o.r = parse_kind(kind, part, have, len, &err, &o.sum);
		free(part);
		if (o.r != -EAGAIN)
			break;
		ck_assert_msg(have < len && err.need > have && err.need <= len,
			      "kind %d: need %llu with %zu of %zu read", kind,
			      (unsigned long long)err.need, have, len);
		have = have > len / 2 ? len : 2 * have;
		have = err.need > have ? (size_t)err.need : have;
	}
	if (o.r) {
		o.offset = err.offset;
		memcpy(o.what, err.what, sizeof(o.what));
	}
	return o;
}

/* Read in parts from every first read in firsts, b ends as it does read
 * whole. */
static void
parts_agree(int kind, const unsigned char *b, size_t len, const char *what)
{
	static const size_t firsts[] = { 1,  2,  4,  7,  8,  19, 20,
					 21, 33, 40, 61, 62, 100 };
	struct outcome whole = read_in_parts(kind, b, len, len);

	ck_assert_int_ne(whole.r, -EAGAIN);
	for (size_t i = 0; i < sizeof(firsts) / sizeof(firsts[0]); i++) {
		struct outcome o = read_in_parts(kind, b, len, firsts[i]);

		ck_assert_msg(
			o.r == whole.r && o.offset == whole.offset &&
				o.sum == whole.sum &&
				!strcmp(o.what, whole.what),
			"%s, first read %zu: %d '%s' at %llu, whole: %d '%s' at %llu",
			what, firsts[i], o.r, o.what,
			(unsigned long long)o.offset, whole.r, whole.what,
			(unsigned long long)whole.offset);
	}
}

/* Each cut of b, and b with each byte set to each of set[]: read in
 * parts, as read whole. */
static void
parts_agree_when_broken(int kind, const unsigned char *b, size_t len,
			const char *set, size_t nset)
{
	unsigned char *c = malloc(len);

	ck_assert_ptr_nonnull(c);
	for (size_t cut = 1; cut <= len; cut++)
		parts_agree(kind, b, cut, "cut");
	for (size_t at = 0; at < len; at++)
		for (size_t k = 0; k < nset; k++) {
			memcpy(c, b, len);
			c[at] = (unsigned char)set[k];
			parts_agree(kind, c, len, "changed");
		}
	free(c);
}

/*
 * The _part parsers, from any first read, end as the whole-file parsers
 * do: a gmon file of every record kind, a stacks file and a manifest,
 * each cut at every byte and with every byte changed to a few others
 * (0, 0xff, a newline, a tag, a small count).
 */
START_TEST(test_part_reads_end_as_whole_reads_do)
{
	static const char set[] = { 0, (char)0xff, '\n', 1, 2, 'x' };
	struct bytes f;
	unsigned char *st;
	size_t stlen;

	file_header(&f, 1);
	file_hist(&f, 0x1000, 0x1010, 8, 1000, "seconds", 's', 8);
	file_arc(&f, 0x1002, 0x1008, 5);
	put_le(&f, GMON_TAG_BB_COUNT, 1);
	put_le(&f, 1, 4);
	put_le(&f, 0x1004, 8);
	put_le(&f, 3, 8);
	file_hist(&f, 0x1020, 0x1028, 4, 1000, "seconds", 's', 4);
	parts_agree_when_broken(KIND_GMON, f.b, f.len, set, sizeof(set));
	st = stacks_capture(write_two_threads, &stlen);
	parts_agree_when_broken(KIND_STACKS, st, stlen, set, sizeof(set));
	free(st);
	parts_agree_when_broken(KIND_OBJECTS,
				(const unsigned char *)manifest_ok,
				strlen(manifest_ok), set, sizeof(set));
}
END_TEST

/* Of a file of 1 GiB, what its first 64 KiB show: the magic, the first
 * record, a record that claims more than the file holds, a manifest's
 * first line, NUL byte or overlong line; refused from those bytes alone. */
START_TEST(test_part_refuses_a_huge_file_from_its_beginning)
{
	static const struct {
		int kind;
		const char *head;
		size_t headlen;
		const char *what;
		uint64_t offset;
	} v[] = {
		{ KIND_GMON, "", 0, "bad magic", 0 },
		{ KIND_GMON, "gmon\1\0\0\0", 8, "empty histogram range",
		  GMON_HEADER_SIZE },
		{ KIND_STACKS, "", 0, "bad magic", 0 },
		{ KIND_STACKS, "pcstacks\2\0\0\0", 12, "stack of depth 0",
		  GMON_STACKS_HEADER_SIZE },
		{ KIND_OBJECTS, "", 0, "not a pcprof objects manifest", 1 },
		{ KIND_OBJECTS, "pcprof-objects 1\nrate 1000\n", 27, "NUL byte",
		  3 },
		{ KIND_OBJECTS, "pcprof-objects 1\nrate 1000\n", 27,
		  "line too long", 3 },
	};
	const size_t have = 64 << 10, len = (size_t)1 << 30;
	unsigned char *b = malloc(have);

	ck_assert_ptr_nonnull(b);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct gmon_error err = { 0, 0, "" };
		uint64_t sum;

		memset(b, strstr(v[i].what, "long") ? 'a' : 0, have);
		memcpy(b, v[i].head, v[i].headlen);
		ck_assert_int_eq(
			parse_kind(v[i].kind, b, have, len, &err, &sum),
			-EINVAL);
		ck_assert_msg(strstr(err.what, v[i].what), "case %zu: '%s'", i,
			      err.what);
		ck_assert_uint_eq(err.offset, v[i].offset);
	}
	{
		/* a histogram of 2^31 bins needs 4 GiB */
		struct bytes f;
		struct gmon_error err = { 0, 0, "" };
		uint64_t sum;

		file_header(&f, 1);
		file_hist(&f, 0, (uint64_t)1 << 32, 1u << 31, 1000, "seconds",
			  's', 0);
		ck_assert_int_eq(
			parse_kind(KIND_GMON, f.b, f.len, len, &err, &sum),
			-EINVAL);
		ck_assert_str_eq(err.what, "truncated histogram record (2147483648 bins, "
				 "1073741763 bytes left)");
	}
	free(b);
}
END_TEST

Suite *
gmon_suite(void)
{
	Suite *s = suite_create("gmon");
	TCase *w = tcase_create("writer");
	TCase *r = tcase_create("reader");
	TCase *p = tcase_create("profile");

	tcase_add_test(w, test_sink_writes_gprof_layout);
	tcase_add_test(w, test_sink_header_without_spare_is_zeros);
	tcase_add_test(w, test_sink_error_sticks);
	tcase_add_test(w, test_sink_counts_reports_write_error);
	tcase_add_loop_test(
		w, test_sink_counts_edge_cases, 0,
		(int)(sizeof(counts_cases) / sizeof(counts_cases[0])));
	tcase_add_test(w, test_gmon_carries_counts_above_65535);
	tcase_add_test(w, test_gmon_carries_tall_neighbours_exactly);
	tcase_add_test(w, test_gmon_sparse_counts_sum_back_exactly);
	tcase_set_timeout(w, 60);
	suite_add_tcase(s, w);

	tcase_add_test(r, test_gmon_round_trip_keeps_everything);
	tcase_add_test(r, test_read_sums_records_of_the_same_range);
	tcase_add_test(r, test_read_sorts_disjoint_records_in_any_order);
	tcase_add_test(r, test_read_keeps_dimension_and_skips_bb_records);
	tcase_add_test(r, test_read_accepts_header_only);
	tcase_add_test(r, test_read_rejects_empty_buffer);
	tcase_add_test(r, test_read_rejects_bad_magic);
	tcase_add_test(r, test_read_rejects_truncated_header);
	tcase_add_test(r, test_read_rejects_version_2);
	tcase_add_test(r, test_read_rejects_unknown_tag);
	tcase_add_test(r, test_read_rejects_truncated_histogram_header);
	tcase_add_test(r, test_read_rejects_truncated_histogram_counts);
	tcase_add_test(r, test_read_rejects_huge_bin_count_without_allocating);
	tcase_add_test(r, test_read_rejects_empty_range);
	tcase_add_test(r, test_read_rejects_fractional_bin_size);
	tcase_add_test(r, test_read_rejects_rate_of_zero);
	tcase_add_test(r, test_read_rejects_partial_overlap);
	tcase_add_test(r, test_read_rejects_different_bin_count_for_same_range);
	tcase_add_test(
		r, test_read_rejects_different_bin_size_for_disjoint_ranges);
	tcase_add_test(r, test_read_rejects_different_dimen);
	tcase_add_test(r, test_read_rejects_truncated_arc);
	tcase_add_test(r, test_read_rejects_truncated_bb_record);
	tcase_add_test(r, test_stacks_round_trip_keeps_threads_and_tids);
	tcase_add_test(r, test_stacks_reads_version_1_without_tids);
	tcase_add_test(r, test_stacks_rejects_a_thread_record_of_other_size);
	tcase_add_test(r, test_part_reads_end_as_whole_reads_do);
	tcase_add_test(r, test_part_refuses_a_huge_file_from_its_beginning);
	/* every byte of three files cut and changed, each parsed two ways: a
	 * few seconds on a busy machine, over Check's default 4 s */
	tcase_set_timeout(r, 60);
	suite_add_tcase(s, r);

	tcase_add_test(p, test_add_sums_equal_ranges);
	tcase_add_test(p, test_add_inserts_disjoint_ranges_sorted);
	tcase_add_test(p, test_add_sums_partial_overlap_over_the_union);
	tcase_add_test(p, test_add_rejects_different_bin_size);
	tcase_add_test(p, test_add_concatenates_arcs);
	tcase_add_test(p, test_add_into_empty_profile_copies);
	tcase_add_test(p, test_add_to_itself_doubles);
	tcase_add_test(p, test_is_libpc_reads_mark_and_build_id);
	tcase_add_test(p, test_is_libpc_false_without_mark);
	suite_add_tcase(s, p);

	tcase_add_test(p, test_objects_parse_reads_every_record);
	tcase_add_test(p, test_objects_parse_refuses_bad_input);
	tcase_add_test(p, test_objects_parse_skips_a_newer_libpc_record);
	tcase_add_test(p, test_objects_parse_reads_a_signal_death);
	if (unit_have(
		    "command -v gprof >/dev/null && command -v nm >/dev/null")) {
		TCase *g = tcase_create("gprof");

		tcase_add_test(g, test_gprof_reads_counts_above_65535);
		tcase_set_timeout(g, 60);
		suite_add_tcase(s, g);
	} else {
		unit_skip("test_gprof_reads_counts_above_65535", "gprof or nm not found");
	}
	return s;
}
