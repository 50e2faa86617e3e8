#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
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

# tools/ calls one way: commands, writers, model, inputs, symbols, then the
# shared floor (scripts/structure.py says how); an edge that runs back up
# fails unless scripts/upward.allow lists it, one left from before the rule
# (issue 37), and a line there that is no longer an edge fails too.
python3 scripts/structure.py --folders --check scripts/upward.allow || fail=1
# and the rule can fail: a call from symbols/ up to writers/ and an include
# of commands/ from model/, planted in a copy, are each found
planted=$(mktemp -d)
cp -r tools gmon "$planted"/
printf '\nvoid lint_planted(void);\nvoid lint_planted(void) { report_print(0, 0, 0, 0, 0); }\n' \
	>> "$planted/tools/symbols/symtab.c"
printf '#include "commands/options.h"\n' >> "$planted/tools/model/stats.c"
found=$(python3 scripts/structure.py --folders --check scripts/upward.allow --root "$planted")
if [ $? -ne 1 ] ||
   ! printf '%s\n' "$found" | grep -q 'call runs back up: tools/symbols/symtab.c -> tools/writers/report.c' ||
   ! printf '%s\n' "$found" | grep -q 'include runs back up: tools/model/stats.c includes tools/commands/options.h'; then
	echo "lint: the folder rule missed a planted upward call or include: $found"
	fail=1
fi
rm -rf "$planted"

# Only tools/commands/ ends pcprof: below it an error is a value
# (docs/CODING.md). A call that ends the process outside commands/ fails
# beyond scripts/fatal.allow, the ones left from before the rule, which
# only shrinks; and the rule can fail: a pc_fatal planted in model/ is
# found.
python3 scripts/fatal.py --allow scripts/fatal.allow || fail=1
planted=$(mktemp -d)
mkdir -p "$planted/tools/model"
printf 'void\nlint_planted(void)\n{\n\tpc_fatal("planted");\n}\n' > "$planted/tools/model/planted.c"
found=$(python3 scripts/fatal.py --allow scripts/fatal.allow --root "$planted")
if [ $? -ne 1 ] || ! printf '%s\n' "$found" | grep -q 'tools/model/planted.c ends pcprof in 1 places, 0 allowed'; then
	echo "lint: the rule on ending pcprof missed a planted pc_fatal: $found"
	fail=1
fi
rm -rf "$planted"

# No C file of libpc, gmon or pcprof over 700 lines (tests/ is left out:
# its suites are tables of cases).
for f in preload/*.c gmon/*.c tools/*/*.c; do
	n=$(wc -l < "$f")
	if [ "$n" -gt 700 ]; then
		echo "lint: $f has $n lines, more than 700"
		fail=1
	fi
done

# Everything a handler can reach is under banned.h. From libpc's handler
# entries (the sampling handler, the fatal-signal handler, the stray
# snapshot signal's handler, the snapshot thread's pc_snapshot, the
# allocation hooks' ways into libpc (pc_alloc_ops_v3's state, sample,
# forget and restore), pc_finish as the exit paths run it, and what a
# program's handler may call by signal-safety(7): _exit and _Exit, and
# execve, execl, execle, execv and fexecve, whose real functions start-up
# resolves; not fork, whose child's atfork handler re-arms a timer and
# restarts the snapshot thread, as lifecycle.c's after_fork_child says)
# the names each function body uses are followed, function by function,
# through preload/ and gmon/ (a file-level graph would take in every
# start-up function beside a handler-reachable one). A preload/ file
# reached must include banned.h, and no function reached may call a
# banned name through the escape start-up code uses, (dl_iterate_phdr)(...);
# a file elsewhere (gmon/write.c, which cannot include libpc's header) must
# call none of the names banned.h bans. The interposed allocation
# functions (alloc_hooks.c, which defines malloc and so cannot include
# banned.h) and what they reach call neither HOOK_BANNED's names (issue
# 39: no dl_iterate_phdr or lock inside a hook).
# NOT_IN_HANDLERS: functions the handler path names but never runs in a
# handler, each with why:
#   pc_next: looks up an interposed function only while it is unresolved;
#   start-up resolves every one a handler path uses (pc_signals_init,
#   pc_lifecycle_resolve) before libpc installs a handler or the program
#   runs.
HANDLER_ENTRIES="signal_from_handler fatal_from_handler snapshot_from_handler pc_snapshot
	alloc_state_now alloc_sample pc_alloc_forget pc_alloc_restore
	pc_finish _exit _Exit execve execl execle execv fexecve"
NOT_IN_HANDLERS="pc_next"
HOOKS="malloc calloc realloc free reallocarray posix_memalign aligned_alloc
	memalign valloc pvalloc"
HOOK_BANNED="dl_iterate_phdr pthread_mutex_lock"
python3 scripts/handler_reach.py "$HANDLER_ENTRIES" "$NOT_IN_HANDLERS" \
	"$HOOKS" "$HOOK_BANNED" || fail=1
# and the rule can fail: a dl_iterate_phdr through the escape in the
# allocation walk that alloc_sample reaches, and one called in malloc's
# slow path, planted in a copy, are each found
planted=$(mktemp -d)
cp -r preload gmon "$planted"/
sed -i 's/^\tstruct alloc_walk w = { ra, cfa, hi, 0, 0, 0, max, f, at };$/&\n\t(dl_iterate_phdr)(0, 0);/' \
	"$planted/preload/alloc_walk.c"
sed -i '/^malloc_slow(/,/^}/s/^\tvoid \*p;$/&\n\tdl_iterate_phdr(0, 0);/' \
	"$planted/preload/alloc_hooks.c"
found=$(cd "$planted" && python3 "$OLDPWD/scripts/handler_reach.py" \
	"$HANDLER_ENTRIES" "$NOT_IN_HANDLERS" "$HOOKS" "$HOOK_BANNED")
if [ $? -ne 1 ] ||
   ! printf '%s\n' "$found" | grep -q "preload/alloc_walk.c:pc_alloc_walk calls dl_iterate_phdr in a handler's reach" ||
   ! printf '%s\n' "$found" | grep -q "preload/alloc_hooks.c:malloc_slow calls dl_iterate_phdr in an allocation hook's reach"; then
	echo "lint: the handlers' rule missed a planted dl_iterate_phdr: $found"
	fail=1
fi
rm -rf "$planted"

# At most 80 columns (docs/CODING.md, Formatting), but where a string runs
# past them; the files older than the rule keep at most the lines over that
# scripts/columns.allow gives them, so that none is added.
python3 scripts/columns.py preload tools gmon tests/*.c || fail=1

# Every source file says its license (LICENSE) in an SPDX line near its
# top: C, headers, scripts, the Makefile, the man pages, the packaging,
# the CI files, the Markdown documents and the suppressions. Found with
# find rather than git, so that a release tarball lints too.
for f in $(find Makefile .gitignore *.md .ci preload gmon tools tests scripts bench docs \
	debian -type f \( -name '*.[ch]' -o -name '*.cc' -o -name '*.py' -o -name '*.sh' \
	-o -name '*.js' -o -name '*.go' -o -name '*.proto' -o -name '*.map' \
	-o -name '*.[0-9]' -o -name Makefile -o -name run -o -name rules \
	-o -name '*.yml' -o -name '*.md' -o -name '*.supp' -o -name .gitignore \) \
	-not -path '*/node_modules/*' 2>/dev/null); do
	if ! head -n 3 "$f" | grep -q 'SPDX-License-Identifier: '; then
		echo "lint: $f has no SPDX-License-Identifier line in its first 3 lines"
		fail=1
	fi
done

exit $fail
