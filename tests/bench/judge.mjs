// Quality benchmark (issue 16): how often the embedded model's answer passes every check the app runs
// on a finished page, for a single run, the best of 4 variations and the best of 8, on the same 20
// prompts (tests/fixtures/quality-prompts.json) with fixed seeds, plus the wall time of each: from Run
// to every page checked. The app does all of it as a person would see it (tiles, check frames,
// ranking, Best of N) in headless Chromium against the real gateway and its llama.cpp model.
//   node tests/bench/judge.mjs --out bench/judge.md [--prompts N]   (cargo xtask bench judge)
// To see why pages fail: `--configs 8` runs only best of 8, `--only 3,7` only those prompts (1-based),
// `--dump DIR` writes every stream's text and each checked page's failed checks with their details,
// `--gateway-toml FILE` adds its lines to the embedded model's provider table (to try a system prompt).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { launchBrowser, openFlint, startGateway, startUpstream, waitForStatus } from '../e2e/harness.mjs';

const arg = (name) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : null);
const out = arg('--out');
const allPrompts = JSON.parse(readFileSync(new URL('../fixtures/quality-prompts.json', import.meta.url), 'utf8'));
const only = arg('--only')?.split(',').map(Number);
const prompts = allPrompts.slice(0, Number(arg('--prompts') ?? allPrompts.length));
const CONFIGS = arg('--configs')?.split(',').map(Number) ?? [1, 4, 8];
const dump = arg('--dump');
const SEED = 4_200;
const TIMEOUT_MS = 10 * 60_000;

const upstream = await startUpstream();
// `--gateway-toml FILE`: lines added to the embedded model's [[providers]] table (system_prompt, …).
const extraToml = arg('--gateway-toml') ? readFileSync(arg('--gateway-toml'), 'utf8') : '';
const gateway = await startGateway({ upstreamUrl: upstream.url, toml: extraToml });
const browser = await launchBrowser();

/**
 * Runs `prompt` once (`count` 1) or as best of `count` (the app's Best of N: cooler sampling, the
 * rest stopped once one page passes every check) and reads the checks; the wall time runs from
 * Run to the moment the app names its pick (a single run: its page checked).
 */
async function measure(model, prompt, count, seed) {
  // With --dump, every stream's text as the app receives it (its socket opens before a page
  // listener could be attached, so the page's WebSocket is wrapped instead).
  const record = dump ? `
    const Socket = WebSocket;
    globalThis.__texts = {};
    globalThis.WebSocket = class extends Socket {
      constructor(...args) {
        super(...args);
        this.addEventListener('message', ({ data }) => {
          if (typeof data !== 'string' || !data.includes('"delta"')) return;
          const f = JSON.parse(data);
          if (f.type === 'delta') __texts[f.stream] = (__texts[f.stream] ?? '') + f.text;
        });
      }
    };` : '';
  const { page, context } = await openFlint(browser, gateway.url, '/', { initScript: `globalThis.__flintSeed = ${seed};${record}` });
  await page.getByTestId('variations-count').selectOption(String(count));
  if (count > 1) await page.getByTestId('best-of').check();
  await page.getByTestId('model-picker').selectOption(model);
  await page.getByTestId('prompt-input').fill(prompt);
  const started = Date.now();
  await page.getByTestId('prompt-input').press('Control+Enter');
  const picked = count === 1
    ? '[data-testid="checks-summary"][data-state="done"]'
    : '[data-testid="tile-best"]';
  await page.locator(picked).first().waitFor({ timeout: TIMEOUT_MS });
  const wallMs = Date.now() - started;
  const badge = count === 1 ? picked : '[data-testid="tile-checks"][data-state="done"]';
  const scores = await page.locator(badge).evaluateAll((els) => els.map((el) => [Number(el.dataset.passed), Number(el.dataset.total)]));
  const best = count === 1
    ? scores.some(([p, t]) => p === t)
    : await page.locator('.tile.best [data-testid="tile-checks"]').evaluate((el) => el.dataset.passed === el.dataset.total);
  const stopped = count === 1 ? 0 : await page.locator('[data-testid="variation-tile"][data-status="cancelled"]').count();
  // The checks each checked page failed, by id (a tile's list sits in its badge).
  const lists = count === 1 ? '.checks-bar [data-testid="check-list"]' : `${badge} [data-testid="check-list"]`;
  const failures = await page.locator(lists).evaluateAll((els) => els.map(
    (el) => [...el.querySelectorAll('li[data-passed="false"]')]
      .map((li) => ({ id: li.dataset.check, detail: li.querySelector('.check-detail')?.textContent ?? '' })),
  ));
  const failed = failures.map((page) => page.map((f) => f.id));
  const details = failures.map((page) => page.map((f) => `${f.id}: ${f.detail}`));
  const texts = dump ? Object.values(await page.evaluate(() => globalThis.__texts)) : [];
  await context.close();
  return { wallMs, scores, best, stopped, failed, details, texts };
}

