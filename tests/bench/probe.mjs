// What the browser benchmarks measure in the page: every animation frame's length, every long
// task, and how long each key took to reach the screen, from `startProbe` until `stopProbe`.

/** Starts recording frame times, long tasks and key → paint times in `page`. */
export async function startProbe(page) {
  await page.evaluate(() => {
    const probe = { frames: [], longTasks: [], keys: [], running: true };
    window.__bench = probe;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) probe.longTasks.push(e.duration);
    }).observe({ type: 'longtask' });
    // Key → next paint: from the key's event time (so time spent queued behind a long task
    // counts) to the end of the first frame that shows its effect. A task posted from an animation
    // frame callback runs once that frame's rendering is done. Escape waits for the frame whose
    // stream status reads "cancelled".
    const status = () => document.querySelector('[data-testid="stream-status"]')?.textContent.trim();
    addEventListener('keydown', (event) => {
      const { key, timeStamp: pressed } = event;
      // An Escape with nothing streaming cancels nothing: not a sample.
      if (key === 'Escape' && status() !== 'streaming') return;
      const shown = () => key !== 'Escape' || status() === 'cancelled';
      const onFrame = () => {
        if (!shown()) {
          if (performance.now() - pressed < 5_000) requestAnimationFrame(onFrame);
          return;
        }
        const channel = new MessageChannel();
        channel.port1.onmessage = () => probe.keys.push({ key, ms: performance.now() - pressed });
        channel.port2.postMessage(0);
      };
      requestAnimationFrame(onFrame);
    }, true);
    let last = performance.now();
    const tick = (now) => {
      probe.frames.push(now - last);
      last = now;
      if (probe.running) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

/**
 * Stops recording: `{ frames, longTasks, keys }` in milliseconds (the first, partial frame dropped;
 * `keys` as `{ key, ms }`).
 */
export async function stopProbe(page) {
  const probe = await page.evaluate(() => {
    window.__bench.running = false;
    return window.__bench;
  });
  return { frames: probe.frames.slice(1), longTasks: probe.longTasks, keys: probe.keys };
}

/** p50 and p95 of `samples` (ms), and how many there were. */
export function latency(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { n: sorted.length, p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95) };
}

/** The `q` quantile of ascending `sorted`. */
export function quantile(sorted, q) {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/**
 * What every browser benchmark reports of pooled `frames` and `longTasks` (ms): frame count, p50,
 * p95 and longest frame, long tasks, those over 100 ms, and the longest.
 */
export function frameStats(frames, longTasks) {
  const sorted = [...frames].sort((a, b) => a - b);
  return {
    frames: sorted.length, p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), max: sorted.at(-1) ?? NaN,
    longTasks: longTasks.length, over100: longTasks.filter((d) => d > 100).length,
    longestTask: longTasks.length ? Math.max(...longTasks) : 0,
  };
}

/** A millisecond figure for a table: one decimal, `–` when there is none. */
export const ms = (x) => (Number.isFinite(x) ? x.toFixed(1) : '–');

/** The frame columns every browser benchmark's table ends with (`frameStats` fields). */
export const FRAME_HEADER = '| frames | p50 frame ms | p95 frame ms | max frame ms | long tasks (>50 ms) | longest ms |';
export const FRAME_ALIGN = '|---:|---:|---:|---:|---:|---:|';

/** A row's frame cells, matching `FRAME_HEADER`. */
export const frameCells = (r) => `| ${r.frames} | ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.max)} | ${r.longTasks} | ${ms(r.longestTask)} |`;
