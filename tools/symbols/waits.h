/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The names of an off-CPU stack's leaf, a wait word (gmon.h's
 * GMON_WAIT_WORD): "[off-cpu: CALL]" with the x86_64 system call's name
 * (from the kernel's header, made into build/gen/syscalls.h at build
 * time), the kind of descriptor it waits on and the child a wait4 waits
 * for. Used wherever stacks are named (stackfile.c, export.c, diff).
 */
#ifndef PC_WAITS_H
#define PC_WAITS_H

#include <stddef.h>
#include <stdint.h>

/* What every wait's name starts with: the flame graph colours by it and
 * search finds it. */
#define WAIT_PREFIX	"[off-cpu: "

/* The name of x86_64 system call nr ("clock_nanosleep"), or NULL for a
 * number the kernel's header does not name. */
const char *syscall_name(unsigned nr);

/*
 * The name of wait word w into buf (size bytes, NUL-terminated, as
 * snprintf does): "[off-cpu: read pipe]", "[off-cpu: wait4 pid 42]",
 * "[off-cpu: runqueue]", "[off-cpu: fault]" (blocked outside a call),
 * "[off-cpu: unknown]" (no look saw the wait),
 * "[off-cpu: syscall 999]" (a number with no name). Returns buf.
 */
char *wait_name(uint64_t w, char *buf, size_t size);

/* Whether name is a wait's (starts with WAIT_PREFIX). */
int wait_name_is(const char *name);

/* Whether wait name's call lasts until another thread or process acts
 * (futex, wait4, poll, accept...), or reads or writes a pipe, socket,
 * eventfd or tty. */
int wait_name_on_others(const char *name);

/* The process a wait word's wait4 or waitid waits for; 0 for none. */
uint32_t wait_pid(uint64_t w);

/* The name of wait word w's site, into buf as wait_name: the call and the
 * descriptor's kind, never the child a wait4 or waitid waited for
 * ("[off-cpu: wait4]"): one waiting site is one frame, one row, whatever
 * children it waited for. Returns buf. */
char *wait_site_name(uint64_t w, char *buf, size_t size);

/* The children that one waiting site waited for, with their times: what
 * the text report lists under a "[off-cpu: wait4]" row. */
struct wait_child {
	char *site;		/* the site's name (wait_site_name), owned */
	uint32_t pid;
	double samples; /* its time (seconds, where the report keeps it) */
};

/* Add samples of the wait at site for child pid to v[0..*n) (grown; *cap
 * its room): one entry per site and pid. Exits out of memory. */
void wait_children_add(struct wait_child **v, size_t *n, size_t *cap,
		       const char *site, uint32_t pid, double samples);
/* Sort v[0..n): by site, then most samples first, then by pid. */
void wait_children_sort(struct wait_child *v, size_t n);
/* Free v[0..n) and its names. */
void wait_children_free(struct wait_child *v, size_t n);

#endif
