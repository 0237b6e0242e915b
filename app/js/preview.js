// The live preview's frames, used by app/src/interop/preview.rs.
//
// Every frame loads the served preview.html (public/preview-runtime.js says what it does there):
// sandbox="allow-scripts" without allow-same-origin, and the page's own CSP sandbox, so generated
// code runs in an opaque origin. On a frame's first `load` the app gives it one MessagePort (the
// only message ever posted to a frame's window) and from then on talks to it over that port alone;
// 'message' events on the app's window are never listened to, so a page cannot speak for another,
// or for the app's own runtime, by posting to `parent`. Two kinds of frame:
// - the runtime frame stays loaded; while an answer streams it receives HTML snapshots (at most one
//   per animation frame, never more than one in flight) and morphs its DOM, made inert;
// - when the answer is complete, a final frame loads hidden behind the visible one, receives the
//   document, writes it, and is swapped in once the page is parsed, so there is never a blank frame.
// A frame that loads again has navigated (or reloaded): the runtime frame is then discarded and
// made anew, and a final frame is started again in a fresh frame (see `#reloaded`).
// Exactly one frame, the visible one, carries data-testid="preview-frame".
//
// Several previews (variation tiles) share one frame budget: see `scheduler` below. Their console
// lines are limited, clipped and handed to the app once per animation frame: see `ConsoleLimiter`.

import { MAX_BEHIND_MS, Pacer, watchInput } from './pacer.js';

const SANDBOX = 'allow-scripts';

// Snapshot morphs (and the layout they cause) run in the sandboxed frames: in another process when
// the browser isolates them, but on the same few cores, and the person sees one page. Ten tiles
// morphing every frame would starve it. So every preview's snapshots go through one scheduler with a
// time budget: each animation frame adds FRAME_BUDGET_MS to an allowance (capped at two frames'
// worth), and posting a snapshot spends the preview's last measured cost (morph + layout, reported by
// the runtime). Waiting previews take turns — visible ones first, then the one that waited longest —
// so with one preview nothing changes (it is posted every frame while its morphs are cheap), and
// with ten each is updated a few times a second at a bounded total cost. A preview off screen is
// updated at most every OFFSCREEN_INTERVAL_MS. The finished page (scripts included) is not throttled.
// Two rules from pacer.js hold over the budget: a visible preview is never more than MAX_BEHIND_MS
// behind its stream, and in the frame after the person's key or click no snapshot is posted.
const FRAME_BUDGET_MS = 8;
const OFFSCREEN_INTERVAL_MS = 500;

/** Console lines a preview may show per second; the rest are counted and reported in one line. */
export const CONSOLE_LINES_PER_S = 200;
/** Longest console line shown, in UTF-16 units. */
export const CONSOLE_LINE_CHARS = 4_000;
/** Lines a preview holds between two animation frames (the panel keeps no more than this). */
const CONSOLE_QUEUE_MAX = 500;
// Messages a frame may send in a second. The runtime's own capture sends at most about 200 lines a
// second and one `applied` per snapshot, so a frame past this is not Flint's runtime talking: its
// port is closed.
const FRAME_MESSAGES_PER_S = 2_000;
// How long a final frame that loaded again has to answer a ping: a page that rewrote itself with
// document.open() still holds the port; one that navigated or reloaded does not. (A page leaving
// says so first, from `pagehide`, unless it erased that listener with document.open(): the ping is
// the fallback, generous because a busy page answers late.)
const PING_MS = 3_000;
// A page that reloads itself is started again, but not more than this often.
const RESTARTS_MAX = 3;
const RESTART_WINDOW_MS = 10_000;

// No page gets to talk to the app through its window. Any frame can post to `parent`, and other
// code in the app (Monaco's setTimeout0 shim) reads `event.data` of every window message: a page
// posting 100 KB strings in a loop would have the app's main thread deserialise each one. Messages
// from any window but the app's own stop here, before anyone reads them (a capturing listener on
// the target runs before the others); the preview's frames use their ports.
if (typeof window !== 'undefined') {
  window.addEventListener('message', (event) => {
    if (event.source !== window) event.stopImmediatePropagation();
  }, true);
}

