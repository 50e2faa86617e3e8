/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A vfork child (vfork, or posix_spawn's clone(CLONE_VM | CLONE_VFORK))
 * shares its parent's memory, the calling thread's TLS included, but has
 * its own dispositions and mask. The signal interposers of signals.c hand
 * its calls here: what it asks goes to the kernel, in its own table and
 * mask (which exec hands on), and libpc's shared tables (the program's
 * actions, the signals libpc holds, the thread's view of its mask) are
 * left as the parent has them. What libpc must remember of the child (its
 * view of libpc's signals, the signals it set itself) is a record in the
 * thread's TLS marked with the child's pid, which the parent, whose pid
 * differs, never takes for its own. glibc 2.36 does not cache the pid, so
 * telling a child is a getpid: paid by every sigaction, but by a mask call
 * only where the view of libpc's signals changes, or in a thread whose
 * child kept a record. AS-safe (a vfork child may call these).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "pc.h"
#include "banned.h"

struct vfork_record {
	pid_t pid;			/* the child's; 0: none */
	unsigned blocked;		/* its view of libpc's signals */
	unsigned char set[NSIG];	/* the signals it set itself */
};
static PC_TLS struct vfork_record rec;

/* This thread is a vfork child's: its record, made on the first call
 * with the parent's view; else NULL, and an earlier child's record goes. */
static struct vfork_record *
child_record(unsigned blocked)
{
	pid_t self = getpid();

	if (!pc->pid || self == pc->pid) {
		rec.pid = 0;
		return NULL;
	}
	if (rec.pid != self) {
		memset(&rec, 0, sizeof(rec));
		rec.pid = self;
		rec.blocked = blocked;
	}
	return &rec;
}

unsigned
pc_vfork_view(unsigned blocked)
{
	struct vfork_record *r = rec.pid ? child_record(blocked) : NULL;

	return r ? r->blocked : blocked;
}

int
pc_vfork_keep(unsigned was, unsigned now, unsigned blocked)
{
	struct vfork_record *r =
		rec.pid || now != was ? child_record(blocked) : NULL;

	if (!r)
		return 0;
	r->blocked = now;
	return 1;
}

int
pc_vfork_set(int sig)
{
	return rec.pid && sig > 0 && sig < NSIG && rec.pid == getpid() &&
	       rec.set[sig];
}

int
pc_vfork_sigaction(int sig, const struct sigaction *act, struct sigaction *old,
		   int (*real)(int, const struct sigaction *,
			       struct sigaction *),
		   unsigned blocked, int *result)
{
	struct vfork_record *r = child_record(blocked);
	int ok = sig > 0 && sig < NSIG;

	if (!r)
		return 0;
	*result = real(sig, act, old);
	if (*result || !ok)
		return 1;
	/* what the program believes is installed, where libpc holds the
	 * signal and the child has not set it itself */
	if (old && !r->set[sig] && pc->owned[sig])
		*old = pc->prog_action[sig];
	if (act)
		r->set[sig] = 1;
	return 1;
}
