// Opens a shootout HTML page in headless Chromium like a user would and
// checks it at 1400 px and at 390 px wide: no console errors, dialogs or
// network requests; exactly the one inline script (admitted by the CSP's
// hash, so a CSP violation shows as a console error); every chart present
// and non-empty; no two text boxes of a chart intersecting; no sideways
// scrolling of the page; on a report and the results site's index, at
// least one scenario's whole ranking drawn on the first screen (every
// row's bar, its whiskers and tie bands); hovering the first bar of every ranked chart shows a tooltip; a sortable table sorts on click; the first "hide"
// switch hides that target from every chart; printing leaves the switches
// and toggles out and fits the width. Saves what a visitor sees first at
// each width.
// Usage: node check.mjs PAGE.html SCREENSHOT_PREFIX EXPECTED_CHARTS [TEXT_THAT_MUST_SHOW]
// Screenshots: PREFIX-1400.png (1400 x 900) and PREFIX-390.png (390 x 844),
// the first screen of each. With SHOOTOUT_FULL_PAGE=1 also
// PREFIX-full-1400.png and PREFIX-full-390.png (whole pages) and
// PREFIX-top.png (the top down to the end of the first chart, the README's
// picture): a whole page of a thirteen-target report takes Chromium about
// 20 s to raster, so the fixture pages do without.
// Each width is loaded afresh from about:blank: resizing a loaded page of
// that size re-lays it out for about 15 s.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [htmlPath, pngPrefix, expectedArg, mustShow] = process.argv.slice(2);
const expected = Number(expectedArg);
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shootout-chromium-'));
const problems = [];
const url = pathToFileURL(path.resolve(htmlPath)).href;
const fullPage = process.env.SHOOTOUT_FULL_PAGE === '1';
const SCREENS = { 390: 844, 1400: 900 };

const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 390, height: SCREENS[390] },
});
context.on('request', (r) => {
  if (r.url() !== url && r.url() !== 'about:blank') problems.push(`network request: ${r.url()}`);
});

// Every pair of text boxes (one per line of each text node, SVG text
// included) of two different texts inside one chart, or one ranking of
// the first screen, that intersect by more than a pixel.
function overlaps() {
  const found = [];
  for (const fig of document.querySelectorAll('figure.chart, figure.glance-rank')) {
    const boxes = [];
    const walker = document.createTreeWalker(fig, NodeFilter.SHOW_TEXT);
    let node = 0;
    for (let n = walker.nextNode(); n; n = walker.nextNode(), node++) {
      if (!n.textContent.trim()) continue;
      const el = n.parentElement;
      if (el.closest('.tip')) continue; // tooltips are meant to float over the chart
      const range = document.createRange();
      range.selectNodeContents(n);
      for (const r of range.getClientRects()) {
        if (r.width > 0.5 && r.height > 0.5) boxes.push({ r, node, text: n.textContent.trim().slice(0, 30) });
      }
    }
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        if (boxes[i].node === boxes[j].node) continue; // one text's own pieces (an elided name)
        const a = boxes[i].r; const b = boxes[j].r;
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 1 && h > 1) found.push(`${fig.id}: "${boxes[i].text}" overlaps "${boxes[j].text}"`);
      }
    }
  }
  return found;
}

