/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The one decoder of x86-64 call instructions, for the stack walkers: which
 * call, if any, ends just before a return address. unwind.c asks whether a
 * frame-pointer walk's return address follows a call; arcs.c asks the
 * target of a direct one. Other architectures get "not a call".
 */
#ifndef PC_X86CALL_H
#define PC_X86CALL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum pc_call {
	PC_CALL_NONE,		/* no call ends at ra, or not x86-64 */
	PC_CALL_DIRECT,		/* e8 rel32: *target is its callee */
	PC_CALL_INDIRECT,	/* ff /2, 2 to 7 bytes: register or memory */
};

/* The longest call form decoded: ff /2 with a SIB byte and a disp32. */
#define PC_CALL_MAX_LEN	7

/*
 * The call that ends at ra, reading at most the `readable` bytes before it
 * (the caller's bound on what is mapped); *target gets a direct call's
 * callee (a run-time address). A direct call is tried first: its rel32 may
 * hold bytes that look like an indirect one. AS-safe.
 */
static inline enum pc_call
pc_call_before(uintptr_t ra, size_t readable, uintptr_t *target)
{
#if defined(__x86_64__)
	const unsigned char *p = (const unsigned char *)ra;
	int32_t rel;

	if (readable >= 5 && p[-5] == 0xe8) {
		memcpy(&rel, p - 4, 4);
		*target = ra + (uintptr_t)(intptr_t)rel;
		return PC_CALL_DIRECT;
	}
	for (size_t k = 2; k <= PC_CALL_MAX_LEN && k <= readable; k++)
		if (p[-k] == 0xff && ((p[-k + 1] >> 3) & 7) == 2)
			return PC_CALL_INDIRECT;
#else
	(void)ra;
	(void)readable;
	(void)target;
#endif
	return PC_CALL_NONE;
}

#endif
