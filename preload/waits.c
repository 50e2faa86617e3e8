/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The waits that install a mask of the program's for their duration
 * (sigsuspend, ppoll, pselect, epoll_pwait, epoll_pwait2), interposed to
 * note that mask, and what the sampling handler does with it when a
 * sample comes as such a wait is cut short by a signal (handler.c).
 *
 * The kernel cuts the wait short with -ERESTARTNOHAND and keeps the
 * wait's mask in force until a handler is entered; the signal frame keeps
 * the program's own mask, which sigreturn puts back (sigmask_to_save() and
 * restore_saved_sigmask_unless() in include/linux/sched/signal.h,
 * signal_delivered() in kernel/signal.c). Every signal the wait's mask
 * lets through is delivered at once, one handler nested in the other, as
 * long as each handler's sa_mask leaves the next unblocked. The sample is
 * this thread's own signal, so the kernel takes it before one sent to the
 * process (dequeue_signal), and the sampling handler blocks every other
 * signal: a signal of the program's that only the wait let through would
 * wait, on the sample's sigreturn, for the program to unblock it, after
 * the wait returned, where plain it would have run during the wait.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "pc.h"
#include "banned.h"

typedef int (*sigsuspend_fn)(const sigset_t *);
typedef int (*ppoll_fn)(struct pollfd *, nfds_t, const struct timespec *,
			const sigset_t *);
typedef int (*ppoll_chk_fn)(struct pollfd *, nfds_t, const struct timespec *,
			    const sigset_t *, size_t);
typedef int (*pselect_fn)(int, fd_set *, fd_set *, fd_set *,
			  const struct timespec *, const sigset_t *);
typedef int (*epoll_pwait_fn)(int, struct epoll_event *, int, int,
			      const sigset_t *);
typedef int (*epoll_pwait2_fn)(int, struct epoll_event *, int,
			       const struct timespec *, const sigset_t *);

/* The mask of the wait this thread is in, or NULL: read by the sampling
 * handler on the same thread. */
static PC_TLS const sigset_t *wait_mask;

static const sigset_t *
wait_enter(const sigset_t *mask)
{
	const sigset_t *outer = wait_mask;

	wait_mask = mask;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return outer;
}

static void
wait_leave(const sigset_t *outer)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	wait_mask = outer;
}

PC_EXPORT int
sigsuspend(const sigset_t *mask)
{
	static sigsuspend_fn real;
	const sigset_t *outer;
	int r;

	if (!real)
		real = (sigsuspend_fn)pc_next("sigsuspend");
	outer = wait_enter(mask);
	r = real(mask);
	wait_leave(outer);
	return r;
}

PC_EXPORT int
ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
      const sigset_t *mask)
{
	static ppoll_fn real;
	const sigset_t *outer;
	int r;

	if (!real)
		real = (ppoll_fn)pc_next("ppoll");
	outer = wait_enter(mask);
	r = real(fds, n, timeout, mask);
	wait_leave(outer);
	return r;
}

/* ppoll under _FORTIFY_SOURCE (glibc declares it only then) */
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
		const sigset_t *mask, size_t fdslen);

PC_EXPORT int
__ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
	    const sigset_t *mask, size_t fdslen)
{
	static ppoll_chk_fn real;
	const sigset_t *outer;
	int r;

	if (!real)
		real = (ppoll_chk_fn)pc_next("__ppoll_chk");
	outer = wait_enter(mask);
	r = real(fds, n, timeout, mask, fdslen);
	wait_leave(outer);
	return r;
}

PC_EXPORT int
pselect(int n, fd_set *rd, fd_set *wr, fd_set *ex,
	const struct timespec *timeout, const sigset_t *mask)
{
	static pselect_fn real;
	const sigset_t *outer;
	int r;

	if (!real)
		real = (pselect_fn)pc_next("pselect");
	outer = wait_enter(mask);
	r = real(n, rd, wr, ex, timeout, mask);
	wait_leave(outer);
	return r;
}

PC_EXPORT int
epoll_pwait(int ep, struct epoll_event *ev, int max, int timeout,
	    const sigset_t *mask)
{
	static epoll_pwait_fn real;
	const sigset_t *outer;
	int r;

	if (!real)
		real = (epoll_pwait_fn)pc_next("epoll_pwait");
	outer = wait_enter(mask);
	r = real(ep, ev, max, timeout, mask);
	wait_leave(outer);
	return r;
}

PC_EXPORT int
epoll_pwait2(int ep, struct epoll_event *ev, int max,
	     const struct timespec *timeout, const sigset_t *mask)
{
	static epoll_pwait2_fn real;
	const sigset_t *outer;
	int r;

	if (!real && !(real = (epoll_pwait2_fn)pc_next("epoll_pwait2"))) {
		errno = ENOSYS;
		return -1;
	}
	outer = wait_enter(mask);
	r = real(ep, ev, max, timeout, mask);
	wait_leave(outer);
	return r;
}

/*
 * Called by the sampling handler last: where the sample cut short one of
 * these waits (the thread is in one, the interrupted pc follows a syscall
 * instruction, and the call returns EINTR), the wait's mask was still in
 * force, and the program's signals it lets through are delivered now, by
 * the kernel, under that mask: their handlers run nested in this one, as
 * they run nested in each other plain, before the wait returns. libpc's
 * own signals stay blocked meanwhile. AS-safe.
 */
void
pc_waits_deliver_from_handler(void *ucv)
{
	ucontext_t *uc = ucv;
	const unsigned char *ip;
	sigset_t mask, entry, pending;
	const sigset_t *in;
	int any = 0;

	in = wait_mask;
	if (!in)
		return;
#if defined(__x86_64__)
	ip = (const unsigned char *)uc->uc_mcontext.gregs[REG_RIP];
	if (uc->uc_mcontext.gregs[REG_RAX] != -EINTR || ip[-2] != 0x0f ||
	    ip[-1] != 0x05)
		return;
#else
	(void)ip;
	return;
#endif
	mask = *in;
	if (sigpending(&pending))
		return;
	for (int s = 1; s < NSIG; s++) {
		if (pc->owned[s] == PC_OWN_SAMPLING ||
		    pc->owned[s] == PC_OWN_SNAPSHOT) {
			sigaddset(&mask, s);
			continue;
		}
		if (sigismember(&pending, s) == 1 &&
		    sigismember(&mask, s) != 1 &&
		    sigismember(&uc->uc_sigmask, s) == 1)
			any = 1;
	}
	if (!any)
		return;
	pc_real_sigmask(SIG_SETMASK, &mask, &entry);
	pc_real_sigmask(SIG_SETMASK, &entry, NULL);
}
