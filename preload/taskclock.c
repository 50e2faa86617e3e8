/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Opening a task-clock event, the one place that fills its attributes:
 * libpc's timers (timer.c) and cost probe (timercost.c) and pcprof
 * compare's check that the commands may have one all open it here, so
 * that what compare finds allowed is what libpc will be allowed. It holds
 * no libpc state, so pcprof links it too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "taskclock.h"
#include "banned.h"

/* PC_TEST_REFUSE_PERF, the test suite's stand-in for a refusal, as the
 * first call found it: 1 set, 0 not, -1 not read yet (atomic). A
 * handler that opens an event (timer.c, for a thread whose event the
 * program took the number of) finds it read at start-up, and reads no
 * environment. */
static int refuse = -1;

static int
refused(void)
{
	int r = __atomic_load_n(&refuse, __ATOMIC_RELAXED);

	if (r < 0) {
		r = getenv("PC_TEST_REFUSE_PERF") != NULL;
		__atomic_store_n(&refuse, r, __ATOMIC_RELAXED);
	}
	return r;
}

int
pc_taskclock_open(uint64_t period_ns)
{
	return pc_taskclock_open_for(period_ns, 0);
}

int
pc_taskclock_open_for(uint64_t period_ns, int tid)
{
	struct perf_event_attr attr;
	int fd, saved = errno;

	if (refused())
		return -EACCES;
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = period_ns;
	attr.disabled = 1;
	/* user time only: an overflow in the kernel would signal a thread
	 * inside a system call (timer.c says why that matters) */
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	errno = saved;
	return fd;
}
