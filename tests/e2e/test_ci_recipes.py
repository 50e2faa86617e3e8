# SPDX-License-Identifier: BSD-2-Clause
"""The CI recipes of docs/ci.md (docs/ci/github-actions.yml and
docs/ci/gitlab-ci.yml), which were never run on GitHub or GitLab: each
parses as YAML, is the file docs/ci.md shows, has the job described; its
commands that build base and head, taken from the file as written, make a
worktree of a project's base commit and build both (a Makefile whose bench
is tests/progs/regress.c, its head commit the regress-slow build), and its
pcprof compare command runs on them with a short PERF_BUDGET: exit 1, the
slower stage named in the markdown, and every artifact path there. The
steps that install packages and pcprof itself, and the upload, are the
services' own and are not run."""

import os
import re
import shutil
import subprocess
import tempfile

from pctest import BUILD, prog, skip, tick_factor

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CI = os.path.join(TOP, "docs", "ci")
SCALE = 0.25		# regress's work a run, as test_compare.py's


def load(name):
    try:
        import yaml
    except ImportError:
        skip("python3's yaml not installed (apt-get install python3-yaml)")
    with open(os.path.join(CI, name)) as f:
        text = f.read()
    return text, yaml.safe_load(text)


def bench_dirs(head_at):
    """A job's directory: base/bench is regress-base, head_at (the head's
    bench, relative) regress-slow; PATH finds the build's pcprof first."""
    d = tempfile.mkdtemp(prefix="pc-e2e-ci-")
    for rel, name in (("base/bench", "regress-base"), (head_at, "regress-slow")):
        os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
        shutil.copy(prog(name), os.path.join(d, rel))
    env = dict(os.environ)
    env["PATH"] = os.path.abspath(BUILD) + ":" + env["PATH"]
    # the recipe's own variables, its budget made short and its benchmark's
    # arguments regress's
    env["PERF_BUDGET"] = "2s"
    env["BENCH_ARGS"] = "%g" % (SCALE * tick_factor({"PC_TIMER": "taskclock"}))
    return d, env


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, "-c", "user.name=ci", "-c",
                           "user.email=ci@example.org"] + list(args),
                          capture_output=True, text=True, check=True).stdout.strip()


def project(repo):
    """A project's repository at repo, as the job checks it out: two
    commits of a Makefile whose bench target builds tests/progs/regress.c,
    the second with stage_transform 20 % slower (as regress-slow). Its
    base commit's sha."""
    os.makedirs(repo)
    progs = os.path.join(TOP, "tests", "progs")
    for f in ("regress.c", "truth.h"):
        shutil.copy(os.path.join(progs, f), repo)
    make = "bench: regress.c truth.h\n\tcc -O2 -g -pthread %s -o $@ regress.c\n"
    git(repo, "init", "-q")
    with open(os.path.join(repo, "Makefile"), "w") as f:
        f.write(make % "")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    with open(os.path.join(repo, "Makefile"), "w") as f:
        f.write(make % "-DSLOW=1")
    git(repo, "commit", "-q", "-a", "-m", "head: a slower stage_transform")
    return base


