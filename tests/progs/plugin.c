/* SPDX-License-Identifier: BSD-2-Clause */
/* A tiny plugin for the stress test's dlopen/dlclose loop. */
int plugin_value(int x);

int
plugin_value(int x)
{
	return x * 3 + 1;
}
