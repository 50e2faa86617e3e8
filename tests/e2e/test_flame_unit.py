# SPDX-License-Identifier: BSD-2-Clause
"""Tests of tools/writers/flame.c, the SVG flame graph writer, read back as SVG:
the Check suite in tests/check_flame.c feeds the writer stacks that no real
profile gives (NaN counts, 10,000 frames, bytes that are not UTF-8) and
asserts on what it wrote; run with UNIT_FLAME_DIR set, it also leaves
each graph there. Here those graphs are parsed with ElementTree, which
says they are well-formed XML whatever the names held, checked for how
their frames nest, and clicked through the embedded zoom script in Node.js
on a minimal DOM; without node that test is skipped. Byte-for-byte
determinism and write errors are the Check suite's alone."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

import pctest
from pctest import need

# one run of the unit binary writes every graph; the tests share it
SHARED = True

SVG = "{http://www.w3.org/2000/svg}"
FG = "{urn:x-pcprof:flame}"

CXX = "std::map<int, std::vector<char>>::operator[](int const&) 'q' \"d\""
# what the writer makes of "ctl\x01tab\tbad\xff\xfeend": XML 1.0 cannot
# carry \x01 even as a reference, nor bytes that are not UTF-8
WEIRD = "ctl\ufffdtab\tbad\ufffd\ufffdend"

# The graphs tests/check_flame.c writes (see its comments for the stacks):
#   basic     duplicate stacks merging, a NULL frame name, a C++ name, control
#             characters and invalid UTF-8, a frame under 0.1 %, counts of
#             0, -3, NaN and infinity, self time
#   empty     no stacks at all; zero: only stacks that do not count
#   deep      a 10,000-frame recursion with half the samples
#   deeptiny  the same recursion with 1 sample in 100,001: left out
#   many      100,000 pseudo-random stacks up to 30 deep
CASES = ("basic", "empty", "zero", "deep", "deeptiny", "many")

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
	removeAttribute(n) { delete this.attrs[n]; }
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
doc.documentElement = svg;
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
	else if (c.startsWith('#search:')) {
		globalThis.window = { prompt: () => c.substring(8) };
		fire(ids.search, 'click');
	}
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
		matched: ids.matched.getAttribute('fg:frames'),
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
				match: g.getAttribute('fg:match') === '1',
			};
		}),
	});
}
process.stdout.write(JSON.stringify(states));
"""

_graphs = {}


def graphs():
    """Run the unit binary's flame suite once, with UNIT_FLAME_DIR set;
    the SVG bytes of each case, and how long the suite took."""
    if not _graphs:
        unit = os.path.join(pctest.BUILD, "tests", "unit")
        assert os.access(unit, os.X_OK), \
            "%s is not built: make B=%s %s" % (unit, pctest.BUILD, unit)
        d = tempfile.mkdtemp(prefix="pc-flame-")
        env = dict(os.environ, UNIT_FLAME_DIR=d, CK_RUN_SUITE="flame")
        # the suite's own run judges its skips; this one wants the graphs
        env.pop("CI", None)
        t0 = time.time()
        try:
            p = subprocess.run([unit], env=env, capture_output=True,
                               text=True, timeout=600)
            assert p.returncode == 0, "unit flame suite: status %d:\n%s%s" % (
                p.returncode, p.stdout, p.stderr)
            for case in CASES:
                with open(os.path.join(d, case + ".svg"), "rb") as f:
                    _graphs[case] = f.read()
        finally:
            shutil.rmtree(d, ignore_errors=True)
        _graphs["took"] = time.time() - t0
    return _graphs


def write(case):
    """The SVG the Check suite wrote for case."""
    return graphs()[case]


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
    data = write("basic")
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
    data = write("basic")
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


def test_flame_without_samples_says_so():
    for case in ("empty", "zero"):
        data = write(case)
        root, _, frames = frames_of(data)
        assert frames == []
        texts = [t.text for t in root.iter(SVG + "text")]
        assert "no samples" in texts, texts
    assert texts[0] == "Flame Graph"


