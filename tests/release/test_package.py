# SPDX-License-Identifier: BSD-2-Clause
"""pcprof as a release, in make check-release (run.py --tests tests/release):
make dist's tarball builds and passes its checks in a fresh directory; the
Debian package builds, passes lintian, installs with apt-get, profiles
Debian's gzip from /usr/bin/pcprof with no build tree in sight, has its
manual, and purges without a trace. (That the versions agree is
tests/e2e/test_versions.py's, in make check.)

The package test installs into this machine as root. It holds an flock on
/run/lock/pcprof-package-test.lock throughout, so that two test runs on
one machine take turns, it will not touch a pcprof that was installed
before it, and it purges what it installed whatever happens. No other test
uses /usr/bin/pcprof or the installed libpc.so (they run the build's), so
it can run beside them, and the two tests run side by side, each worker
making its tarball (a second or two)."""

import fcntl
import glob
import gzip
import os
import random
import re
import shutil
import subprocess
import tempfile

from pctest import BUILD, need, prog, skip

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOCK = "/run/lock/pcprof-package-test.lock"
# the tarball's own make check, cut short: the full one takes 9 to 13
# minutes here (7 in CI), already spent on this tree by the make check
# running this test. These cover libpc's core, report, run, diff and the
# CI recipes; the unit suites run whole, and the fuzzers on their corpora.
DIST_E2E = ["pie_three_functions_match", "test_run_passes_output_and_status_through",
            "test_report_json_shape_and_shares", "github_actions_gate",
            "test_diff_flags_a_20_percent_slowdown", "test_versions_agree"]

_made = {}


def version():
    with open(os.path.join(TOP, "VERSION")) as f:
        return f.read().strip()


def sh(argv, timeout=600, **kw):
    """argv's result, its output kept; a make of the make check running
    this test does not reach the makes it starts (its jobserver's
    descriptors are not theirs)."""
    kw.setdefault("capture_output", True)
    env = dict(kw.pop("env", os.environ))
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        env.pop(k, None)
    return subprocess.run(argv, text=True, timeout=timeout, env=env, **kw)


def tarball():
    """make dist's tarball of this tree (once), made in a directory of its
    own so that the build under test is left alone."""
    if "path" not in _made:
        b = tempfile.mkdtemp(prefix="pc-e2e-dist-")
        p = sh(["make", "--no-print-directory", "-C", TOP, "B=" + b, "dist"])
        assert p.returncode == 0, (p.stdout, p.stderr)
        _made["path"] = os.path.join(b, "pcprof-%s.tar.gz" % version())
        assert os.path.exists(_made["path"]), os.listdir(b)
    return _made["path"]


def unpack(into):
    sh(["tar", "-xzf", tarball(), "-C", into], check=True)
    return os.path.join(into, "pcprof-" + version())


def test_dist_tarball_builds_and_passes_its_checks_alone():
    """make dist's tarball, unpacked in a fresh directory, builds with make
    and passes make check (the unit suites and fuzzers whole, the
    end-to-end tests of DIST_E2E), and makes the same tarball again."""
    d = tempfile.mkdtemp(prefix="pc-e2e-distcheck-")
    src = unpack(d)
    assert not os.path.exists(os.path.join(src, ".git"))
    assert not os.path.exists(os.path.join(src, "build"))
    p = sh(["make", "-j2"], cwd=src)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert os.path.exists(os.path.join(src, "build", "pcprof"))
    # the browser tests' npm packages, as the tree under test has them,
    # so that the tarball's check does not fetch them again
    npm = os.path.join(os.path.abspath(BUILD), "npm")
    if os.path.isdir(npm):
        os.symlink(npm, os.path.join(src, "build", "npm"))
    args = " ".join("-k " + k for k in DIST_E2E)
    p = sh(["make", "-j2", "check", "E2E_ARGS=" + args],
           cwd=src, timeout=1200)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-6000:]
    units = re.findall(r"^100%: Checks: (\d+), Failures: 0, Errors: 0$", out, re.M)
    assert len(units) == 2, out[-3000:]
    e2e = re.search(r"^e2e: (\d+) passed, 0 failed, (\d+) skipped$", out, re.M)
    assert e2e and int(e2e.group(1)) >= len(DIST_E2E), out[-3000:]
    # each chosen test ran: a renamed one would drop out silently
    ran = re.findall(r"^ok\s+(\S+)", out, re.M)
    for k in DIST_E2E:
        assert any(k in t for t in ran), (k, ran)
    again = sh(["make", "--no-print-directory", "dist"], cwd=src)
    assert again.returncode == 0, again.stderr
    with open(tarball(), "rb") as a, \
            open(os.path.join(src, "build", os.path.basename(tarball())), "rb") as b:
        same = a.read() == b.read()
    assert same, "the tarball's make dist made other bytes"
    shutil.rmtree(d)
    fuzz = re.findall(r"^stat::number_of_executed_units: (\d+)$", out, re.M)
    return "unit %s; e2e %s passed, %s skipped; fuzzers' corpora %s inputs" % (
        "+".join(units), e2e.group(1), e2e.group(2), "+".join(fuzz))


