// SPDX-License-Identifier: BSD-2-Clause
// C++ exceptions thrown and caught in a loop, for the shipped programs
// against perf (tests/e2e/shipped.py, bench/real.py)
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
// a key ending in 7 (a tenth of them) throws: the unwinder's and the
// catch's time are part of the profile (keys of 7 characters, asked for
// before, never came: they are 6 digits at most, and none was thrown)
static int parse(const std::string &s) {
    if (s.back() == '7') throw std::runtime_error("bad " + s);
    return (int)s.size();
}
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 400000;
    std::map<std::string, int> m;
    long caught = 0, sum = 0;
    for (long i = 0; i < n; i++) {
        std::string k = std::to_string(i * 2654435761u % 100003);
        try { sum += parse(k); m[k] += 1; }
        catch (const std::exception &) { caught++; }
    }
    std::printf("%ld %ld %zu\n", sum, caught, m.size());
    return 0;
}
