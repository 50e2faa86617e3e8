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
 */
var frames = [], root = null, details = null, unzoom = null, matched = null;
var inverted = false, height = 0, MATCH = 'rgb(230,0,230)';

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
		if (f.level < z.level) {
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
	for (i = 0; i < frames.length; i++) {
		f = frames[i];
		if (f !== root && re && re.test(f.key)) {
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
		(100 * sum / root.w).toFixed(1) + '%' : ' ';
	matched.setAttribute('fg:frames', String(n));
	matched.setAttribute('fg:share', re ? String(sum / root.w) : '0');
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
	var gs = box.getElementsByTagName('g'), i, g, t, f;
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
		f.fill = f.rect.getAttribute('fill');
		g.fgFrame = f;
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
		if (e.key === 'Escape' && root) {
			zoom(root);
			search(null);
		} else if ((e.ctrlKey || e.metaKey) && e.key === 'f') {
			e.preventDefault();
			ask();
		}
	});
}

init();