def present():
    """Whether dpkg knows pcprof in any state but not-installed: installed,
    unpacked or half-installed by a failed install, or config-files."""
    p = sh(["dpkg-query", "-W", "-f=${Status}", "pcprof"])
    return p.returncode == 0 and p.stdout.strip() != "" and "not-installed" not in p.stdout


def apt(*args):
    return sh(["apt-get", "-y", "-q", "-o", "DPkg::Lock::Timeout=300", *args],
              env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"), timeout=900)


def build_package(d):
    """dpkg-buildpackage -b of the unpacked tarball in d, with nocheck, and
    then its test rule alone without: the .deb, its .changes and the
    build's output."""
    src = unpack(d)
    env = dict(os.environ, DEB_BUILD_OPTIONS="nocheck parallel=2")
    for k in ("CFLAGS", "LDFLAGS", "CPPFLAGS"):	# dpkg-buildflags' own
        env.pop(k, None)
    p = sh(["dpkg-buildpackage", "-b", "-us", "-uc"], cwd=src, env=env, timeout=900)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-5000:]
    # nocheck honoured: override_dh_auto_test ran no suite
    assert "Checks:" not in out, out[-3000:]
    # and without it, the rule builds and runs both unit suites
    env["DEB_BUILD_OPTIONS"] = "parallel=2"
    p = sh(["debian/rules", "override_dh_auto_test"], cwd=src, env=env, timeout=900)
    assert p.returncode == 0, (p.stdout + p.stderr)[-3000:]
    suites = re.findall(r"^100%: Checks: \d+, Failures: 0, Errors: 0$", p.stdout, re.M)
    assert len(suites) == 2, p.stdout[-3000:]
    debs = glob.glob(os.path.join(d, "pcprof_%s_*.deb" % version()))
    changes = glob.glob(os.path.join(d, "pcprof_%s_*.changes" % version()))
    assert len(debs) == 1 and len(changes) == 1, os.listdir(d)
    return src, debs[0], changes[0], out


def depends(deb):
    """The package's Depends, which shlibs and misc make: the packages of
    the libraries pcprof and libpc.so link (readelf -d: libdw, libelf,
    libprotobuf-c, libz, libm and libc), and no substitution variable
    left unmade."""
    dep = sh(["dpkg-deb", "-f", deb, "Depends"], check=True).stdout.strip()
    assert "${" not in dep, dep
    names = {re.match(r"\s*([a-z0-9.+-]+)", d).group(1) for d in dep.split(",")}
    # (Debian 13 and Ubuntu 24.04 name some of them ...t64)
    for lib, pkg in (("libdw.so.1", "libdw1"), ("libelf.so.1", "libelf1"),
                     ("libprotobuf-c.so.1", "libprotobuf-c1"), ("libz.so.1", "zlib1g"),
                     ("libc.so.6", "libc6")):
        assert pkg in names or pkg + "t64" in names, (lib, pkg, dep)
    return dep