const scheduler = {
  waiting: new Set(),
  frame: 0,
  allowance: 0,
  lastRun: 0,
  // Only for the person's input (the budget below paces the previews).
  input: null,
  // Benchmarks set `__flintPreviewBudgetMs = Infinity` to compare with updating every preview.
  budget() {
    return globalThis.__flintPreviewBudgetMs ?? FRAME_BUDGET_MS;
  },
  request(preview) {
    preview.waitingSince ??= performance.now();
    this.waiting.add(preview);
    if (!this.frame) this.frame = requestAnimationFrame((now) => this.run(now));
  },
  forget(preview) {
    this.waiting.delete(preview);
  },
  run(now) {
    this.frame = 0;
    const budget = this.budget();
    const frames = this.lastRun ? Math.max(1, (now - this.lastRun) / 16.7) : 1;
    this.lastRun = now;
    this.allowance = Math.min(this.allowance + budget * frames, budget * 2);
    if (!this.input) {
      this.input = new Pacer();
      watchInput(this.input);
    }
    this.input.frame(now);
    const yields = this.input.yieldFrame && Number.isFinite(budget);
    const late = (p) => p.visible && now - (p.waitingSince ?? now) >= MAX_BEHIND_MS;
    const ready = [...this.waiting]
      .filter((p) => p.canPost() && (p.visible || now - p.lastPosted >= OFFSCREEN_INTERVAL_MS))
      .sort((a, b) => (late(b) - late(a)) || (b.visible - a.visible) || (a.lastPosted - b.lastPosted));
    let overdueTaken = false;
    for (const preview of ready) {
      if (yields || this.allowance <= 0) {
        // One preview that fell MAX_BEHIND_MS behind is posted per frame whatever the budget (which
        // goes into debt, slowing the others) and whatever the person just did.
        if (!late(preview) || overdueTaken) break;
        overdueTaken = true;
      }
      this.allowance -= preview.cost;
      this.waiting.delete(preview);
      preview.post(now);
    }
    // Previews still waiting (in flight, over budget, off screen) are looked at again next frame.
    if (this.waiting.size && !this.frame) this.frame = requestAnimationFrame((t) => this.run(t));
  },
};

// Creating a frame costs the page 10–50 ms here: ten tiles creating theirs in one task (at the
// start, or when their pages finish together) would freeze it. Frames are created one per animation
// frame, in order.
export const frameQueue = {
  queue: [],
  frame: 0,
  add(create) {
    this.queue.push(create);
    if (!this.frame) this.frame = requestAnimationFrame(() => this.next());
  },
  next() {
    this.frame = 0;
    try {
      this.queue.shift()?.();
    } finally {
      if (this.queue.length) this.frame = requestAnimationFrame(() => this.next());
    }
  },
};

// Every preview's console lines reach the app in one go per animation frame, so a page that logs
// thousands of lines costs the console panel one update per frame.
const consoleOut = {
  previews: new Set(),
  frame: 0,
  request(preview) {
    this.previews.add(preview);
    if (!this.frame) this.frame = requestAnimationFrame(() => this.flush());
  },
  flush() {
    this.frame = 0;
    const previews = [...this.previews];
    this.previews.clear();
    for (const preview of previews) preview.flushConsole();
  },
};

/** Console text as a string, whatever was posted. */
function consoleText(text) {
  if (typeof text === 'string') return text;
  try {
    return String(text);
  } catch (_) {
    return '(unprintable)';
  }
}

/**
 * The console limits of one preview: at most `perSecond` lines in any one-second window, each
 * clipped to `lineChars`; the lines dropped in a window are reported in one line when it ends.
 */
