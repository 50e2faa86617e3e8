// SPDX-License-Identifier: BSD-2-Clause
/*
 * The flame graph's zoom script, which tools/writers/flame.c embeds in every
 * SVG it writes (build/gen/flame_js.h, made from this file by the Makefile
 * without this comment). It runs after flame.c's prologue, which says
 * 'use strict' and defines SVGNS, FGNS and the layout in pixels from the C
 * side's constants: XPAD, WIDTH, CHARW, FRAMEH, TOP and BOTTOM.
 *
 * It reads each frame's place in samples from fg:x, fg:w and its level from
 * fg:l, its name from its <title>, and uses only DOM calls that every SVG
 * viewer with scripting has. Labels are fitted the way flame.c's put_frame
 * fits them; a <text> is made when a frame first has room. Plain ES5.
 *
 * Where flame_strip.c wrote a time strip's data first (TL), it draws each
 * thread's samples over time and the markers above the graph; a drag
 * across the strip gives each frame the samples of that window alone (its
 * sample's frame, f, counts it; its callers get it summed) and lays the
 * graph out again; a click on the strip brings the whole run back.
 */
var frames = [], root = null, details = null, unzoom = null, matched = null;
var inverted = false, height = 0, MATCH = 'rgb(230,0,230)', lastRe = null;

function fit(name, w) {
	var n = Math.floor((w - 6) / CHARW), c;
	if (n < 3)
		return '';
	if (name.length <= n)
		return name;
	c = n - 2;
	if (name.charCodeAt(c - 1) >= 0xd800 && name.charCodeAt(c - 1) <= 0xdbff)
		c--;
	return name.substring(0, c) + '..';
}

function px(v) {
	return Math.round(v * 100) / 100;
}

function place(f, x1, x2, cls) {
	var label = fit(f.name, x2 - x1);
	f.g.setAttribute('display', 'inline');
	f.g.setAttribute('class', cls);
	f.rect.setAttribute('x', x1.toFixed(2));
	f.rect.setAttribute('width', (x2 - x1).toFixed(2));
	if (label && !f.text) {
		f.text = document.createElementNS(SVGNS, 'text');
		f.text.setAttribute('y', (parseFloat(f.rect.getAttribute('y')) + 11).toFixed(2));
		f.g.appendChild(f.text);
	}
	if (f.text) {
		f.text.setAttribute('x', (x1 + 3).toFixed(2));
		f.text.textContent = label;
	}
}

/* z fills the width, its callers stay full width, the rest hides. */
function zoom(z) {
	var eps = root.w * 1e-9, zend = z.x + z.w, i, f;
	for (i = 0; i < frames.length; i++) {
		f = frames[i];
		if (!(f.w > 0)) {
			/* none of a window's samples */
			f.g.setAttribute('display', 'none');
		} else if (f.level < z.level) {
			if (f.x <= z.x + eps && f.x + f.w >= zend - eps)
				place(f, XPAD, XPAD + WIDTH, f === root ? 'frame' : 'frame parent');
			else
				f.g.setAttribute('display', 'none');
		} else if (f.x >= z.x - eps && f.x + f.w <= zend + eps) {
			place(f, px(XPAD + (f.x - z.x) / z.w * WIDTH),
			      px(XPAD + (f.x + f.w - z.x) / z.w * WIDTH), 'frame');
		} else {
			f.g.setAttribute('display', 'none');
		}
	}
	unzoom.setAttribute('display', z === root ? 'none' : 'inline');
}

/* What a search matches of a frame's name: a stripped function's
 * "cc1+0x7ed990 (after 'hash_table::expand')" is cc1+0x7ed990, for the
 * "(after 'X')" is a hint at where it is, not a name: searching X must not
 * match every frame of code that follows X. */
function searchable(name) {
	return name.replace(/^(.*\+0x[0-9a-f]+) \(after .*\)$/, '$1');
}

/* The frames whose name matches re highlighted; their share of all
 * samples, a frame inside another that matches counted once. */
