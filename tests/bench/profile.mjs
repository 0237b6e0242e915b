// A Chromium CPU profile of the page's main thread (CDP `Profiler`, sampling), summed by function:
// where a stream's remaining cost goes. Wasm functions appear under their names when the build
// keeps a name section, else as `$func<index>` / `wasm-function[<index>]`.

/** Starts sampling `page` every `intervalUs` microseconds; returns the session to `stopProfile`. */
export async function startProfile(context, page, intervalUs = 250) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: intervalUs });
  await cdp.send('Profiler.start');
  return cdp;
}

/** Stops sampling: the self time (ms) of every function, keyed by `name (file:line)`. */
export async function stopProfile(cdp) {
  const { profile } = await cdp.send('Profiler.stop');
  await cdp.detach();
  return selfTimes(profile);
}

/** Self time per function of a CDP `Profiler.Profile`: each sample's time goes to its leaf node. */
export function selfTimes(profile) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map();
  const { samples = [], timeDeltas = [] } = profile;
  for (let i = 0; i < samples.length; i++) {
    // A sample's delta is the time since the previous one: the time the previous leaf held.
    const ms = (timeDeltas[i + 1] ?? 0) / 1000;
    const frame = nodes.get(samples[i])?.callFrame;
    if (!frame) continue;
    const key = label(frame);
    totals.set(key, (totals.get(key) ?? 0) + ms);
  }
  return totals;
}

function label({ functionName, url, lineNumber }) {
  const name = functionName || '(anonymous)';
  if (!url) return name;
  const file = url.split('/').pop().split('?')[0] || url;
  return lineNumber >= 0 ? `${name} (${file}:${lineNumber + 1})` : `${name} (${file})`;
}

/** Adds `more` (self times) into `into`. */
export function addTimes(into, more) {
  for (const [k, v] of more) into.set(k, (into.get(k) ?? 0) + v);
  return into;
}

/**
 * A markdown table of the `top` functions by self time over `runs` profiles, with each one's share
 * of the busy time (everything but `(idle)`).
 */
export function profileTable(totals, runs, top = 15) {
  const busy = [...totals].filter(([k]) => k !== '(idle)').reduce((sum, [, v]) => sum + v, 0);
  const rows = [...totals].filter(([k]) => k !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, top);
  const cell = (s) => s.replaceAll('|', '\\|');
  return [
    `Busy (not idle) main-thread time: ${(busy / runs).toFixed(0)} ms per stream, idle ${((totals.get('(idle)') ?? 0) / runs).toFixed(0)} ms.`,
    '',
    '| function | self ms per stream | share of busy |',
    '|---|---:|---:|',
    ...rows.map(([k, v]) => `| ${cell(k)} | ${(v / runs).toFixed(1)} | ${((100 * v) / (busy || 1)).toFixed(1)} % |`),
  ].join('\n');
}