export class ConsoleLimiter {
  constructor({ perSecond = CONSOLE_LINES_PER_S, lineChars = CONSOLE_LINE_CHARS } = {}) {
    this.perSecond = perSecond;
    this.lineChars = lineChars;
    this.start = -Infinity;
    this.sent = 0;
    this.dropped = 0;
  }

  /** The lines to show for one line posted at `now` (ms): `[level, text]` pairs, maybe none. */
  add(level, text, now) {
    const out = this.roll(now);
    if (this.sent < this.perSecond) {
      this.sent++;
      const line = consoleText(text);
      const level_ = ['log', 'info', 'warn', 'error'].includes(level) ? level : 'log';
      out.push([level_, line.length > this.lineChars ? `${line.slice(0, this.lineChars)}… (cut)` : line]);
    } else {
      this.dropped++;
    }
    return out;
  }

  /** Ends the window if it is over at `now`: the report of its dropped lines, if any. */
  roll(now) {
    const out = [];
    if (now - this.start >= 1000) {
      if (this.dropped > 0) {
        const n = this.dropped;
        out.push(['warn', `${n} console line${n === 1 ? '' : 's'} dropped (a preview may log ${this.perSecond} a second)`]);
      }
      this.start = now;
      this.sent = 0;
      this.dropped = 0;
    }
    return out;
  }

  /** Milliseconds until the window ends, when lines were dropped in it (else null). */
  pending(now) {
    return this.dropped > 0 ? Math.max(0, this.start + 1000 - now) : null;
  }
}

/** One sandboxed frame loading preview.html, and the port the app talks to it over. */
class Frame {
  /** `kind` is 'runtime' (snapshots) or 'final' (one finished page). */
  constructor(preview, kind) {
    this.preview = preview;
    this.kind = kind;
    this.port = null;
    this.loads = 0;
    this.ready = false;
    // Final frames: the page, whether it was sent, shown, and what to call once it is.
    this.doc = null;
    this.sent = false;
    this.shown = false;
    this.onShown = null;
    this.muted = false;
    this.restarted = false;
    // Messages in the current one-second window.
    this.windowStart = -Infinity;
    this.messages = 0;
    this.pings = 0;
    this.pingTimer = 0;
    const el = document.createElement('iframe');
    el.setAttribute('sandbox', SANDBOX);
    el.setAttribute('title', kind === 'runtime' ? 'Preview' : 'Preview (running)');
    el.className = 'preview-frame back';
    el.addEventListener('load', () => this.#load());
    // The address is set before the frame is in the page, so its first load is preview.html
    // (not the initial about:blank).
    el.src = preview.runtimeUrl;
    preview.container.appendChild(el);
    this.el = el;
  }

  #load() {
    this.loads++;
    if (this.loads > 1) {
      this.preview.reloaded(this);
      return;
    }
    const channel = new MessageChannel();
    this.port = channel.port1;
    this.port.onmessage = (event) => this.preview.receive(this, event.data);
    // The frame's origin is opaque, so no target origin can be named: '*'. This is its first load,
    // nothing has run in it but preview.html, and nothing else is ever posted to its window.
    this.el.contentWindow.postMessage({ flint: 'connect' }, '*', [channel.port2]);
  }

  post(message) {
    this.port?.postMessage(message);
  }

  /** Counts a message; true when the frame sent more than it may in this second. */
  flooding(now) {
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.messages = 0;
    }
    return ++this.messages > FRAME_MESSAGES_PER_S;
  }

  /** Asks whether the page that got the port is still there; `answer(alive)` says. */
  ping(answer) {
    if (!this.port) {
      answer(false);
      return;
    }
    const id = ++this.pings;
    clearTimeout(this.pingTimer);
    this.pingTimer = setTimeout(() => {
      if (this.pendingPing?.id === id) {
        this.pendingPing = null;
        answer(false);
      }
    }, PING_MS);
    this.pendingPing = { id, answer };
    this.post({ flint: 'ping', id });
  }

  pong(id) {
    if (id === undefined || this.pendingPing?.id !== id) return;
    const { answer } = this.pendingPing;
    this.pendingPing = null;
    clearTimeout(this.pingTimer);
    answer(true);
  }

  /** Stops listening: nothing more is sent or heard. */
  close() {
    clearTimeout(this.pingTimer);
    this.pendingPing = null;
    this.port?.close();
    this.port = null;
  }

  discard() {
    this.close();
    this.el.remove();
  }
}

