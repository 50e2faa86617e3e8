/*
 * Writing the profile: freeze-independent, async-signal-safe code that lays
 * the counters out as gmon.out records (gmon/write.c) in a temporary file
 * beside the target and renames it into place, so a reader never sees half
 * a file and a symlink at the target is never followed. Called at exit, and
 * written AS-safe so that signal paths can call it too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>		/* rename(2), which is AS-safe; nothing else */
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pc.h"
#include "banned.h"

void
pc_line_str(struct pc_line *l, const char *s)
{
	while (*s && l->len < l->size - 1)
		l->buf[l->len++] = *s++;
}

void
pc_line_u64(struct pc_line *l, uint64_t v)
{
	char t[24];
	int n = 0;

	do
		t[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n > 0 && l->len < l->size - 1)
		l->buf[l->len++] = t[--n];
}

/* v with one decimal, rounded */
static void
line_fixed1(struct pc_line *l, double v)
{
	uint64_t t = (uint64_t)(v * 10 + 0.5);

	pc_line_u64(l, t / 10);
	pc_line_str(l, ".");
	pc_line_u64(l, t % 10);
}

static void
line_out(struct pc_line *l)
{
	l->buf[l->len++] = '\n';
	pc_write_err(l->buf, l->len);
}

/* "dir/.base.<pid>.tmp" for "dir/base" */
static int
temp_name(char *dst, size_t size, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	char lbuf[PATH_MAX + 512];
	struct pc_line l = { lbuf, sizeof(lbuf), 0 };

	l.len = 0;
	pc_line_str(&l, ".");
	pc_line_str(&l, path + dirlen);
	pc_line_str(&l, ".");
	pc_line_u64(&l, (uint64_t)getpid());
	pc_line_str(&l, ".tmp");
	if (dirlen + l.len + 1 > size)
		return -ENAMETOOLONG;
	memcpy(dst, path, dirlen);
	memcpy(dst + dirlen, l.buf, l.len);
	dst[dirlen + l.len] = 0;
	return 0;
}

/*
 * The counters of one text segment, page by page: mincore() tells which
 * pages of the anonymous mapping a sample ever touched, so untouched text
 * is skipped without reading (and faulting in) its zero pages.
 */
static int
write_text(struct gmon_sink *s, const struct pc_text *t)
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const size_t per_page = page / sizeof(uint32_t);
	const unsigned bin = pc_profil_bin_bytes(t->prof.scale);
	const size_t nbins = t->prof.bufsiz / sizeof(uint32_t);
	const size_t npages = t->map_len / page;
	unsigned char vec[1024];

	for (size_t p0 = 0; p0 < npages; p0 += sizeof(vec)) {
		size_t n = npages - p0 < sizeof(vec) ? npages - p0 : sizeof(vec);

		if (mincore((char *)t->prof.buf + p0 * page, n * page, vec))
			memset(vec, 1, n);	/* cannot tell: read them all */
		for (size_t i = 0; i < n; i++) {
			size_t j = i, a, b;
			long r;

			if (!(vec[i] & 1))
				continue;
			while (j + 1 < n && (vec[j + 1] & 1))
				j++;
			a = (p0 + i) * per_page;
			b = (p0 + j + 1) * per_page;
			if (b > nbins)
				b = nbins;
			if (a < b) {
				r = gmon_sink_counts(s, t->link_low + a * bin, bin,
						     (uint32_t)pc.hz,
						     t->prof.buf + a, b - a);
				if (r < 0)
					return (int)r;
			}
			i = j;
		}
	}
	return s->error;
}

int
pc_dump_texts(struct gmon_sink *s, const struct pc_text *t, int n)
{
	uint64_t before = s->bytes;

	for (int i = 0; i < n && !s->error; i++)
		write_text(s, &t[i]);
	if (s->bytes == before && n > 0) {
		/* no sample here, but readers expect a histogram (and its
		 * rate): one empty bin just past the text, where no record of
		 * another run's file can reach, so that files still add up
		 * (gprof and pcprof refuse records that partly overlap) */
		static const uint16_t zero;
		const unsigned bin = pc_profil_bin_bytes(t[n - 1].prof.scale);
		uint64_t end = t[n - 1].link_low + t[n - 1].prof.bufsiz / sizeof(uint32_t) * bin;

		gmon_sink_hist(s, end, end + bin, (uint32_t)pc.hz, &zero, 1);
	}
	return s->error;
}

