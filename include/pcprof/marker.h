/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcprof's markers: a program's own phases, requests and counters, drawn
 * on pcprof's timeline (pcprof run --timeline, PC_TIMELINE=1; libpc(7)).
 *
 *     #include <pcprof/marker.h>
 *     pcprof_mark_begin("request");
 *     ...
 *     pcprof_mark_end("request");
 *     pcprof_mark_instant("cache flushed");
 *     pcprof_count("queue length", n);
 *
 * Nothing to link: the functions are weak references that libpc.so
 * defines. A program built with them runs unchanged without libpc (each
 * call is then one test of a null pointer, always false, and nothing
 * else), and under libpc each call takes tens of nanoseconds. They may
 * be called from any thread and from signal handlers, allocate nothing
 * and take no lock.
 *
 * A name is kept by its pointer: pass string literals or other strings
 * that live as long as the program, the same pointer for the same name.
 * The first 47 bytes of a name are kept. Begins and ends pair by name
 * within a thread; they may nest.
 *
 * In a non-PIE program, compile the files that call them with -fPIE or
 * -fPIC: non-PIC code has a weak function's address fixed at link time
 * (0), and the calls would never reach libpc. PIE, the default on Debian
 * and most distributions, needs nothing.
 */
#ifndef PCPROF_MARKER_H
#define PCPROF_MARKER_H

#ifdef __cplusplus
extern "C" {
#endif

void pcprof_mark_begin(const char *name) __attribute__((weak));
void pcprof_mark_end(const char *name) __attribute__((weak));
void pcprof_mark_instant(const char *name) __attribute__((weak));
void pcprof_count(const char *name, long long value) __attribute__((weak));
/* The same at a time already past (or another clock's, converted): ns
 * on CLOCK_MONOTONIC; 0 is now. A begin and its end pair in the order
 * they are called, whatever their times. */
void pcprof_mark_begin_at(const char *name, unsigned long long ns) __attribute__((weak));
void pcprof_mark_end_at(const char *name, unsigned long long ns) __attribute__((weak));
void pcprof_mark_instant_at(const char *name, unsigned long long ns) __attribute__((weak));

#ifdef __cplusplus
}
#endif

/* Each call tests its function's address first: 0 where libpc is not
 * loaded. (A function-like macro does not expand itself again.) */
#define pcprof_mark_begin(name) \
	(pcprof_mark_begin ? (pcprof_mark_begin)(name) : (void)0)
#define pcprof_mark_end(name) \
	(pcprof_mark_end ? (pcprof_mark_end)(name) : (void)0)
#define pcprof_mark_instant(name) \
	(pcprof_mark_instant ? (pcprof_mark_instant)(name) : (void)0)
#define pcprof_count(name, value) \
	(pcprof_count ? (pcprof_count)((name), (value)) : (void)0)
#define pcprof_mark_begin_at(name, ns) \
	(pcprof_mark_begin_at ? (pcprof_mark_begin_at)((name), (ns)) : (void)0)
#define pcprof_mark_end_at(name, ns) \
	(pcprof_mark_end_at ? (pcprof_mark_end_at)((name), (ns)) : (void)0)
#define pcprof_mark_instant_at(name, ns) \
	(pcprof_mark_instant_at ? (pcprof_mark_instant_at)((name), (ns)) : (void)0)

#endif
