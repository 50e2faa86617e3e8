/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profil(3) arithmetic, shared by the sampler and its unit tests: a counter
 * buffer covers text from `offset`, and a PC lands in counter
 * ((pc - offset) / 2 * scale) >> 16, so a scale of 0x10000 gives one counter
 * per 2 bytes of text, 0x8000 one per 4, as glibc's profil() does. pcprof's
 * counters are 32 bits wide where glibc's are 16.
 */
#ifndef PC_PROFIL_H
#define PC_PROFIL_H

#include <stddef.h>
#include <stdint.h>

struct pc_profil {
	uint32_t *buf;		/* counters, 32-bit */
	size_t bufsiz;		/* size of buf in bytes */
	uintptr_t offset; /* runtime address of the first counter's text */
	unsigned scale;		/* 16.16 fixed point, at most 0x10000 */
};

/*
 * The counter index of pc, or (size_t)-1 when pc is outside the buffer.
 * AS-safe: pure arithmetic.
 */
static inline size_t
pc_profil_index(const struct pc_profil *p, uintptr_t pc)
{
	uintptr_t d =
		pc - p->offset; /* wraps for pc < offset: rejected below */
	uint64_t u = (uint64_t)(d / 2);
	/* split so that u * scale cannot wrap, whatever the distance */
	uint64_t i = (u >> 16) * p->scale + (((u & 0xffff) * p->scale) >> 16);

	if (pc < p->offset || i >= p->bufsiz / sizeof(uint32_t))
		return (size_t)-1;
	return (size_t)i;
}

/* Bytes of text per counter for a power-of-two scale: 0x10000 gives 2. */
static inline unsigned
pc_profil_bin_bytes(unsigned scale)
{
	return (unsigned)(0x20000u / scale);
}

#endif
