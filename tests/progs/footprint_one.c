/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * footprint_one [SECONDS]: a program of one thread that reads its own
 * executable through stdio's getc, over and over, for about SECONDS of
 * CPU time (0.5 by default), and prints how many threads
 * /proc/self/task lists before and after: "tasks 1 1" plain and under
 * libpc (a second thread would make glibc lock its stdio in every getc).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int
tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

int
main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	clock_t end = clock() + (clock_t)(secs * CLOCKS_PER_SEC);
	int before = tasks();
	unsigned long sum = 0;

	do {
		FILE *f = fopen("/proc/self/exe", "r");
		int c;

		if (!f)
			return 2;
		while ((c = getc(f)) != EOF)
			sum += (unsigned)c;
		fclose(f);
	} while (clock() < end);
	printf("tasks %d %d\n", before, tasks());
	return sum ? 0 : 3;
}