export class FlintPreview {
  constructor(container, runtimeUrl, onConsole) {
    this.container = container;
    this.runtimeUrl = runtimeUrl;
    this.onConsole = onConsole;
    this.runtime = null;
    this.runtimeReady = false;
    this.disposed = false;
    this.runs = 0;
    this.finals = [];
    // A final frame loaded ahead (from `begin`), so a finished answer is written at once.
    this.spare = null;
    this.front = null;
    this.latest = null;
    this.inFlight = false;
    this.newAnswer = false;
    this.restarts = [];
    // Console lines waiting for the next animation frame, and the limits they passed.
    this.limiter = new ConsoleLimiter();
    this.lines = [];
    this.dropTimer = 0;
    // For the scheduler: the last morph's cost (ms), when it was last posted, whether it is seen.
    this.cost = 1;
    this.lastPosted = -Infinity;
    // When the oldest snapshot not yet posted came (null: none waits).
    this.waitingSince = null;
    this.visible = true;
    this.visibility = new IntersectionObserver((entries) => {
      this.visible = entries.some((e) => e.isIntersecting);
    });
    this.visibility.observe(container);
    this.#newRuntime();
  }

  /** A new answer starts: its first snapshot replaces whatever the previous answer left on screen. */
  begin() {
    this.newAnswer = true;
    // A finished page still waiting for its frame belongs to the previous answer.
    this.runs++;
    // Its finished page will need a frame: load one while the answer streams.
    frameQueue.add(() => {
      if (!this.disposed && !this.spare) this.spare = new Frame(this, 'final');
    });
  }

  /** Shows `html` (a partial document) soon, within the page's frame budget; later snapshots replace it. */
  snapshot(html) {
    this.latest = html;
    scheduler.request(this);
  }

  canPost() {
    return this.runtimeReady && !this.inFlight && this.latest !== null;
  }

  /** Posts the latest snapshot (the scheduler decides when). */
  post(now) {
    const html = this.latest;
    this.latest = null;
    this.waitingSince = null;
    this.inFlight = true;
    this.lastPosted = now;
    this.runtime.post({ flint: 'snapshot', html });
  }

  /**
   * Runs the complete document `doc` (scripts included) in a fresh frame, swapped in once loaded;
   * then calls `onShown()`. A later `run` supersedes this one, whose `onShown` is then never called.
   */
  run(doc, onShown) {
    this.newAnswer = false;
    const run = ++this.runs;
    if (this.spare) {
      // No frame to create: the page is written as soon as the spare frame is ready.
      this.#runNow(doc, onShown);
      return;
    }
    frameQueue.add(() => {
      if (!this.disposed && run === this.runs) this.#runNow(doc, onShown);
    });
  }

  /**
   * Pick mode on the page shown (a finished page only): the person's next click there picks an
   * element, and `onPicked(json)` gets the frame's report (the element's path, or `cancelled`).
   * Returns false when no finished page is shown. `pick(false)` ends it.
   */
  pick(on, onPicked) {
    const front = this.front;
    if (!front || front.kind !== 'final' || !front.shown || front.muted) return false;
    this.onPicked = on ? onPicked : null;
    this.picking = on ? front : null;
    front.post({ flint: 'pick', on });
    return true;
  }

  dispose() {
    scheduler.forget(this);
    consoleOut.previews.delete(this);
    clearTimeout(this.dropTimer);
    this.visibility.disconnect();
    this.disposed = true;
    this.runtime?.discard();
    this.spare?.discard();
    for (const f of this.finals) f.discard();
  }