static int
write_gmon(struct gmon_sink *s)
{
	gmon_sink_header(s, pc.spare);
	pc_dump_texts(s, pc.text, pc.ntext);
	if (pc.callgraph)
		pc_arcs_write(s, 0);
	if (!pc.scope_all) {
		/* the samples outside the executable (gmon.h) */
		uint64_t c = __atomic_load_n(&pc.outside, __ATOMIC_RELAXED);

		for (; c > UINT32_MAX; c -= UINT32_MAX)
			gmon_sink_arc(s, GMON_OUTSIDE_FROM, GMON_OUTSIDE_SELF, UINT32_MAX);
		if (c)
			gmon_sink_arc(s, GMON_OUTSIDE_FROM, GMON_OUTSIDE_SELF, (uint32_t)c);
	}
	return s->error;
}

/* Write body's output to path through a temporary file and rename. */
int
pc_dump_file(const char *path, int (*body)(struct gmon_sink *))
{
	char tmp[PATH_MAX];
	struct gmon_sink sink;
	struct stat st;
	int fd, r;

	/* refuse a symlink or a directory rather than replace it */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return S_ISLNK(st.st_mode) ? -ELOOP : -EISDIR;
	r = temp_name(tmp, sizeof(tmp), path);
	if (r)
		return r;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0 && errno == EEXIST) {
		/* left by an earlier process with our pid that died mid-write */
		unlink(tmp);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	}
	if (fd < 0)
		return -errno;
	gmon_sink_init(&sink, fd);
	body(&sink);
	r = gmon_sink_flush(&sink);
	if (close(fd) && !r && errno != EINTR)
		r = -errno;
	if (!r && rename(tmp, path))
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}

/* PC_STACKS=1: the profile's name with ".stacks" added. */
static const char *
stacks_path(const char *path, char *buf, size_t size)
{
	size_t n = strlen(path);

	if (pc.stacks_path[0])
		return pc.stacks_path;
	if (n + 8 > size)
		return NULL;
	memcpy(buf, path, n);
	memcpy(buf + n, ".stacks", 8);
	return buf;
}

int
pc_dump(const char *path)
{
	char buf[PATH_MAX];
	const char *sp;
	int r = pc_dump_file(path, write_gmon);

	if (!r && pc.stacks && pc.callgraph) {
		if (!(sp = stacks_path(path, buf, sizeof(buf))))
			return -ENAMETOOLONG;
		r = pc_dump_file(sp, pc_stacks_write);
		if (r)
			pc_dump_summary(sp, r);
		r = 0;	/* the profile itself was written */
	}
	if (!r)
		pc_objects_dump(path);
	return r;
}

static const char *
error_text(int err)
{
	switch (-err) {
	case ELOOP:	return "it is a symbolic link";
	case EISDIR:	return "it is a directory";
	case ENOSPC:	return "no space left on the device";
	case EDQUOT:	return "disk quota exceeded";
	case EACCES:	return "permission denied";
	case EPERM:	return "operation not permitted";
	case EROFS:	return "read-only file system";
	case ENOENT:	return "no such directory";
	case ENAMETOOLONG: return "file name too long";
	case EMFILE: case ENFILE: return "too many open files";
	default:	return "write failed";
	}
}

