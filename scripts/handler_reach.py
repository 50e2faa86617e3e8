#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""What libpc's handlers and allocation hooks can reach, and what they may
not call there (make lint; scripts/lint.sh says which entries and why).
From each entry the names each function body uses are followed, function by
function, through preload/ and gmon/ of the current directory.

    scripts/handler_reach.py ENTRIES CUT HOOKS HOOK_BANNED

ENTRIES: the handlers' entry functions; CUT: functions a handler path names
but never runs in a handler; HOOKS: the interposed allocation functions,
whose file cannot include banned.h (they define malloc and call the next
one); HOOK_BANNED: banned.h's names the hooks and what they reach may not
call either.  Fails (status 1) where a preload/ file a handler reaches lacks
banned.h, or a function reached calls a banned name, directly (a file
outside preload/) or through the escape that start-up code uses,
(name)(...).
"""
import os, re, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import structure

def blank(m):
    return re.sub(r"[^\n]", " ", m.group(0))

def strip(src):
    src = re.sub(r"/\*.*?\*/", blank, src, flags=re.S)
    src = re.sub(r"//[^\n]*", blank, src)
    return re.sub(r'"(\\.|[^"\\\n])*"', blank, src)

def load():
    body, glob, local, text = {}, {}, set(), {}
    for f in structure.files(["preload", "gmon"]):
        text[f] = open(f).read()
        lines = strip(text[f]).split("\n")
        for name, start, end, static in structure.tags(f):
            body[(f, name)] = "\n".join(lines[start - 1:end])
            if static:
                local.add((f, name))
            else:
                glob.setdefault(name, (f, name))
    return body, glob, local, text

def reach(entries, cut, body, glob, local):
    def used(key):
        # names, not members (act.sa_sigaction) nor tags (struct sigaction)
        for n in set(re.findall(r"(?<![\w.>])(?<!struct )([A-Za-z_]\w*)",
                                body[key])):
            if (key[0], n) in local:
                yield (key[0], n)
            elif n in glob and n not in cut and n != key[1]:
                yield glob[n]
    todo = [k for k in body if k[1] in entries]
    gone = set(entries) - {k[1] for k in todo}
    if gone:
        sys.exit("lint: handler entries gone: %s; update scripts/lint.sh" %
                 " ".join(sorted(gone)))
    seen = dict.fromkeys(todo)
    while todo:
        k = todo.pop()
        for c in used(k):
            if c not in seen:
                seen[c] = k
                todo.append(c)
    return seen

def calls(src, name, escape_only):
    """Whether src calls name: name(...) or the escape (name)(...)."""
    if re.search(r"\(\s*%s\s*\)\s*\(" % name, src):
        return True
    return not escape_only and re.search(r"\b%s\s*\(" % name, src)

def main(args):
    entries, cut = args[0].split(), set(args[1].split())
    hooks, hook_banned = args[2].split(), args[3].split()
    body, glob, local, text = load()
    banned = re.findall(r"#define (\w+)\(\.\.\.\)",
                        open("preload/banned.h").read())
    seen = reach(entries, cut, body, glob, local)
    files = sorted({k[0] for k in seen})
    bad = 0
    for f in files:
        reached = sorted(k[1] for k in seen if k[0] == f)
        inner = f.startswith("preload/")
        if inner and '#include "banned.h"' not in text[f]:
            print("lint: %s lacks banned.h; a handler reaches %s" %
                  (f, ", ".join(reached)))
            bad = 1
        for name in reached:
            for n in banned:
                if calls(body[(f, name)], n, inner):
                    print("lint: %s:%s calls %s in a handler's reach" %
                          (f, name, n))
                    bad = 1
    hooked = reach(hooks, cut, body, glob, local)
    for f, name in sorted(hooked):
        for n in hook_banned:
            if calls(body[(f, name)], n, False):
                print("lint: %s:%s calls %s in an allocation hook's reach" %
                      (f, name, n))
                bad = 1
    if not bad:
        print("lint: handlers reach %d functions in %d files, all under "
              "banned.h; the allocation hooks %d, none calling %s" %
              (len(seen), len(files), len(hooked), ", ".join(hook_banned)))
    return bad

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