const modelId = await (async () => {
  const { page, context } = await openFlint(browser, gateway.url);
  const id = await page.getByTestId('model-picker').locator('option', { hasText: /smollm2/i }).first().getAttribute('value');
  await context.close();
  return id;
})();

const rows = [];
const totals = Object.fromEntries(CONFIGS.map((n) => [n, { pass: 0, wallMs: 0, pages: 0, failed: {} }]));
for (const [i, prompt] of prompts.entries()) {
  if (only && !only.includes(i + 1)) continue;
  const row = { prompt, index: i, results: {} };
  // Interleaved per prompt, so that each configuration sees the same machine.
  for (const count of CONFIGS) {
    const r = await measure(modelId, prompt, count, SEED + i * 16);
    row.results[count] = r;
    if (dump) {
      const dir = `${dump}/${String(i + 1).padStart(2, '0')}-x${count}`;
      mkdirSync(dir, { recursive: true });
      r.texts.forEach((text, k) => writeFileSync(`${dir}/stream-${k + 1}.txt`, text));
      writeFileSync(`${dir}/failed.txt`, `${r.details.map((d) => d.join('\n')).join('\n---\n')}\n`);
    }
    totals[count].pass += r.best ? 1 : 0;
    totals[count].wallMs += r.wallMs;
    totals[count].pages += r.failed.length;
    for (const id of r.failed.flat()) totals[count].failed[id] = (totals[count].failed[id] ?? 0) + 1;
    console.log(`[${i + 1}/${prompts.length}] ${prompt} ×${count}: ${r.best ? 'pass' : 'fail'} `
      + `${JSON.stringify(r.scores)} stopped ${r.stopped} ${(r.wallMs / 1000).toFixed(1)} s`);
  }
  rows.push(row);
}
await browser.close();
await gateway.stop();
upstream.stop();

const s = (ms) => `${(ms / 1000).toFixed(1)} s`;
// Without a single-run column (--configs) the ratios are against the first column run.
const single = totals[CONFIGS[0]].wallMs;
const label = (n) => (n === 1 ? 'single run' : `best of ${n}`);
let md = `# Judging: answers passing every check, single run vs best of N\n\n`;
md += `- Date: ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC\n`;
md += `- Machine: ${cpus().length} cores, ${cpus()[0]?.model ?? '?'}\n`;
md += `- Command: \`cargo xtask bench judge\` (\`node tests/bench/judge.mjs --out bench/judge.md\`)\n`;
md += `- Model: the embedded model (\`${modelId}\`), the gateway's 8 parallel sequences; seeds ${SEED} + 16 × prompt`
  + ` (+ tile index); a single run uses that seed and the model's default sampling.\n`;
md += `- Checks: the app's own, in each page's hidden check frame (whole document, something shows, the elements the prompt`
  + ` names or implies — a calculator has controls, a login a password field, a clock keeps time —, it is about what was`
  + ` asked, buttons respond, no errors, no failed loads). "Passes" = some page of the run passes all of them.\n`;
md += `- Best of N is the app's mode: tile 1 is the single run (same seed, default sampling), tiles 2… are sampled cooler`
  + ` (0.25–0.6, fixed per tile, so best of 8 runs best of 4's tiles). Once one page passes every check the`
  + ` variations still streaming are stopped; otherwise, once the first page is complete, the rest get 1.5× its time`
  + ` more (5 s at least) and are then stopped ("stopped" below), and the best checked page wins.\n`;
md += `- Wall time: Run pressed → the app names its pick (a single run: its page checked), summed over the prompts.\n\n`;
md += `| run | prompts passing | wall time | ÷ single run |\n|---|---:|---:|---:|\n`;
for (const n of CONFIGS) {
  md += `| ${label(n)} | **${totals[n].pass}/${rows.length}** | ${s(totals[n].wallMs)} | ${(totals[n].wallMs / single).toFixed(2)}× |\n`;
}
md += `\nChecks failed, over every checked page: `
  + CONFIGS.map((n) => `${label(n)} (${totals[n].pages} pages): `
    + (Object.entries(totals[n].failed).sort((a, b) => b[1] - a[1]).map(([id, k]) => `${id} ${k}`).join(', ') || 'none'))
    .join('; ') + '.\n';
md += `\nTarget (issue 16): best of 8 passes ≥ 17 of 20 where a single run passes about half, in ≤ 2.5× a single run's time.\n\n`;
md += `| # | prompt | ${CONFIGS.map(label).join(' | ')} |\n|---:|---|${CONFIGS.map(() => '---').join('|')}|\n`;
for (const row of rows) {
  const i = row.index;
  const cells = CONFIGS.map((n) => {
    const r = row.results[n];
    const scores = r.scores.map(([p, t]) => `${p}/${t}`).join(' ');
    const stopped = r.stopped ? `, ${r.stopped} stopped` : '';
    return `${r.best ? '✓' : '✗'} ${scores} (${s(r.wallMs)}${stopped})`;
  });
  md += `| ${i + 1} | ${row.prompt} | ${cells.join(' | ')} |\n`;
}
console.log(md);
if (out) writeFileSync(out, md);
