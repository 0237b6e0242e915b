// A Chromium trace (CDP `Tracing`, devtools.timeline) of a page and its out-of-process frames:
// per renderer main thread, the busy time, the long tasks, script time by file and the frame
// lifecycle's phases. Sampling profiles see one thread; this sees the preview frames' renderers too
// (Chromium isolates sandboxed frames), which share the same cores.

const CATEGORIES = 'devtools.timeline,disabled-by-default-devtools.timeline';
// Phases of a renderer's work, as trace event names, summed per thread.
const PHASES = [
  ['frame lifecycle', 'ProxyMain::BeginMainFrame'], ['paint', 'Paint'], ['pre-paint', 'PrePaint'],
  ['commit', 'Commit'], ['layout', 'Layout'], ['style', 'UpdateLayoutTree'],
  ['forced style and layout', 'Blink.ForcedStyleAndLayout.UpdateTime'], ['HTML parsing', 'ParseHTML'],
  ['script', 'FunctionCall'],
];

/** Starts tracing `page` (and the frames it holds); returns what `stopTrace` needs. */
export async function startTrace(context, page) {
  const cdp = await context.newCDPSession(page);
  const events = [];
  cdp.on('Tracing.dataCollected', ({ value }) => events.push(...value));
  await cdp.send('Tracing.start', { categories: CATEGORIES, transferMode: 'ReportEvents' });
  return { cdp, events };
}

/** Stops tracing: one summary per renderer main thread that did work, busiest first. */
export async function stopTrace({ cdp, events }) {
  const complete = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
  await cdp.send('Tracing.end');
  await complete;
  await cdp.detach();
  const threads = [];
  for (const main of events.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain')) {
    const mine = events.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X' && e.dur);
    const tasks = mine.filter((e) => e.name === 'RunTask').map((e) => e.dur / 1000);
    if (tasks.length === 0) continue;
    const sum = (name) => mine.filter((e) => e.name === name).reduce((s, e) => s + e.dur / 1000, 0);
    const scripts = new Map();
    for (const e of mine) {
      const url = e.name === 'FunctionCall' && e.args?.data?.url;
      if (!url) continue;
      // Hashed bundle names read with the hash left out: Monaco's editor-BdtEMBbM.js as editor-….js.
      const file = url.split('/').pop().split('?')[0].replace(/-[\w]{8,}(?=(_bg)?\.js$)/, '-…');
      scripts.set(file, (scripts.get(file) ?? 0) + e.dur / 1000);
    }
    threads.push({
      busy: tasks.reduce((a, b) => a + b, 0),
      over50: tasks.filter((t) => t > 50).length,
      longest: Math.max(...tasks),
      scripts,
      phases: new Map(PHASES.map(([label, name]) => [label, sum(name)])),
    });
  }
  return threads.sort((a, b) => b.busy - a.busy);
}

/** Which renderer a summary is: the app's page runs Monaco; the previews run preview-runtime.js. */
export function rendererName(thread) {
  if ([...thread.scripts.keys()].some((f) => f.startsWith('flint-app'))) return 'app page';
  if (thread.scripts.has('preview-runtime.js')) return 'preview frames';
  return 'other renderer';
}
