"""Tests of tools/flame.c, the SVG flame graph writer, on its own: the
Makefile links flame.c into pcprof, and a small C driver compiled here
against flame.c alone feeds it stacks that no real profile gives (NaN
counts, 10,000 frames, bytes that are not UTF-8). The graphs are read back
with ElementTree and clicked through the embedded zoom script in Node.js on
a minimal DOM; without node that test is skipped."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

from pctest import need, skip

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))
TOOLS = os.path.join(TOP, "tools")

SVG = "{http://www.w3.org/2000/svg}"
FG = "{urn:x-pcprof:flame}"

CXX = "std::map<int, std::vector<char>>::operator[](int const&) 'q' \"d\""
# what the writer makes of "ctl\x01tab\tbad\xff\xfeend": XML 1.0 cannot
# carry \x01 even as a reference, nor bytes that are not UTF-8
WEIRD = "ctl\ufffdtab\tbad\ufffd\ufffdend"

# Edge cases the driver feeds the writer:
#   basic     duplicate stacks merging, a NULL frame name, a C++ name, control
#             characters and invalid UTF-8, non-UTF-8-safe truncation, a frame
#             under 0.1 %, counts of 0, -3, NaN and infinity, self time
#   basic-rev the same stacks in reverse order: the same bytes must come out
#   empty     no stacks at all; zero: only stacks that do not count
#   deep      a 10,000-frame recursion with half the samples
#   deeptiny  the same recursion with 1 sample in 100,001: left out
#   many      100,000 pseudo-random stacks up to 30 deep
#   full      writing to /dev/full must fail with ENOSPC
DRIVER = r"""
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"

#define CXX "std::map<int, std::vector<char>>::operator[](int const&) 'q' \"d\""
#define WEIRD "ctl\x01tab\tbad\xff\xfe" "end"

static const char *const s_hot[] = { "main", "foo", "hot" };
static const char *const s_cold[] = { "main", "foo", "c\xc3\xb6ld\xe2\x86\x92" };
static const char *const s_bar[] = { "main", "bar" };
static const char *const s_unk[] = { "main", "bar", NULL };
static const char *const s_zz[] = { "main", "bar", "zz" };
static const char *const s_cxx[] = { "main", CXX };
static const char *const s_weird[] = { "main", WEIRD };
static const char *const s_tiny[] = { "main", "tiny" };
static const char *const s_ign[] = { "main", "ignored" };

/* 100 samples in all; "tiny" is 0.0625 % of them */
static const struct flame_stack basic[] = {
	{ s_hot, 3, 30 }, { s_hot, 3, 30 }, { s_cold, 3, 10 },
	{ s_bar, 2, 8 }, { s_unk, 3, 5 }, { s_zz, 3, 2 },
	{ s_cxx, 2, 5 }, { s_weird, 2, 5 }, { s_tiny, 2, 0.0625 },
	{ s_hot, 1, 4.9375 },
	{ s_ign, 2, 0 }, { s_ign, 2, -3 }, { s_ign, 2, NAN },
	{ s_ign, 2, INFINITY },
};
#define NBASIC (sizeof basic / sizeof basic[0])