def shell(script, d, env):
    """script run as both services run a step: bash -e, in d (out of the
    reach of a make check's jobserver)."""
    env = {k: v for k, v in env.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
    p = subprocess.run(["bash", "-e", "-c", script], cwd=d, env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, (script, p.stdout[-1500:], p.stderr[-1500:])


def judged(d, p, artifacts):
    """The gate's outcome in d: exit 1, stage_transform first in the
    markdown, every artifact there."""
    assert p.returncode == 1, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    md = open(os.path.join(d, "perf.md")).read()
    assert md.startswith("**pcprof compare: regression**") and "`stage_transform`" in \
        md.split("\n")[0], md[:600]
    for a in artifacts:
        assert os.path.exists(os.path.join(d, a.rstrip("/"))), (a, os.listdir(d))
    svg = open(os.path.join(d, "perf-diff.svg")).read()
    assert svg.lstrip().startswith("<?xml") or "<svg" in svg[:400], svg[:200]
    assert "stage_transform" in svg
    runs = [r for r in os.listdir(os.path.join(d, "perf")) if r.startswith(("base-", "new-"))]
    assert runs, os.listdir(os.path.join(d, "perf"))
    return md.split("\n")[0]


def test_docs_ci_md_shows_the_ci_files_as_they_are():
    """docs/ci.md's two YAML blocks are the two files, byte for byte."""
    with open(os.path.join(TOP, "docs", "ci.md")) as f:
        blocks = re.findall(r"```yaml\n(.*?)```", f.read(), re.S)
    files = [load(n)[0] for n in ("github-actions.yml", "gitlab-ci.yml")]
    assert blocks == files, "docs/ci.md's yaml blocks differ from docs/ci/*.yml"
    return "2 files, 2 blocks"


def test_github_actions_gate_step_fails_on_a_regression_and_leaves_its_artifacts():
    """The workflow's job: a pull_request trigger, the head checked out,
    a Gate step whose script, run as GitHub runs a step (bash -e), exits 1
    on regress-slow and appends the markdown to the job summary, and an
    upload step (if: always()) of perf.md, perf-diff.svg and perf/."""
    text, y = load("github-actions.yml")
    on = y.get("on", y.get(True))		# YAML 1.1 reads a bare on as true
    assert "pull_request" in on, on
    job = y["jobs"]["perf-gate"]
    steps = {s.get("name"): s for s in job["steps"]}
    gate = steps["Gate"]["run"]
    assert "pcprof compare" in gate and "--flame perf-diff.svg" in gate, gate
    up = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
    assert len(up) == 1 and up[0]["if"] == "always()", up
    artifacts = up[0]["with"]["path"].split()
    assert set(artifacts) == {"perf.md", "perf-diff.svg", "perf/"}, artifacts
    d, env = bench_dirs("head/bench")
    for k, v in job["env"].items():
        assert k in env, k		# each of the job's variables is set here
    # the step that builds base and head, as written, on a project's two
    # commits (the expression filled in, as Actions does before the shell)
    for b in ("base", "head"):
        shutil.rmtree(os.path.join(d, b))
    sha = project(os.path.join(d, "head"))
    build = steps["Build base and head"]["run"]
    expr = "${{ github.event.pull_request.base.sha }}"
    assert expr in build, build
    shell(build.replace(expr, sha), d, env)
    assert git(os.path.join(d, "base"), "rev-parse", "HEAD") == sha
    env["GITHUB_STEP_SUMMARY"] = os.path.join(d, "summary.md")
    p = subprocess.run(["bash", "-e", "-c", gate], cwd=d, env=env, capture_output=True,
                       text=True, timeout=300)
    first = judged(d, p, artifacts)
    assert open(env["GITHUB_STEP_SUMMARY"]).read() == open(os.path.join(d, "perf.md")).read()
    shutil.rmtree(d)
    return first[:100]


def test_gitlab_ci_gate_command_fails_on_a_regression_and_leaves_its_artifacts():
    """The job: merge requests only, artifacts kept when: always, and its
    pcprof compare line, run as GitLab runs a script line, exits 1 on
    regress-slow (which fails the job) with perf.md, perf-diff.svg and
    perf/ there."""
    _, y = load("gitlab-ci.yml")
    job = y["perf-gate"]
    assert "merge_request_event" in job["rules"][0]["if"], job["rules"]
    assert job["artifacts"]["when"] == "always", job["artifacts"]
    artifacts = job["artifacts"]["paths"]
    assert set(artifacts) == {"perf.md", "perf-diff.svg", "perf/"}, artifacts
    gates = [line for line in job["script"] if line.startswith("pcprof compare")]
    assert len(gates) == 1, job["script"]
    assert "--flame perf-diff.svg" in gates[0], gates
    d, env = bench_dirs("bench")
    for k in ("PERF_BUDGET", "BENCH_ARGS"):
        assert k in job["variables"], k
    # the script's lines before the gate, as written, in a checkout of a
    # project's head (its base commit in the merge request's variable)
    shutil.rmtree(d)
    sha = project(d)
    env["CI_MERGE_REQUEST_DIFF_BASE_SHA"] = sha
    before = job["script"][:job["script"].index(gates[0])]
    assert any("CI_MERGE_REQUEST_DIFF_BASE_SHA" in line for line in before), before
    for line in before:
        shell(line, d, env)
    assert git(os.path.join(d, "base"), "rev-parse", "HEAD") == sha
    p = subprocess.run(["bash", "-e", "-c", gates[0]], cwd=d, env=env, capture_output=True,
                       text=True, timeout=300)
    first = judged(d, p, artifacts)
    shutil.rmtree(d)
    return first[:100]
