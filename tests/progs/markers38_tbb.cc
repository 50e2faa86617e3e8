// SPDX-License-Identifier: BSD-2-Clause
// A TBB flow graph built with TBB_USE_PROFILING_TOOLS=1: TBB itself marks
// each run of a node's body as an ITT task named "body" (domain
// "tbb.flow"), through the ITT static part inside libtbb, which loads
// the collector that INTEL_LIBITTNOTIFY64 names.
//
//   markers38_tbb N   N messages through a serial function_node whose
//                     body spends 2 ms of CPU in node_body
//
// It prints "bodies N" and the CLOCK_MONOTONIC span of all the bodies,
// "span START END" (ns).
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>

static unsigned long long
now_ns()
{
	timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

__attribute__((noinline)) void node_body(void);
void
node_body(void)
{
	timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (volatile int i = 0; i < 2000; i++)
			;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6 < 2.0);
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	std::atomic<int> bodies{0};
	std::atomic<unsigned long long> first{~0ull}, last{0};
	// two threads at most: the machine is shared
	tbb::global_control gc(tbb::global_control::max_allowed_parallelism, 2);
	tbb::flow::graph g;
	tbb::flow::function_node<int, int> node(g, tbb::flow::serial, [&](int v) {
		unsigned long long a = now_ns(), b, f = first.load();

		while (a < f && !first.compare_exchange_weak(f, a))
			;
		node_body();
		b = now_ns();
		unsigned long long l = last.load();
		while (b > l && !last.compare_exchange_weak(l, b))
			;
		bodies++;
		return v;
	});

	for (int i = 0; i < n; i++)
		node.try_put(i);
	g.wait_for_all();
	std::printf("bodies %d\nspan %llu %llu\n", bodies.load(), first.load(), last.load());
	return 0;
}
