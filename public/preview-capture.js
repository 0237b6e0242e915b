// A final page's console capture, run by the preview runtime (preview-runtime.js) right after
// document.open() and before the page's first script: the page's console lines, uncaught errors,
// "parsed" and "leaving" go to the app over the frame's port, limited here (and again by the app).
// A page that shows nothing once loaded says so, in the frame and on the console: an answer cut off
// inside a tag is a blank page to the browser, and a blank frame tells the person nothing.
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
  const createElement = method(Document.prototype, 'createElement');
  const setAttribute = method(Element.prototype, 'setAttribute');
  const appendTo = method(Element.prototype, 'append');
  const documentElement = Object.getOwnPropertyDescriptor(Document.prototype, 'documentElement').get;
  const setText = Object.getOwnPropertyDescriptor(Node.prototype, 'textContent').set;

  const LINES_PER_S = 200;
  const LINE_CHARS = 4_000;
  /** How long after `load` a page may take to show something (a React app says so itself at 1.5 s). */
  const BLANK_AFTER_MS = 2_000;
  const BLANK_NOTE = 'Nothing shows on this page: no text, picture or control has a size on screen. '
    + 'An answer cut off inside a tag looks like this; Fix sends the page to the model.';

  /**
   * Forwards the written page's console and uncaught errors to the app, and says so when the page
   * shows nothing (`shows`: the checks' own "something shows" rule). Call after document.open().
   */
  function capture(send, shows) {
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
    // A frame laid out at no size (a hidden tile) cannot tell a blank page from a hidden one.
    const blank = () => {
      if (!(innerWidth > 0 && innerHeight > 0) || shows().pass) return;
      sendLine('warn', `[preview] ${BLANK_NOTE}`);
      const note = createElement(document, 'p');
      setAttribute(note, 'data-flint-blank', '');
      // Inline and !important: the page's own rules (`p { display: none }`) must not hide it, and
      // it goes after the body, which the page may have hidden.
      setAttribute(note, 'style', 'display:block!important;visibility:visible!important;opacity:1!important;'
        + 'margin:1rem!important;color:#374151!important;font:14px/1.5 system-ui,sans-serif!important');
      apply(setText, note, [BLANK_NOTE]);
      appendTo(apply(documentElement, document, []), note);
    };
    addListener(window, 'load', () => setTimer(blank, BLANK_AFTER_MS));
    // The page is leaving (it reloads or navigates): the app starts it again at once.
    addListener(window, 'pagehide', () => send({ flint: 'gone' }));
  }

  return capture;
})();
