/*
 * pcprof merge: sum profiles of one executable into one gmon.out that gprof
 * reads, carrying counts above 65535 in extra records (where gprof -s
 * truncates them to 16 bits). Written to a temporary file, then renamed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcprof.h"
#include "inputs/runfiles.h"

static const char usage_merge[] =
"usage: pcprof merge -o OUT GMON...\n"
"\n"
"Sum gmon.out files of the same executable, sampled at the same rate, into\n"
"OUT. Counts are summed in 64 bits and written so that gprof reads them\n"
"exactly; arcs between the same two addresses are added together.\n";

static int
cmp_arc(const void *a, const void *b)
{
	const struct gmon_arc *x = a, *y = b;

	if (x->from_pc != y->from_pc)
		return x->from_pc < y->from_pc ? -1 : 1;
	if (x->self_pc != y->self_pc)
		return x->self_pc < y->self_pc ? -1 : 1;
	return 0;
}

static int
write_profile(int fd, const struct gmon_profile *p)
{
	struct gmon_sink *s = malloc(sizeof(*s));
	struct gmon_arc *a = p->arcs;
	size_t n = p->narcs;

	if (!s)
		return -ENOMEM;
	gmon_sink_init(s, fd);
	gmon_sink_header(s, p->spare);
	for (size_t i = 0; i < p->nhists && !s->error; i++) {
		const struct gmon_hist *h = &p->hists[i];
		long r = gmon_sink_counts64(s, h->low, (unsigned)((h->high - h->low) / h->nbins),
					    h->rate, h->counts, h->nbins);

		if (r < 0 && !s->error)
			s->error = (int)r;
	}
	/* equal arcs summed; a sum past 32 bits goes in several records,
	 * which gprof adds up again */
	qsort(a, n, sizeof(*a), cmp_arc);
	for (size_t i = 0; i < n && !s->error; ) {
		uint64_t total = 0;
		size_t j = i;

		while (j < n && !cmp_arc(&a[i], &a[j]))
			total += a[j++].count;
		while (total > UINT32_MAX) {
			gmon_sink_arc(s, a[i].from_pc, a[i].self_pc, UINT32_MAX);
			total -= UINT32_MAX;
		}
		gmon_sink_arc(s, a[i].from_pc, a[i].self_pc, (uint32_t)total);
		i = j;
	}
	n = (size_t)gmon_sink_flush(s);
	free(s);
	return (int)n;
}

int
cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 }
	};
	const char *out = NULL;
	char tmp[PATH_MAX];
	struct gmon_profile p;
	int c, fd, r;

	while ((c = getopt_long(argc, argv, "+ho:", longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_merge, stdout);
			return 0;
		}
		if (c != 'o') {
			fputs(usage_merge, stderr);
			return EXIT_BAD_INPUT;
		}
		out = optarg;
	}
	if (!out || optind >= argc) {
		fputs(usage_merge, stderr);
		return EXIT_BAD_INPUT;
	}
	profiles_load(&p, argv + optind, argc - optind);
	for (int i = optind; i < argc; i++)
		if (runfiles_has_manifest(argv[i])) {
			pc_warn("note: '%s' has an objects manifest (PC_SCOPE=all); only the "
				"executable's profiles are merged", argv[i]);
			break;
		}
	if (snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", out, (long)getpid()) >= (int)sizeof(tmp))
		pc_fatal("'%s': name too long", out);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0)
		pc_fatal("'%s': %s", tmp, strerror(errno));
	r = write_profile(fd, &p);
	if (close(fd) && !r)
		r = -errno;
	if (!r && rename(tmp, out))
		r = -errno;
	if (r) {
		unlink(tmp);
		pc_fatal("'%s': %s", out, strerror(-r));
	}
	gmon_profile_release(&p);
	return 0;
}
