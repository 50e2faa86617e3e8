// SPDX-License-Identifier: BSD-2-Clause
// C++ allocations for PC_ALLOC's tests: operator new and delete in their
// forms (single, array, aligned, sized, nothrow) and std::vector's and
// std::string's growth, from known functions; one std::vector leaked.
#include <cstdio>
#include <new>
#include <string>
#include <vector>

struct alignas(64) Wide {
	char b[128];
};

static void *volatile sink;

__attribute__((noinline)) static void
new_site()
{
	for (int i = 0; i < 1000; i++) {
		int *p = new int[25];	// 100 bytes

		sink = p;
		delete[] p;
	}
}

__attribute__((noinline)) static void
aligned_new_site()
{
	for (int i = 0; i < 300; i++) {
		Wide *w = new Wide;	// 128 bytes, aligned new

		sink = w;
		delete w;
	}
}

__attribute__((noinline)) static void
nothrow_site()
{
	for (int i = 0; i < 200; i++) {
		char *p = new (std::nothrow) char[300];

		sink = p;
		delete[] p;
	}
}

__attribute__((noinline)) static std::vector<long> *
vector_site()
{
	auto *v = new std::vector<long>;	// leaked below

	for (long i = 0; i < 1000; i++)
		v->push_back(i);
	return v;
}

__attribute__((noinline)) static size_t
string_site()
{
	std::string s;
	size_t n = 0;

	for (int i = 0; i < 500; i++) {
		s += "0123456789abcdefghijklmnopqrstuvwxyz";
		n += s.size();
	}
	return n;
}

int
main()
{
	new_site();
	aligned_new_site();
	nothrow_site();
	std::vector<long> *v = vector_site();
	size_t n = string_site();

	std::printf("alloc39pp: %zu %ld\n", n, (*v)[999]);
	return 0;
}
