// Opens a `linsweep report` page in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core) and checks what a reader sees: every figure drawn with a non-zero size and
// every text of it inside its SVG (nothing clipped, with the browser's real fonts) and clear of
// every other text of it (no two label boxes overlap), no element
// wider than the page at two window widths (a wide table scrolls inside its own box), no table
// cell that breaks inside a word or number, the findings summary before anything else of the
// page's main part, every figure of the kinds given with --intervals drawing its intervals, no
// console error, no request that leaves the file system, every contents link landing on an
// element and every relative link on a file. Saves a full-page screenshot and one of the first
// figure of each given kind.
//
// Usage: node browser_check.mjs INDEX_HTML OUT_DIR [--intervals=PREFIX,...] [FIGURE_ID_PREFIX ...]
// Prints one JSON line of counts; exits 1 with the problems listed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const [index, outDir, ...rest] = process.argv.slice(2);
const intervalKinds = rest.filter((a) => a.startsWith('--intervals=')).flatMap((a) => a.slice(12).split(',').filter(Boolean));
const shots = rest.filter((a) => !a.startsWith('--'));
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
    const clipped = [], overlaps = [], labels = [];
    if (svg) {
      for (const t of svg.querySelectorAll('text')) {
        const r = t.getBoundingClientRect();
        if (r.width === 0 || t.textContent.trim() === '') continue;
        if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
          clipped.push(t.textContent);
        labels.push({ text: t.textContent, r });
      }
      // Two texts overlap when their boxes share more than half a pixel both ways.
      for (let i = 0; i < labels.length; i++)
        for (let j = i + 1; j < labels.length; j++) {
          const a = labels[i].r, b = labels[j].r;
          const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
          const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
          if (w > 0.5 && h > 0.5) overlaps.push(`"${labels[i].text}" and "${labels[j].text}"`);
        }
    }
    const intervals = svg ? [...svg.querySelectorAll('.interval')].filter((e) => {
      const r = e.getBoundingClientRect();
      return r.width > 0 || r.height > 0;
    }).length : 0;
    return { id: f.id, width: box.width, height: box.height, clipped, overlaps, labels: labels.length, intervals };
  }));
  let labelBoxes = 0;
  for (const f of figures) {
    if (!(f.width > 0 && f.height > 0)) problems.push(`figure ${f.id} has size ${f.width}×${f.height}`);
    for (const t of f.clipped) problems.push(`figure ${f.id}: text "${t}" runs outside the figure`);
    for (const o of f.overlaps) problems.push(`figure ${f.id}: labels ${o} overlap`);
    labelBoxes += f.labels;
  }
  let withIntervals = 0;
  for (const prefix of intervalKinds) {
    const kind = figures.filter((f) => f.id.startsWith(prefix));
    if (kind.length === 0) problems.push(`no figure whose id starts with ${prefix} (--intervals)`);
    for (const f of kind) {
      if (f.intervals === 0) problems.push(`figure ${f.id} draws no interval although its data have them`);
      else withIntervals++;
    }
  }

  // The findings come first: before the contents, every table and every figure.
  const order = await page.evaluate(() => {
    const main = document.querySelector('main');
    const first = main ? main.querySelector('section, nav') : null;
    const findings = document.getElementById('findings');
    const before = (a, b) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
    const late = findings ? [...document.querySelectorAll('main figure, main table')]
      .filter((e) => !findings.contains(e) && !before(findings, e)).length : -1;
    return { first: first ? first.id : null, late, rows: findings ? findings.querySelectorAll('tbody tr').length : 0 };
  });
  if (order.first !== 'findings') problems.push(`the page's main part opens with #${order.first}, not the findings`);
  if (order.late > 0) problems.push(`${order.late} tables or figures come before the findings`);

  // No cell breaks inside a word or a number: every whitespace-separated piece of a cell's
  // text lies on one line (one client rectangle, or several on the same line).
  const broken = await page.evaluate(() => {
    const out = [];
    for (const cell of document.querySelectorAll('td, th')) {
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const re = /\S+/g;
        for (let m = re.exec(node.data); m; m = re.exec(node.data)) {
          const range = document.createRange();
          range.setStart(node, m.index);
          range.setEnd(node, m.index + m[0].length);
          const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
          if (tops.size > 1) out.push(m[0]);
        }
      }
    }
    return out;
  });
  for (const w of broken.slice(0, 20)) problems.push(`a table cell breaks inside "${w}"`);

  const overflows = async (width) => {
    await page.setViewportSize({ width, height: 900 });
    return page.evaluate(() => {
      const limit = document.documentElement.clientWidth + 0.5;
      const out = [];
      if (document.documentElement.scrollWidth > document.documentElement.clientWidth)
        out.push(`the page scrolls sideways (${document.documentElement.scrollWidth} > ${document.documentElement.clientWidth})`);
      for (const e of document.body.querySelectorAll('*')) {
        if (e.closest('svg') && e.tagName.toLowerCase() !== 'svg') continue;  // inside a figure: checked above
        if (e.parentElement && e.parentElement.closest('div.wide')) continue;  // scrolls inside its box, checked
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
  console.log(JSON.stringify({ figures: figures.length, label_boxes: labelBoxes, with_intervals: withIntervals,
                               findings_rows: order.rows,
                               anchors, files, screenshots: saved, problems: problems.length }));
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
if (problems.length) {
  for (const p of problems) console.error('browser_check: ' + p);
  process.exit(1);
}