function search(re) {
	var spans = [], i, f, end = -1, sum = 0, n = 0;
	lastRe = re;
	for (i = 0; i < frames.length; i++) {
		f = frames[i];
		if (f !== root && re && f.w > 0 && re.test(f.key)) {
			f.rect.setAttribute('fill', MATCH);
			f.g.setAttribute('fg:match', '1');
			spans.push([f.x, f.x + f.w]);
			n++;
		} else {
			f.rect.setAttribute('fill', f.fill);
			f.g.removeAttribute('fg:match');
		}
	}
	spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
	for (i = 0; i < spans.length; i++) {
		if (spans[i][0] >= end) {
			sum += spans[i][1] - spans[i][0];
			end = spans[i][1];
		} else if (spans[i][1] > end) {
			sum += spans[i][1] - end;
			end = spans[i][1];
		}
	}
	matched.textContent = re ? 'Matched: ' + n + ' frames, ' +
		(root.w > 0 ? 100 * sum / root.w : 0).toFixed(1) + '%' : ' ';
	matched.setAttribute('fg:frames', String(n));
	matched.setAttribute('fg:share', re && root.w > 0 ? String(sum / root.w) : '0');
}

/* Root at the bottom (a flame) or at the top (an icicle). */
function flip() {
	var i, f, y;
	inverted = !inverted;
	for (i = 0; i < frames.length; i++) {
		f = frames[i];
		y = inverted ? TOP + f.level * FRAMEH : height - BOTTOM - (f.level + 1) * FRAMEH;
		f.rect.setAttribute('y', String(y));
		if (f.text)
			f.text.setAttribute('y', String(y + 11));
	}
	document.documentElement.setAttribute('fg:inverted', inverted ? '1' : '0');
}

function frameOf(n) {
	for (; n; n = n.parentNode)
		if (n.fgFrame)
			return n.fgFrame;
	return null;
}

/* A regular expression from the user; an empty one clears. */
function ask() {
	var term = window.prompt('Search for (a regular expression):', ''), re = null;
	if (term === null)
		return;
	try {
		re = term ? new RegExp(term) : null;
	} catch (err) {
		matched.textContent = 'Not a regular expression: ' + term;
		return;
	}
	search(re);
}

function init() {
	var box = document.getElementById('frames');
	var gs = box.getElementsByTagName('g'), i, g, t, f, lastAt = [];
	details = document.getElementById('details');
	unzoom = document.getElementById('unzoom');
	matched = document.getElementById('matched');
	height = parseFloat(document.documentElement.getAttribute('height'));
	for (i = 0; i < gs.length; i++) {
		g = gs[i];
		t = g.getElementsByTagName('title')[0].textContent;
		f = {
			g: g,
			rect: g.getElementsByTagName('rect')[0],
			text: g.getElementsByTagName('text')[0] || null,
			title: t,
			name: t.substring(0, t.lastIndexOf(' (')),
			x: parseFloat(g.getAttributeNS(FGNS, 'x')),
			w: parseFloat(g.getAttributeNS(FGNS, 'w')),
			level: parseInt(g.getAttributeNS(FGNS, 'l'), 10)
		};
		f.key = searchable(f.name);
		f.x0 = f.x;
		f.w0 = f.w;
		f.title0 = t;
		f.unit = t.replace(/^.* \([^ ]* (.*), [^,]*\)$/, '$1');
		f.fill = f.rect.getAttribute('fill');
		g.fgFrame = f;
		/* pre-order: a frame's caller is the last one a level up */
		f.up = f.level > 0 ? lastAt[f.level - 1] : 0;
		lastAt[f.level] = frames.length;
		frames.push(f);
		if (f.level === 0)
			root = f;
	}
	box.addEventListener('click', function (e) {
		var f = frameOf(e.target);
		if (f)
			zoom(f);
	});
	box.addEventListener('mouseover', function (e) {
		var f = frameOf(e.target);
		if (f)
			details.textContent = f.title;
	});
	box.addEventListener('mouseout', function () {
		details.textContent = ' ';
	});
	unzoom.addEventListener('click', function () {
		zoom(root);
	});
	document.getElementById('search').addEventListener('click', ask);
	document.getElementById('invert').addEventListener('click', flip);
	document.addEventListener('keydown', function (e) {
		if (e.key === 'Escape' && root && !strip.drag) {
			zoom(root);
			search(null);
		} else if ((e.ctrlKey || e.metaKey) && e.key === 'f') {
			e.preventDefault();
			ask();
		}
	});
}

/* The time strip: lanes of the threads' samples, rows of markers. */
var strip = { drag: null, sel: null, label: null, from: 0, to: 0 };

function svgEl(tag, attrs, parent) {
	var e = document.createElementNS(SVGNS, tag), k;
	for (k in attrs)
		if (attrs.hasOwnProperty(k))
			e.setAttribute(k, String(attrs[k]));
	if (parent)
		parent.appendChild(e);
	return e;
}

