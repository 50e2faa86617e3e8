// SPDX-License-Identifier: BSD-2-Clause
// Headless Chromium driven by playwright-core, for the end-to-end tests
// that open pcprof's files in a real browser (test_browser.py). No request
// leaves loopback: every other one is refused and reported.
//
// usage: node browser.js speedscope URL SHOTS NAME
//   Load speedscope (its own app, served on loopback) with a profile, open
//   the Sandwich view, wait for NAME in the page; print what was found.
// usage: node browser.js flame URL SHOTS SEARCH FRAME
//   Drive pcprof's flame graph: search, zoom into FRAME, reset, invert.
// usage: node browser.js strip URL SHOTS MARKER K
//   Drag across the flame graph's time strip over the Kth marker named
//   MARKER; the graph's state then, and after a click on the strip.
// usage: node browser.js paint URL SHOTS
//   Load a page; how long it took, its paint times, its frames.
// usage: node browser.js serve
//   One browser for many pages: each line of stdin a JSON array of one
//   of the above's arguments (mode first), each answer one JSON line.
//   It ends at the end of stdin, or after a minute with no page asked.
//
// Screenshots go to the directory SHOTS. The result is one JSON line.
'use strict';

const { chromium } = require('playwright-core');

function launch() {
	return chromium.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
	});
}

/* A page of its own context (its own storage and cookies) in browser. */
async function open(browser, url) {
	const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
	const blocked = [];
	await context.route('**/*', (route) => {
		const u = new URL(route.request().url());
		if (u.protocol === 'data:' || u.protocol === 'blob:' || u.protocol === 'file:' ||
		    u.hostname === '127.0.0.1' || u.hostname === 'localhost')
			return route.continue();
		blocked.push(u.href);
		return route.abort();
	});
	const page = await context.newPage();
	const errors = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.goto(url);
	return { context, page, blocked, errors };
}

async function speedscope(browser, url, shots, name) {
	const { context, page, blocked, errors } = await open(browser, url);
	const out = { blocked, errors };
	// loaded: the view tabs are there
	await page.waitForFunction(() => document.body.innerText.includes('Sandwich'), null,
				   { timeout: 60000 });
	await page.screenshot({ path: shots + '/speedscope-time-order.png' });
	await page.getByText('Sandwich', { exact: false }).first().click();
	await page.waitForFunction((n) => document.body.innerText.includes(n), name,
				   { timeout: 60000 });
	await page.screenshot({ path: shots + '/speedscope-sandwich.png' });
	out.text = await page.evaluate(() => document.body.innerText);
	out.found = out.text.includes(name);
	out.title = await page.title();
	await context.close();
	return out;
}

/* The state of pcprof's flame graph, read from its DOM. */
function flameState() {
	const fr = [...document.querySelectorAll('#frames g')].map((g) => {
		const r = g.querySelector('rect');
		const t = g.querySelector('title').textContent;
		return {
			name: t.substring(0, t.lastIndexOf(' (')),
			shown: g.getAttribute('display') !== 'none',
			x: parseFloat(r.getAttribute('x')),
			y: parseFloat(r.getAttribute('y')),
			w: parseFloat(r.getAttribute('width')),
			fill: r.getAttribute('fill'),
			match: g.getAttribute('fg:match') === '1',
			value: parseFloat(t.substring(t.lastIndexOf(' (') + 2)),
			level: parseInt(g.getAttribute('fg:l'), 10),
		};
	});
	const m = document.getElementById('matched');
	const u = document.getElementById('unzoom');
	return {
		frames: fr,
		matched: m.textContent,
		matchedFrames: m.getAttribute('fg:frames'),
		matchedShare: m.getAttribute('fg:share'),
		unzoom: u.getAttribute('display'),
		inverted: document.documentElement.getAttribute('fg:inverted'),
	};
}

async function clickFrame(page, name) {
	const box = await page.evaluate((n) => {
		for (const g of document.querySelectorAll('#frames g')) {
			const t = g.querySelector('title').textContent;
			if (t.substring(0, t.lastIndexOf(' (')) === n) {
				const b = g.querySelector('rect').getBoundingClientRect();
				return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
			}
		}
		return null;
	}, name);
	if (!box)
		throw new Error('no frame ' + name);
	await page.mouse.click(box.x, box.y);
}

