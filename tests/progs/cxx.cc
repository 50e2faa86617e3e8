// C++ functions whose symbols are mangled; pcprof prints them demangled.
// Usage: cxx SECONDS
#include <cstdio>
#include <cstdlib>

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
	uint64_t x = 1;

	while (process_cpu() < seconds) {
		x = c.area(x);
		x = shapes::accumulate<int>(3, x);
	}
	std::printf("%llu\n", (unsigned long long)x);
	return 0;
}
