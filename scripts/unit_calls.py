#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Which C files of preload/ and tools/ a Check suite calls, measured from
the built objects with nm.  A file is called when a suite's object
(tests/*.o of build/tests/unit or build/tests/unit-preload, as the
Makefile links them) leaves undefined a global function that the file's
object defines.  A file is reached when it is called, or called by a
file that is reached, within the same unit binary: a writer that a
suite runs through its format's table, say.  Prints, per folder, the
files no suite calls (with whether a suite reaches them), then the
counts.  Run from the checkout after

    make all build/tests/unit build/tests/unit-preload

    scripts/unit_calls.py [--reached] [-f MAKEFILE]
        --reached: count the files no suite reaches, not calls
        -f: the unit binaries as another Makefile links them, from the
            objects built here: an older commit's, for the figure before
            suites were added (-f <(git show main:Makefile))
"""
import glob, os, subprocess, sys
from collections import defaultdict

B = 'build'


def make_var(makefile, *names):
    """The Makefile's variables, as make expands them."""
    rule = 'unit-calls-print:\n' + ''.join(
        '\t@echo "%s=$(%s)"\n' % (n, n) for n in names)
    with open(makefile) as f:
        text = f.read()
    out = subprocess.run(['make', '-s', '--no-print-directory', '-f', '-',
                          'unit-calls-print'],
                         input=text + '\n' + rule, stdout=subprocess.PIPE,
                         text=True, check=True).stdout
    res = {}
    for line in out.splitlines():
        k, _, v = line.partition('=')
        res[k] = v.split()
    return res


def symbols(obj):
    """(functions defined, names left undefined) of an object."""
    out = subprocess.run(['nm', obj], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in 'Uw':   # w: a weak reference
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in 'TW':
            defined.add(parts[2])
    return defined, undefined


def source_of(obj):
    """tests/x.c of build/host/tests/x.o, preload/y.c of build/pic/..."""
    for pre in (B + '/host/', B + '/tool/', B + '/pic/'):
        if obj.startswith(pre):
            return obj[len(pre):-2] + '.c'
    return None


def reached(objs):
    """The sources that a binary of objs reaches from its tests/ objects."""
    syms = {o: symbols(o) for o in objs if os.path.exists(o)}
    definer = {}
    for o, (d, _) in syms.items():
        for s in d:
            definer.setdefault(s, o)
    todo = [o for o in syms if source_of(o).startswith('tests/')]
    seen = set(todo)
    direct = set()
    while todo:
        o = todo.pop()
        for s in syms[o][1]:
            t = definer.get(s)
            if t is None or source_of(t).startswith('tests/'):
                continue
            if source_of(o).startswith('tests/'):
                direct.add(source_of(t))
            if t not in seen:
                seen.add(t)
                todo.append(t)
    return direct, {source_of(o) for o in seen}


def main():
    args = sys.argv[1:]
    count_reached = '--reached' in args
    makefile = args[args.index('-f') + 1] if '-f' in args else 'Makefile'
    v = make_var(makefile, 'UNIT_OBJ', 'PRELOAD_UNIT_OBJ')
    called, reach = set(), set()
    for name in ('UNIT_OBJ', 'PRELOAD_UNIT_OBJ'):
        missing = [o for o in v[name] if not os.path.exists(o)]
        if missing:
            sys.exit('unit_calls: %s missing: make build/tests/unit '
                     'build/tests/unit-preload' % missing[0])
        d, r = reached(v[name])
        called |= d
        reach |= r
    files = sorted(glob.glob('preload/*.c') + glob.glob('tools/*/*.c'))
    by_folder = defaultdict(list)
    for f in files:
        by_folder[os.path.dirname(f)].append(f)
    total = untested = 0
    lines = []
    for folder in sorted(by_folder):
        fs = by_folder[folder]
        bad = [f for f in fs if f not in (reach if count_reached
                                          else called)]
        total += len(fs)
        untested += len(bad)
        lines.append('%-16s %2d of %2d' % (folder, len(bad), len(fs)))
        for f in bad:
            note = '' if count_reached or f not in reach else '  (reached)'
            print('%s%s' % (f, note))
    print('files no suite %s, per folder:' %
          ('reaches' if count_reached else 'calls'))
    for line in lines:
        print('  ' + line)
    print('  %-16s %2d of %2d' % ('all', untested, total))


if __name__ == '__main__':
    main()
