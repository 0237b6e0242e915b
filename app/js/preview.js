// The live preview's frames, used by app/src/interop/preview.rs.
//
// Every frame loads the served preview.html (public/preview-runtime.js says what it does there):
// sandbox="allow-scripts" without allow-same-origin, and the page's own CSP sandbox, so generated
// code runs in an opaque origin. On a frame's first `load` the app gives it one MessagePort (the
// only message ever posted to a frame's window) and from then on talks to it over that port alone;
// 'message' events on the app's window are never listened to, so a page cannot speak for another,
// or for the app's own runtime, by posting to `parent`. Two kinds of frame:
// - the runtime frame stays loaded; while an answer streams it receives HTML snapshots (at most one
//   per animation frame, never more than one in flight), made inert. One that only extends the
//   frame's text is sent as the appended text (`append`), which the frame parses incrementally
//   (public/preview-live.js); any other is sent whole and morphed;
// - when the answer is complete (or a streaming React project builds: `runLive`), a final frame
//   loads hidden behind the visible one, gets the document, writes it, and is swapped in once
//   loaded, so there is never a blank frame (a React app may instead be swapped into a frame made
//   ready with React: preview_live_runs.js).
// A frame that loads again has navigated or reloaded: a runtime frame is made anew, a final frame's
// page started again in a fresh one (`reloaded`). Only the visible frame has data-testid="preview-frame".
// Previews (tiles) share one frame budget (`scheduler`, preview_pacing.js) and the frames loaded ahead
// (`pool`, preview_pool.js); console: preview_console.js.

import { messageProblem, pickedJson } from './frame_messages.js';
import { PreviewConsole } from './preview_console.js';
import { FRAME_BYTES_PER_S, FRAME_MESSAGES_PER_S, Frame } from './preview_frame.js';
import { LiveRuns } from './preview_live_runs.js';
import { frameQueue, scheduler } from './preview_pacing.js';
import { pool } from './preview_pool.js';

export { CONSOLE_LINE_CHARS, CONSOLE_LINES_PER_S, ConsoleLimiter } from './preview_console.js'; // (for the attack tests)

// A page that reloads itself is started again, but not more than this often.
const RESTARTS_MAX = 3;
const RESTART_WINDOW_MS = 10_000;

export class FlintPreview {
  constructor(container, runtimeUrl, onConsole) {
    this.container = container;
    this.runtimeUrl = runtimeUrl;
    // The pages' console lines, limited and handed to `onConsole` once per animation frame.
    this.console = new PreviewConsole(onConsole);
    this.runtime = null;
    this.runtimeReady = false;
    this.disposed = false;
    this.runs = 0;
    this.finals = [];
    // A final frame loaded ahead (from `begin`), so a finished answer is written at once.
    this.spare = null;
    this.front = null;
    this.latest = null;
    // The text the runtime frame has (null: unknown, the next snapshot goes whole).
    this.sent = null;
    this.inFlight = false;
    this.newAnswer = false;
    // A streaming project's pages (`runLive`).
    this.lives = new LiveRuns(this);
    this.restarts = [];
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
    // A frame for its first finished page, if one was loaded ahead (`begin` loads the next ones).
    this.spare = pool.take(this, 'final');
  }

  /** A new answer starts: its first snapshot replaces whatever the previous answer left on screen. */
  begin() {
    this.newAnswer = true;
    this.lives.begin();
    // A finished page still waiting for its frame belongs to the previous answer.
    this.#newRun();
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
    const sent = this.sent;
    this.sent = html;
    // (`__flintPreviewWhole`: the benchmark's comparison, every snapshot whole.)
    if (sent !== null && html.length >= sent.length && html.startsWith(sent) && !globalThis.__flintPreviewWhole) {
      this.runtime.post({ flint: 'append', at: sent.length, text: html.slice(sent.length) });
    } else {
      this.runtime.post({ flint: 'snapshot', html });
    }
  }

  /**
   * Runs the complete document `doc` (scripts included) in a fresh frame, swapped in once loaded;
   * then calls `onShown()`. A later `run` supersedes this one, whose `onShown` is then never called.
   * (`live`: `runLive`'s.)
   */
  run(doc, onShown, live = false) {
    this.newAnswer = false;
    this.lives.running(live);
    const run = this.#newRun();
    if (this.spare) {
      // No frame to create: the page is written as soon as the spare frame is ready.
      this.#runNow(doc, onShown);
      return;
    }
    frameQueue.add(() => {
      if (!this.disposed && run === this.runs) this.#runNow(doc, onShown);
    });
  }

  /** `run` for a finished page; `app`: a React project's, which a frame made ready may take (`LiveRuns.runReady`). */
  runFinished(doc, app, onShown) {
    if (!(app && this.lives.runReady(doc, onShown))) this.run(doc, onShown);
  }

  /** A streaming project's page `doc` (see `LiveRuns`). */
  runLive(doc) {
    this.lives.offer(doc);
  }

  /** Keeps a frame running the warm page `doc` for the next React answer (`LiveRuns.prepare`); null lets it go. */
  prepare(doc) {
    if (!this.disposed) this.lives.prepare(doc ?? null);
  }

