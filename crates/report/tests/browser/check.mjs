// Opens a shootout HTML report in headless Chromium like a user would and
// checks it: no console errors, no dialogs, no network requests, no script
// elements, every chart present and non-empty; saves a full-page screenshot.
// Usage: node check.mjs REPORT.html SCREENSHOT.png EXPECTED_CHARTS [TEXT_THAT_MUST_SHOW]
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [htmlPath, pngPath, expectedArg, mustShow] = process.argv.slice(2);
const expected = Number(expectedArg);
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shootout-chromium-'));
const problems = [];

const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1200, height: 900 },
});
try {
  const page = await context.newPage();
  const url = pathToFileURL(path.resolve(htmlPath)).href;
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e}`));
  page.on('dialog', async (d) => { problems.push(`dialog opened: ${d.message()}`); await d.dismiss(); });
  context.on('request', (r) => { if (r.url() !== url) problems.push(`network request: ${r.url()}`); });
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForTimeout(300);

  const charts = await page.$$eval('figure.chart', (figs) => figs.map((f) => {
    const svg = f.querySelector('svg');
    const box = svg ? svg.getBoundingClientRect() : { width: 0, height: 0 };
    return {
      id: f.id,
      width: box.width,
      height: box.height,
      shapes: svg ? svg.querySelectorAll('rect, path, polyline, line, circle, polygon').length : 0,
      texts: svg ? svg.querySelectorAll('text').length : 0,
    };
  }));
  if (charts.length !== expected) problems.push(`expected ${expected} charts, found ${charts.length}`);
  for (const c of charts) {
    if (c.width < 200 || c.height < 150) problems.push(`chart ${c.id} is too small: ${c.width}x${c.height}`);
    if (c.shapes < 5) problems.push(`chart ${c.id} has only ${c.shapes} shapes`);
    if (c.texts < 3) problems.push(`chart ${c.id} has only ${c.texts} labels`);
  }
  const ids = new Set(charts.map((c) => c.id));
  if (ids.size !== charts.length) problems.push('chart ids are not unique');
  const scripts = await page.$$eval('script', (s) => s.length);
  if (scripts !== 0) problems.push(`${scripts} script element(s) in the page`);
  if (mustShow) {
    const text = await page.evaluate(() => document.body.innerText);
    if (!text.includes(mustShow)) problems.push(`the text ${JSON.stringify(mustShow)} is not shown`);
  }
  await page.screenshot({ path: pngPath, fullPage: true });
  console.log(JSON.stringify({ charts: charts.length, screenshot: pngPath, problems }, null, 1));
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
process.exit(problems.length === 0 ? 0 : 1);