def lintian(changes):
    """lintian's tags for the build: no error and no warning (none is
    overridden: there were none to justify)."""
    p = sh(["lintian", "--allow-root", "--display-info", changes], timeout=600)
    tags = [t for t in p.stdout.splitlines() if re.match(r"^[EWIPX]: ", t)]
    bad = [t for t in tags if t[0] in "EW"]
    assert not bad and p.returncode == 0, (p.returncode, tags, p.stderr[-2000:])
    return tags


def profile_gzip(d, v):
    """/usr/bin/pcprof run -- gzip -9 -c FILE from d, a directory with no
    build tree, on the system's PATH alone: gzip's output and status are
    its own, the report holds gzip's functions, and the run's manifest was
    written by the installed libpc, of version v."""
    random.seed(28)
    words = ["".join(random.choice("abcdefghij") for _ in range(random.randint(2, 9)))
             for _ in range(5000)]
    data = " ".join(random.choice(words) for _ in range(1500000)).encode()
    with open(os.path.join(d, "data.txt"), "wb") as f:
        f.write(data)
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": d, "LC_ALL": "C.UTF-8"}
    with open(os.path.join(d, "data.txt.gz"), "wb") as out:
        p = subprocess.run(["/usr/bin/pcprof", "run", "--", "gzip", "-9", "-c", "data.txt"],
                           cwd=d, env=env, stdout=out, stderr=subprocess.PIPE, text=True,
                           timeout=300)
    assert p.returncode == 0, p.stderr
    with gzip.open(os.path.join(d, "data.txt.gz")) as f:
        assert f.read() == data, "gzip's output under pcprof is not its own"
    rows = re.findall(r"^\s+([\d.]+)\s+([\d.]+)%\s+[\d.]+%\s+(\d+)\s+(\S+)\s+(.+)$",
                      p.stderr, re.M)
    assert rows, p.stderr
    in_gzip = sum(float(r[1]) for r in rows if r[3] == "gzip")
    assert in_gzip > 80, (in_gzip, p.stderr)
    names = [r[4] for r in rows if r[3] == "gzip"]
    # Debian strips gzip: its functions are named from its debug file
    # (gzip-dbgsym, in Debian's debug archive) where that is installed,
    # else each is the start of a function from its .eh_frame, gzip+0xOFFSET
    debug = sh(["sh", "-c", "readelf -n /usr/bin/gzip | sed -n 's/.*Build ID: //p'"]).stdout.strip()
    dbg = "/usr/lib/debug/.build-id/%s/%s.debug" % (debug[:2], debug[2:]) if debug else ""
    if dbg and os.path.exists(dbg):
        assert {"longest_match", "deflate"} & set(names), names
        named = "named from %s" % dbg
    else:
        assert all(re.fullmatch(r"gzip\+0x[0-9a-f]+", n) for n in names[:3]), names
        named = "unnamed (no gzip-dbgsym: %s)" % ", ".join(names[:2])
    runs = glob.glob(os.path.join(d, "pcprof-gzip-*"))
    assert len(runs) == 1, os.listdir(d)
    manifests = glob.glob(os.path.join(runs[0], "*.objects"))
    assert manifests, os.listdir(runs[0])
    with open(manifests[0]) as f:
        assert f.read().split("\n")[1] == "version " + v, manifests[0]
    return "gzip %.0f%% of the samples, %s" % (in_gzip, named)


