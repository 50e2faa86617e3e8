/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A program that unwinds its own stack all the time with libunwind, as
 * perf and other tools that link libunwind do: linked with -lunwind, its
 * _Unwind_Backtrace is libunwind's, which takes a mutex. A profiler whose
 * handler calls the global _Unwind_Backtrace waits on that mutex, held by
 * the very thread it interrupted, for ever.
 * Usage: unwinder SECONDS   (of CPU; prints the frames it counted)
 */
#include <stdio.h>
#include <stdlib.h>
#include <unwind.h>

#include "truth.h"

static _Unwind_Reason_Code
count(struct _Unwind_Context *ctx, void *arg)
{
	(void)ctx;
	++*(long *)arg;
	return _URC_NO_REASON;
}

__attribute__((noinline)) static long
unwind_once(void)
{
	long n = 0;

	_Unwind_Backtrace(count, &n);
	return n;
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0, t0 = thread_cpu();
	long frames = 0, walks = 0;

	while (thread_cpu() - t0 < seconds) {
		frames += unwind_once();
		walks++;
	}
	printf("walks %s frames a walk %ld\n", walks > 0 ? "done" : "none",
	       walks ? frames / walks : 0);
	return 0;
}