void
pc_dump_summary(const char *path, int err)
{
	struct timespec ts;
	double cpu = 0;
	char lbuf[PATH_MAX + 512];
	struct pc_line l = { lbuf, sizeof(lbuf), 0 };

	if (err) {
		l.len = 0;
		pc_line_str(&l, "libpc: cannot write '");
		pc_line_str(&l, path);
		pc_line_str(&l, "': ");
		pc_line_str(&l, error_text(err));
		pc_line_str(&l, "; profile not written");
		line_out(&l);
	}
	if (!pc.verbose)
		return;
	/* this image's CPU only: an exec keeps the process's clock going */
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
		cpu = (double)(ts.tv_sec - pc.cpu_start.tv_sec) +
		      (double)(ts.tv_nsec - pc.cpu_start.tv_nsec) / 1e9;
	l.len = 0;
	pc_line_str(&l, "libpc: ");
	pc_line_str(&l, err ? "not written " : "wrote ");
	pc_line_str(&l, path);
	pc_line_str(&l, ": ");
	pc_line_u64(&l, pc.samples);
	pc_line_str(&l, " samples (");
	pc_line_u64(&l, pc.signals);
	pc_line_str(&l, " signals) in ");
	line_fixed1(&l, cpu);
	pc_line_str(&l, " s CPU; rate ");
	pc_line_u64(&l, (uint64_t)pc.hz);
	pc_line_str(&l, " Hz requested, ");
	pc_line_u64(&l, cpu > 0 ? (uint64_t)(pc.samples / cpu + 0.5) : 0);
	pc_line_str(&l, " Hz effective, ");
	pc_line_u64(&l, cpu > 0 ? (uint64_t)(pc.signals / cpu + 0.5) : 0);
	pc_line_str(&l, " signals/s; ");
	pc_line_u64(&l, pc.threads);
	pc_line_str(&l, " threads; timer ");
	pc_line_str(&l, pc.timer_kind == PC_TIMER_TASKCLOCK ? "taskclock" : "posix");
	if (pc.timer_refused) {
		pc_line_str(&l, " (task-clock refused: errno ");
		pc_line_u64(&l, (uint64_t)pc.timer_refused);
		pc_line_str(&l, ")");
	}
	pc_line_str(&l, "; ");
	pc_line_u64(&l, pc.outside);
	pc_line_str(&l, " samples outside the text");
	if (pc.scope_all) {
		pc_line_str(&l, "; scope all: ");
		pc_line_u64(&l, (uint64_t)(pc.nobjs - 1));
		pc_line_str(&l, " other objects, ");
		/* as the manifest counts them: JIT code's are kept by PC */
		pc_line_u64(&l, pc.pending_dropped + pc.no_object +
				__atomic_load_n(&pc.pending_samples, __ATOMIC_RELAXED));
		pc_line_str(&l, " samples in none");
	}
	if (pc.callgraph) {
		pc_line_str(&l, "; call graph: ");
		pc_line_u64(&l, pc.stacks_walked ? pc.frames / pc.stacks_walked : 0);
		pc_line_str(&l, " frames a stack (");
		pc_line_str(&l, pc.unwinder == PC_UNWIND_FP ? "fp" :
			     pc.unwinder == PC_UNWIND_LIBUNWIND ? "libunwind" : "dwarf");
		pc_line_str(&l, "), ");
		pc_line_u64(&l, pc.arcs_dropped);
		pc_line_str(&l, " arc samples dropped (table full)");
		if (pc.stacks) {
			pc_line_str(&l, ", ");
			pc_line_u64(&l, pc.stacks_dropped);
			pc_line_str(&l, " stack samples dropped");
		}
	}
	pc_line_str(&l, "; signal ");
	pc_line_u64(&l, (uint64_t)pc.sig);
	if (pc.pg_built)
		pc_line_str(&l, " (not SIGPROF: the program is built with -pg)");
	if (pc.snapshots) {
		pc_line_str(&l, "; ");
		pc_line_u64(&l, pc.snapshots);
		pc_line_str(&l, " snapshots");
	}
	if (pc.lost_blocked) {
		pc_line_str(&l, "; ");
		pc_line_u64(&l, pc.lost_blocked);
		pc_line_str(&l, " of the program's own signals held while it blocked them");
	}
	if (pc.timer_failures) {
		pc_line_str(&l, "; ");
		pc_line_u64(&l, pc.timer_failures);
		pc_line_str(&l, " threads unsampled (no timer)");
	}
	if (pc.foreign) {
		pc_line_str(&l, "; ");
		pc_line_u64(&l, pc.foreign);
		pc_line_str(&l, " foreign signals passed on");
	}
	line_out(&l);
}