def test_flame_deep_stack_is_bounded():
    data = write("deep")
    _, height, frames = frames_of(data)
    assert len(frames) == 10002, len(frames)
    assert height == 48 + 10001 * 16 + 30
    rec = [f for f in frames if f["name"] == "recurse"]
    assert len(rec) == 9999 and all(f["samples"] == 100 for f in rec)
    assert all(f["share"] == 50 for f in rec)
    check_nesting(height, frames)
    size = len(data)
    data = write("deeptiny")
    _, height, frames = frames_of(data)
    assert sorted(f["name"] for f in frames) == ["all", "hot", "main"]
    assert height == 48 + 3 * 16 + 30
    return "deep: %d frames, %d KiB" % (10002, size // 1024)


def test_flame_many_stacks_are_nested():
    # the Check suite bounds the time taken (20 s)
    data = write("many")
    _, height, frames = frames_of(data)
    check_nesting(height, frames)
    root = [f for f in frames if f["level"] == 0][0]
    assert root["samples"] > 100000
    return "%d frames, %d KiB; the flame suite ran in %.1f s" % (
        len(frames), len(data) // 1024, graphs()["took"])


def _to_json(el):
    return {"tag": el.tag.split("}")[-1], "attrs": dict(el.attrib),
            "text": el.text or "",
            "children": [_to_json(c) for c in el]}


def _click_through(node, tree, script, clicks):
    """The states of the graph (tree, as _to_json has it) after each of
    clicks, run by the graph's script on the DOM above."""
    d = tempfile.mkdtemp(prefix="pc-flame-")
    paths = [os.path.join(d, n) for n in ("tree.json", "script.js",
                                          "clicks.json", "dom.js")]
    try:
        for path, text in zip(paths, (json.dumps(tree), script,
                                      json.dumps(clicks), DOM)):
            with open(path, "w") as f:
                f.write(text)
        p = subprocess.run([node, paths[3]] + paths[:3], capture_output=True,
                           text=True, timeout=60)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_flame_script_zooms_and_resets():
    node = need("node", "nodejs")
    data = write("basic")
    root, height, frames = frames_of(data)
    script = root.find(SVG + "script").text
    clicks = ["foo", None, "bar", "all", CXX, "#escape"]
    states = _click_through(node, _to_json(root), script, clicks)
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


def _titles(tree):
    """The title elements of a tree as _to_json has it."""
    if tree["tag"] == "title":
        yield tree
    for c in tree["children"]:
        yield from _titles(c)


def test_flame_search_matches_names_not_after_hints():
    """A stripped function's frame is named "cc1+0x7ed990 (after
    hash_table::expand)": the hint says where it is, and a search for
    hash_table must not match it (cc1's graph matched 99 % for
    malloc|hash_table, the hint being under almost every stack). The
    basic graph's zz and bar frames are renamed so, and searched for by
    the function the hint names, by their own name, and by both."""
    node = need("node", "nodejs")
    root, _, frames = frames_of(write("basic"))
    tree = _to_json(root)
    renamed = {"zz": "prog+0x7ed990 (after foo)",
               "bar": "prog+0x10 (after hash_table::expand)"}
    for t in _titles(tree):
        name = t["text"][:t["text"].rfind(" (")]
        if name in renamed:
            t["text"] = renamed[name] + t["text"][len(name):]
    script = root.find(SVG + "script").text
    states = _click_through(node, tree, script,
                            ["#search:foo", "#search:hash_table",
                             "#search:prog\\+0x10$", "#search:foo|hash_table|0x7ed"])

    def hits(state):
        return sorted(f["title"][:f["title"].rindex(" (")]
                      for f in state["frames"] if f["match"])

    def named(pattern):
        return sorted(renamed.get(f["name"], f["name"]) for f in frames
                      if f["level"] > 0 and re.search(
                          pattern, renamed.get(f["name"], f["name"]).split(" (after ")[0]))

    foo, hash_, own, both = states
    assert hits(foo) == named("foo") and hits(foo) and all(
        "after" not in h for h in hits(foo)), hits(foo)
    assert hits(hash_) == [] and hash_["matched"] == "0", hits(hash_)
    assert hits(own) == [renamed["bar"]] * len(hits(own)) and hits(own), hits(own)
    assert hits(both) == named("foo|hash_table|0x7ed") and \
        renamed["zz"] in hits(both) and renamed["bar"] not in hits(both), hits(both)
    return "foo: %d frames, hash_table: 0, foo|hash_table|0x7ed: %d" % (
        len(hits(foo)), len(hits(both)))