static int
run(const char *what, FILE *out)
{
	static const char *deep[10000];
	static const char *const hot[] = { "main", "hot" };
	struct flame_stack st[NBASIC], two[2];
	size_t i;

	if (!strcmp(what, "basic") || !strcmp(what, "full"))
		return flame_write_svg(out, basic, NBASIC, "Basic <&> \"test\"",
				       "samples");
	if (!strcmp(what, "basic-rev")) {
		for (i = 0; i < NBASIC; i++)
			st[i] = basic[NBASIC - 1 - i];
		return flame_write_svg(out, st, NBASIC, "Basic <&> \"test\"",
				       "samples");
	}
	if (!strcmp(what, "empty"))
		return flame_write_svg(out, NULL, 0, "Empty", "samples");
	if (!strcmp(what, "zero"))
		return flame_write_svg(out, basic + NBASIC - 4, 4, NULL, NULL);
	if (!strcmp(what, "deep") || !strcmp(what, "deeptiny")) {
		deep[0] = "main";
		for (i = 1; i < 10000; i++)
			deep[i] = "recurse";
		two[0] = (struct flame_stack){ deep, 10000,
			!strcmp(what, "deep") ? 100 : 1 };
		two[1] = (struct flame_stack){ hot, 2,
			!strcmp(what, "deep") ? 100 : 100000 };
		return flame_write_svg(out, two, 2, "Deep", "samples");
	}
	if (!strcmp(what, "many")) {
		static const char *names[48];
		static char buf[48][32];
		size_t n = 100000, maxd = 30;
		const char **frames = malloc(n * maxd * sizeof *frames);
		struct flame_stack *s = malloc(n * sizeof *s);
		unsigned long long x = 12345;
		int ret;

		if (!frames || !s)
			return -1;
		for (i = 0; i < 48; i++) {
			snprintf(buf[i], sizeof buf[i], i % 8 ? "fn%02zu" :
				 "ns::t<%zu>&", i);
			names[i] = buf[i];
		}
		for (i = 0; i < n; i++) {
			const char **f = frames + i * maxd;
			size_t d, k;

			x = x * 6364136223846793005ull + 1442695040888963407ull;
			s[i].depth = 1 + (x >> 33) % maxd;
			s[i].count = 1 + (x >> 20) % 10;
			f[0] = "main";
			for (d = 1; d < s[i].depth; d++) {
				x = x * 6364136223846793005ull +
				    1442695040888963407ull;
				/* name k with odds 2^-(k+1): some hot paths */
				for (k = 0; k < 47 && (x >> (30 + k) & 1); k++)
					;
				f[d] = names[k];
			}
			s[i].frames = f;
		}
		ret = flame_write_svg(out, s, n, "Many", "samples");
		free(frames);
		free(s);
		return ret;
	}
	fprintf(stderr, "driver: unknown case '%s'\n", what);
	exit(2);
}

int
main(int argc, char **argv)
{
	FILE *out;
	int ret;

	if (argc != 3) {
		fprintf(stderr, "usage: driver CASE OUT\n");
		return 2;
	}
	out = fopen(argv[2], "w");
	if (!out) {
		perror(argv[2]);
		return 2;
	}
	errno = 0;
	ret = run(argv[1], out);
	printf("ret=%d errno=%s\n", ret, ret ? strerror(errno) : "-");
	fclose(out);
	return 0;
}
"""

# A DOM just large enough for the zoom script, built from ElementTree's
# reading of the SVG; it clicks the named frames in turn and prints where
# every frame ended up.
DOM = r"""
'use strict';
const fs = require('fs');
const vm = require('vm');
const tree = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const code = fs.readFileSync(process.argv[3], 'utf8');
const clicks = JSON.parse(fs.readFileSync(process.argv[4], 'utf8'));

class El {
	constructor(tag, attrs, text) {
		this.tagName = tag;
		this.attrs = Object.assign({}, attrs);
		this.text = text;
		this.children = [];
		this.parentNode = null;
		this.listeners = {};
	}
	getAttribute(n) { return n in this.attrs ? this.attrs[n] : null; }
	setAttribute(n, v) { this.attrs[n] = String(v); }
	getAttributeNS(ns, n) {
		const k = '{' + ns + '}' + n;
		return k in this.attrs ? this.attrs[k] : null;
	}
	getElementsByTagName(t) {
		const out = [];
		const walk = (e) => {
			for (const c of e.children) {
				if (c.tagName === t)
					out.push(c);
				walk(c);
			}
		};
		walk(this);
		return out;
	}
	get textContent() {
		return this.text + this.children.map((c) => c.textContent).join('');
	}
	set textContent(v) { this.text = String(v); this.children = []; }
	appendChild(c) { c.parentNode = this; this.children.push(c); return c; }
	addEventListener(type, fn) {
		(this.listeners[type] = this.listeners[type] || []).push(fn);
	}
}

const ids = {};
function build(j) {
	const e = new El(j.tag, j.attrs, j.text);
	if (j.attrs.id)
		ids[j.attrs.id] = e;
	for (const c of j.children)
		e.appendChild(build(c));
	return e;
}
const svg = build(tree);
const doc = new El('#document', {}, '');
doc.appendChild(svg);
doc.getElementById = (id) => ids[id] || null;
doc.createElementNS = (ns, t) => new El(t, {}, '');
globalThis.document = doc;
vm.runInThisContext(code);

