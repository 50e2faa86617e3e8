/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writing gmon.out: a small buffered sink over a file descriptor, the
 * layout of 32-bit counters into gprof's 16-bit histogram records, and the
 * names of the files written beside a profile. Called by
 * libpc.so at exit and from signal handlers, so everything here is
 * async-signal-safe: no allocation, no stdio, no locks, only write(2).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "gmon.h"

/* A gap of zero bins shorter than this costs less than a new record. */
#define GAP_BINS	((1 + GMON_HIST_HDR_SIZE) / 2 + 1)

void
gmon_sink_init(struct gmon_sink *s, int fd)
{
	s->fd = fd;
	s->error = 0;
	s->bytes = 0;
	s->len = 0;
}

int
gmon_sink_flush(struct gmon_sink *s)
{
	size_t off = 0;

	while (!s->error && off < s->len) {
		ssize_t n = write(s->fd, s->buf + off, s->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			s->error = -errno;
		else if (n == 0)
			s->error = -EIO;
		else
			off += (size_t)n;
	}
	s->len = 0;
	return s->error;
}

static void
put_bytes(struct gmon_sink *s, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (!s->error && n > 0) {
		size_t room = sizeof(s->buf) - s->len;
		size_t k = n < room ? n : room;

		memcpy(s->buf + s->len, c, k);
		s->len += k;
		s->bytes += k;
		c += k;
		n -= k;
		if (s->len == sizeof(s->buf))
			gmon_sink_flush(s);
	}
}

int
gmon_sink_bytes(struct gmon_sink *s, const void *p, size_t n)
{
	put_bytes(s, p, n);
	return s->error;
}

/* gprof reads fields in the byte order of the ELF it is given: x86_64 is
 * little-endian, and so is every target libpc supports today. */
static void
put_u8(struct gmon_sink *s, unsigned v)
{
	unsigned char b = (unsigned char)v;

	put_bytes(s, &b, 1);
}

static void
put_u16(struct gmon_sink *s, unsigned v)
{
	unsigned char b[2] = { (unsigned char)v, (unsigned char)(v >> 8) };

	put_bytes(s, b, 2);
}

static void
put_u32(struct gmon_sink *s, uint32_t v)
{
	unsigned char b[4];

	for (int i = 0; i < 4; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	put_bytes(s, b, 4);
}

static void
put_u64(struct gmon_sink *s, uint64_t v)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	put_bytes(s, b, 8);
}

int
gmon_sink_header(struct gmon_sink *s, const uint8_t spare[GMON_SPARE_SIZE])
{
	static const uint8_t zero[GMON_SPARE_SIZE];

	put_bytes(s, GMON_MAGIC, 4);
	put_u32(s, GMON_VERSION);
	put_bytes(s, spare ? spare : zero, GMON_SPARE_SIZE);
	return s->error;
}

static void
put_hist_header(struct gmon_sink *s, uint64_t low, uint64_t high,
		uint32_t rate, uint32_t nbins)
{
	char dimen[GMON_DIMEN_SIZE] = "seconds";

	put_u8(s, GMON_TAG_TIME_HIST);
	put_u64(s, low);
	put_u64(s, high);
	put_u32(s, nbins);
	put_u32(s, rate);
	put_bytes(s, dimen, sizeof(dimen));
	put_u8(s, 's');
}

int
gmon_sink_hist(struct gmon_sink *s, uint64_t low, uint64_t high,
	       uint32_t rate, const uint16_t *counts, uint32_t nbins)
{
	put_hist_header(s, low, high, rate, nbins);
	for (uint32_t i = 0; i < nbins; i++)
		put_u16(s, counts[i]);
	return s->error;
}

int
gmon_sink_arc(struct gmon_sink *s, uint64_t from_pc, uint64_t self_pc,
	      uint32_t count)
{
	put_u8(s, GMON_TAG_CG_ARC);
	put_u64(s, from_pc);
	put_u64(s, self_pc);
	put_u32(s, count);
	return s->error;
}

/* Counters of either width, read as 64-bit values. */
struct counts {
	const uint32_t *c32;
	const uint64_t *c64;
};

static inline uint64_t
get(const struct counts *c, size_t i)
{
	return c->c32 ? c->c32[i] : c->c64[i];
}

/*
 * Records for counts[a, b): the part of each count between level*65535 and
 * (level+1)*65535, one record per level, all with the same range so that
 * gprof adds them up.
 */
static long
put_segment(struct gmon_sink *s, uint64_t low, unsigned bin, uint32_t rate,
	    const struct counts *counts, size_t a, size_t b)
{
	uint64_t max = 0;
	uint64_t levels;
	long records = 0;

	for (size_t i = a; i < b; i++)
		if (get(counts, i) > max)
			max = get(counts, i);
	levels = max / GMON_COUNT_MAX + (max % GMON_COUNT_MAX != 0);
	if (levels == 0)
		levels = 1;
	for (uint64_t level = 0; level < levels; level++) {
		uint64_t floor = (uint64_t)level * GMON_COUNT_MAX;

		put_hist_header(s, low + a * bin, low + b * bin, rate,
				(uint32_t)(b - a));
		for (size_t i = a; i < b; i++) {
			uint64_t v = get(counts, i);
			uint64_t c = v > floor ? v - floor : 0;

			put_u16(s, c > GMON_COUNT_MAX ? GMON_COUNT_MAX :
							(unsigned)c);
		}
		if (s->error)
			return s->error;
		records++;
	}
	return records;
}

/*
 * One run of bins, split so that bins above 65535 (rare: a hot loop at a
 * high rate) sit in short segments of their own and do not make the whole
 * run repeat.
 */
static long
put_run(struct gmon_sink *s, uint64_t low, unsigned bin, uint32_t rate,
	const struct counts *counts, size_t a, size_t b)
{
	size_t start = a;
	long records = 0;

	for (size_t i = a; i < b; i++) {
		size_t j;
		long r;

		if (get(counts, i) <= GMON_COUNT_MAX)
			continue;
		/* a tall zone: tall bins with short gaps between them */
		j = i + 1;
		for (size_t k = j; k < b; k++) {
			if (get(counts, k) > GMON_COUNT_MAX)
				j = k + 1;
			else if (k + 1 - j >= GAP_BINS)
				break;
		}
		if (i > start) {
			r = put_segment(s, low, bin, rate, counts, start, i);
			if (r < 0)
				return r;
			records += r;
		}
		r = put_segment(s, low, bin, rate, counts, i, j);
		if (r < 0)
			return r;
		records += r;
		start = j;
		i = j - 1;
	}
	if (start < b) {
		long r = put_segment(s, low, bin, rate, counts, start, b);

		if (r < 0)
			return r;
		records += r;
	}
	return records;
}

static long
put_counts(struct gmon_sink *s, uint64_t low, unsigned bin, uint32_t rate,
	   const struct counts *counts, size_t n)
{
	/* gprof's bin count is 32 bits; keep each record well inside it */
	const size_t max_run = (size_t)1 << 30;
	long records = 0;
	size_t i = 0;

	if (bin == 0 || (bin & (bin - 1)) || low % bin)
		return -EINVAL;
	while (i < n) {
		size_t a, b, zeros;
		long r;

		while (i < n && get(counts, i) == 0)
			i++;
		if (i == n)
			break;
		a = i;
		b = i;
		zeros = 0;
		/* extend the run while the zero gaps stay short */
		for (; i < n && b - a < max_run; i++) {
			if (get(counts, i)) {
				b = i + 1;
				zeros = 0;
			} else if (++zeros >= GAP_BINS) {
				break;
			}
		}
		i = b;
		r = put_run(s, low, bin, rate, counts, a, b);
		if (r < 0)
			return r;
		records += r;
	}
	return s->error ? s->error : records;
}

long
gmon_sink_counts(struct gmon_sink *s, uint64_t low, unsigned bin,
		 uint32_t rate, const uint32_t *counts, size_t n)
{
	struct counts c = { counts, NULL };

	return put_counts(s, low, bin, rate, &c, n);
}

long
gmon_sink_counts64(struct gmon_sink *s, uint64_t low, unsigned bin,
		   uint32_t rate, const uint64_t *counts, size_t n)
{
	struct counts c = { NULL, counts };

	return put_counts(s, low, bin, rate, &c, n);
}

int
gmon_sink_stacks_header(struct gmon_sink *s, uint32_t rate,
			const uint8_t build_id[GMON_BUILDID_SIZE], uint32_t pid,
			uint32_t flags)
{
	static const uint8_t zero[GMON_BUILDID_SIZE];

	put_bytes(s, GMON_STACKS_MAGIC, 8);
	/* a CPU profile keeps version 2, which older readers take */
	put_u32(s, flags & GMON_STACKS_WALL ? GMON_STACKS_WALL_VERSION :
					      GMON_STACKS_VERSION);
	put_u32(s, rate);
	put_bytes(s, build_id ? build_id : zero, GMON_BUILDID_SIZE);
	put_u32(s, flags);
	put_u32(s, pid);
	return s->error;
}

int
gmon_sink_thread(struct gmon_sink *s, uint32_t tid,
		 const char name[GMON_THREAD_NAME_SIZE])
{
	put_u64(s, 0);
	put_u32(s, 2);
	put_u32(s, GMON_STACK_THREAD);
	put_u32(s, tid);
	put_u32(s, 0);
	put_bytes(s, name, GMON_THREAD_NAME_SIZE);
	return s->error;
}

int
gmon_sink_stack(struct gmon_sink *s, uint64_t count, uint32_t flags,
		uint32_t tid, const uint64_t *pcs, uint32_t depth)
{
	put_u64(s, count);
	put_u32(s, depth);
	put_u32(s, flags);
	put_u32(s, tid);
	put_u32(s, 0);
	for (uint32_t i = 0; i < depth; i++)
		put_u64(s, pcs[i]);
	return s->error;
}

/* profile + suffix into buf (gmon_objects_name, gmon_stacks_name). */
static int
name_beside(char *buf, size_t size, const char *profile, const char *suffix)
{
	size_t n = strlen(profile), k = strlen(suffix);

	if (n + k + 1 > size) {
		if (size)
			buf[0] = 0;
		return -ENAMETOOLONG;
	}
	memcpy(buf, profile, n);
	memcpy(buf + n, suffix, k + 1);
	return 0;
}

int
gmon_objects_name(char *buf, size_t size, const char *profile)
{
	return name_beside(buf, size, profile, GMON_OBJECTS_SUFFIX);
}

int
gmon_stacks_name(char *buf, size_t size, const char *profile)
{
	return name_beside(buf, size, profile, GMON_STACKS_SUFFIX);
}

int
gmon_object_name(char *buf, size_t size, const char *profile,
		 const char *object)
{
	size_t n = strlen(profile), k = strlen(GMON_OBJECT_SEP);

	if (name_beside(buf, size, profile, GMON_OBJECT_SEP))
		return -ENAMETOOLONG;
	return name_beside(buf + n + k, size - n - k, object, "") ?
	       (buf[0] = 0, -ENAMETOOLONG) : 0;
}

size_t
gmon_object_split(const char *path, size_t prev)
{
	const char *base = strrchr(path, '/'), *plus;

	base = base ? base + 1 : path;
	/* past prev, and never an empty PROFILE */
	plus = path + prev >= base + 1 ? path + prev + 1 : base + 1;
	if (plus > path + strlen(path) ||
	    !(plus = strchr(plus, GMON_OBJECT_SEP[0])))
		return 0;
	return (size_t)(plus - path);
}
