/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools/base/: what every floor of pcprof may call (docs/ARCHITECTURE.md):
 * messages and memory (msg.c), the file read (infile.c) and written
 * (outfile.c), and escaping (escape.c). Includes nothing of pcprof.
 */
#ifndef PC_BASE_H
#define PC_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EXIT_BAD_INPUT	2

/* A function that returns an error as a value (-1, after its one line):
 * a caller that drops it carries on past the error, which the compiler
 * then says. */
#define PC_CHECKED __attribute__((warn_unused_result))

/* msg.c: "pcprof: " + message + newline on stderr. */
void pc_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, then exit(2). */
void pc_fatal(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* msg.c: the same as pc_warn, for an error that the caller passes up as
 * a value, the message said once here: returns -1. Errors below
 * tools/commands/ take this way (docs/CODING.md); only commands/ exits. */
int pc_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* msg.c: realloc, malloc, calloc, strdup and strndup (0 bytes asked is
 * 1), or "out of memory" and exit(pc_oom_status), 2 unless a command set
 * it: never NULL, as git's xmalloc. */
extern int pc_oom_status;
void *pc_realloc(void *p, size_t n);
void *pc_malloc(size_t n);
void *pc_calloc(size_t n, size_t size);
char *pc_strdup(const char *s);
char *pc_strndup(const char *s, size_t n);
/* asprintf's string, never NULL. */
char *pc_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* open_memstream, and its fclose: out of memory ends pcprof as above. */
FILE *pc_memstream(char **buf, size_t *len);
void pc_memstream_close(FILE *f);
/* "out of memory" and exit(pc_oom_status): for what fails only for want
 * of memory in a function that does not allocate through these. */
void pc_oom(void) __attribute__((noreturn));

/* msg.c: b[0..n) in hex into buf (2n + 1 bytes); buf. */
const char *pc_hex(const uint8_t *b, size_t n, char *buf);

/* outfile.c: an output file, written whole or not at all (out_open). */
struct out_file {
	FILE *f;
	const char *path;	/* as given, or "standard output" */
	char *tmp;		/* the temporary name, renamed at commit */
};
/* Open path for writing (NULL or "-": standard output); NULL after one
 * line naming it on failure. */
FILE *out_open(struct out_file *o, const char *path);
/* Flush and close o, and put it in place; 0, or -1 after one line naming
 * the file on a write error, and no partial file is left (its temporary
 * goes at exit). */
PC_CHECKED int out_commit(struct out_file *o);
/* Give o up after a failure: closed, and its temporary file removed
 * (standard output is left as it is, to be flushed at exit), so that no
 * partial file is left, whatever way pcprof ends then. */
void out_discard(struct out_file *o);
/* The temporary file of the output file being written removed, for a
 * handler that ends pcprof on a fault. AS-safe. */
void out_drop_from_handler(void);
/* SIGXFSZ as pcprof found it, which out_open ignores (a file too large
 * then fails with EFBIG): for a command pcprof starts (launch.c). */
void out_signals_as_found(void);

/*
 * Names are data (escape.c): a thread, program or file name, a symbol or a
 * path may hold bytes that a terminal acts on, and text and CSV show them
 * escaped. text_escape writes s into buf (size bytes, NUL-terminated, as
 * snprintf does) with each backslash as \\, a newline, carriage return
 * or tab as \n, \r or \t, and each other C0 control, DEL, C1 control
 * (U+0080..U+009F) and byte that is not part of valid UTF-8 as \xHH, one
 * a byte; so that the text reads back to one name. Valid UTF-8 stays.
 * Returns the length of the whole escaped text. TEXT_KEEP_TAB keeps tabs
 * (a source line's indentation).
 */
#define TEXT_KEEP_TAB	1u
/* TEXT_FOLDED: a semicolon as \x3b too, for a frame of folded stacks,
 * where it would end the frame */
#define TEXT_FOLDED	2u
size_t text_escape(char *buf, size_t size, const char *s, unsigned flags);
/* text_escape's text back to the name, in place; s. */
char *text_unescape(char *s);
/* s escaped (flags 0), for printf's %s, its width that of the escaped
 * text: s itself where nothing needs escaping, else a buffer of
 * escape.c's that the 8th call after this one reuses. NULL stays NULL. */
const char *text_name(const char *s);
/* The same with TEXT_KEEP_TAB, for source and disassembly lines. */
const char *text_source(const char *s);
/* Decode one UTF-8 character at p into *cp and return its length; a byte
 * that does not start a valid, shortest-form sequence gives *cp = -1 and
 * length 1. Stops at a NUL, which is never a continuation byte. */
size_t utf8_next(const unsigned char *p, long *cp);

/* Write s as a JSON string, quoted and escaped, valid UTF-8 whatever s
 * holds (escape.c): valid UTF-8 as it is; each byte that is not part of
 * valid UTF-8 as \u00XX, its Latin-1 reading; C0 and C1 controls, DEL,
 * U+2028 and U+2029 as \uXXXX; the quote and backslash escaped. */
void json_string(FILE *out, const char *s);
/* Write s as a CSV field, escaped as text_name does, then quoted where
 * it holds a comma or a quote (escape.c). */
void csv_string(FILE *out, const char *s);

/* infile.c: the one way pcprof opens a file it reads (a profile, a
 * manifest, a stacks file, a live file, a perf map or a jitdump): for
 * reading, close-on-exec, never through a symbolic link (O_NOFOLLOW), never
 * waiting on a FIFO (O_NONBLOCK), and a regular file only. The descriptor,
 * its stat in *sb (when not NULL); or -1, errno set and *why what is wrong
 * ("a symbolic link", "is a directory", "not a regular file", or
 * strerror's words). Not AS-safe. */
struct stat;
int pc_open_regular(const char *path, struct stat *sb, const char **why);
/* infile.c: the file that the O_PATH descriptor fd names, opened to read
 * (close-on-exec, never waiting, never a controlling terminal) through
 * /proc/self/fd: no second lookup of its name; -1 with errno ENOENT where
 * /proc is not mounted. */
int pc_reopen_read(int fd);

#endif
