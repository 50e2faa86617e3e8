/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Included last by files whose code runs inside the sampling signal handler:
 * turns calls that are not async-signal-safe into compile errors (git's
 * banned.h idea).
 */
#ifndef PC_BANNED_H
#define PC_BANNED_H

#define PC_BANNED(f) sorry_##f##_is_not_async_signal_safe

#undef malloc
#define malloc(...)	PC_BANNED(malloc)
#undef calloc
#define calloc(...)	PC_BANNED(calloc)
#undef realloc
#define realloc(...)	PC_BANNED(realloc)
#undef free
#define free(...)	PC_BANNED(free)
#undef printf
#define printf(...)	PC_BANNED(printf)
#undef fprintf
#define fprintf(...)	PC_BANNED(fprintf)
#undef snprintf
#define snprintf(...)	PC_BANNED(snprintf)
#undef sprintf
#define sprintf(...)	PC_BANNED(sprintf)
#undef pthread_mutex_lock
#define pthread_mutex_lock(...)	PC_BANNED(pthread_mutex_lock)
#undef dlsym
#define dlsym(...)	PC_BANNED(dlsym)
/* takes the loader's lock: a handler or an allocation hook that came in
 * while the program held it (a dlopen, another dl_iterate_phdr) would
 * wait for ever */
#undef dl_iterate_phdr
#define dl_iterate_phdr(...)	PC_BANNED(dl_iterate_phdr)

#endif