  /** Hands the waiting console lines to the app (once per animation frame, see `consoleOut`). */
  flushConsole() {
    const lines = this.lines;
    this.lines = [];
    if (this.disposed) return;
    for (const [level, text] of lines) this.onConsole(level, text);
  }

  /** A message from one of this preview's frames, over its port. */
  receive(frame, data) {
    if (this.disposed || frame.port === null) return;
    if (frame.flooding(performance.now())) {
      this.#flooded(frame);
      return;
    }
    if (!data || typeof data !== 'object' || typeof data.flint !== 'string') return;
    switch (data.flint) {
      case 'ready':
        if (frame.ready) break;
        frame.ready = true;
        if (frame === this.runtime) {
          this.runtimeReady = true;
          if (this.latest !== null) scheduler.request(this);
        } else if (frame.doc !== null) {
          frame.sent = true;
          frame.post({ flint: 'run', doc: frame.doc });
        }
        break;
      case 'applied':
        if (frame === this.runtime && this.inFlight) {
          this.inFlight = false;
          if (typeof data.ms === 'number' && data.ms >= 0) this.cost = Math.min(data.ms, 100);
          if (this.newAnswer) {
            // The new answer is on screen: retire the previous answer's final frame.
            this.newAnswer = false;
            this.#bringToFront(this.runtime);
          }
          if (this.latest !== null) scheduler.request(this);
        }
        break;
      case 'loaded':
        if (frame.kind === 'final' && frame.sent) this.#show(frame);
        break;
      case 'console':
        this.#log(data.level, data.text);
        break;
      case 'pong':
        frame.pong(data.id);
        break;
      case 'picked':
        // Only from the frame asked, once: the page shares that realm, so this is its word.
        if (frame === this.picking && this.onPicked) {
          const onPicked = this.onPicked;
          this.onPicked = null;
          this.picking = null;
          let json;
          try {
            json = JSON.stringify({ path: data.path, id: data.id, cancelled: data.cancelled === true });
          } catch (_) {
            json = '{"cancelled":true}';
          }
          onPicked(json.length > 16_384 ? '{"cancelled":true}' : json);
        }
        break;
      case 'gone':
        // The page is leaving (reload, navigation): start it again now rather than on the next load.
        if (frame.kind === 'final' && frame.sent) this.#restart(frame);
        break;
      default:
        break;
    }
  }

  /** `frame`'s element fired `load` again. */
  reloaded(frame) {
    if (this.disposed) return;
    if (frame.kind === 'runtime' || !frame.sent) {
      // Only preview.html ever ran in this frame, and it never navigates: something in a snapshot
      // did. Whatever is in the frame now gets nothing more.
      this.#note('warn', 'A preview frame navigated away while an answer was shown; it was replaced with a fresh one.');
      if (frame === this.runtime) this.#replaceRuntime(frame);
      else this.#dropFinal(frame);
      return;
    }
    if (frame.restarted) return;
    if (frame.muted) {
      this.#show(frame);
      return;
    }
    // The page was written (its own `load`), or rewrote itself with document.open(), or reloaded, or
    // navigated. Only a page still in the realm that got the port can answer.
    frame.ping((alive) => {
      if (alive) this.#show(frame);
      else this.#restart(frame);
    });
  }

