/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a program asks of its resources, for the tests of the live file's
 * footprint (tests/e2e/test_footprint.py); its output is the same plain
 * and under libpc wherever libpc leaves the resources the program's.
 *   footprint spin SECONDS       burns CPU in spin_work, prints "spun"
 *   footprint malloc MIB SECONDS mallocs MIB MiB, touches every page,
 *                                spins, prints "malloc ok" or the error
 *   footprint write FILE KIB SECONDS  spins, then writes KIB KiB to FILE,
 *                                prints "wrote KIB" or the error
 *   footprint fork N SECONDS     N children, one after the other, each
 *                                spinning SECONDS; prints "forked N"
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "truth.h"

static volatile uint64_t sink;

__attribute__((noinline)) void
spin_work(double seconds)
{
	double t0 = process_cpu();

	while (process_cpu() - t0 < seconds)
		sink = spin(sink, TRUTH_BLOCK * SPIN_UNIT);
}

static int
do_malloc(size_t mib, double seconds)
{
	char *p = malloc(mib << 20);

	if (!p) {
		printf("malloc failed: %s\n", strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < mib << 20; i += 4096)
		p[i] = 1;
	spin_work(seconds);
	printf("malloc ok\n");
	free(p);
	return 0;
}

static int
do_write(const char *path, size_t kib, double seconds)
{
	static char block[1024];
	int fd;

	spin_work(seconds);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		printf("open failed: %s\n", strerror(errno));
		return 1;
	}
	memset(block, 'x', sizeof(block));
	for (size_t i = 0; i < kib; i++)
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block)) {
			printf("write failed at %zu KiB: %s\n", i, strerror(errno));
			return 1;
		}
	if (close(fd)) {
		printf("close failed: %s\n", strerror(errno));
		return 1;
	}
	printf("wrote %zu\n", kib);
	return 0;
}

static int
do_fork(int n, double seconds)
{
	for (int i = 0; i < n; i++) {
		int st;
		pid_t pid = fork();

		if (pid == 0) {
			spin_work(seconds);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
			printf("child %d failed\n", i);
			return 1;
		}
	}
	printf("forked %d\n", n);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "spin")) {
		spin_work(atof(argv[2]));
		printf("spun\n");
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "malloc"))
		return do_malloc((size_t)atol(argv[2]), atof(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "write"))
		return do_write(argv[2], (size_t)atol(argv[3]), atof(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "fork"))
		return do_fork(atoi(argv[2]), atof(argv[3]));
	fprintf(stderr, "usage: footprint spin|malloc|write|fork ...\n");
	return 2;
}
