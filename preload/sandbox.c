/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A sandbox stops libpc, never the program: prctl(PR_SET_SECCOMP) and
 * syscall(SYS_seccomp) (what libseccomp calls; glibc 2.36 has no
 * seccomp(3)) are interposed, and before the real call libpc stops for
 * good, so that from then on it makes no system call it did not make
 * before: a filter may kill on any call libpc would otherwise make later
 * (the live file's writer opens files), and strict mode allows only read,
 * write, _exit and sigreturn. At exit nothing is written: the live file
 * is the profile, which pcprof run and pcprof report finish. Also the
 * check at start-up for an image started under a filter. What stops
 * libpc is finish.c's pc_sandbox_stop. pc_sandboxed and the syscall
 * interposer are AS-safe; a sandbox is entered only in the program's
 * calls, never from a handler of libpc's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pc.h"
#include "banned.h"

typedef int (*prctl_fn)(int, unsigned long, unsigned long, unsigned long, unsigned long);
typedef long (*syscall_fn)(long, long, long, long, long, long, long);

static int sandboxed;
static prctl_fn real_prctl;
static syscall_fn real_syscall;

int
pc_sandboxed(void)
{
	return __atomic_load_n(&sandboxed, __ATOMIC_ACQUIRE);
}

/*
 * What stops libpc (pc_sandbox_stop, finish.c), set by the constructor
 * once libpc runs: called through this pointer, so that this file, which
 * every system call of libpc's own passes through (syscall below), calls
 * nothing of libpc's. Before it is set there is nothing to stop.
 */
static void (*stop)(void);

void
pc_sandbox_set_stop(void (*fn)(void))
{
	__atomic_store_n(&stop, fn, __ATOMIC_RELEASE);
}

void
pc_sandbox_mark(void)
{
	__atomic_store_n(&sandboxed, 1, __ATOMIC_RELEASE);
}

/* Before the real call that closes the sandbox: libpc stops. */
static void
enter(void)
{
	void (*fn)(void) = __atomic_load_n(&stop, __ATOMIC_ACQUIRE);

	if (fn && !pc_sandboxed())
		fn();
}

/* The calls that enter a sandbox: strict mode, or a filter (a probe with
 * no filter, as libseccomp's and systemd's, fails with EFAULT and enters
 * none). */
static int
enters_prctl(int option, unsigned long mode, unsigned long prog)
{
	return option == PR_SET_SECCOMP &&
	       (mode == SECCOMP_MODE_STRICT || (mode == SECCOMP_MODE_FILTER && prog));
}

static int
enters_seccomp(unsigned long op, const void *args)
{
	return op == SECCOMP_SET_MODE_STRICT || (op == SECCOMP_SET_MODE_FILTER && args);
}

void
pc_sandbox_resolve(void)
{
	if (!real_prctl)
		real_prctl = (prctl_fn)pc_next("prctl");
	if (!real_syscall)
		real_syscall = (syscall_fn)pc_next("syscall");
}

int
pc_sandbox_inherited(void)
{
	/* 2: this image was started under a filter, which exec keeps; one
	 * that killed on prctl would have killed the program's own too */
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 2)
		return 0;
	pc_sandbox_mark();
	return 1;
}

PC_EXPORT int
prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;

	/* as glibc's: the arguments the option takes, the rest unread */
	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	pc_sandbox_resolve();
	if (enters_prctl(option, a[0], a[1]))
		enter();
	return real_prctl(option, a[0], a[1], a[2], a[3]);
}

/*
 * libpc's own calls to syscall(3) come here too, the signal handler's
 * among them: nothing here but the comparisons and the real call
 * (resolved by the constructor, before any handler of libpc's runs).
 * AS-safe once resolved.
 */
PC_EXPORT long
syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real_syscall)
		pc_sandbox_resolve();
	if ((nr == SYS_seccomp && enters_seccomp((unsigned long)a[0], (const void *)a[2])) ||
	    (nr == SYS_prctl && enters_prctl((int)a[0], (unsigned long)a[1], (unsigned long)a[2])))
		enter();
	return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
