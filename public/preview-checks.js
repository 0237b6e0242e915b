// Flint's page checks, run by the preview runtime (preview-runtime.js) in a check frame: a hidden
// sandboxed frame of its own, where a complete page runs a second time so that clicking its buttons
// never changes the page the person sees. Loaded by preview.html before the runtime, which takes
// `FlintChecks` and deletes it before any page is written.
//
// The page shares this realm once written, so whatever is called after that was taken here first
// (see the runtime's header). The results are the page's word, not proof: the app reads only known
// check names, clips every detail, and gives up on a frame that does not answer in time. Nothing of
// the prompt is sent here (a page could patch `Array.prototype.some` and read it): the frame
// reports what the page reads as text, and the app looks for the prompt's words in it.
self.FlintChecks = (() => {
  'use strict';

  const apply = Reflect.apply;
  const method = (proto, name) => {
    const fn = proto[name];
    return (self, ...args) => apply(fn, self, args);
  };
  const getter = (proto, name) => {
    const get = Object.getOwnPropertyDescriptor(proto, name).get;
    return (self) => apply(get, self, []);
  };
  const win = window;
  const doc = document;
  const queryAll = method(Document.prototype, 'querySelectorAll');
  const body = getter(Document.prototype, 'body');
  const rectOf = method(Element.prototype, 'getBoundingClientRect');
  const styleOf = (el) => apply(getComputedStyle, win, [el]);
  const localName = getter(Element.prototype, 'localName');
  const getAttribute = method(Element.prototype, 'getAttribute');
  const hasAttribute = method(Element.prototype, 'hasAttribute');
  const childNodes = getter(Node.prototype, 'childNodes');
  const nodeType = getter(Node.prototype, 'nodeType');
  const textOf = getter(Node.prototype, 'textContent');
  const nodeValue = getter(Node.prototype, 'nodeValue');
  const innerText = getter(HTMLElement.prototype, 'innerText');
  const titleOf = getter(Document.prototype, 'title');
  const slice = method(String.prototype, 'slice');
  const click = method(HTMLElement.prototype, 'click');
  const inputValue = getter(HTMLInputElement.prototype, 'value');
  const addListener = method(EventTarget.prototype, 'addEventListener');
  const eventTarget = getter(Event.prototype, 'target');
  const Observer = MutationObserver;
  const observe = method(MutationObserver.prototype, 'observe');
  const takeRecords = method(MutationObserver.prototype, 'takeRecords');
  const disconnect = method(MutationObserver.prototype, 'disconnect');
  const createElement = method(Document.prototype, 'createElement');
  const getContext = method(HTMLCanvasElement.prototype, 'getContext');
  const drawImage = method(CanvasRenderingContext2D.prototype, 'drawImage');
  const getImageData = method(CanvasRenderingContext2D.prototype, 'getImageData');
  const clearRect = method(CanvasRenderingContext2D.prototype, 'clearRect');
  const setTimer = setTimeout;
  const isArray = Array.isArray;
  const ErrorEventType = ErrorEvent;
  const ElementType = Element;
  const PromiseType = Promise;
  const stringify = JSON.stringify;
  const String_ = String;

  // How long a page has to finish loading before it is judged as it stands, and how long each
  // button has to show that a click did something (handlers that answer after a fetch are missed).
  const LOAD_WAIT_MS = 1_500;
  const SETTLE_MS = 60;
  const CLICK_WAIT_MS = 40;
  // How long a page that should keep time (a clock, a timer) has to change by itself: a second's
  // tick, and some slack for a timer that starts late.
  const TICK_WAIT_MS = 1_200;
  const START_LABEL = /start|go|begin|play|run|resume/i;
  const BUTTONS_MAX = 12;
  // Most of the page's text reported (the app matches the prompt's words in it).
  const TEXT_CHARS = 100_000;
  const ELEMENTS_MAX = 3_000;
  const DETAIL_CHARS = 300;
  const BUTTONS = 'button, input[type=button], input[type=submit], input[type=reset], [role=button]';
  // Elements that show something without text of their own.
  const MEDIA = new Set(['img', 'svg', 'canvas', 'video', 'picture', 'input', 'button', 'select', 'textarea', 'iframe', 'meter', 'progress', 'hr']);
  const HIDDEN_TAGS = new Set(['script', 'style', 'template', 'noscript', 'head', 'title', 'meta', 'link']);

  const wait = (ms) => new PromiseType((resolve) => setTimer(resolve, ms));
  // Between one check and the next, the frame yields: a big page's walks (what is shown, what it
  // reads) are each tens of ms, and together they were one long task in whatever process runs the
  // frame, the app's own when the browser does not isolate it.
  const schedulerYield = typeof self.scheduler?.yield === 'function' ? self.scheduler.yield.bind(self.scheduler) : null;
  const pause = () => (schedulerYield ? schedulerYield() : wait(0));
  const clip = (text) => {
    const s = String_(text);
    return s.length > DETAIL_CHARS ? `${s.slice(0, DETAIL_CHARS)}…` : s;
  };
  const show = (value) => {
    if (typeof value === 'string') return value;
    try {
      if (value instanceof Error) return `${value.name}: ${value.message}`;
      return stringify(value) ?? String_(value);
    } catch (_) {
      return '(unprintable)';
    }
  };

  // How long one task may loop before the guard stops it. The app puts a call to the guard at the
  // start of every braced loop body of the checked copy (app/src/judge/guard.rs): a task that loops
  // this long would otherwise hang every preview frame sharing this renderer process.
  const LOOP_MS = 1_000;
  const now = performance.now.bind(performance);

  /** The loop guard: throws once the current task has been looping for LOOP_MS; says so in `seen`. */
  function loopGuard(seen) {
    let calls = 0;
    let taskStart = 0;
    let inTask = false;
    return () => {
      if (!inTask) {
        // A timer can only fire once this task ends: until then, every call belongs to it.
        inTask = true;
        taskStart = now();
        setTimer(() => {
          inTask = false;
        }, 0);
      }
      if ((++calls & 255) === 0 && now() - taskStart > LOOP_MS) {
        const message = `Flint stopped a loop that ran for over ${LOOP_MS / 1000} s without letting the page respond`;
        if (seen.errors.length < 5) seen.errors.push(message);
        // The page hears it as "Script error." (this script is not the page's own): not counted twice.
        seen.guardThrew++;
        throw new Error(message);
      }
    };
  }

  /** Starts listening to the page about to be written (call right after document.open()). */
  function watch() {
    const seen = { errors: [], loads: [], logs: 0, loaded: false, onLoad: null, guardThrew: 0 };
    win.__flintLoopGuard = loopGuard(seen);
    for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
      const original = console[level];
      console[level] = (...args) => {
        seen.logs++;
        if (level === 'error' && seen.errors.length < 5) seen.errors.push(clip(args.map(show).join(' ')));
        apply(original, console, args);
      };
    }
    // Capturing: a resource's `error` does not bubble, but reaches the window's capturing listeners.
    addListener(win, 'error', (event) => {
      const target = eventTarget(event);
      if (event instanceof ErrorEventType || !(target instanceof ElementType)) {
        if (seen.guardThrew > 0 && event.message === 'Script error.') {
          seen.guardThrew--;
        } else if (seen.errors.length < 5) {
          const where = event.lineno ? ` (line ${event.lineno}:${event.colno})` : '';
          seen.errors.push(clip(`Uncaught ${event.error ? show(event.error) : event.message}${where}`));
        }
      } else if (seen.loads.length < 5) {
        const url = getAttribute(target, 'src') ?? getAttribute(target, 'href') ?? '';
        seen.loads.push(clip(`<${localName(target)}> ${url}`));
      }
    }, true);
    addListener(win, 'unhandledrejection', (event) => {
      if (seen.errors.length < 5) seen.errors.push(clip(`Unhandled promise rejection: ${show(event.reason)}`));
    });
    addListener(win, 'load', () => {
      seen.loaded = true;
      seen.onLoad?.();
    });
    return seen;
  }

  function rendered(el) {
    const rect = rectOf(el);
    if (rect.width < 1 || rect.height < 1 || rect.bottom <= 0 || rect.right <= 0) return false;
    const style = styleOf(el);
    return style.visibility !== 'hidden' && style.display !== 'none' && style.opacity !== '0';
  }

  /** Whether the element shows text or media of its own. */
  function showsSomething(el) {
    if (MEDIA.has(localName(el))) return true;
    for (const node of childNodes(el)) {
      if (nodeType(node) === 3 && nodeValue(node).trim() !== '') return true;
    }
    return false;
  }

  function visible() {
    const root = body(doc);
    if (!root) return { pass: false, detail: 'The page has no body.' };
    const all = [root, ...queryAll(doc, 'body *')].slice(0, ELEMENTS_MAX);
    for (const el of all) {
      if (!HIDDEN_TAGS.has(localName(el)) && showsSomething(el) && rendered(el)) return { pass: true };
    }
    return { pass: false, detail: 'Nothing on the page has a size on screen: no text, picture or control shows.' };
  }

  function label(el) {
    const text = (getAttribute(el, 'aria-label') ?? textOf(el) ?? '').trim().replace(/\s+/g, ' ');
    const value = localName(el) === 'input' ? inputValue(el) : '';
    return clip(text || value || `<${localName(el)}>`).slice(0, 40);
  }

  /** A cheap picture of every canvas (drawn down to 16×16), to see whether a click drew anything. */
  function canvases(scratch) {
    const ctx = getContext(scratch, '2d', { willReadFrequently: true });
    let out = '';
    for (const canvas of [...queryAll(doc, 'canvas')].slice(0, 4)) {
      try {
        clearRect(ctx, 0, 0, 16, 16);
        drawImage(ctx, canvas, 0, 0, 16, 16);
        const data = getImageData(ctx, 0, 0, 16, 16).data;
        let hash = 0;
        for (let i = 0; i < data.length; i++) hash = (hash * 31 + data[i]) | 0;
        out += `${hash},`;
      } catch (_) {
        out += 'x,';
      }
    }
    return out;
  }

  /** The buttons a person could click now: enabled and shown. */
  function clickable() {
    return [...queryAll(doc, BUTTONS)].filter((el) => !hasAttribute(el, 'disabled') && rendered(el));
  }

  /** A 16×16 canvas that `canvases` draws the page's canvases down to. */
  function scratchCanvas() {
    const scratch = createElement(doc, 'canvas');
    scratch.width = 16;
    scratch.height = 16;
    return scratch;
  }

  function fields() {
    let out = '';
    for (const el of [...queryAll(doc, 'input, textarea, select')].slice(0, 50)) {
      try {
        out += `${el.value}|${el.checked}\u0000`;
      } catch (_) {
        // A field whose getters throw tells nothing.
      }
    }
    return out;
  }

  async function buttons() {
    const found = clickable();
    if (found.length === 0) return { pass: null, detail: 'The page has no buttons.' };
    const tried = found.slice(0, BUTTONS_MAX);
    const scratch = scratchCanvas();
    let changes = 0;
    const observer = new Observer((records) => {
      changes += records.length;
    });
    observe(observer, doc, { subtree: true, childList: true, attributes: true, characterData: true });
    const silent = [];
    for (const el of tried) {
      const before = [changes + takeRecords(observer).length, seenLogs(), canvases(scratch), fields()];
      changes = before[0];
      try {
        click(el);
      } catch (_) {
        // A handler that throws is an uncaught error, counted by `watch`.
      }
      await wait(CLICK_WAIT_MS);
      changes += takeRecords(observer).length;
      const after = [changes, seenLogs(), canvases(scratch), fields()];
      if (after.every((v, i) => v === before[i])) silent.push(label(el));
    }
    disconnect(observer);
    if (silent.length === 0) return { pass: true, detail: `${tried.length} clicked, each changed the page.` };
    const names = silent.map((name) => `“${name}”`).join(', ');
    return { pass: false, detail: clip(`${silent.length} of ${tried.length} buttons changed nothing when clicked: ${names}.`) };
  }

  /** What a person reads on the page: its title, its text, and its controls' labels. */
  function readable() {
    let out = `${titleOf(doc)} `;
    const root = body(doc);
    if (root) out += `${innerText(root)} `;
    for (const el of [...queryAll(doc, '[placeholder], [alt], [aria-label], [title], input[value]')].slice(0, 200)) {
      for (const name of ['placeholder', 'alt', 'aria-label', 'title', 'value']) out += `${getAttribute(el, name) ?? ''} `;
    }
    return out;
  }

  /**
   * Whether the page keeps time: its text, fields or canvases change by themselves within
   * TICK_WAIT_MS, or within TICK_WAIT_MS of clicking its Start button (or its only button) for a
   * stopwatch or timer that waits to be started.
   */
  async function ticks() {
    const scratch = scratchCanvas();
    const state = () => `${readable()}\u0000${canvases(scratch)}\u0000${fields()}`;
    let before = state();
    await wait(TICK_WAIT_MS);
    if (state() !== before) return { pass: true, detail: 'It changed by itself.' };
    const found = clickable();
    const start = found.find((el) => START_LABEL.test(label(el))) ?? (found.length === 1 ? found[0] : null);
    if (!start) return { pass: false, detail: `Nothing changed in ${TICK_WAIT_MS / 1000} s, and no Start button was found.` };
    const name = label(start);
    try {
      click(start);
    } catch (_) {
      // A handler that throws is an uncaught error, counted by `watch`.
    }
    // What the click itself changed (its label turning to "Stop") is not a tick.
    await wait(CLICK_WAIT_MS);
    before = state();
    await wait(TICK_WAIT_MS);
    return state() !== before
      ? { pass: true, detail: `It changed by itself after “${name}” was clicked.` }
      : { pass: false, detail: `Nothing changed in ${TICK_WAIT_MS / 1000} s, nor in ${TICK_WAIT_MS / 1000} s after clicking “${name}”.` };
  }

  let seenLogs = () => 0;

  /**
   * Judges the page written after `watch()` returned `seen`; `expect` is the app's list of what to
   * look for: `{id, selector}` (an element: the same list for every page) and `{id, ticks: true}`
   * (keeps time, judged before any button is clicked). Resolves to `{results: [{id, pass, detail}],
   * text}`, `text` being what the page reads (`readable`, cut to TEXT_CHARS) as it was first judged.
   */
  async function judge(seen, expect) {
    seenLogs = () => seen.logs;
    if (!seen.loaded) {
      await new PromiseType((resolve) => {
        seen.onLoad = resolve;
        setTimer(resolve, LOAD_WAIT_MS);
      });
    }
    await wait(SETTLE_MS);
    const results = [];
    const put = (id, { pass, detail }) => results.push({ id, pass, detail: detail === undefined ? null : clip(detail) });
    put('visible', visible());
    await pause();
    // Before anything is clicked: what the page says of itself as it opens.
    const text = slice(readable(), 0, TEXT_CHARS);
    for (const want of isArray(expect) ? expect : []) {
      await pause();
      if (typeof want?.id !== 'string') continue;
      if (want.ticks === true) {
        put(want.id, await ticks());
        continue;
      }
      if (typeof want.selector !== 'string') continue;
      let found = [];
      try {
        found = [...queryAll(doc, want.selector)];
      } catch (_) {
        // The app's selectors are fixed and valid; a failure here says nothing about the page.
      }
      const shown = found.some(rendered);
      put(want.id, {
        pass: shown,
        detail: shown ? null : (found.length ? 'It is on the page but not shown.' : 'The page has none.'),
      });
    }
    await pause();
    put('buttons', await buttons());
    put('errors', seen.errors.length === 0 ? { pass: true } : { pass: false, detail: seen.errors.join('\n') });
    put('loads', seen.loads.length === 0 ? { pass: true } : { pass: false, detail: `Failed to load: ${seen.loads.join(', ')}` });
    return { results, text };
  }

  return { watch, judge, visible };
})();
