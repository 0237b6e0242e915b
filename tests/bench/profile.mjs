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

/**
 * Where a stream's main-thread time goes by stage, from a CDP profile of a build that keeps wasm
 * names (`cargo xtask bench relay` builds one): each sample is charged to the outermost frame of its
 * stack that names a stage, so a stage's time includes everything it called (Monaco's work under the
 * worker's update counts as "apply"). `(program)`, `(garbage collector)` and `(idle)` stand alone.
 */
export const STAGES = [
  // The socket's frames: decoded, run through the lanes, relayed to the worker (text it never reads).
  ['relay: socket → lanes → worker', (f) => /^flint_app::(interop::socket|gateway)::/.test(f.functionName)],
  // The worker's updates: code appends to the editor, snapshots to the previews, signals.
  ['apply: worker → editor, previews, signals', (f) => f.functionName.startsWith('flint_app::interop::worker::')],
  ['previews (preview.js: scheduling, posting snapshots)', (f) => /\/preview(_pacing|_console|_frame)?\.js$/.test(f.url)],
  ['editor (pacer, editor.js, Monaco)', (f) => /\/(pacer|editor)\.js$|\/editor-[\w-]+\.js$/.test(f.url)],
  // (wasm-bindgen's JS glue is not a stage: it sits outside every wasm entry and would swallow them.)
  ['other app code (effects, timers, the rest of the wasm)', (f) => f.functionName.startsWith('flint_app::')],
];

/** Inclusive ms per stage (see [`STAGES`]) of a CDP `Profiler.Profile`. */
export function stageTimes(profile) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOf = new Map();
  const classify = (id) => {
    if (stageOf.has(id)) return stageOf.get(id);
    const node = nodes.get(id);
    const up = parent.has(id) ? classify(parent.get(id)) : null;
    const own = STAGES.find(([, test]) => test(node.callFrame))?.[0];
    // The outermost stage wins; below every stage, the VM's own entries name themselves.
    const stage = up ?? own ?? (/^\((program|garbage collector|idle)\)$/.test(node.callFrame.functionName) ? node.callFrame.functionName : null);
    stageOf.set(id, stage);
    return stage;
  };
  const totals = new Map();
  const { samples = [], timeDeltas = [] } = profile;
  for (let i = 0; i < samples.length; i++) {
    const ms = (timeDeltas[i + 1] ?? 0) / 1000;
    const stage = classify(samples[i]) ?? 'other (browser callbacks, Leptos runtime, JS glue)';
    totals.set(stage, (totals.get(stage) ?? 0) + ms);
  }
  return totals;
}

/** Stops sampling: the raw CDP profile. */
export async function stopRawProfile(cdp) {
  const { profile } = await cdp.send('Profiler.stop');
  await cdp.detach();
  return profile;
}
