// Writes tests/fixtures/vision/: for each layout of vision-layouts.mjs, the mock's page
// (mock.html), its picture (mock.png, Chromium's screenshot at 800 px wide, 256 colours) and four candidate
// pages: `match.html` (the same layout in another font, other words, shifted a few px) and three
// wrong ones (the layout's other scheme, and two other layouts written like the match).
//   node tests/bench/vision-fixtures.mjs     (run once; the fixtures are committed)
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { launchBrowser } from '../e2e/harness.mjs';
import { LAYOUTS } from './vision-layouts.mjs';
import { indexedPng } from './vision-png.mjs';

const DIR = resolve(import.meta.dirname, '../fixtures/vision');
const WIDTH = 800;
const SANS = '"DejaVu Sans",Arial,sans-serif';
const SERIF = '"DejaVu Serif",Georgia,serif';
const names = Object.keys(LAYOUTS);

const browser = await launchBrowser();
const page = await browser.newPage({ viewport: { width: WIDTH, height: 600 } });
for (const [i, name] of names.entries()) {
  const dir = join(DIR, `${String(i + 1).padStart(2, '0')}-${name}`);
  mkdirSync(dir, { recursive: true });
  const mock = LAYOUTS[name]({ font: SANS, words: 0, dx: 0, alt: false });
  const written = {
    'mock.html': mock,
    'match.html': LAYOUTS[name]({ font: SERIF, words: 1, dx: 6, alt: false }),
    'wrong-scheme.html': LAYOUTS[name]({ font: SANS, words: 1, dx: 0, alt: true }),
    'wrong-other.html': LAYOUTS[names[(i + 3) % names.length]]({ font: SERIF, words: 1, dx: 0, alt: false }),
    'wrong-third.html': LAYOUTS[names[(i + 7) % names.length]]({ font: SANS, words: 0, dx: 6, alt: false }),
  };
  for (const [file, html] of Object.entries(written)) writeFileSync(join(dir, file), html);
  await page.setContent(mock);
  // Cut at 800 px: a layout that overflows sideways is still an 800 px picture.
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  const shot = await page.screenshot({ fullPage: true, clip: { x: 0, y: 0, width: WIDTH, height } });
  // Back through a canvas for its pixels, then written with a palette (see vision-png.mjs).
  const { width, height: tall, rgba } = await page.evaluate(async (url) => {
    const image = new Image();
    image.src = url;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = image.width;
    canvas.height = image.height;
    const context = canvas.getContext('2d');
    context.drawImage(image, 0, 0);
    const bytes = context.getImageData(0, 0, image.width, image.height).data;
    let binary = '';
    for (let i = 0; i < bytes.length; i += 32768) binary += String.fromCharCode(...bytes.subarray(i, i + 32768));
    return { width: image.width, height: image.height, rgba: btoa(binary) };
  }, `data:image/png;base64,${shot.toString('base64')}`);
  writeFileSync(join(dir, 'mock.png'), indexedPng(width, tall, Buffer.from(rgba, 'base64')));
  console.log(`${dir}: mock.png ${statSync(join(dir, 'mock.png')).size} bytes`);
}
await browser.close();
