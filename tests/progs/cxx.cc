// SPDX-License-Identifier: BSD-2-Clause
// C++ functions whose symbols are mangled; pcprof prints them demangled.
// With "lib", each round also formats numbers with libstdc++'s streams,
// so that libstdc++.so.6 takes samples of its own.
// Usage: cxx SECONDS [lib]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

extern "C" {
#include "truth.h"
}

namespace shapes {
struct Circle {
	__attribute__((noinline)) uint64_t area(uint64_t x) const
	{
		return spin(x, 2 * SPIN_UNIT);
	}
};

}

namespace {
struct Scale {
	__attribute__((noinline)) uint64_t operator()(uint64_t x, int k) const
	{
		return spin(x + (uint64_t)k, SPIN_UNIT);
	}
};
}

namespace shapes {
template <typename T>
__attribute__((noinline)) uint64_t
accumulate(T v, uint64_t x)
{
	return spin(x + v, SPIN_UNIT);
}
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	shapes::Circle c;
	Scale scale;
	uint64_t x = 1;
	auto mix = [](uint64_t v, int k) __attribute__((noinline)) {
		return spin(v ^ (uint64_t)k, SPIN_UNIT);
	};
	uint64_t (*volatile call_mix)(uint64_t, int) = mix;
	bool lib = argc > 2 && !std::strcmp(argv[2], "lib");

	while (process_cpu() < seconds) {
		x = c.area(x);
		x = shapes::accumulate<int>(3, x);
		x = scale(x, 2);
		x = call_mix(x, 5);
		if (lib) {
			std::ostringstream s;

			for (int i = 0; i < 4096; i++)
				s << (x >> (i % 40)) << ' ';
			x += s.str().size();
		}
	}
	std::printf("%llu\n", (unsigned long long)x);
	return 0;
}