function fire(target, type) {
	for (let n = target; n; n = n.parentNode)
		for (const fn of n.listeners[type] || [])
			fn({ target: target, type: type, key: 'Escape' });
}

const frames = ids.frames.getElementsByTagName('g');
function byName(name) {
	for (const g of frames) {
		const t = g.getElementsByTagName('title')[0].textContent;
		if (t.substring(0, t.lastIndexOf(' (')) === name)
			return g;
	}
	throw new Error('no frame ' + name);
}
const states = [];
for (const c of clicks) {
	if (c === null)
		fire(ids.unzoom, 'click');
	else if (c === '#escape')
		fire(doc, 'keydown');
	else
		fire(byName(c).getElementsByTagName('rect')[0], 'click');
	const hover = byName('main').getElementsByTagName('rect')[0];
	fire(hover, 'mouseover');
	const details = ids.details.textContent;
	fire(hover, 'mouseout');
	states.push({
		details: details,
		after: ids.details.textContent,
		unzoom: ids.unzoom.getAttribute('display'),
		frames: frames.map((g) => {
			const t = g.getElementsByTagName('text')[0];
			const r = g.getElementsByTagName('rect')[0];
			return {
				title: g.getElementsByTagName('title')[0].textContent,
				display: g.getAttribute('display') || 'inline',
				cls: g.getAttribute('class'),
				x: parseFloat(r.getAttribute('x')),
				width: parseFloat(r.getAttribute('width')),
				label: t ? t.textContent : '',
			};
		}),
	});
}
process.stdout.write(JSON.stringify(states));
"""

_built = {}


def driver():
    """Compile the driver with flame.c once; its path."""
    if "exe" not in _built:
        d = tempfile.mkdtemp(prefix="pc-flame-")
        src = os.path.join(d, "driver.c")
        with open(src, "w") as f:
            f.write(DRIVER)
        exe = os.path.join(d, "driver")
        cc = os.environ.get("CC", "cc")
        p = subprocess.run([cc, "-O1", "-Wall", "-Wextra", "-Werror",
                            "-I" + TOOLS, "-o", exe, src,
                            os.path.join(TOOLS, "flame.c")],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, "driver does not build:\n" + p.stderr
        _built["exe"] = exe
        _built["dir"] = d
    return _built["exe"]


def write(case, path=None):
    """Run the driver on case; the SVG's bytes and the time taken."""
    path = path or os.path.join(tempfile.mkdtemp(prefix="pc-flame-"),
                                case + ".svg")
    t0 = time.time()
    p = subprocess.run([driver(), case, path], capture_output=True,
                       text=True, timeout=120)
    took = time.time() - t0
    assert p.returncode == 0, "driver %s: status %d: %s" % (
        case, p.returncode, p.stderr)
    assert p.stdout == "ret=0 errno=-\n", "driver %s: %s" % (case, p.stdout)
    with open(path, "rb") as f:
        return f.read(), took


def frames_of(data):
    """The frames of a graph, in document order, as dicts."""
    root = ET.fromstring(data)
    assert root.tag == SVG + "svg"
    height = float(root.get("height"))
    out = []
    for g in root.iter(SVG + "g"):
        if g.get("class") != "frame":
            continue
        title = g.find(SVG + "title").text
        m = re.match(r"^(.*) \((\S+) samples, (\d+\.\d\d)%\)$", title, re.S)
        assert m, "title %r" % title
        rect = g.find(SVG + "rect")
        text = g.find(SVG + "text")
        out.append({
            "name": m.group(1), "samples": float(m.group(2)),
            "share": float(m.group(3)), "level": int(g.get(FG + "l")),
            "sx": float(g.get(FG + "x")), "sw": float(g.get(FG + "w")),
            "x1": round(float(rect.get("x")) * 100),
            "x2": round((float(rect.get("x")) +
                         float(rect.get("width"))) * 100),
            "w": round(float(rect.get("width")) * 100),
            "y": float(rect.get("y")),
            "label": None if text is None else (text.text or ""),
        })
    return root, height, out