  #newRuntime() {
    frameQueue.add(() => {
      if (this.disposed || this.runtime) return;
      this.runtime = new Frame(this, 'runtime');
      if (!this.front) this.#bringToFront(this.runtime);
    });
  }

  #replaceRuntime(frame) {
    if (frame !== this.runtime) return;
    frame.discard();
    this.runtime = null;
    this.runtimeReady = false;
    // The snapshot in flight went to the old frame; the next one goes to the new.
    this.inFlight = false;
    if (this.front === frame) this.front = null;
    this.#newRuntime();
  }

  #runNow(doc, onShown) {
    for (const pending of this.finals.filter((f) => f !== this.front)) pending.discard();
    this.finals = this.finals.filter((f) => f === this.front);
    const spare = this.spare;
    this.spare = null;
    this.#startFinal(doc, onShown, spare);
  }

  /** Writes `doc` into `frame` (a spare) or a new final frame, swapped in once it is parsed. */
  #startFinal(doc, onShown, frame = null) {
    frame ??= new Frame(this, 'final');
    frame.doc = doc;
    frame.onShown = onShown;
    this.finals.push(frame);
    if (frame.ready) {
      frame.sent = true;
      frame.post({ flint: 'run', doc });
    }
  }

  #dropFinal(frame) {
    frame.discard();
    if (this.spare === frame) this.spare = null;
    this.finals = this.finals.filter((f) => f !== frame);
    if (this.front === frame) this.front = null;
  }

  /** A final frame's page is gone (it reloaded or navigated): run the same page again, in a new frame. */
  #restart(frame) {
    if (frame.restarted) return;
    frame.restarted = true;
    frame.close();
    if (this.disposed || !this.finals.includes(frame)) return;
    const now = performance.now();
    this.restarts = this.restarts.filter((t) => now - t < RESTART_WINDOW_MS);
    if (this.restarts.length >= RESTARTS_MAX) {
      this.#note('warn', 'The page keeps reloading or navigating away, so it is left as it is: run it again to start it over.');
      this.#show(frame);
      return;
    }
    this.restarts.push(now);
    this.#note('warn', 'The page reloaded or navigated away; it was started again.');
    const onShown = frame.shown ? null : frame.onShown;
    frame.onShown = null;
    this.#startFinal(frame.doc, onShown);
  }

  #flooded(frame) {
    if (frame.kind === 'runtime') {
      this.#note('warn', 'A preview frame sent more messages than Flint\'s runtime ever does; it was replaced with a fresh one.');
      this.#replaceRuntime(frame);
      return;
    }
    frame.close();
    frame.muted = true;
    this.#note('warn', `The page sent more than ${FRAME_MESSAGES_PER_S} messages in a second; its console is no longer shown.`);
  }

  #show(frame) {
    if (frame.shown || !this.finals.includes(frame)) return;
    frame.shown = true;
    this.#bringToFront(frame);
    const onShown = frame.onShown;
    frame.onShown = null;
    onShown?.();
  }

  #bringToFront(frame) {
    if (this.front === frame) return;
    const previous = this.front;
    frame.el.classList.remove('back');
    frame.el.setAttribute('data-testid', 'preview-frame');
    this.front = frame;
    if (previous) {
      previous.el.removeAttribute('data-testid');
      previous.el.classList.add('back');
    }
    // Final frames that are no longer shown are finished with; the runtime frame is kept for reuse.
    for (const old of this.finals) {
      if (old !== frame) old.discard();
    }
    this.finals = this.finals.filter((f) => f === frame);
  }

  /** A console line from a frame: limited, clipped, queued for the next animation frame. */
  #log(level, text) {
    const now = performance.now();
    for (const line of this.limiter.add(level, text, now)) this.#queue(line);
    const wait = this.limiter.pending(now);
    if (wait !== null && !this.dropTimer) {
      // Report the dropped lines when the window ends, even if the page then falls silent.
      this.dropTimer = setTimeout(() => {
        this.dropTimer = 0;
        for (const line of this.limiter.roll(performance.now())) this.#queue(line);
      }, wait + 1);
    }
  }

  /** A line from Flint itself about this preview (not limited). */
  #note(level, text) {
    this.#queue([level, text]);
  }

  #queue(line) {
    if (this.disposed) return;
    this.lines.push(line);
    if (this.lines.length > CONSOLE_QUEUE_MAX) this.lines.splice(0, this.lines.length - CONSOLE_QUEUE_MAX);
    consoleOut.request(this);
  }
}

/** Creates the preview inside `container`; `onConsole(level, text)` receives the pages' console. */
export function createPreview(container, runtimeUrl, onConsole) {
  return new FlintPreview(container, runtimeUrl, onConsole);
}
