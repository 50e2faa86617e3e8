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
 * libpc is start.c's sandbox_stop. pc_sandboxed and the syscall
 * interposer are AS-safe; a sandbox is entered only in the program's
 * calls, never from a handler of libpc's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pc.h"
#include "banned.h"

static int sandboxed;

int
pc_sandboxed(void)
{
	return __atomic_load_n(&sandboxed, __ATOMIC_ACQUIRE);
}

/*
 * What stops libpc (start.c's sandbox_stop), set by the constructor
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
	       (mode == SECCOMP_MODE_STRICT ||
		(mode == SECCOMP_MODE_FILTER && prog));
}

static int
enters_seccomp(unsigned long op, const void *args)
{
	return op == SECCOMP_SET_MODE_STRICT ||
	       (op == SECCOMP_SET_MODE_FILTER && args);
}

/*
 * The system call itself, as glibc's syscall(3) makes it (-1 and errno on
 * failure): with an instruction of its own where the architecture is
 * known, so that nothing here is looked up (a lookup can allocate, and
 * libpc's mmap interposer makes the call through syscall(3) before its
 * constructor has run) and everything here is AS-safe.
 */
static long
forward(long nr, long a, long b, long c, long d, long e, long f)
{
	long r;
#if defined(__x86_64__)
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;

	__asm__ volatile("svc 0" : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	r = x0;
#else
	typedef long (*syscall_fn)(long, long, long, long, long, long, long);
	static syscall_fn real;

	if (!real)
		real = (syscall_fn)pc_next("syscall");
	return real(nr, a, b, c, d, e, f);
#endif
	if ((unsigned long)r > -4096UL) {
		errno = (int)-r;
		return -1;
	}
	return r;
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

	/* four, as many as any option takes (glibc's reads them all too) */
	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (enters_prctl(option, a[0], a[1]))
		enter();
	return (int)forward(SYS_prctl, option, (long)a[0], (long)a[1],
			    (long)a[2], (long)a[3], 0);
}

/*
 * libpc's own calls to syscall(3) come here too, the signal handler's
 * among them: nothing here but the comparisons and the call itself.
 * AS-safe.
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
	if ((nr == SYS_seccomp &&
	     enters_seccomp((unsigned long)a[0], (const void *)a[2])) ||
	    (nr == SYS_prctl &&
	     enters_prctl((int)a[0], (unsigned long)a[1], (unsigned long)a[2])))
		enter();
	return forward(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
