/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The program's view, in each thread, of libpc's own signals' mask: which
 * of them it believes blocked (the sampling signal is never blocked for
 * real, the snapshot signal always is), what arrived for it meanwhile, and
 * how far the thread's view has followed libpc's moves to another signal
 * (signals.c moves; each thread makes the old signal's mask real here the
 * next time it runs code of libpc's). The handler's path reads it, so it
 * calls nothing above it: the mask by system call. Functions that run in
 * handlers say so; the rest run in the thread whose view they change.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "pc.h"
#include "banned.h"

/* The program's view, in this thread, of libpc's signals: PC_HIDE_* bits
 * for "blocked". */
#define HIDE_SAMPLE	PC_HIDE_SAMPLE
#define HIDE_SNAPSHOT	PC_HIDE_SNAPSHOT
static PC_TLS unsigned prog_blocked;
static PC_TLS int deferred;

/* The moves so far: move k left move_from[k] for move_to[k] (0: for none,
 * sampling stopped); each thread's view is as of its own count. */
#define MOVES_MAX	64
static int move_from[MOVES_MAX], move_to[MOVES_MAX];
static int moves;		/* atomic */
static PC_TLS int my_moves;

static void view_sync(void);

static int
cur_sig(void)
{
	return __atomic_load_n(&pc_sampling_sig, __ATOMIC_SEQ_CST);
}

/* The thread's mask, by system call. AS-safe. */
static int
raw_mask(int how, const sigset_t *set, sigset_t *old)
{
	return (int)syscall(SYS_rt_sigprocmask, how, set, old,
			    (size_t)(_NSIG / 8));
}

int
pc_signals_note_move(int from, int to)
{
	int k = __atomic_load_n(&moves, __ATOMIC_RELAXED);

	if (k >= MOVES_MAX)
		return -1;
	move_from[k] = from;
	move_to[k] = to;
	__atomic_store_n(&moves, k + 1, __ATOMIC_SEQ_CST);
	return 0;
}

int
pc_signals_can_move(void)
{
	return __atomic_load_n(&moves, __ATOMIC_RELAXED) < MOVES_MAX;
}

int
pc_signals_take_deferred(void)
{
	int d = deferred;

	deferred = 0;
	return d;
}

/* What the program believes of sig in this thread, for the handler: 1
 * when it blocked it (then a forwarded signal is held back, and counted). */
int
pc_prog_blocked_from_handler(int sig)
{
	unsigned bit = sig == cur_sig() ? HIDE_SAMPLE : HIDE_SNAPSHOT;

	if (!(prog_blocked & bit))
		return 0;
	if (bit == HIDE_SAMPLE)
		deferred++;
	return 1;
}

unsigned
pc_signals_prog_blocked(void)
{
	return prog_blocked;
}

void
pc_signals_inherit_block(unsigned blocked, int moves_seen)
{
	prog_blocked = blocked;
	my_moves = moves_seen;
	view_sync();
}

unsigned
pc_signals_view_bit(int sig)
{
	return sig == cur_sig()            ? HIDE_SAMPLE :
	       sig == pc_cfg->snapshot_sig ? HIDE_SNAPSHOT :
					     0;
}

unsigned
pc_signals_view_set(unsigned blocked)
{
	unsigned was = prog_blocked;

	prog_blocked = blocked;
	return was;
}

/*
 * This thread's view of the program's mask, brought up to the moves made
 * since it last looked: a signal libpc left and the program believed
 * blocked is blocked for real, and the new sampling signal, where it is
 * blocked for real, is let through with the view keeping it blocked. In
 * a handler the mask is the interrupted one, in *uc_mask (it comes back
 * with sigreturn); otherwise the thread's own. 1 when sig (a signal libpc
 * left) was blocked so: the program believed it blocked. AS-safe.
 */
int
pc_signals_sync_mask(sigset_t *uc_mask, int sig)
{
	int n = __atomic_load_n(&moves, __ATOMIC_SEQ_CST), hit = 0;

	while (my_moves < n) {
		int from = move_from[my_moves], to = move_to[my_moves];
		sigset_t one, mask;

		if (prog_blocked & HIDE_SAMPLE) {
			hit |= from == sig;
			if (uc_mask) {
				sigaddset(uc_mask, from);
			} else {
				sigemptyset(&one);
				sigaddset(&one, from);
				raw_mask(SIG_BLOCK, &one, NULL);
			}
		}
		prog_blocked &= ~HIDE_SAMPLE;
		if (to) {
			if (!uc_mask)
				raw_mask(SIG_SETMASK, NULL, &mask);
			if (sigismember(uc_mask ? uc_mask : &mask, to) == 1) {
				prog_blocked |= HIDE_SAMPLE;
				if (uc_mask) {
					sigdelset(uc_mask, to);
				} else {
					sigemptyset(&one);
					sigaddset(&one, to);
					raw_mask(SIG_UNBLOCK, &one, NULL);
				}
			}
		}
		my_moves++;
	}
	return hit;
}

static void
view_sync(void)
{
	if (my_moves != __atomic_load_n(&moves, __ATOMIC_RELAXED))
		pc_signals_sync_mask(NULL, 0);
}

void
pc_signals_sync_from_handler(void *ucv)
{
	ucontext_t *uc = ucv;

	if (my_moves != __atomic_load_n(&moves, __ATOMIC_RELAXED))
		pc_signals_sync_mask(&uc->uc_sigmask, 0);
}

void
pc_signals_sync(void)
{
	view_sync();
}

int
pc_signals_moves(void)
{
	return my_moves;
}

/* The sampling signal was blocked in the thread that ran the constructor
 * (inherited through exec): the program's view keeps it blocked, while
 * the samples are let through. */
void
pc_signals_take_sampling(void)
{
	sigset_t cur, one;

	if (raw_mask(SIG_SETMASK, NULL, &cur) || !sigismember(&cur, cur_sig()))
		return;
	prog_blocked |= HIDE_SAMPLE;
	sigemptyset(&one);
	sigaddset(&one, cur_sig());
	raw_mask(SIG_UNBLOCK, &one, NULL);
}

/* The snapshot signal is blocked in this thread for real (and so in every
 * thread it starts); the program's view keeps what it was. */
void
pc_signals_take_snapshot(void)
{
	sigset_t cur, one;

	raw_mask(SIG_SETMASK, NULL, &cur);
	if (sigismember(&cur, pc_cfg->snapshot_sig))
		prog_blocked |= HIDE_SNAPSHOT;
	sigemptyset(&one);
	sigaddset(&one, pc_cfg->snapshot_sig);
	raw_mask(SIG_BLOCK, &one, NULL);
}

/*
 * A handler of the program's that leaves by longjmp (or siglongjmp
 * without a saved mask) leaves its mask in force, which holds the sampling
 * signal: it is let through here (sigcalls.c's jumps), the program's view
 * keeping it blocked where that mask blocks every real-time signal.
 */
void
pc_signals_leaving_handler(void)
{
	sigset_t cur, one;
	int s = cur_sig(), full = 1;

	if (!pc || pc->owned[s] != PC_OWN_SAMPLING ||
	    raw_mask(SIG_SETMASK, NULL, &cur) || sigismember(&cur, s) != 1)
		return;
	/* blocked for real: only a handler's mask does that here */
	for (int k = SIGRTMIN; k <= SIGRTMAX; k++)
		if (k != s && k != pc_cfg->snapshot_sig &&
		    sigismember(&cur, k) != 1)
			full = 0;
	if (full)
		prog_blocked |= HIDE_SAMPLE;
	sigemptyset(&one);
	sigaddset(&one, s);
	raw_mask(SIG_UNBLOCK, &one, NULL);
}
