// A final page's console capture, run by the preview runtime (preview-runtime.js) right after
// document.open() and before the page's first script: the page's console lines, uncaught errors,
// "parsed" and "leaving" go to the app over the frame's port, limited here (and again by the app).
// Loaded by preview.html before the runtime, which takes `FlintCapture` and deletes it. The page
// shares this realm once written, so whatever is called afterwards was taken here first.
self.FlintCapture = (() => {
  'use strict';

  const apply = Reflect.apply;
  const method = (proto, name) => {
    const fn = proto[name];
    return (self, ...args) => apply(fn, self, args);
  };
  const now = performance.now.bind(performance);
  const setTimer = setTimeout;
  const slice = method(String.prototype, 'slice');
  const toString = String;
  const addListener = method(EventTarget.prototype, 'addEventListener');

  const LINES_PER_S = 200;
  const LINE_CHARS = 4_000;

  /** Forwards the written page's console and uncaught errors to the app. Call after document.open(). */
  function capture(send) {
    const show = (value) => {
      if (typeof value === 'string') return value;
      try {
        if (value instanceof Error) return value.stack || `${value.name}: ${value.message}`;
        const json = JSON.stringify(value);
        return json === undefined ? String(value) : json;
      } catch (_) {
        try {
          return String(value);
        } catch (_) {
          return Object.prototype.toString.call(value);
        }
      }
    };
    // A page that logs every frame must not flood the app (which limits again, on its side).
    let windowStart = -Infinity;
    let sent = 0;
    let dropped = 0;
    let timer = 0;
    const roll = () => {
      const at = now();
      if (at - windowStart < 1000) return;
      if (dropped > 0) {
        send({ flint: 'console', level: 'warn', text: `${dropped} console lines dropped (a page may log ${LINES_PER_S} a second)` });
      }
      windowStart = at;
      sent = 0;
      dropped = 0;
    };
    /** Whether one more line fits this second; counts the ones that do not. */
    const admit = () => {
      roll();
      if (sent < LINES_PER_S) {
        sent++;
        return true;
      }
      if (dropped++ === 0 && !timer) {
        // Say how many were dropped when the second is over, even if the page then falls silent.
        timer = setTimer(() => {
          timer = 0;
          roll();
        }, windowStart + 1001 - now());
      }
      return false;
    };
    // (Taken functions: a page's own `slice` could make every line megabytes.)
    const sendLine = (level, text) => send({ flint: 'console', level, text: slice(toString(text), 0, LINE_CHARS) });
    const line = (level, text) => {
      if (admit()) sendLine(level, text);
    };
    for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
      const original = console[level];
      console[level] = (...args) => {
        // A line past the limit is neither turned into text nor given to the browser's console:
        // 2,000 lines of 100 KB cost seconds of this thread (the app's too, sandboxed frames share
        // its process) with the browser's tools listening, and the app says how many were dropped.
        if (!admit()) return;
        sendLine(level === 'debug' ? 'log' : level, args.map(show).join(' '));
        apply(original, console, args);
      };
    }
    addListener(window, 'error', (event) => {
      const where = event.filename ? ` (line ${event.lineno}:${event.colno})` : '';
      line('error', `Uncaught ${event.error ? show(event.error) : event.message}${where}`);
    });
    addListener(window, 'unhandledrejection', (event) => {
      line('error', `Unhandled promise rejection: ${show(event.reason)}`);
    });
    // The page is parsed: the app may show it without waiting for images, fonts or CDNs.
    addListener(document, 'DOMContentLoaded', () => send({ flint: 'loaded' }));
    // The page is leaving (it reloads or navigates): the app starts it again at once.
    addListener(window, 'pagehide', () => send({ flint: 'gone' }));
  }

  return capture;
})();
