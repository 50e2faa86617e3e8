/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The allocation sampler's countdowns (alloc_hooks.c, in libpc-alloc.so):
 * bytes until the next sample, drawn from an exponential distribution of
 * mean PC_ALLOC_RATE, without libm. A file of its own so that the Check
 * suite (tests/check_alloc.c) draws them without interposing its own
 * malloc. AS-safe, lock-free: arithmetic on the caller's generator.
 */
#include <stdint.h>
#include <string.h>

#include "alloc.h"

/* atanh t / t = 1 + t^2 / 3 + t^4 / 5 + ...: 15 terms, t^30 / 31 short
 * (below 1e-24 at |t| < 0.172) */
static const double atanh_coef[] = {
	1.0, 1.0 / 3, 1.0 / 5, 1.0 / 7, 1.0 / 9, 1.0 / 11, 1.0 / 13,
	1.0 / 15, 1.0 / 17, 1.0 / 19, 1.0 / 21, 1.0 / 23, 1.0 / 25,
	1.0 / 27, 1.0 / 29,
};
#define ATANH_TERMS	(int)(sizeof(atanh_coef) / sizeof(atanh_coef[0]))

double
pc_alloc_neglog(double u)
{
	uint64_t bits;
	int e;
	double m, t, t2, sum = atanh_coef[ATANH_TERMS - 1];

	if (!(u > 0))
		return 745.0;
	memcpy(&bits, &u, sizeof(bits));
	e = (int)((bits >> 52) & 0x7ff) - 1023;
	bits = (bits & ~(0x7ffULL << 52)) | (1023ULL << 52);
	memcpy(&m, &bits, sizeof(m));	/* u = m 2^e, m in [1, 2) */
	if (m > 1.4142135623730951) {
		m /= 2;
		e++;
	}
	/* ln m = 2 atanh t = 2 (t + t^3 / 3 + t^5 / 5 + ...), t = (m - 1) /
	 * (m + 1), |t| < 0.172: by Horner's rule in t^2, without a division
	 * a term */
	t = (m - 1) / (m + 1);
	t2 = t * t;
#pragma GCC unroll 16
	for (int k = ATANH_TERMS - 2; k >= 0; k--)
		sum = sum * t2 + atanh_coef[k];
	return -(2 * t * sum + e * 0.6931471805599453);
}

int64_t
pc_alloc_draw(uint64_t *rng, uint64_t rate)
{
	uint64_t x = *rng;
	double u, c;

	if (rate <= 1)
		return 0;
	/* xorshift64* */
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*rng = x;
	u = (double)((x * 2685821657736338717ULL) >> 11) * 0x1.0p-53;
	c = (double)rate * pc_alloc_neglog(1 - u);
	return c > 0x1.0p62 ? (int64_t)1 << 62 : (int64_t)c;
}
