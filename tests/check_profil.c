/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Check suite for the profil(3) arithmetic in preload/profil.h: which
 * counter a PC lands in for each scale, where the buffer ends, and that the
 * counter gprof will read for an address is the one the sampler bumped.
 */
#include <stdint.h>

#include "../preload/profil.h"
#include "unit.h"

#define NONE	((size_t)-1)

/* The three scales libpc uses and the bytes of text per counter of each. */
static const struct {
	unsigned scale;
	unsigned bin;
} scales[] = {
	{ 0x10000, 2 },
	{ 0x8000, 4 },
	{ 0x4000, 8 },
};

#define NSCALES	((int)(sizeof(scales) / sizeof(scales[0])))

START_TEST(test_profil_bin_bytes_follow_scale)
{
	ck_assert_uint_eq(pc_profil_bin_bytes(0x10000), 2);
	ck_assert_uint_eq(pc_profil_bin_bytes(0x8000), 4);
	ck_assert_uint_eq(pc_profil_bin_bytes(0x4000), 8);
	ck_assert_uint_eq(pc_profil_bin_bytes(0x2000), 16);
	ck_assert_uint_eq(pc_profil_bin_bytes(0x100), 512);
}
END_TEST

/*
 * Below the offset, at it, the last byte of the last counter, the first
 * byte past it, and the ends of the address space, for scale _i.
 */
START_TEST(test_profil_index_stops_at_buffer_ends)
{
	const unsigned bin = scales[_i].bin;
	uint32_t buf[64];
	struct pc_profil p = {
		buf, sizeof(buf), (uintptr_t)0x55d0c0de1000ull, scales[_i].scale
	};
	const uintptr_t end = p.offset + 64 * bin;

	ck_assert_uint_eq(pc_profil_bin_bytes(p.scale), bin);
	ck_assert_uint_eq(pc_profil_index(&p, 0), NONE);
	ck_assert_uint_eq(pc_profil_index(&p, p.offset - 1), NONE);
	ck_assert_uint_eq(pc_profil_index(&p, p.offset - bin), NONE);
	ck_assert_uint_eq(pc_profil_index(&p, p.offset), 0);
	ck_assert_uint_eq(pc_profil_index(&p, p.offset + bin - 1), 0);
	ck_assert_uint_eq(pc_profil_index(&p, p.offset + bin), 1);
	ck_assert_uint_eq(pc_profil_index(&p, end - 1), 63);
	ck_assert_uint_eq(pc_profil_index(&p, end), NONE);
	ck_assert_uint_eq(pc_profil_index(&p, end + bin), NONE);
	ck_assert_uint_eq(pc_profil_index(&p, UINTPTR_MAX), NONE);
}
END_TEST

/*
 * Every PC of a text range, for scale _i: the sampler's counter for pc must
 * be bin i = (pc - offset) / bin, and gprof, reading a record for
 * [low, low + n*bin) with n bins, must credit that bin with the address
 * pc - bias. gprof works in 2-byte units: bin i covers units
 * [low/2 + (u64)(scale*i), low/2 + (u64)(scale*(i+1))) with
 * scale = ((high - low) / 2) / n as a double, as in its hist.c.
 */
START_TEST(test_profil_every_pc_lands_in_gprof_bin)
{
	const unsigned bin = scales[_i].bin;
	enum { N = 300 };
	static uint32_t buf[N];
	const uintptr_t bias = (uintptr_t)0x7f3a12340000ull;
	const uint64_t low = 0x11c0, high = low + (uint64_t)N * bin;
	struct pc_profil p = { buf, sizeof(buf), bias + low, scales[_i].scale };
	const double gscale = (double)((high - low) / 2) / N;

	for (uintptr_t pc = p.offset; pc < p.offset + N * bin; pc++) {
		size_t i = pc_profil_index(&p, pc);
		uint64_t unit = (pc - bias) / 2;

		uint64_t glow = low / 2 + (uint64_t)(gscale * (double)i);
		uint64_t ghigh = low / 2 + (uint64_t)(gscale * (double)(i + 1));

		/* a plain if: each passing ck_assert costs a write(2) */
		if (i != (pc - p.offset) / bin || pc - bias < low + i * bin ||
		    pc - bias >= low + (i + 1) * bin || unit < glow ||
		    unit >= ghigh)
			ck_abort_msg("pc 0x%llx (link 0x%llx): counter %zu, gprof's "
				     "units [0x%llx, 0x%llx)",
				     (unsigned long long)pc,
				     (unsigned long long)(pc - bias), i,
				     (unsigned long long)glow,
				     (unsigned long long)ghigh);
	}
}
END_TEST

/* bufsiz counts bytes; a partial counter at the end is not used. */
START_TEST(test_profil_ignores_partial_counter)
{
	uint32_t buf[3];
	struct pc_profil p = { buf, 10, 0x400000, 0x10000 };

	ck_assert_uint_eq(pc_profil_index(&p, 0x400003), 1);
	ck_assert_uint_eq(pc_profil_index(&p, 0x400004), NONE);
	p.bufsiz = 3;
	ck_assert_uint_eq(pc_profil_index(&p, 0x400000), NONE);
	p.bufsiz = 0;
	ck_assert_uint_eq(pc_profil_index(&p, 0x400000), NONE);
}
END_TEST

/*
 * A PC far above a small buffer (JIT code mapped high, 57-bit addresses)
 * must not wrap into it: (pc - offset) / 2 * scale overflows 64 bits once
 * pc - offset reaches 2^49 at scale 0x10000.
 */
START_TEST(test_profil_rejects_pc_far_above_buffer)
{
	uint32_t buf[16];
	struct pc_profil p = { buf, sizeof(buf), 0x1000, 0x10000 };

	for (int shift = 40; shift < 63; shift++) {
		uintptr_t pc = p.offset + ((uintptr_t)1 << shift);

		ck_assert_msg(pc_profil_index(&p, pc) == NONE,
			      "pc offset+2^%d landed in counter %zu", shift,
			      pc_profil_index(&p, pc));
	}
}
END_TEST

Suite *
profil_suite(void)
{
	Suite *s = suite_create("profil");
	TCase *t = tcase_create("index");

	tcase_add_test(t, test_profil_bin_bytes_follow_scale);
	tcase_add_loop_test(t, test_profil_index_stops_at_buffer_ends, 0,
			    NSCALES);
	tcase_add_loop_test(t, test_profil_every_pc_lands_in_gprof_bin, 0,
			    NSCALES);
	tcase_add_test(t, test_profil_ignores_partial_counter);
	if (sizeof(uintptr_t) >= 8)
		tcase_add_test(t, test_profil_rejects_pc_far_above_buffer);
	else
		unit_skip("test_profil_rejects_pc_far_above_buffer",
			  "pointers narrower than 64 bits");
	suite_add_tcase(s, t);
	return s;
}
