/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The shared library of the uselib test program: a hot exported function,
 * and one that spends its time in a static helper (an arc inside the
 * library). Built as libhot.so and linked normally; built again with
 * HOT_UNITS=7 (lib_hot 40 % slower) as slowlib/libhot.so, which
 * LD_LIBRARY_PATH puts in its place for pcprof diff's test.
 */
#include <stdint.h>

#include "truth.h"

#ifndef HOT_UNITS
#define HOT_UNITS 5
#endif

uint64_t lib_hot(uint64_t x);
uint64_t lib_warm(uint64_t x);

__attribute__((noinline)) static uint64_t
lib_inner(uint64_t x)
{
	return spin(x ^ 0x77, 2 * SPIN_UNIT);
}

__attribute__((noinline)) uint64_t
lib_hot(uint64_t x)
{
	return spin(x, HOT_UNITS * SPIN_UNIT);
}

__attribute__((noinline)) uint64_t
lib_warm(uint64_t x)
{
	return lib_inner(x) + 1;
}
