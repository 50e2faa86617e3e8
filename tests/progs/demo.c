/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The demo `make demo` profiles: a small program with three recognisable
 * phases — counting primes, sorting, and hashing — run for about a second.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static int
is_prime(uint32_t n)
{
	if (n < 2)
		return 0;
	for (uint32_t d = 2; d * d <= n; d++)
		if (n % d == 0)
			return 0;
	return 1;
}

__attribute__((noinline)) long
count_primes(uint32_t limit)
{
	long n = 0;

	for (uint32_t i = 0; i < limit; i++)
		n += is_prime(i);
	return n;
}

__attribute__((noinline)) void
insertion_sort(uint32_t *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		uint32_t v = a[i];
		size_t j = i;

		while (j > 0 && a[j - 1] > v) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = v;
	}
}

__attribute__((noinline)) uint64_t
fnv_hash(const unsigned char *p, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

int
main(void)
{
	static uint32_t a[80000];
	static unsigned char buf[1 << 20];
	uint64_t h = 0;
	uint32_t x = 12345;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("primes below 3000000: %ld\n", count_primes(3000000));
	for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		a[i] = x = x * 1103515245 + 12345;
	insertion_sort(a, sizeof(a) / sizeof(a[0]));
	printf("sorted 80000 numbers: smallest %u\n", a[0]);
	memset(buf, 'p', sizeof(buf));
	for (int i = 0; i < 300; i++) {
		buf[i] ^= (unsigned char)i;	/* a different input each time */
		h = h * 31 + fnv_hash(buf, sizeof(buf));
	}
	printf("hashed 300 MiB: %016llx\n", (unsigned long long)h);
	return 0;
}
