# SPDX-License-Identifier: BSD-2-Clause
"""PC_SCOPE=all: shared libraries and dlopen'ed code, each object in a gmon
file of its own that gprof reads, and pcprof's merged view of the whole
process, checked against the programs' own truth and against perf."""

import json
import math
import os
import re
import shutil
import subprocess
import tempfile

import shipped
from pctest import (check_shares, clean_env, gprof_callers, gprof_flat, lib,
                    need, prog, read_gmon, run, skip, tolerance)
from test_diff import samples_a_signal

ALL = {"PC_SCOPE": "all"}


def pcprof(*args, cwd=None):
    return subprocess.run([os.path.join(os.path.dirname(lib()), "pcprof")] +
                          list(args), capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def report_json(exe, *files, extra=()):
    p = pcprof("report", "--format", "json", *extra, exe, *files)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def manifest(path):
    objs = {}
    for line in open(path):
        f = line.split()
        if f[0] == "object":
            objs[os.path.basename(f[6])] = {"index": int(f[1]), "loaded": f[2] == "1",
                                            "samples": int(f[3]), "file": f[5]}
    return objs


def test_own_library_gets_a_gmon_file_gprof_reads_and_a_merged_view():
    # 1.5 s (it was 3 s): some 375 signals, which the shares' tolerances
    # follow; the seconds' 5 % + 0.05 s and main_work's 90 % of its
    # object's are far from the sampling error at that count
    exe = prog("uselib")
    r = run([exe, "1.5"], env=ALL)
    assert r.status == 0, r.stderr
    truth, s = r.truth(), r.summary()
    objs = manifest(r.path("gmon.out.objects"))
    assert objs["libhot.so"]["file"] == "gmon.out+libhot.so", objs
    libfile = r.path("gmon.out+libhot.so")
    libso = prog("libhot.so")

    # gprof, one object at a time, at each object's link-time addresses
    lf, ltotal, _ = gprof_flat(libso, libfile)
    check_shares(truth, lf, s["signals"], ["lib_hot", "lib_inner"])
    mf, mtotal, _ = gprof_flat(exe, r.path())
    assert mf.get("main_work", 0) > 0.9 * mtotal, mf
    want = truth["lib_hot"] + truth["lib_inner"] + truth["main_work"]
    assert abs(ltotal + mtotal - want) <= 0.05 * want + 0.05, \
        "gprof %.3f + %.3f s, truth %.3f s" % (ltotal, mtotal, want)
    # an arc inside the library: lib_warm -> lib_inner, in gprof's call graph
    assert "lib_warm" in gprof_callers(libso, libfile, "lib_inner")[0]

    # pcprof: one flat profile of the whole process, with an object column
    j = report_json(exe, r.path())
    funcs = {f["name"]: f["self_seconds"] for f in j["functions"]}
    where = {f["name"]: f["object"] for f in j["functions"]}
    names = ["main_work", "lib_hot", "lib_inner"]
    worst = check_shares(truth, funcs, s["signals"], names)
    assert where["lib_hot"] == "libhot.so" and where["main_work"] == "uselib", where
    # shares of the whole process, not of one object
    share = {f["name"]: f["share"] for f in j["functions"]}
    p = truth["lib_hot"] / truth["cpu"]
    assert abs(share["lib_hot"] - p) <= tolerance(p, s["signals"], 0.03), (share, p)
    arcs = {(a["caller"], a["callee"]): a for a in j["arcs"]}
    a = arcs[("main", "lib_hot")]
    assert a["caller_object"] == "uselib" and a["callee_object"] == "libhot.so", a
    assert ("lib_warm", "lib_inner") in arcs
    # the program's clock_gettime calls run in the vDSO, whose image libpc
    # writes beside the profile so that its functions have names
    # (read_clock: about a tenth of the time, nearly all of it there). The
    # program calls nothing else there; but a kernel's vDSO may keep the
    # time code clock_gettime calls in a helper of its own that no symbol
    # covers (6.18's at the start of .text), which only an address can name
    vdso = [f["name"] for f in j["functions"] if f["object"] == "[vdso]"]
    assert any("clock_gettime" in n for n in vdso), vdso
    assert all("clock_gettime" in n or re.fullmatch(r"\[vdso\]\+0x[0-9a-f]+", n)
               for n in vdso), vdso
    clock = sum(f["share"] for f in j["functions"] if f["name"] == "read_clock" or
                f["object"] == "[vdso]")
    p = truth["read_clock"] / truth["cpu"]
    assert abs(clock - p) <= tolerance(p, s["signals"], 0.03), (clock, p)
    # --by-object sums them per object
    byobj = {o["name"]: o["share"] for o in j["objects"]}
    p = (truth["lib_hot"] + truth["lib_inner"]) / truth["cpu"]
    assert abs(byobj["libhot.so"] - p) <= tolerance(p, s["signals"], 0.03), (byobj, p)
    t = pcprof("report", "--by-object", exe, r.path())
    assert t.returncode == 0 and re.search(r"%\s+\d+\s+\d+\s+libhot\.so\n", t.stdout), t.stdout
    t = pcprof("report", exe, r.path())
    assert re.search(r"libhot\.so\s+lib_hot\n", t.stdout), t.stdout
    return "worst share error %.1f pts over %d signals; gprof %.2f s lib + %.2f s main" % (
        100 * worst, s["signals"], ltotal, mtotal)


def test_dlopened_plugin_keeps_its_samples_after_dlclose():
    # 0.75 s (it was 1.5 s): the shares' tolerance follows the signals;
    # the plugin's own file holds plugin_spin alone, whatever the length
    exe = prog("plugrun")
    r = run([exe, prog("plugspin.so"), "0.75"], env=ALL)
    assert r.status == 0, r.stderr
    plain = run([exe, prog("plugspin.so"), "0.1"], profiled=False)
    seen = [l for l in r.stdout.splitlines() if l.startswith("after dlclose")]
    assert seen and seen == [l for l in plain.stdout.splitlines()
                             if l.startswith("after dlclose")], (r.stdout, plain.stdout)
    truth, s = r.truth(), r.summary()
    objs = manifest(r.path("gmon.out.objects"))
    plug = objs["plugspin.so"]
    assert not plug["loaded"] and plug["file"] == "gmon.out+plugspin.so", plug
    pf, ptotal, _ = gprof_flat(prog("plugspin.so"), r.path(plug["file"]))
    assert pf.get("plugin_spin", 0) >= 0.9 * ptotal, pf
    j = report_json(exe, r.path())
    funcs = {f["name"]: f["self_seconds"] for f in j["functions"]}
    where = {f["name"]: f["object"] for f in j["functions"]}
    assert where.get("plugin_spin") == "plugspin.so", where
    worst = check_shares(truth, funcs, s["signals"], ["plugin_spin", "main_after"])
    arcs = {(a["caller"], a["callee"]) for a in j["arcs"]}
    assert ("main", "plugin_spin") in arcs, sorted(arcs)
    return "plugin %.2f s (truth %.2f s), worst share error %.1f pts" % (
        funcs["plugin_spin"], truth["plugin_spin"], 100 * worst)


def test_code_in_no_object_is_counted_and_shown():
    exe = prog("jit")
    # 0.5 s (it was 1 s): the tolerance follows the run's signals
    r = run([exe, "0.5"], env=ALL)
    assert r.status == 0, r.stderr
    truth, s = r.truth(), r.summary()
    j = report_json(exe, r.path(), extra=("--by-object",))
    objs = {o["name"]: o for o in j["objects"]}
    assert "[anonymous code]" in objs, sorted(objs)
    p = truth["jit"] / truth["cpu"]
    got = objs["[anonymous code]"]["share"]
    tol = tolerance(p, s["signals"], 0.03)
    assert abs(got - p) <= tol, "[anonymous code] %.3f, truth %.3f, tolerance %.3f" % (
        got, p, tol)
    # libpc's count of samples in no object is the report's, each one
    m = re.search(r"(\d+) samples in none", r.stderr)
    assert m, r.stderr
    assert objs["[anonymous code]"]["self_samples"] == int(m.group(1)), (
        objs["[anonymous code]"], m.group(0))
    return "[anonymous code] %.1f %%, truth %.1f %%; %s" % (100 * got, 100 * p, m.group(0))


def test_code_run_from_a_copy_of_its_file_is_named():
    """copies runs copied_work from a second mapping of its own file (as
    V8 runs its builtins) and direct_work where the loader put it: under
    `pcprof run` (PC_SCOPE=all) and with libpc alone (the main program
    only), PIE and not, the copy's samples go to copied_work, each share
    the truth's within the sampling error, and nothing is left in
    [anonymous code] (where they all went before libpc learned copies)."""
    notes = []
    # 0.8 s a run (it was 1.5 s): the shares' tolerance follows the signals
    for build, how in (("copies-pie", "run"), ("copies-nopie", "run"),
                       ("copies-pie", "preload")):
        exe = prog(build)
        if how == "run":
            d = tempfile.mkdtemp(prefix="pc-e2e-copies-")
            p = subprocess.run([os.path.join(os.path.dirname(lib()), "pcprof"), "run",
                                "--no-report", "-o", os.path.join(d, "run"), "--", exe, "0.8"],
                               cwd=d, env=clean_env({"PC_VERBOSE": "1"}, profiled=False),
                               capture_output=True, text=True, timeout=120)
            out, err, where = p.stdout, p.stderr, os.path.join(d, "run")
        else:
            r = run([exe, "0.8"])
            out, err, where = r.stdout, r.stderr, r.path()
        assert "truth: " in out, (build, how, out, err[-600:])
        truth = json.loads(out.split("truth: ")[1].splitlines()[0])
        signals = sum(int(n) for n in re.findall(r"\((\d+) signals\)", err))
        j = report_json(exe, where)
        funcs = {f["name"]: f["self_seconds"] for f in j["functions"]}
        assert "[anonymous code]" not in funcs, (build, how, sorted(funcs.items())[:8])
        worst = check_shares(truth, funcs, signals, ["copied_work", "direct_work"])
        notes.append("%s %s: copied_work %.2f s (truth %.2f), worst %.1f pts" % (
            build, how, funcs.get("copied_work", 0), truth["copied_work"], 100 * worst))
    return "; ".join(notes)


def test_jit_code_is_named_from_a_perf_map_that_can_be_believed():
    """jit writes /tmp/perf-PID.map for its code, as JIT compilers do: its
    samples go to jit_countdown in [jit], with the truth's share. A map
    that others may write, that belongs to another user, or that is a
    symbolic link is ignored, with one line saying so."""
    exe = prog("jit")
    # 0.5 s (it was 1 s): the tolerance follows the run's signals
    r = run([exe, "0.5", "map"], env=ALL)
    assert r.status == 0, r.stderr
    truth, s = r.truth(), r.summary()
    pid = int(open(r.path("gmon.out.objects")).read().split("\npid ")[1].split()[0])
    mp = "/tmp/perf-%d.map" % pid
    try:
        j = report_json(exe, r.path())
        funcs = {f["name"]: f for f in j["functions"]}
        assert "jit_countdown" in funcs and funcs["jit_countdown"]["object"] == "[jit]", funcs
        p = truth["jit"] / truth["cpu"]
        got = funcs["jit_countdown"]["share"]
        tol = tolerance(p, s["signals"], 0.03)
        assert abs(got - p) <= tol, (got, p, tol)
        notes = []
        os.chmod(mp, 0o666)
        for why, fix in (("others may write", lambda: os.chmod(mp, 0o644)),
                         ("another user", None), ("symbolic link", None)):
            if why == "another user":
                if os.geteuid() != 0:
                    continue
                os.chown(mp, 65534, 65534)
            if why == "symbolic link":
                os.chown(mp, os.geteuid(), os.getegid())
                real = mp + ".real"
                os.rename(mp, real)
                os.symlink(real, mp)
            p2 = pcprof("report", "--format", "json", exe, r.path())
            lines = p2.stderr.strip().splitlines()
            assert p2.returncode == 0 and len(lines) == 1 and why in lines[0] and \
                mp in lines[0], (why, p2.stderr)
            names = {f["name"] for f in json.loads(p2.stdout)["functions"]}
            assert "jit_countdown" not in names and "[anonymous code]" in names, names
            notes.append(lines[0].split(": ", 1)[1])
            if fix:
                fix()
        # a map last written before the process started is an earlier
        # process's of the same pid
        os.unlink(mp)
        os.rename(mp + ".real", mp)
        started = int(open(r.path("gmon.out.objects")).read().split("\nstarted ")[1].split()[0])
        old = started / 1e9 - 60
        os.utime(mp, (old, old))
        p2 = pcprof("report", "--format", "json", exe, r.path())
        lines = p2.stderr.strip().splitlines()
        assert p2.returncode == 0 and len(lines) == 1 and "before the process started" in \
            lines[0] and mp in lines[0], p2.stderr
        names = {f["name"] for f in json.loads(p2.stdout)["functions"]}
        assert "jit_countdown" not in names and "[anonymous code]" in names, names
        notes.append(lines[0].split(": ", 1)[1])
    finally:
        for f in (mp, mp + ".real"):
            if os.path.lexists(f):
                os.unlink(f)
    return "jit_countdown %.1f %% (truth %.1f %%); %s" % (100 * got, 100 * p, "; ".join(notes))


def test_processes_of_a_run_each_write_their_objects_and_are_summed():
    exe = prog("forker")
    r = run([exe, "0.5"], env=ALL, verbose=False)
    assert r.status == 0, r.stderr
    child = int(r.stdout.split("child: ")[1].split()[0])
    kid = "gmon.out.forker.%d" % child
    names = sorted(os.listdir(r.cwd))
    assert "gmon.out.objects" in names and kid + ".objects" in names, names
    j = report_json(exe, r.cwd)
    funcs = {f["name"]: f["self_seconds"] for f in j["functions"]}
    # the parent spent 1 s in parent_work, the child 0.5 s in child_work
    assert abs(funcs.get("parent_work", 0) - 1.0) < 0.1, funcs
    assert abs(funcs.get("child_work", 0) - 0.5) < 0.1, funcs
    objs = [o["name"] for o in j["objects"]]
    assert len(objs) == len(set(objs)), "an object listed twice: %s" % objs
    # a shell glob takes in the objects' files and manifests too: they are
    # read through their profiles' manifests, with nothing to note
    import glob
    p = pcprof("report", "--format", "json", exe, *sorted(glob.glob(r.path("gmon.out*"))))
    assert p.returncode == 0 and not p.stderr, p.stderr
    assert json.loads(p.stdout)["total_samples"] == j["total_samples"]
    return "%d files; objects %s" % (len(names), ", ".join(objs))


def test_stripped_library_is_named_from_its_debug_file_by_build_id():
    # a stripped copy of libhot.so beside a copy of uselib (RUNPATH
    # $ORIGIN), its debug file only under a --debug-dir root by build-id
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    lib_, exe = os.path.join(d, "libhot.so"), os.path.join(d, "uselib")
    shutil.copy(prog("uselib"), exe)
    subprocess.run(["objcopy", "--strip-all", prog("libhot.so"), lib_], check=True)
    bid = subprocess.run(["readelf", "-n", prog("libhot.so")], capture_output=True,
                         text=True).stdout.split("Build ID: ")[1].split()[0]
    root = os.path.join(d, "root")
    os.makedirs(os.path.join(root, ".build-id", bid[:2]))
    subprocess.run(["objcopy", "--only-keep-debug", prog("libhot.so"),
                    os.path.join(root, ".build-id", bid[:2], bid[2:] + ".debug")], check=True)
    r = run([exe, "1"], env=ALL, cwd=d)
    assert r.status == 0, r.stderr
    without = report_json(exe, r.path())
    names = {f["name"] for f in without["functions"] if f["object"] == "libhot.so"}
    # .dynsym names the exported functions; the static lib_inner is not in it
    assert "lib_hot" in names and "lib_inner" not in names, names
    got = report_json(exe, r.path(), extra=("--debug-dir", root))
    names = {f["name"] for f in got["functions"] if f["object"] == "libhot.so"}
    assert {"lib_hot", "lib_inner"} <= names, names
    return "libhot.so: %s" % ", ".join(sorted(names))


def test_diff_of_whole_processes_finds_the_slower_library_function():
    """pcprof diff with PC_SCOPE=all: the same executable, its library
    swapped (LD_LIBRARY_PATH) for one whose lib_hot does 40 % more work."""
    exe = prog("uselib")
    files = {"base": [], "new": []}
    # as docs/ci.md advises: the task-clock timer where perf events are
    # allowed, and longer runs where they are not. 1000 samples a run:
    # they were 1 s at 1000 Hz (8 s of CPU for the 8 runs, 8.8 s in all);
    # they are 0.25 s at 4000 Hz, a task-clock rate, the same counts and
    # the same statistics (test_diff.py's runs did the same). Where the
    # timer is held to the kernel's tick, a signal carries several samples:
    # runs as much longer as it carries
    timer = dict(ALL, PC_TIMER="taskclock", PC_HZ="4000")
    seconds = "%g" % (0.25 * samples_a_signal(timer))
    # four runs a side: three gave p 0.011 after Holm's correction in CI,
    # where other tests beside it left a run-to-run noise of 13 %
    for i in range(4):
        for side in ("base", "new"):
            env = dict(timer)
            if side == "new":
                env["LD_LIBRARY_PATH"] = os.path.dirname(prog("slowlib/libhot.so"))
            r = run([exe, seconds], env=env, verbose=False)
            assert r.status == 0, r.stderr
            files[side].append(r.path())
    p = pcprof("diff", "--format", "json", "--base", exe, *files["base"],
               "--new", exe, *files["new"])
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    j = json.loads(p.stdout)
    sig = [f["name"] for f in j["functions"] if f["significant"]]
    assert sig == ["lib_hot (libhot.so)"], sig
    top = j["functions"][0]
    # lib_hot does 40 % more work a call: the change, corrected for the
    # machine's speed, within 4 of its own standard errors (the diff's t
    # gives them, from the runs' spread) and 8 points for the correction,
    # which scales by the median function (0.31 to 0.40 in six runs, idle
    # and under a hog; 0.248 once under a hog, where 0.25 was the bound)
    se = top["change_seconds"] / top["t"] / top["base_seconds"]
    assert abs(top["change"] - 0.40) <= 4 * se + 0.08, (top, se)
    return "%s %+.0f %% (standard error %.0f points), p %.2g" % (
        top["name"], 100 * top["change"], 100 * se, top["p_adjusted"])


def test_program_output_status_and_signals_are_unchanged_with_scope_all():
    exe = prog("behave")
    plain = run([exe, "3"], profiled=False)
    prof = run([exe, "3"], env=ALL, verbose=False)
    assert plain.status == prof.status == 3, (plain.status, prof.status)
    assert plain.stdout == prof.stdout, (plain.stdout, prof.stdout)
    assert plain.stderr == prof.stderr, (plain.stderr, prof.stderr)
    assert "alarms seen: some" in prof.stdout


def test_fork_children_never_hang_on_the_loaders_lock():
    # a thread in dl_iterate_phdr at the fork leaves the child's loader
    # lock held: a child that took an inventory at exit hung (218 of 300)
    r = run([prog("forkloop"), "150"], env=ALL, verbose=False, timeout=120)
    assert r.status == 0 and "children exited: 150 of 150" in r.stdout, \
        (r.status, r.stdout, r.stderr)


def test_dlopen_dlclose_loop_reuses_one_entry_and_stays_alive():
    # the stress program opens and closes a plugin in a loop on 3 threads
    exe = prog("stress")
    r = run([exe, "2", prog("plugin.so")], env=ALL, timeout=120)
    assert r.status == 0, r.stderr
    objs = manifest(r.path("gmon.out.objects"))
    names = [n for n in objs if n.startswith("plugin.so")]
    assert names == ["plugin.so"], "entries for the plugin: %s" % names
    return "%d objects listed" % len(objs)


def test_scope_main_is_the_default_and_clears_a_stale_manifest():
    exe = prog("uselib")
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    r = run([exe, "0.3"], env=ALL, cwd=d)
    assert os.path.exists(os.path.join(d, "gmon.out.objects"))
    r = run([exe, "0.3"], cwd=d)
    assert r.status == 0, r.stderr
    assert not os.path.exists(os.path.join(d, "gmon.out.objects"))
    t = pcprof("report", exe, r.path())
    assert t.returncode == 0 and "object" not in t.stdout.splitlines()[2], t.stdout
    t = pcprof("report", "--by-object", exe, r.path())
    assert t.returncode == 2 and "PC_SCOPE=all" in t.stderr, t.stderr


def test_an_objects_file_older_than_its_process_is_refused():
    """Each object's file is written after its process started, and the
    manifest records when that was: a file older than that (copied in
    from an earlier run) is refused with one line naming it."""
    exe = prog("uselib")
    r = run([exe, "0.3"], env=ALL)
    assert r.status == 0, r.stderr
    started = int(open(r.path("gmon.out.objects")).read().split("\nstarted ")[1].split()[0])
    assert abs(started / 1e9 - os.path.getmtime(r.path("gmon.out.objects"))) < 60, started
    lib_file = r.path("gmon.out+libhot.so")
    assert report_json(exe, r.path())["total_samples"] > 0
    old = started / 1e9 - 60
    os.utime(lib_file, (old, old))
    p = pcprof("report", exe, r.path())
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1 and "gmon.out+libhot.so" in lines[0] and \
        "earlier run" in lines[0], (p.returncode, p.stderr)
    return lines[0]


def test_bad_manifests_get_one_line_and_status_2():
    exe = prog("uselib")
    r = run([exe, "0.3"], env=ALL)
    good = open(r.path("gmon.out.objects")).read()
    cases = {
        "garbage": "not a manifest\n",
        "truncated": good[:len(good) // 2].rstrip("\n") + " x",
        "order": good.replace("object 1 ", "object 7 ", 1),
        "escape": good.replace("gmon.out+libhot.so", "../../etc/passwd", 1),
        "arc": good + "arc 0x999000000001000 0x10 5\n",
        "number": good.replace("rate 1000", "rate 99999999999999999999999", 1),
    }
    for name, text in cases.items():
        with open(r.path("gmon.out.objects"), "w") as f:
            f.write(text)
        p = pcprof("report", exe, r.path())
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1 and "gmon.out.objects" in lines[0], \
            "%s: status %d, %r" % (name, p.returncode, p.stderr)
    return "%d kinds" % len(cases)


def perf_available():
    return shipped.available()


def perf_dso_shares(data, comm):
    """perf's samples per user-space object (not the kernel, not libpc,
    which libpc cannot see itself), as {name: samples}."""
    p = subprocess.run(["perf", "report", "-i", data, "--stdio", "--sort", "dso", "-q",
                        "-n", "--comm", comm], capture_output=True, text=True, errors="replace", timeout=120)
    out = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[0].endswith("%") and not f[2].startswith("[") and \
                f[2] != "libpc.so":
            out[f[2]] = int(f[1])
    return out


def test_xz_time_in_liblzma_agrees_with_perf_on_the_same_run():
    """A program no one here wrote: Debian's xz spends its time in liblzma.
    The run is recorded by perf (task-clock) and profiled by libpc at once;
    the objects' shares and, inside stripped liblzma, the share of every
    4 KiB page of its text must agree."""
    if not perf_available():
        skip("perf cannot record task-clock here (install linux-perf)")
    d = tempfile.mkdtemp(prefix="pc-e2e-")
    data = os.path.join(d, "in.txt")
    # 40,000 lines (60,000 before): some 1,300 to 1,700 samples each, not
    # 3,100; the bounds below follow them, and a wrong offset would still
    # be ~100 %
    with open(data, "wb") as f:
        for i in range(40000):
            f.write(b"%d %x line of text that compresses somewhat %d\n" % (i, i * 7919, i % 97))
    env = clean_env(profiled=False)
    xz = need("xz")
    p = subprocess.run(["perf", "record", "-q", "-e", "task-clock", "-F", "1000", "-o",
                        os.path.join(d, "perf.data"), "--", "env", "LD_PRELOAD=" + lib(),
                        "PC_SCOPE=all", xz, "-6", "-T1", "-c", data],
                       cwd=d, env=env, capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr
    perf = perf_dso_shares(os.path.join(d, "perf.data"), "xz")
    n_perf = sum(perf.values())
    lzma_perf = sum(v for k, v in perf.items() if k.startswith("liblzma.so")) / n_perf
    j = report_json(xz, os.path.join(d, "gmon.out"))
    objs = {o["name"]: o for o in j["objects"]}
    n_pc = j["total_samples"]
    lzma_pc = objs["liblzma.so.5"]["self_samples"] / n_pc
    tol = tolerance(lzma_perf, min(n_perf, n_pc), 0.02)
    assert abs(lzma_pc - lzma_perf) <= tol, \
        "liblzma: pcprof %.3f, perf %.3f (tolerance %.3f)" % (lzma_pc, lzma_perf, tol)
    # inside liblzma, page by page: perf's addresses are file offsets,
    # which for its text are the link-time addresses libpc wrote
    q = subprocess.run(["perf", "report", "-i", os.path.join(d, "perf.data"), "--stdio",
                        "--sort", "dso,sym", "-q", "-n", "--comm", "xz"],
                       capture_output=True, text=True, errors="replace", timeout=120)
    pages_perf = {}
    for line in q.stdout.splitlines():
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+liblzma\S*\s+\[\.\]\s+0x([0-9a-f]+)", line)
        if m:
            pg = int(m.group(2), 16) >> 12
            pages_perf[pg] = pages_perf.get(pg, 0) + int(m.group(1))
    g = read_gmon(os.path.join(d, "gmon.out+liblzma.so.5"))
    pages_pc = {}
    for low, high, _, _, _, counts in g["hists"]:
        bin_ = (high - low) // len(counts)
        for k, c in enumerate(counts):
            if c:
                pg = (low + k * bin_) >> 12
                pages_pc[pg] = pages_pc.get(pg, 0) + c
    assert pages_perf and pages_pc, (len(pages_perf), len(pages_pc))
    a, b = sum(pages_perf.values()), sum(pages_pc.values())
    tvd = 0.5 * sum(abs(pages_perf.get(k, 0) / a - pages_pc.get(k, 0) / b)
                    for k in set(pages_perf) | set(pages_pc))
    # two samplers of one run: each page's share differs by sampling
    # alone with a spread of sqrt(p (1/a + 1/b)); expect half the sum of
    # the mean absolute differences, allow 2.5 times that and 2 points for
    # what each sampler cannot see. A wrong offset would give ~100 %.
    expect = 0.5 * sum(math.sqrt(2 / math.pi) *
                       math.sqrt(max(pages_perf.get(k, 0) / a, 1 / a) * (1 / a + 1 / b))
                       for k in set(pages_perf) | set(pages_pc))
    assert tvd < 2.5 * expect + 0.02, "page-level distance %.3f, expected %.3f" % (tvd, expect)
    # gprof reads the stripped library's file too, given its exported
    # symbols in nm's format
    lzma = [l for l in j["objects"] if l["name"] == "liblzma.so.5"]
    so = subprocess.run(["ldd", xz], capture_output=True, text=True).stdout
    path = re.search(r"liblzma\.so\.5 => (\S+)", so).group(1)
    nmf = os.path.join(d, "lzma.nm")
    with open(nmf, "w") as f:
        subprocess.run(["nm", "-D", "--defined-only", path], stdout=f, check=True)
    g = subprocess.run(["gprof", "-b", "-p", "--external-symbol-table=" + nmf, path,
                        os.path.join(d, "gmon.out+liblzma.so.5")],
                       capture_output=True, text=True, timeout=120)
    assert g.returncode == 0 and re.search(r"\blzma_\w+", g.stdout), g.stdout + g.stderr
    assert lzma, j["objects"]
    return "liblzma %.1f %% (perf %.1f %%), page TVD %.3f (chance %.3f) over %d+%d samples" % (
        100 * lzma_pc, 100 * lzma_perf, tvd, expect, n_pc, n_perf)