def check_nesting(height, frames):
    """Each frame lies within one frame a level down, its row is where its
    level says, children's widths add up to no more than the parent's (in
    pixels, exactly, and in samples), siblings come in name order."""
    levels = {}
    for f in frames:
        levels.setdefault(f["level"], []).append(f)
        assert f["y"] == height - 30 - (f["level"] + 1) * 16, f
        assert 1000 <= f["x1"] <= f["x2"] <= 119000, f
    assert len(levels[0]) == 1 and levels[0][0]["name"] == "all"
    assert levels[0][0]["w"] == 118000
    total = levels[0][0]["samples"]
    for lv in sorted(levels)[1:]:
        parents = sorted(levels[lv - 1], key=lambda f: f["x1"])
        kids = {}
        for f in sorted(levels[lv], key=lambda f: f["x1"]):
            assert f["samples"] >= total * 0.001, f
            p = _bisect(parents, f["x1"])
            assert p["x1"] <= f["x1"] and f["x2"] <= p["x2"], (p, f)
            assert p["sx"] <= f["sx"] and f["sx"] + f["sw"] <= \
                p["sx"] + p["sw"] + 1e-9 * total, (p, f)
            kids.setdefault(id(p), (p, []))[1].append(f)
        for p, ks in kids.values():
            assert sum(k["w"] for k in ks) <= p["w"], (p, ks)
            assert sum(k["samples"] for k in ks) <= p["samples"] * (1 + 1e-12)
            names = [k["name"] for k in ks]
            assert len(set(names)) == len(names), names
            assert names == sorted(names, key=lambda s: s.encode(
                "utf-8", "surrogatepass")), names
        assert len(levels[lv]) <= 1000


def _bisect(parents, x):
    lo, hi = 0, len(parents)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if parents[mid]["x1"] <= x:
            lo = mid
        else:
            hi = mid
    return parents[lo]


def test_flame_titles_carry_names_samples_and_shares():
    data, _ = write("basic")
    root, height, frames = frames_of(data)
    byname = {f["name"]: f for f in frames}
    want = {"all": 100, "main": 100, "foo": 70, "hot": 60, "c\u00f6ld\u2192": 10,
            "bar": 15, "[unknown]": 5, "zz": 2, CXX: 5, WEIRD: 5}
    assert sorted(byname) == sorted(want), sorted(byname)
    assert len(frames) == len(want)
    for name, n in want.items():
        assert byname[name]["samples"] == n, byname[name]
        assert byname[name]["share"] == n, byname[name]
        assert abs(byname[name]["w"] - n * 1180) <= 1, byname[name]
    assert "tiny" not in byname and "ignored" not in byname
    assert byname["hot"]["level"] == 3 and byname["main"]["level"] == 1
    assert root.find(SVG + "text").text == 'Basic <&> "test"'
    check_nesting(height, frames)


def test_flame_cxx_and_bad_names_survive_the_xml_parser():
    data, _ = write("basic")
    _, _, frames = frames_of(data)
    names = [f["name"] for f in frames]
    assert CXX in names and WEIRD in names
    assert b"\x01" not in data and b"\xff" not in data
    data.decode("utf-8")
    cxx = [f for f in frames if f["name"] == CXX][0]
    # 59 px hold 7 characters: 5 of the name and ".."
    assert cxx["label"] == CXX[:5] + "..", cxx
    assert [f for f in frames if f["name"] == "hot"][0]["label"] == "hot"
    assert [f for f in frames if f["name"] == "zz"][0]["label"] is None


def test_flame_output_is_deterministic():
    a, _ = write("basic")
    b, _ = write("basic")
    c, _ = write("basic-rev")
    assert a == b
    assert a == c, "input order changed the output"
    d, _ = write("many")
    e, _ = write("many")
    assert d == e


def test_flame_without_samples_says_so():
    for case in ("empty", "zero"):
        data, _ = write(case)
        root, _, frames = frames_of(data)
        assert frames == []
        texts = [t.text for t in root.iter(SVG + "text")]
        assert "no samples" in texts, texts
    assert texts[0] == "Flame Graph"