async function flame(browser, url, shots, term, frame) {
	const { context, page, blocked, errors } = await open(browser, url);
	const out = { blocked, errors, steps: {} };
	const t0 = Date.now();
	await page.waitForSelector('#frames g');
	out.loadedMs = Date.now() - t0;
	out.paint = await page.evaluate(() => {
		const p = performance.getEntriesByType('paint');
		return p.map((e) => ({ name: e.name, ms: e.startTime }));
	});
	page.once('dialog', (d) => d.accept(term));
	await page.click('#search');
	await page.waitForFunction(() => document.getElementById('matched').getAttribute('fg:frames'));
	out.steps.search = await page.evaluate(flameState);
	await page.screenshot({ path: shots + '/flame-search.png' });
	await clickFrame(page, frame);
	out.steps.zoom = await page.evaluate(flameState);
	await page.screenshot({ path: shots + '/flame-zoom.png' });
	await page.click('#unzoom');
	out.steps.reset = await page.evaluate(flameState);
	await page.click('#invert');
	out.steps.invert = await page.evaluate(flameState);
	await page.screenshot({ path: shots + '/flame-inverted.png' });
	await context.close();
	return out;
}

/* The flame graph's time strip: a drag over a marker, then a click. */
async function strip(browser, url, shots, name, k) {
	const { context, page, blocked, errors } = await open(browser, url);
	const out = { blocked, errors, steps: {} };
	await page.waitForSelector('#strip .marker');
	const boxes = await page.evaluate((n) =>
		[...document.querySelectorAll('#strip .marker')]
			.filter((g) => g.getAttribute('fg:name') === n)
			.map((g) => {
				const b = g.querySelector('rect').getBoundingClientRect();
				return { x1: b.x, x2: b.x + b.width, y: b.y + b.height / 2,
					 start: +g.getAttribute('fg:start'),
					 end: +g.getAttribute('fg:end') };
			}), name);
	out.markers = boxes;
	const b = boxes[+k];
	if (!b)
		throw new Error('no marker ' + name + ' ' + k);
	out.steps.whole = await page.evaluate(flameState);
	await page.mouse.move(b.x1, b.y);
	await page.mouse.down();
	await page.mouse.move((b.x1 + b.x2) / 2, b.y, { steps: 4 });
	await page.mouse.move(b.x2, b.y, { steps: 4 });
	await page.mouse.up();
	out.steps.window = await page.evaluate(flameState);
	out.window = await page.evaluate(() => {
		const d = document.documentElement;
		return { from: d.getAttribute('fg:from'), to: d.getAttribute('fg:to'),
			 samples: d.getAttribute('fg:samples'),
			 label: document.getElementById('window').textContent };
	});
	await page.screenshot({ path: shots + '/flame-strip-window.png' });
	await page.mouse.click(b.x1, b.y);
	out.steps.back = await page.evaluate(flameState);
	out.backFrom = await page.evaluate(() => document.documentElement.getAttribute('fg:from'));
	await page.screenshot({ path: shots + '/flame-strip-whole.png' });
	await context.close();
	return out;
}

/* When the browser was launched (or serve's job came): paint's start. */
let since = Date.now();

/* How long a page takes to load and paint (bench/export.py), from the
   browser's launch. */
async function paint(browser, url, shots) {
	const t0 = since;
	const { context, page, blocked, errors } = await open(browser, url);
	const out = { blocked, errors };
	await page.waitForLoadState('load');
	out.loadedMs = Date.now() - t0;
	out.paint = await page.evaluate(() =>
		performance.getEntriesByType('paint').map((e) => ({ name: e.name, ms: e.startTime })));
	out.frames = await page.evaluate(() => document.querySelectorAll('#frames g').length);
	await page.screenshot({ path: shots + '/paint.png' });
	await context.close();
	return out;
}

const modes = { speedscope, flame, strip, paint };

async function one(browser, mode, args) {
	if (!modes[mode])
		throw new Error('no mode ' + mode);
	return modes[mode](browser, ...args);
}

/* serve: one browser for many pages. Each line of stdin is a JSON array,
   a mode and its arguments; each answer is one JSON line, the mode's
   result or { error }. The browser closes at the end of stdin. */
async function serve(browser) {
	const rl = require('readline');
	const lines = rl.createInterface({ input: process.stdin });
	// idle for a minute: no more pages are coming (a caller that asks
	// again after that starts another browser)
	let timer;
	const idle = () => { timer = setTimeout(() => lines.close(), 60000); };
	idle();
	for await (const line of lines) {
		clearTimeout(timer);
		let out;
		try {
			const [mode, ...args] = JSON.parse(line);
			since = Date.now();
			out = await one(browser, mode, args);
		} catch (e) {
			out = { error: String(e && e.stack || e) };
		}
		console.log(JSON.stringify(out));
		idle();
	}
	clearTimeout(timer);
}

(async () => {
	const [mode, ...args] = process.argv.slice(2);
	if (mode !== 'serve' && !modes[mode])
		throw new Error('usage: node browser.js ' +
				'speedscope|flame|strip|paint|serve URL SHOTS ...');
	since = Date.now();
	const browser = await launch();
	try {
		if (mode === 'serve')
			await serve(browser);
		else
			console.log(JSON.stringify(
				await one(browser, mode, args)));
	} finally {
		await browser.close();
	}
})().catch((e) => {
	console.error(String(e && e.stack || e));
	process.exit(1);
});
