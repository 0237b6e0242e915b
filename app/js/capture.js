// Injected at the top of the final preview document (see app/src/capture.rs). Forwards the page's
// console output and uncaught errors to Flint's console panel. The page is sandboxed in an opaque
// origin, so postMessage is its only way out; the parent checks event.source before trusting it.
(() => {
  const post = (level, text) => {
    try {
      parent.postMessage({ flint: 'console', level, text: String(text).slice(0, 4000) }, '*');
    } catch (_) {
      // The parent is gone; nothing to report to.
    }
  };
  const show = (value) => {
    if (typeof value === 'string') return value;
    if (value instanceof Error) return value.stack || `${value.name}: ${value.message}`;
    try {
      const json = JSON.stringify(value);
      return json === undefined ? String(value) : json;
    } catch (_) {
      return String(value);
    }
  };
  // A page that logs every frame must not flood the app: at most 200 lines per second.
  let windowStart = 0;
  let sent = 0;
  let dropped = 0;
  const limited = (level, text) => {
    const now = Date.now();
    if (now - windowStart > 1000) {
      if (dropped > 0) post('warn', `${dropped} console messages dropped`);
      windowStart = now;
      sent = 0;
      dropped = 0;
    }
    if (sent++ < 200) post(level, text);
    else dropped++;
  };
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    const original = console[level];
    console[level] = (...args) => {
      limited(level === 'debug' ? 'log' : level, args.map(show).join(' '));
      original.apply(console, args);
    };
  }
  addEventListener('error', (event) => {
    const where = event.filename ? ` (line ${event.lineno}:${event.colno})` : '';
    limited('error', `Uncaught ${event.error ? show(event.error) : event.message}${where}`);
  });
  addEventListener('unhandledrejection', (event) => {
    limited('error', `Unhandled promise rejection: ${show(event.reason)}`);
  });
  // The page is parsed: the app may show it without waiting for images, fonts or CDNs.
  addEventListener('DOMContentLoaded', () => {
    try {
      parent.postMessage({ flint: 'loaded' }, '*');
    } catch (_) {
      // The parent is gone.
    }
  });
})();