def test_flame_deep_stack_is_bounded():
    data, took = write("deep")
    _, height, frames = frames_of(data)
    assert len(frames) == 10002, len(frames)
    assert height == 40 + 10001 * 16 + 30
    rec = [f for f in frames if f["name"] == "recurse"]
    assert len(rec) == 9999 and all(f["samples"] == 100 for f in rec)
    assert all(f["share"] == 50 for f in rec)
    check_nesting(height, frames)
    size = len(data)
    data, took2 = write("deeptiny")
    _, height, frames = frames_of(data)
    assert sorted(f["name"] for f in frames) == ["all", "hot", "main"]
    assert height == 40 + 3 * 16 + 30
    return "deep %.2fs %d KiB, deeptiny %.2fs" % (took, size // 1024, took2)


def test_flame_many_stacks_are_fast_and_nested():
    data, took = write("many")
    _, height, frames = frames_of(data)
    check_nesting(height, frames)
    root = [f for f in frames if f["level"] == 0][0]
    assert root["samples"] > 100000
    assert took < 20, took
    return "%.2fs for 100000 stacks, %d frames, %d KiB" % (
        took, len(frames), len(data) // 1024)


def test_flame_reports_write_errors():
    if not os.path.exists("/dev/full"):
        skip("no /dev/full")
    p = subprocess.run([driver(), "full", "/dev/full"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "ret=-1 errno=%s\n" % os.strerror(28), p.stdout


def _to_json(el):
    return {"tag": el.tag.split("}")[-1], "attrs": dict(el.attrib),
            "text": el.text or "",
            "children": [_to_json(c) for c in el]}


def test_flame_script_zooms_and_resets():
    node = need("node", "nodejs")
    data, _ = write("basic")
    root, height, frames = frames_of(data)
    script = root.find(SVG + "script").text
    d = tempfile.mkdtemp(prefix="pc-flame-")
    paths = [os.path.join(d, n) for n in ("tree.json", "script.js",
                                          "clicks.json", "dom.js")]
    clicks = ["foo", None, "bar", "all", CXX, "#escape"]
    for path, text in zip(paths, (json.dumps(_to_json(root)), script,
                                  json.dumps(clicks), DOM)):
        with open(path, "w") as f:
            f.write(text)
    p = subprocess.run([node, paths[3]] + paths[:3], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    states = json.loads(p.stdout)
    orig = {f["name"]: f for f in frames}

    def named(state):
        return {s["title"][:s["title"].rindex(" (")]: s
                for s in state["frames"]}

    def unzoomed(state):
        assert state["unzoom"] == "none"
        for name, s in named(state).items():
            assert s["display"] == "inline" and s["cls"] == "frame", s
            assert abs(s["x"] * 100 - orig[name]["x1"]) <= 1, (s, orig[name])
            assert abs(s["width"] * 100 - orig[name]["w"]) <= 1, s

    for st in states:
        assert st["details"] == "main (100 samples, 100.00%)", st["details"]
        assert st["after"] == " "

    foo, reset, bar, all_, cxx, esc = (named(s) for s in states)
    assert states[0]["unzoom"] == "inline"
    assert foo["foo"]["x"] == 10 and foo["foo"]["width"] == 1180
    for name in ("all", "main"):
        assert foo[name]["width"] == 1180 and foo[name]["display"] == "inline"
    assert foo["main"]["cls"] == "frame parent"
    # "c\u00f6ld\u2192" sorts before "hot"
    assert foo["c\u00f6ld\u2192"]["x"] == 10
    assert abs(foo["hot"]["x"] - (10 + 1180 * 10 / 70)) < 0.011, foo["hot"]
    assert abs(foo["hot"]["width"] - 1180 * 60 / 70) < 0.011, foo["hot"]
    assert foo["hot"]["x"] + foo["hot"]["width"] == 1190
    for name in ("bar", "zz", "[unknown]", CXX, WEIRD):
        assert foo[name]["display"] == "none", foo[name]
    unzoomed(states[1])
    assert bar["zz"]["label"] == "zz", bar["zz"]   # made when it had room
    assert bar["hot"]["display"] == "none"
    unzoomed(states[3])
    assert cxx[CXX]["label"] == CXX and cxx[CXX]["width"] == 1180
    unzoomed(states[5])
    return "ran the script in node"