def profile_python(d):
    """Debian's python3.11, whose functions its dynamic symbols name."""
    py = "/usr/bin/python3.11"
    if not os.path.exists(py):
        skip("%s not installed (apt-get install python3.11)" % py)
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": d}
    p = sh(["/usr/bin/pcprof", "run", "--", py, "-c",
            "sum(i * i for i in range(6000000))"], cwd=d, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert re.search(r"python3\.11\s+_PyEval_EvalFrameDefault$", p.stderr, re.M), p.stderr
    return "python3.11: _PyEval_EvalFrameDefault named"


def man(*args):
    """man's page as plain text (its overstrikes undone)."""
    p = sh(["man", "-P", "cat", *args], env=dict(os.environ, MANWIDTH="80"))
    return p.returncode, re.sub(r".\x08", "", p.stdout), p.stderr


def check_installed(v, files):
    multiarch = sh(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]).stdout.strip()
    want = ["/usr/bin/pcprof", "/usr/lib/%s/pcprof/libpc.so" % multiarch,
            "/usr/lib/%s/pcprof/libpc-alloc.so" % multiarch,
            "/usr/share/man/man1/pcprof.1.gz", "/usr/share/man/man7/libpc.7.gz",
            "/usr/share/doc/pcprof/copyright", "/usr/share/doc/pcprof/README.md.gz",
            "/usr/share/doc/pcprof/NEWS.md.gz",
            "/usr/share/doc/pcprof/examples/github-actions.yml"]
    for w in want:
        assert w in files, (w, files)
    p = sh(["/usr/bin/pcprof", "--version"])
    assert p.stdout == "pcprof %s\n" % v, p.stdout
    # man finds both pages and formats them
    for sect, page in (("1", "pcprof"), ("7", "libpc.so")):
        p = sh(["man", "-w", sect, page.split(".")[0]])
        assert p.returncode == 0 and p.stdout.startswith("/usr/share/man/man%s/" % sect), \
            (page, p.stdout, p.stderr)
        rc, text, err = man(sect, page.split(".")[0])
        assert rc == 0 and "\nNAME\n       %s " % page in text, (page, text[:400], err)
    rc, text, err = man("1", "pcprof")
    assert "pcprof --version" in text, text[:2000]
    # the examples preload libpc.so from where the package put it
    rc, text, err = man("7", "libpc")
    assert "LD_PRELOAD=/usr/lib/%s/pcprof/libpc.so" % multiarch in text, text[:800]


def purge(files):
    """apt-get purge pcprof; then nothing of it is left: no file it listed,
    no directory of its own, no dpkg record."""
    p = apt("purge", "pcprof")
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    assert not present(), sh(["dpkg-query", "-W", "-f=${Status}", "pcprof"]).stdout
    left = [f for f in files if os.path.lexists(f) and not os.path.isdir(f)]
    assert not left, left
    own = [f for f in files if "pcprof" in f or "libpc" in f]
    left = [f for f in own if os.path.lexists(f)]
    assert not left, left


def test_debian_package_builds_installs_profiles_gzip_and_purges_clean():
    """dpkg-buildpackage -b -us -uc of the tarball; its Depends from
    shlibs and misc name what pcprof links; lintian with no error
    or warning; apt-get install ./pcprof_*.deb; /usr/bin/pcprof run --
    gzip -9 -c FILE from a directory with no build tree names gzip's
    functions (as far as Debian's stripped gzip lets it: see profile_gzip)
    and python3.11's; man pcprof and man libpc; --version; apt-get purge,
    after which nothing dpkg -L listed is left."""
    if os.geteuid() != 0:
        skip("installs a package: needs root")
    for t in ("dpkg-buildpackage", "dh", "fakeroot", "lintian", "apt-get", "man", "readelf"):
        need(t)
    v = version()
    d = tempfile.mkdtemp(prefix="pc-e2e-package-")
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if present() or os.path.lexists("/usr/bin/pcprof"):
            skip("a pcprof is already installed here (/usr/bin/pcprof); the test "
                 "installs and purges its own, so it leaves that one alone")
        src, deb, changes, out = build_package(d)
        depends(deb)
        tags = lintian(changes)
        files = []
        try:
            p = apt("install", "--no-install-recommends", deb)
            assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
            files = sh(["dpkg", "-L", "pcprof"], check=True).stdout.split("\n")
            files = [f for f in files if f and f != "/."]
            check_installed(v, files)
            run = tempfile.mkdtemp(prefix="pc-e2e-installed-")
            gz = profile_gzip(run, v)
            py = profile_python(run)
            shutil.rmtree(run)
        finally:
            if present() or files:
                purge(files)
    shutil.rmtree(d)
    return "%s; %s; %d files; lintian: %d tags, none E or W" % (gz, py, len(files), len(tags))
