# SPDX-License-Identifier: BSD-2-Clause
"""Writes chains37.c on stdout (the Makefile builds it into
build/tests/progs/chains37): 30 call chains of 100 distinct functions, run
one after another until the process has used argv[1] s of CPU. Every
sample walks 100 edges, and the 3,000 distinct edges do not fit a
1024-slot arc table (test_callgraph.py's full arc table)."""

print('#include "truth.h"\n#include <stdlib.h>\nstatic volatile uint64_t s;')
for k in range(30):
    print("__attribute__((noinline)) void c%d_99(void) "
          "{ s = spin(s, 20000); }" % k)
    for i in range(98, -1, -1):
        print("__attribute__((noinline)) void c%d_%d(void) "
              "{ c%d_%d(); __asm__ volatile(\"\"); }" % (k, i, k, i + 1))
print("int main(int c, char **v) { double t = atof(v[1]);\n"
      " while (process_cpu() < t) {")
for k in range(30):
    print("  c%d_0();" % k)
print(" }\n return 0;\n}")