async function checkWidth(page, width) {
  await page.goto('about:blank');
  await page.setViewportSize({ width, height: SCREENS[width] });
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForTimeout(200);
  const charts = await page.$$eval('figure.chart', (figs) => figs.map((f) => {
    const box = f.getBoundingClientRect();
    return {
      id: f.id,
      width: box.width,
      height: box.height,
      marks: f.querySelectorAll('svg rect, svg path, svg polyline, svg line, svg circle, svg polygon, .bar').length,
      texts: f.querySelectorAll('svg text, .name, .val, .ticks span').length,
    };
  }));
  if (charts.length !== expected) problems.push(`${width}px: expected ${expected} charts, found ${charts.length}`);
  for (const c of charts) {
    if (c.width < Math.min(200, width - 40) || c.height < 60) problems.push(`${width}px: chart ${c.id} is too small: ${c.width}x${c.height}`);
    if (c.marks < 1) problems.push(`${width}px: chart ${c.id} draws nothing`);
    if (c.texts < 2) problems.push(`${width}px: chart ${c.id} has only ${c.texts} labels`);
  }
  if (new Set(charts.map((c) => c.id)).size !== charts.length) problems.push('chart ids are not unique');
  for (const o of await page.evaluate(overlaps)) problems.push(`${width}px: ${o}`);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  if (wide > 0) problems.push(`${width}px: the page scrolls sideways by ${wide}px`);
  // Hover the first bar of every ranked chart: its tooltip must show.
  const firstRows = await page.$$('figure.chart .rows .row:first-child');
  for (const row of firstRows) {
    await row.scrollIntoViewIfNeeded();
    await row.hover();
    const tip = await row.$eval('.tip', (t) => {
      const r = t.getBoundingClientRect();
      return { shown: getComputedStyle(t).display !== 'none' && r.width > 20 && r.height > 10, text: t.innerText };
    });
    // A ranked bar's tip names its CI and repetitions; a cost bar's its
    // interval and starts.
    if (!tip.shown || !/CI|repetition|interval|start/.test(tip.text)) {
      const id = await row.evaluate((r) => r.closest('figure').id);
      problems.push(`${width}px: hovering the first bar of ${id} shows no tooltip`);
    }
  }
  await page.mouse.move(0, 0);
  // What a visitor sees first at this width: on a report, at least one
  // scenario's whole ranking drawn (every row, its whiskers, its tie bands).
  await page.evaluate(() => window.scrollTo(0, 0));
  const first = await page.evaluate(() => {
    if (!document.querySelector('figure.glance-rank')) return null; // a report or the site's index, not a trend page
    const seen = [];
    for (const f of document.querySelectorAll('figure.glance-rank')) {
      const r = f.getBoundingClientRect();
      const whole = r.top >= 0 && r.bottom <= window.innerHeight && r.width > 200;
      const rows = f.querySelectorAll('.g').length;
      const drawn = [...f.querySelectorAll('.gbar')].filter((b) => b.getBoundingClientRect().width > 0).length;
      const ok = whole && rows === Number(f.dataset.rows) && drawn === rows
        && f.querySelectorAll('.gci').length === Number(f.dataset.ci)
        && (Number(f.dataset.ties) === 0 || f.querySelectorAll('.band.tied').length > 0);
      seen.push({ id: f.id, whole, rows, drawn, ok });
    }
    return seen;
  });
  if (first !== null && !first.some((f) => f.ok)) {
    problems.push(`${width}px: no whole ranking drawn on the first screen: ${JSON.stringify(first)}`);
  }
  await page.screenshot({ path: `${pngPrefix}-${width}.png`, timeout: 60000 });
  if (fullPage) await page.screenshot({ path: `${pngPrefix}-full-${width}.png`, fullPage: true, timeout: 180000 });
  return charts.length;
}

let count = 0;
try {
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e}`));
  page.on('dialog', async (d) => { problems.push(`dialog opened: ${d.message()}`); await d.dismiss(); });

  await checkWidth(page, 390);
  count = await checkWidth(page, 1400);
  const scripts = await page.$$eval('script', (s) => s.length);
  if (scripts !== 1) problems.push(`${scripts} script elements in the page, expected the one sorting script`);
  if (mustShow) {
    const text = await page.evaluate(() => document.body.innerText);
    if (!text.includes(mustShow)) problems.push(`the text ${JSON.stringify(mustShow)} is not shown`);
  }
  if (fullPage) {
    // The top of the page down to the end of its first chart: the README's picture.
    const end = await page.evaluate(() => {
      const f = document.querySelector('figure.chart');
      return f ? Math.min(f.getBoundingClientRect().bottom + window.scrollY + 16, 2400) : 900;
    });
    await page.screenshot({ path: `${pngPrefix}-top.png`, fullPage: true, clip: { x: 0, y: 0, width: 1400, height: end }, timeout: 180000 });
  }

  // A sortable table sorts: its first column, clicked twice, ends descending.
  const sortable = await page.$('table.sortable');
  if (sortable) {
    const th = await sortable.$('thead th');
    await th.click();
    await th.click();
    const firsts = await sortable.$$eval('tbody tr', (rows) => rows.map((r) => r.cells[0].textContent.trim()));
    const sorted = [...firsts].sort((a, b) => b.toLowerCase().localeCompare(a.toLowerCase()));
    if (JSON.stringify(firsts) !== JSON.stringify(sorted)) problems.push(`a sortable table did not sort: ${firsts}`);
  }
  // The first "hide" switch hides its target from every chart.
  const hide = await page.$('.switches input');
  if (hide) {
    const cls = `figure.chart .t${(await hide.getAttribute('id')).replace('hide-', '')}`;
    const visible = () => page.$$eval(cls, (e) => e.filter((x) => x.getClientRects().length > 0).length);
    const before = await visible();
    await hide.check();
    const after = await visible();
    if (before === 0 || after !== 0) problems.push(`hiding ${cls} left ${after} of ${before} marks visible`);
    await hide.uncheck();
  }

  // Print: the switches and toggles are screen-only, and nothing is cut off sideways.
  await page.emulateMedia({ media: 'print' });
  const printed = await page.evaluate(() => ({
    controls: [...document.querySelectorAll('.switches, .axis-toggle')].filter((e) => e.getClientRects().length > 0).length,
    wide: document.documentElement.scrollWidth - document.documentElement.clientWidth,
  }));
  if (printed.controls > 0) problems.push(`print: ${printed.controls} switches or toggles are printed`);
  if (printed.wide > 0) problems.push(`print: the page is ${printed.wide}px wider than the paper`);
  await page.emulateMedia({ media: 'screen' });
  console.log(JSON.stringify({ charts: count, screenshots: [`${pngPrefix}-1400.png`, `${pngPrefix}-390.png`], problems }, null, 1));
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
process.exit(problems.length === 0 ? 0 : 1);
