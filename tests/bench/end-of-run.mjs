// The end of one run, under the microscope: every long task from a second before "done" to two
// seconds after (its start relative to the status turning "done"), how long "done" took to paint,
// and where the main thread's time went in that window (CPU profile, self time per function).
//   node tests/bench/end-of-run.mjs [RATE]      (default 10000 tok/s; FLINT_DIST, FLINT_GATEWAY_BIN as for e2e)
import { launchBrowser, openFlint, runPrompt, startGateway, startUpstream, waitForStatus } from '../e2e/harness.mjs';

const RATE = Number(process.argv[2] ?? 10_000);
const RUNS = Number(process.env.FLINT_BENCH_RUNS ?? 3);
const upstream = await startUpstream();
const gateway = await startGateway({ upstreamUrl: upstream.url, models: [`large@${RATE}`] });
const browser = await launchBrowser();

const functionNames = new Map();
for (let run = 0; run < RUNS; run++) {
  const { page, context } = await openFlint(browser, gateway.url, '/', { initScript: process.env.FLINT_INIT ?? '' });
  await page.evaluate(() => window.__flint.editorReady());
  await page.evaluate(() => {
    const probe = { tasks: [], doneAt: null, donePainted: null };
    window.__end = probe;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        probe.tasks.push({ at: e.startTime, ms: e.duration, where: `${e.name}/${e.attribution?.[0]?.containerType}${e.attribution?.[0]?.containerSrc ? ' ' + e.attribution[0].containerSrc.split('/').pop() : ''}` });
      }
    }).observe({ type: 'longtask' });
    const status = document.querySelector('[data-testid="stream-status"]');
    new MutationObserver(() => {
      if (probe.doneAt === null && status.textContent.trim() === 'done') {
        probe.doneAt = performance.now();
        requestAnimationFrame(() => {
          const c = new MessageChannel();
          c.port1.onmessage = () => { probe.donePainted = performance.now() - probe.doneAt; };
          c.port2.postMessage(0);
        });
      }
    }).observe(status, { subtree: true, childList: true, characterData: true });
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 250 });
  await cdp.send('Profiler.start');
  const profileStart = await page.evaluate(() => performance.now());
  await runPrompt(page, `scripted/large@${RATE}`, 'a long page');
  await waitForStatus(page, 'done', 120_000);
  await page.waitForTimeout(2_000);
  const { profile } = await cdp.send('Profiler.stop');
  const probe = await page.evaluate(() => window.__end);
  const near = probe.tasks.filter((t) => t.at > probe.doneAt - 1_000 && t.at < probe.doneAt + 2_000);
  console.log(`run ${run}: done painted after ${probe.donePainted?.toFixed(1)} ms; long tasks near the end:`,
    near.map((t) => `${(t.at - probe.doneAt).toFixed(0)}:+${t.ms.toFixed(0)}ms(${t.where})`).join(' ') || 'none',
    `| all long tasks: ${probe.tasks.length}, longest ${Math.max(0, ...probe.tasks.map((t) => t.ms)).toFixed(0)} ms`);
  // Self time per function in [done - 200 ms, done + 1.5 s], and inside the longest task near the end.
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const worst = near.reduce((w, task) => (task.ms > (w?.ms ?? 0) ? task : w), null);
  const inWorst = new Map();
  let t = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += (profile.timeDeltas[i] ?? 0) / 1000;
    const at = profileStart + t;
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    if (at < probe.doneAt - 200 || at > probe.doneAt + 1_500) continue;
    const f = nodes.get(profile.samples[i])?.callFrame;
    if (!f) continue;
    const key = `${f.functionName || '(anon)'} (${(f.url || '').split('/').pop()}:${f.lineNumber})`;
    functionNames.set(key, (functionNames.get(key) ?? 0) + ms / RUNS);
    if (worst && at >= worst.at && at <= worst.at + worst.ms) inWorst.set(key, (inWorst.get(key) ?? 0) + ms);
  }
  if (worst) {
    console.log(`  inside the longest (${(worst.at - probe.doneAt).toFixed(0)} ms after "done", ${worst.ms.toFixed(0)} ms):`,
      [...inWorst].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(' | '));
  }
  await context.close();
}
console.log('self time per run in [done - 200 ms, done + 1.5 s]:');
for (const [k, ms] of [...functionNames].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${ms.toFixed(1)} ms  ${k}`);
await browser.close();
await gateway.stop();
upstream.stop();
