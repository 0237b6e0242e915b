// Escape under the microscope: a stream at RATE tok/s is stopped a quarter of the way in; how long
// from the key's event time until "cancelled" was set and painted, the long tasks around it, and
// where the main thread's time went between the key and the paint (CPU profile, self time).
//   node tests/bench/escape.mjs [RATE] [TILES]   (default 10000 tok/s, 1; FLINT_DIST, FLINT_GATEWAY_BIN as for e2e;
//   FLINT_INIT: an init script; FLINT_INITS: a JSON list of them, alternating run by run (the profile sums all);
//   FLINT_BENCH_FIXTURE: the answer streamed, default large, e.g. react-large; INCLUSIVE=1: time per
//   function with its callees too; STACK_OF=name, STACKS=5: the call chains through a function; PRE_MS:
//   the window starts that long before the key, WINDOW_MS: it ends that long after it, not at the paint.
//   The profile's clock is matched to the page's by a marked function's first sample)
import { launchBrowser, openFlint, runPrompt, startGateway, startUpstream } from '../e2e/harness.mjs';

const RATE = Number(process.argv[2] ?? 10_000);
const TILES = Number(process.argv[3] ?? 1);
const RUNS = Number(process.env.FLINT_BENCH_RUNS ?? 5);
const MODEL = `${process.env.FLINT_BENCH_FIXTURE ?? 'large'}@${RATE}`;
const upstream = await startUpstream();
const gateway = await startGateway({ upstreamUrl: upstream.url, models: [MODEL] });
const browser = await launchBrowser();

const totals = new Map();
// INCLUSIVE=1: also each function's time with what it called (who the time was spent for).
const inclusive = new Map();
// STACK_OF=name: the call chains through that function.
const stacks = new Map();
// FLINT_INITS='["", "<script>"]': init scripts alternating run by run, each with its own results.
const INITS = JSON.parse(process.env.FLINT_INITS ?? JSON.stringify([process.env.FLINT_INIT ?? '']));
const results = INITS.map(() => []);
for (let run = 0; run < RUNS * INITS.length; run++) {
  const config = run % INITS.length;
  const { page, context } = await openFlint(browser, gateway.url, '/', { initScript: INITS[config] });
  await page.evaluate(() => window.__flint.editorReady());
  if (TILES > 1) await page.getByTestId('variations-count').selectOption(String(TILES));
  await page.evaluate(() => {
    const probe = { tasks: [], key: null, setAt: null, painted: null };
    window.__esc = probe;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) probe.tasks.push({ at: e.startTime, ms: e.duration });
    }).observe({ type: 'longtask' });
    const status = document.querySelector('[data-testid="stream-status"]');
    addEventListener('keydown', (e) => { if (e.key === 'Escape') probe.key = e.timeStamp; }, true);
    new MutationObserver(() => {
      if (probe.setAt === null && status.textContent.trim() === 'cancelled') {
        probe.setAt = performance.now();
        requestAnimationFrame(() => {
          const c = new MessageChannel();
          c.port1.onmessage = () => { probe.painted = performance.now(); };
          c.port2.postMessage(0);
        });
      }
    }).observe(status, { subtree: true, childList: true, characterData: true });
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  // The profile's clock is matched to the page's by a function that spins 10 ms from a known time:
  // its first sample is when it started (within the 0.2 ms sampling interval).
  const markAt = await page.evaluate(() => {
    const at = performance.now();
    (function flintClockMark() { while (performance.now() - at < 10); })();
    return at;
  });
  await runPrompt(page, `scripted/${MODEL}`, 'a long page');
  await page.waitForFunction(() => {
    const tokens = Number(document.querySelector('[data-testid="metric-tokens"]')?.textContent.replace(/[^\d]/g, ''));
    return tokens >= 2_000;
  }, null, { timeout: 60_000, polling: 'raf' });
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => window.__esc.painted !== null, null, { timeout: 10_000 });
  await page.waitForTimeout(300);
  const { profile } = await cdp.send('Profiler.stop');
  const p = await page.evaluate(() => window.__esc);
  const set = p.setAt - p.key;
  const painted = p.painted - p.key;
  results[config].push(painted);
  const near = p.tasks.filter((t) => t.at + t.ms > p.key - 100 && t.at < p.painted);
  console.log(`run ${run}${INITS.length > 1 ? ` (init ${config})` : ''}: status set +${set.toFixed(1)} ms, painted +${painted.toFixed(1)} ms; long tasks:`,
    near.map((t) => `${(t.at - p.key).toFixed(0)}:+${t.ms.toFixed(0)}`).join(' ') || 'none');
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parents = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parents.set(c, n.id);
  const label = (f) => `${f.functionName || '(anon)'} (${(f.url || '').split('/').pop()}:${f.lineNumber})`;
  let markT = null;
  for (let i = 0, t = 0; i < profile.samples.length && markT === null; i++) {
    t += (profile.timeDeltas[i] ?? 0) / 1000;
    for (let id = profile.samples[i]; id !== undefined; id = parents.get(id)) {
      if (nodes.get(id).callFrame.functionName === 'flintClockMark') markT = t;
    }
  }
  if (markT === null) {
    // Not sampled (rare): the profile's start stands in for the mark, a few ms off.
    console.log(`run ${run}: the clock mark is not in the profile; its time is taken as the profile's start`);
    markT = 0;
  }
  let t = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += (profile.timeDeltas[i] ?? 0) / 1000;
    const at = markAt + (t - markT);
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    if (at < p.key - Number(process.env.PRE_MS ?? 0) || at > (process.env.WINDOW_MS ? p.key + Number(process.env.WINDOW_MS) : p.painted)) continue;
    const f = nodes.get(profile.samples[i])?.callFrame;
    if (!f) continue;
    const key = label(f);
    totals.set(key, (totals.get(key) ?? 0) + ms / (RUNS * INITS.length));
    const seen = new Set();
    for (let id = profile.samples[i]; id !== undefined; id = parents.get(id)) seen.add(label(nodes.get(id).callFrame));
    for (const k of seen) inclusive.set(k, (inclusive.get(k) ?? 0) + ms / (RUNS * INITS.length));
    if (process.env.STACK_OF && [...seen].some((k) => k.startsWith(process.env.STACK_OF))) {
      const chain = [...seen].reverse().map((k) => k.split(' (')[0]).join(' > ');
      stacks.set(chain, (stacks.get(chain) ?? 0) + ms / (RUNS * INITS.length));
    }
  }
  await context.close();
}
for (const [config, painted] of results.entries()) {
  painted.sort((a, b) => a - b);
  const at = (q) => painted[Math.min(painted.length - 1, Math.floor(q * painted.length))].toFixed(1);
  console.log(`${INITS.length > 1 ? `init ${config} (${INITS[config] || 'none'}): ` : ''}Esc → cancelled painted: p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, max ${painted.at(-1).toFixed(1)} ms (${painted.length} runs)`);
}
console.log('self time per run between the key and the paint:');
for (const [k, ms] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${ms.toFixed(1)} ms  ${k}`);
for (const [k, ms] of [...stacks].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.STACKS ?? 5))) console.log(`  ${ms.toFixed(1)} ms  ${k}`);
if (process.env.INCLUSIVE) {
  console.log('inclusive time per run between the key and the paint:');
  for (const [k, ms] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, 45)) console.log(`  ${ms.toFixed(1)} ms  ${k}`);
}
await browser.close();
await gateway.stop();
upstream.stop();
