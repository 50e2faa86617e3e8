/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Code in no object: a few instructions copied into an anonymous
 * executable mapping (as a JIT compiler would) and run for SECONDS of CPU,
 * then main_work for as long. Both are timed with the thread CPU clock.
 * With "map", it writes /tmp/perf-PID.map naming its code jit_countdown,
 * as JIT compilers do for perf (and removes it with "unmap" at the end).
 * Usage: jit SECONDS [map [unmap]]
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "truth.h"

static volatile uint64_t sink;

__attribute__((noinline)) uint64_t
main_work(uint64_t x)
{
	return spin(x + 5, 2 * SPIN_UNIT);
}

int
main(int argc, char **argv)
{
	/* mov rcx, rdi; 1: dec rcx; jnz 1b; mov rax, rcx; ret */
	static const unsigned char code[] = {
		0x48, 0x89, 0xf9, 0x48, 0xff, 0xc9, 0x75, 0xfb, 0x48, 0x89, 0xc8, 0xc3,
	};
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	double t[2] = { 0, 0 }, start;
	uint64_t (*fn)(uint64_t);
	uint64_t x = 1;
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return 1;
	memcpy(m, code, sizeof(code));
	if (mprotect(m, 4096, PROT_READ | PROT_EXEC))
		return 1;
	fn = (uint64_t (*)(uint64_t))m;
	if (argc > 2 && !strcmp(argv[2], "map")) {
		char path[64];
		FILE *f;

		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		if (!(f = fopen(path, "w")))
			return 1;
		fchmod(fileno(f), 0644);	/* whatever the umask: pcprof checks */
		fprintf(f, "%lx %zx jit_countdown\n", (unsigned long)m, sizeof(code));
		fclose(f);
	}
	start = process_cpu();
	while (process_cpu() - start < seconds) {
		TIMED_BLOCK(t[0], x += fn(300000));
	}
	start = process_cpu();
	while (process_cpu() - start < seconds) {
		TIMED_BLOCK(t[1], x = main_work(x));
	}
	sink = x;
	printf("truth: {\"jit\": %.6f, \"main_work\": %.6f, \"cpu\": %.6f}\n",
	       t[0], t[1], process_cpu());
	return 0;
}