  /** `frame`, a final frame that already runs a warm page, is this answer's (`LiveRuns`); shown at once if `live`. */
  adopt(frame, live) {
    this.newAnswer = false;
    this.lives.running(live);
    frame.run = this.#newRun();
    this.#dropPending();
    if (!this.finals.includes(frame)) this.finals.push(frame);
    this.lives.started(frame);
    if (frame.loaded && live) this.#show(frame);
  }

  /** `frame` took its finished page by a swap (`LiveRuns.runReady`), unless a later run came first. */
  showSwapped(frame) {
    if (frame.run === this.runs && !frame.shown) this.#show(frame);
    else if (frame.run === this.runs) frame.onShown?.();
    frame.onShown = null;
  }

  /** Pick mode on the finished page shown: the next click there picks an element, and `onPicked(json)`
   *  gets its report (its path, or `cancelled`); false when no finished page is shown. `pick(false)` ends it. */
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
    this.console.dispose();
    this.visibility.disconnect();
    this.disposed = true;
    if (!pool.park(this.runtime)) this.runtime?.discard();
    if (!pool.park(this.spare)) this.spare?.discard();
    this.lives.prepare(null);
    for (const f of this.finals) f.discard();
  }

  /** A message from one of this preview's frames, over its port. */
  receive(frame, data) {
    if (this.disposed || frame.port === null) return;
    const over = frame.flooding(performance.now(), data);
    if (over) {
      this.#flooded(frame, over);
      return;
    }
    const problem = messageProblem(data);
    if (problem !== null) {
      // Once per frame: a page may send nonsense as often as its port allows.
      if (!frame.warned) console.warn(`A preview frame's message was dropped (${problem}).`);
      frame.warned = true;
      return;
    }
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
          if (data.resync === true) {
            // The frame did not have the text the append followed: send the latest whole.
            this.latest ??= this.sent;
            this.sent = null;
          }
          if (this.newAnswer) {
            // The new answer is on screen: retire the previous answer's final frame.
            this.newAnswer = false;
            this.#bringToFront(this.runtime);
          }
          if (this.latest !== null) scheduler.request(this);
        }
        break;
      case 'loaded':
        frame.loaded = true;
        if (frame.kind === 'final' && frame.sent) this.#show(frame);
        break;
      case 'swapped':
        this.lives.swapped(frame, data.ok);
        break;
      case 'console':
        this.console.log(data.level, data.text);
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
          onPicked(pickedJson(data));
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
      this.console.note('warn', 'A preview frame navigated away while an answer was shown; it was replaced with a fresh one.');
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
    const kept = pool.take(this, 'runtime');
    if (kept) {
      this.runtime = kept;
      this.runtimeReady = kept.ready;
      if (!this.front) this.#bringToFront(kept);
      return;
    }
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
    // The snapshot in flight went to the old frame; the next one goes to the new, whole.
    this.inFlight = false;
    this.sent = null;
    if (this.front === frame) this.front = null;
    this.#newRuntime();
  }

  // A new run supersedes the earlier ones: their callbacks are never called from now on (the app
  // drops a run's closure when the next replaces it), though their frames may load before the new
  // run's starts (`frameQueue`).
  #newRun() {
    for (const frame of this.finals) frame.onShown = null;
    return ++this.runs;
  }

  #dropPending() {
    for (const pending of this.finals.filter((f) => f !== this.front)) pending.discard();
    this.finals = this.finals.filter((f) => f === this.front);
  }

  #runNow(doc, onShown) {
    this.#dropPending();
    const spare = this.spare;
    this.spare = null;
    this.#startFinal(doc, onShown, spare);
  }

  /** Writes `doc` into `frame` (a spare) or a new final frame, swapped in once it is parsed. */
  #startFinal(doc, onShown, frame = null) {
    frame ??= new Frame(this, 'final');
    this.lives.started(frame);
    frame.doc = doc;
    frame.onShown = onShown;
    frame.startedAt = performance.now();
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
      this.console.note('warn', 'The page keeps reloading or navigating away, so it is left as it is: run it again to start it over.');
      this.#show(frame);
      return;
    }
    this.restarts.push(now);
    this.console.note('warn', 'The page reloaded or navigated away; it was started again.');
    const onShown = frame.shown ? null : frame.onShown;
    frame.onShown = null;
    this.#startFinal(frame.doc, onShown);
  }

  /** `frame` sent more than it may in a second (`over`: 'messages' or 'bytes'): it is not heard again. */
  #flooded(frame, over) {
    if (frame.kind === 'runtime') {
      this.console.note('warn', 'A preview frame sent more than Flint\'s runtime ever does; it was replaced with a fresh one.');
      this.#replaceRuntime(frame);
      return;
    }
    frame.close();
    frame.muted = true;
    const what = over === 'bytes' ? `${FRAME_BYTES_PER_S / 1e6} MB of messages` : `${FRAME_MESSAGES_PER_S} messages`;
    this.console.note('warn', `The page sent more than ${what} in a second; its console is no longer shown.`);
  }

  #show(frame) {
    if (frame.shown || !this.finals.includes(frame)) return;
    frame.shown = true;
    this.#bringToFront(frame);
    const onShown = frame.onShown;
    frame.onShown = null;
    onShown?.();
    this.lives.shown();
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
}

/** Creates the preview inside `container`; `onConsole(level, text)` receives the pages' console. */
export function createPreview(container, runtimeUrl, onConsole) {
  return new FlintPreview(container, runtimeUrl, onConsole);
}
