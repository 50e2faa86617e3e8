/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An alternate stack of libpc's for the samples of a thread the program
 * starts on a small stack (threads.c asks), kept out of the program's
 * sight: sigaltstack, interposed, shows it none.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pc.h"

/*
 * A thread the program starts on a small stack (under PC_SMALL_STACK)
 * may use nearly all of it, and the kernel's frame for a sample (1 to 4
 * KiB with the vector registers) would not fit beside it: such a thread,
 * when it has no alternate stack of its own, gets one of libpc's for the
 * sampling handler (which runs SA_ONSTACK). sigaltstack shows the program
 * none, and one the program sets replaces libpc's. A handler of the
 * program's with SA_ONSTACK would run on it too, where plain it runs on
 * the thread's stack.
 */
#define OWN_ALT_SIZE	(64 * 1024)
static PC_TLS void *own_alt;

typedef int (*sigaltstack_fn)(const stack_t *, stack_t *);
static sigaltstack_fn real_sigaltstack;

static int
alt_real(const stack_t *ss, stack_t *old)
{
	if (!real_sigaltstack)
		real_sigaltstack = (sigaltstack_fn)pc_next("sigaltstack");
	return real_sigaltstack ? real_sigaltstack(ss, old) :
	       (int)syscall(SYS_sigaltstack, ss, old);
}

static int
own_alt_install(void)
{
	stack_t ss;

	ss.ss_sp = own_alt;
	ss.ss_size = OWN_ALT_SIZE;
	ss.ss_flags = 0;
	return alt_real(&ss, NULL);
}

int
pc_signals_small_stack(void)
{
	stack_t cur;
	void *m;

	if (alt_real(NULL, &cur))
		return -1;
	if (!(cur.ss_flags & SS_DISABLE))
		return 0;	/* the program's own is there */
	m = mmap(NULL, OWN_ALT_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1,
		 0);
	if (m == MAP_FAILED)
		return -1;
	own_alt = m;
	if (own_alt_install() == 0)
		return 0;
	munmap(m, OWN_ALT_SIZE);
	own_alt = NULL;
	return -1;
}

void
pc_signals_small_stack_end(void)
{
	stack_t off = { .ss_sp = NULL, .ss_flags = SS_DISABLE, .ss_size = 0 };
	stack_t cur;

	if (!own_alt)
		return;
	if (alt_real(NULL, &cur) == 0 && cur.ss_sp == own_alt &&
	    !(cur.ss_flags & SS_ONSTACK))
		alt_real(&off, NULL);
	else if (cur.ss_sp == own_alt)
		return;		/* on it (cannot be): left as it is */
	munmap(own_alt, OWN_ALT_SIZE);
	own_alt = NULL;
}

PC_EXPORT int
sigaltstack(const stack_t *ss, stack_t *old)
{
	int r, saved;

	if (!own_alt)
		return alt_real(ss, old);
	r = alt_real(ss, old);
	if (r)
		return r;
	if (old && old->ss_sp == own_alt) {
		old->ss_sp = NULL;
		old->ss_size = 0;
		old->ss_flags = SS_DISABLE;
	}
	if (ss && (ss->ss_flags & SS_DISABLE)) {
		/* the program believed it had none: libpc's stays */
		saved = errno;
		own_alt_install();
		errno = saved;
	} else if (ss) {
		/* the program's own replaces libpc's */
		saved = errno;
		munmap(own_alt, OWN_ALT_SIZE);
		own_alt = NULL;
		errno = saved;
	}
	return 0;
}

