// Opens a `linsweep report` page in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core) and checks what a reader sees: every figure drawn with a non-zero size and
// every text of it inside its SVG (nothing clipped, with the browser's real fonts), no element
// wider than the page at two window widths, no console error, no request that leaves the file
// system, every contents link landing on an element and every relative link on a file. Saves a
// full-page screenshot and one of the first figure of each given kind.
//
// Usage: node browser_check.mjs INDEX_HTML OUT_DIR [FIGURE_ID_PREFIX ...]
// Prints one JSON line of counts; exits 1 with the problems listed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const [index, outDir, ...shots] = process.argv.slice(2);
const problems = [];
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'linsweep-chromium-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 900 },
});
try {
  const page = context.pages()[0] ?? await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (!/^(file|data):/.test(r.url())) problems.push(`request leaves the file system: ${r.url()}`);
  });
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
  await page.goto('file://' + path.resolve(index), { waitUntil: 'load' });
  await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; }));

  const figures = await page.evaluate(() => [...document.querySelectorAll('figure')].map((f) => {
    const svg = f.querySelector('svg');
    const box = svg ? svg.getBoundingClientRect() : { width: 0, height: 0 };
    const clipped = [];
    if (svg) {
      for (const t of svg.querySelectorAll('text')) {
        const r = t.getBoundingClientRect();
        if (r.width === 0 || t.textContent.trim() === '') continue;
        if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
          clipped.push(t.textContent);
      }
    }
    return { id: f.id, width: box.width, height: box.height, clipped };
  }));
  for (const f of figures) {
    if (!(f.width > 0 && f.height > 0)) problems.push(`figure ${f.id} has size ${f.width}×${f.height}`);
    for (const t of f.clipped) problems.push(`figure ${f.id}: text "${t}" runs outside the figure`);
  }

  const overflows = async (width) => {
    await page.setViewportSize({ width, height: 900 });
    return page.evaluate(() => {
      const limit = document.documentElement.clientWidth + 0.5;
      const out = [];
      if (document.documentElement.scrollWidth > document.documentElement.clientWidth)
        out.push(`the page scrolls sideways (${document.documentElement.scrollWidth} > ${document.documentElement.clientWidth})`);
      for (const e of document.body.querySelectorAll('*')) {
        if (e.closest('svg') && e.tagName.toLowerCase() !== 'svg') continue;  // inside a figure: checked above
        const r = e.getBoundingClientRect();
        if (r.width > 0 && (r.right > limit || r.left < -0.5))
          out.push(`<${e.tagName.toLowerCase()}${e.id ? ' id=' + e.id : ''}> spans ${r.left.toFixed(0)}..${r.right.toFixed(0)}`);
      }
      return out.slice(0, 20);
    });
  };
  for (const width of [1280, 800])
    for (const o of await overflows(width)) problems.push(`at ${width} px: ${o}`);
  await page.setViewportSize({ width: 1280, height: 900 });

  const links = await page.evaluate(() => [...document.querySelectorAll('a[href]')].map((a) => a.getAttribute('href')));
  let anchors = 0, files = 0;
  for (const href of links) {
    if (href.startsWith('#')) {
      anchors++;
      const found = await page.evaluate((id) => document.getElementById(id) !== null, decodeURIComponent(href.slice(1)));
      if (!found) problems.push(`contents link ${href} lands nowhere`);
    } else {
      files++;
      if (!fs.existsSync(path.join(path.dirname(index), href))) problems.push(`link ${href} names no file`);
    }
  }

  fs.mkdirSync(outDir, { recursive: true });
  await page.screenshot({ path: path.join(outDir, 'report-full.png'), fullPage: true });
  const saved = ['report-full.png'];
  await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = false; }));
  const top = path.join(outDir, 'report-top.png');
  await page.screenshot({ path: top, clip: { x: 0, y: 0, width: 1280, height: 900 } });
  saved.push(path.basename(top));
  for (const prefix of shots) {
    const f = figures.find((x) => x.id.startsWith(prefix));
    if (!f) { problems.push(`no figure whose id starts with ${prefix}`); continue; }
    const name = `${f.id}.png`;
    await page.locator(`#${f.id}`).screenshot({ path: path.join(outDir, name) });
    saved.push(name);
  }
  console.log(JSON.stringify({ figures: figures.length, anchors, files, screenshots: saved, problems: problems.length }));
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
if (problems.length) {
  for (const p of problems) console.error('browser_check: ' + p);
  process.exit(1);
}
