/* SPDX-License-Identifier: BSD-2-Clause */
/* The plugin of the plugrun test program: loaded with dlopen, run, closed. */
#include <stdint.h>

#include "truth.h"

uint64_t plugin_spin(uint64_t x);

__attribute__((noinline)) uint64_t
plugin_spin(uint64_t x)
{
	return spin(x * 5 + 1, 2 * SPIN_UNIT);
}
