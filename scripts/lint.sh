#!/bin/sh
# make lint: every header compiles on its own, cppcheck finds nothing, the
# flame graph's script parses (node --check), and the structure keeps its
# limits (scripts/structure.py, a copy of the project's shared tool: which
# file calls which, and function lengths).
# Usage: scripts/lint.sh CC CFLAGS...
set -u
cc=$1
shift
fail=0

for h in preload/*.h tools/*.h tools/*/*.h gmon/*.h; do
	if ! printf '#include "%s"\n' "$h" | "$cc" "$@" -I. -Itools -fsyntax-only -x c -; then
		echo "lint: $h does not compile on its own"
		fail=1
	fi
done

if ! cppcheck -q --error-exitcode=1 --enable=warning,portability --std=c11 \
	-D__x86_64__ -D__linux__ --inline-suppr preload tools gmon; then
	echo "lint: cppcheck found the problems above"
	fail=1
fi

# The flame graph's zoom script is its own file (the Makefile makes it a C
# string): node parses it. Without node this is skipped, but not in CI.
if command -v node >/dev/null 2>&1; then
	if ! node --check tools/writers/flame.js; then
		echo "lint: tools/writers/flame.js does not parse"
		fail=1
	fi
elif [ "${CI:-}" = true ]; then
	echo "lint: node not found, so tools/writers/flame.js was not checked (CI needs it: apt-get install nodejs)"
	fail=1
else
	echo "lint: skipped checking tools/writers/flame.js: node not found (apt-get install nodejs)"
fi

# No circle of files at all (issue 14 allowed 2; there are none left); no
# more functions over 60 lines than
# LONG_FUNCTIONS (1: gmon/read.c's parse, which says why it is kept whole).
python3 scripts/structure.py --json preload gmon tools | python3 -c '
import json, sys
LONG_FUNCTIONS = int(sys.argv[1])
m = json.load(sys.stdin)
bad = 0
for c in m["circles"]:
    print("lint: a circle of %d files: %s" % (len(c), " ".join(c)))
    bad = 1
n = len(m["long_functions"])
if n > LONG_FUNCTIONS:
    print("lint: %d functions over 60 lines, at most %d:" % (n, LONG_FUNCTIONS))
    for f in m["long_functions"]:
        print("  %4d lines  %s:%s" % (f["lines"], f["file"], f["name"]))
    bad = 1
print("lint: structure: %d files, %d circles (largest %d), %d functions over 60 lines" %
      (m["files"], len(m["circles"]), m["largest_circle"], n))
sys.exit(bad)
' 1 || fail=1

exit $fail
