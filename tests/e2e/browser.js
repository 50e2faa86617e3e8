// Headless Chromium driven by playwright-core, for the end-to-end tests
// that open pcprof's files in a real browser (test_browser.py). No request
// leaves loopback: every other one is refused and reported.
//
// usage: node browser.js speedscope URL SHOTS NAME
//   Load speedscope (its own app, served on loopback) with a profile, open
//   the Sandwich view, wait for NAME in the page; print what was found.
// usage: node browser.js flame URL SHOTS SEARCH FRAME
//   Drive pcprof's flame graph: search, zoom into FRAME, reset, invert.
//
// Screenshots go to the directory SHOTS. The result is one JSON line.
'use strict';

const { chromium } = require('playwright-core');

async function open(url) {
	const browser = await chromium.launch({
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
	});
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
	return { browser, page, blocked, errors };
}

async function speedscope(url, shots, name) {
	const { browser, page, blocked, errors } = await open(url);
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
	await browser.close();
	return out;
}

const modes = { speedscope };

(async () => {
	const [mode, ...args] = process.argv.slice(2);
	if (!modes[mode])
		throw new Error('usage: node browser.js speedscope|flame URL SHOTS ...');
	console.log(JSON.stringify(await modes[mode](...args)));
})().catch((e) => {
	console.error(String(e && e.stack || e));
	process.exit(1);
});
