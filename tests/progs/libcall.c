/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A loop calling a tiny libc function through the PLT: some samples land in
 * the PLT stub, which pcprof names labs@plt (gprof credits it to _init).
 * Usage: libcall ITERATIONS
 *
 * The timer's interrupt is taken as an instruction retires, and the
 * sample is the next one: in a tight loop, the few places that end a
 * group of instructions retired together. A plain `call labs@plt` loop
 * was sampled after main's lea, after the call's return and in labs,
 * and the stub's jmp got 0 to 11 % of the signals, none in 1 run of 8.
 * So on x86-64 the call goes through a pointer to the stub whose cache
 * line is flushed first: the call waits for memory, and the interrupt
 * that comes meanwhile is taken as it retires, at the stub.
 */
#include <stdio.h>
#include <stdlib.h>

#if defined(__x86_64__)
/* long call_flushed(long x, long (*const *fn)(long)): flush *fn's line,
 * then call it with x */
__asm__(".text\n"
	".type call_flushed, @function\n"
	"call_flushed:\n"
	"	sub $8, %rsp\n"
	"	clflush (%rsi)\n"
	"	call *(%rsi)\n"
	"	add $8, %rsp\n"
	"	ret\n"
	".size call_flushed, .-call_flushed\n");
long call_flushed(long x, long (*const *fn)(long));

static long (*stub)(long);

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000, s = 0;

	/* the stub itself: in C, &labs is libc's labs */
	__asm__("leaq labs@PLT(%%rip), %0" : "=r"(stub));
	for (long i = 0; i < n; i++)
		s += call_flushed(i - 5, &stub);
	printf("%ld\n", s);
	return 0;
}
#else
int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000000, s = 0;

	for (long i = 0; i < n; i++)
		s += labs(i - 5);
	printf("%ld\n", s);
	return 0;
}
#endif