function usToX(us) {
	return XPAD + (TL.span > 0 ? us / TL.span : 0) * WIDTH;
}

/* Each lane's samples in columns (of 2 px at least, some 4 samples a
 * column on average), as bars of a height its busiest column's; a path a
 * lane. */
function drawLanes(g) {
	var cols = Math.max(40, Math.min(Math.ceil(WIDTH / 2), Math.ceil(TL.t.length / 4)));
	var cw = WIDTH / cols, i, k, c, d, max, y, h, bins = [];
	for (k = 0; k < TL.lanes.length; k++) {
		bins.push([]);
		for (c = 0; c < cols; c++)
			bins[k].push(0);
	}
	for (i = 0; i < TL.t.length; i++) {
		c = Math.min(cols - 1, Math.floor((usToX(TL.t[i]) - XPAD) / cw));
		bins[TL.l[i]][c] += TL.w ? TL.w[i] : 1;
	}
	for (k = 0; k < TL.lanes.length; k++) {
		max = Math.max.apply(null, bins[k]);
		y = TL.y + (k + 1) * TL.laneH - 1;
		d = '';
		for (c = 0; c < cols && max > 0; c++) {
			h = (TL.laneH - 2) * bins[k][c] / max;
			if (h > 0)
				d += 'M' + (XPAD + cw * c).toFixed(2) + ' ' + y + 'h' + cw.toFixed(2) +
					'v' + (-h).toFixed(1) + 'h' + (-cw).toFixed(2) + 'z';
		}
		svgEl('path', { 'class': 'lane', d: d || 'M0 0', fill: 'rgb(80,120,200)' }, g);
		svgEl('text', { x: XPAD + 2, y: y - 2, 'class': 'lanename',
				'fill-opacity': '0.6' }, g).textContent = TL.lanes[k];
	}
}

/* A marker a box on its name's row, its title its name and times. */
function drawMarkers(g) {
	var y0 = TL.y + TL.lanes.length * TL.laneH, i, m, x1, x2, r, box;
	for (i = 0; i < TL.m.length; i += 4) {
		m = TL.m.slice(i, i + 4);
		x1 = usToX(m[1]);
		x2 = Math.max(usToX(m[2]), x1 + 1);
		r = svgEl('g', { 'class': 'marker', 'fg:name': TL.names[m[3]],
				 'fg:start': m[1], 'fg:end': m[2] }, g);
		box = svgEl('rect', { x: x1.toFixed(2), y: y0 + m[0] * TL.markH + 1,
				      width: (x2 - x1).toFixed(2), height: TL.markH - 2,
				      fill: 'rgb(60,170,120)', 'fill-opacity': '0.7' }, r);
		svgEl('title', {}, r).textContent = TL.names[m[3]] + ' (' +
			(m[1] / 1e6).toFixed(6) + ' s to ' + (m[2] / 1e6).toFixed(6) + ' s)';
		box.setAttribute('stroke', 'rgb(30,90,60)');
		box.setAttribute('stroke-width', '0.5');
	}
	for (i = 0; i < TL.rows.length; i++)
		svgEl('text', { x: XPAD + 2, y: y0 + (i + 1) * TL.markH - 3,
				'class': 'rowname' }, g).textContent = TL.rows[i];
}

/* The samples from us1 (inclusive) to us2 (exclusive) as the frames'
 * values, the callers' summed from their callees' (frames are written
 * in pre-order: a caller before its callees), and the layout again. */
function windowValues(us1, us2) {
	var self = [], next = [], i, f, n = 0, sum = 0;
	for (i = 0; i < frames.length; i++)
		self.push(0);
	for (i = 0; i < TL.t.length; i++)
		if (TL.t[i] >= us1 && TL.t[i] < us2) {
			self[TL.f[i]] += TL.w ? TL.w[i] : 1;
			n++;
		}
	for (i = 0; i < frames.length; i++)
		frames[i].w = self[i];
	for (i = frames.length - 1; i > 0; i--)
		frames[frames[i].up].w += frames[i].w;
	for (i = 0; i < frames.length; i++) {
		f = frames[i];
		f.x = next[f.level] || 0;
		next[f.level] = f.x + f.w;
		next[f.level + 1] = f.x;
		sum += self[i];
	}
	return { samples: n, weight: sum };
}

function retitle(f, total) {
	var t = f.name + ' (' + (Math.round(f.w * 1e6) / 1e6) + ' ' + f.unit + ', ' +
		(total > 0 ? 100 * f.w / total : 0).toFixed(2) + '%)';
	f.g.getElementsByTagName('title')[0].textContent = t;
	f.title = t;
}

/* Draw the graph of the window [us1, us2), or of the whole run. */
function setWindow(us1, us2) {
	var i, f, got, doc = document.documentElement;
	if (us1 === null) {
		for (i = 0; i < frames.length; i++) {
			f = frames[i];
			f.x = f.x0;
			f.w = f.w0;
			f.title = f.title0;
			f.g.getElementsByTagName('title')[0].textContent = f.title0;
		}
		strip.sel.setAttribute('display', 'none');
		strip.label.textContent = 'Drag across the strip to see a window';
		doc.removeAttribute('fg:from');
		doc.removeAttribute('fg:to');
		doc.removeAttribute('fg:samples');
	} else {
		got = windowValues(us1, us2);
		for (i = 0; i < frames.length; i++)
			retitle(frames[i], root.w);
		/* in the graph's own unit (a signal of a 250 Hz timer is 4
		 * samples of a 1000 Hz profile), and the timeline's entries */
		strip.label.textContent = 'Window ' + (us1 / 1e6).toFixed(3) + '-' +
			(us2 / 1e6).toFixed(3) + ' s: ' + (Math.round(got.weight * 1e6) / 1e6) +
			' ' + (root.unit || 'samples') + ' (' + got.samples + ' recorded)' +
			(got.samples ? '' : ' (none)') + '; click the strip for the whole run';
		doc.setAttribute('fg:from', String(us1));
		doc.setAttribute('fg:to', String(us2));
		doc.setAttribute('fg:samples', String(got.samples));
	}
	zoom(root);
	search(lastRe);
}

/* Where the pointer is on the strip, in microseconds from the start. */
function pointerUs(e) {
	var pt = document.documentElement.createSVGPoint(), x;
	pt.x = e.clientX;
	pt.y = e.clientY;
	x = pt.matrixTransform(document.documentElement.getScreenCTM().inverse()).x;
	x = Math.max(XPAD, Math.min(XPAD + WIDTH, x));
	return Math.round((x - XPAD) / WIDTH * TL.span);
}

function dragTo(e) {
	var a = Math.min(strip.drag, pointerUs(e)), b = Math.max(strip.drag, pointerUs(e));
	strip.sel.setAttribute('x', usToX(a).toFixed(2));
	strip.sel.setAttribute('width', Math.max(1, usToX(b) - usToX(a)).toFixed(2));
	strip.sel.setAttribute('display', 'inline');
	return [a, b];
}

function initStrip() {
	var h = TL.lanes.length * TL.laneH + TL.rows.length * TL.markH, g, hit;
	g = svgEl('g', { id: 'strip' }, document.documentElement);
	svgEl('rect', { x: XPAD, y: TL.y, width: WIDTH, height: h, fill: '#fafafa',
			stroke: '#999', 'stroke-width': '0.5' }, g);
	drawLanes(g);
	drawMarkers(g);
	strip.label = svgEl('text', { id: 'window', x: XPAD, y: TL.y + h + TL.axisH - 3 }, g);
	svgEl('text', { x: XPAD + WIDTH, y: TL.y + h + TL.axisH - 3, 'text-anchor': 'end' },
	      g).textContent = (TL.span / 1e6).toFixed(3) + ' s';
	strip.sel = svgEl('rect', { id: 'selection', x: XPAD, y: TL.y, width: 1, height: h,
				    fill: 'rgb(40,90,200)', 'fill-opacity': '0.2',
				    stroke: 'rgb(40,90,200)', display: 'none' }, g);
	hit = svgEl('rect', { x: XPAD, y: TL.y, width: WIDTH, height: h, fill: 'transparent',
			      cursor: 'col-resize' }, g);
	hit.addEventListener('mousedown', function (e) {
		strip.drag = pointerUs(e);
		e.preventDefault();
	});
	document.addEventListener('mousemove', function (e) {
		if (strip.drag !== null)
			dragTo(e);
	});
	document.addEventListener('mouseup', function (e) {
		var w;
		if (strip.drag === null)
			return;
		w = dragTo(e);
		strip.drag = null;
		if (usToX(w[1]) - usToX(w[0]) < 2)
			setWindow(null, null);
		else
			setWindow(w[0], w[1]);
	});
	setWindow(null, null);
}

init();
if (typeof TL !== 'undefined')
	initStrip();
