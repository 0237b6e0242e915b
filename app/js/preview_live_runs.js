// A streaming React project's pages in one preview (preview.js `runLive`). The worker builds one a
// few times a second. The first runs in a fresh final frame, like a finished page; each later one
// is swapped into that frame (`swap`, public/preview-swap.js): React stays loaded, so the next
// build shows in tens of ms where a fresh frame takes most of a second. One swap is in flight at
// a time and only the newest page waits. A frame still starting is left to finish: discarding it
// for each newer page would show nothing until the stream ended. A frame that cannot swap (its
// browser cannot extend an import map, a module failed to load) has the page run in a fresh frame,
// and the rest of the answer's pages run that way too.
//
// Before a React answer exists, the app may have a frame made ready with a warm page (`prepare`):
// React loaded, nothing mounted. The answer's first page is then swapped into it, not started in a
// fresh frame: that frame would still be loading React when a fast answer's first build comes.
// An answer that never sends a live page (an HTML answer) leaves it for the next one.

import { Frame } from './preview_frame.js';

// A frame still starting, or a swap not yet answered, is waited for this long.
const LIVE_WAIT_MS = 3_000;

export class LiveRuns {
  constructor(preview) {
    this.preview = preview;
    // The newest page not yet run or swapped in.
    this.next = null;
    // The frame this answer's pages go to; whether the next frame started is to be it.
    this.frame = null;
    this.starting = false;
    this.swaps = true;
    // The frame made ready for the next answer (`prepare`), not yet any answer's.
    this.warm = null;
  }

  /** Keeps a final frame running the warm page `doc` for the next answer; null lets it go. */
  prepare(doc) {
    const warm = this.warm;
    if (warm !== null && warm.doc === doc && this.#fit(warm)) return;
    warm?.discard();
    this.warm = null;
    if (doc === null) return;
    const frame = new Frame(this.preview, 'final');
    frame.doc = doc;
    frame.startedAt = performance.now();
    this.warm = frame;
  }

  /** Whether `frame` still runs the page it was given and is heard. */
  #fit(frame) {
    return !frame.restarted && !frame.muted && frame.port !== null;
  }

  /** A new answer. */
  begin() {
    this.next = null;
    this.frame = null;
    this.swaps = true;
  }

  /** The preview runs a page (`live`: one of these). */
  running(live) {
    this.next = null;
    this.frame = null;
    this.starting = live;
  }

  /** The preview started `frame` for the page it runs. */
  started(frame) {
    if (!this.starting) return;
    this.frame = frame;
    this.starting = false;
    frame.swapping = null;
  }

  /** A final frame was shown: the page waiting for it goes now. */
  shown() {
    const next = this.next;
    if (next !== null) this.offer(next);
  }

  offer(doc) {
    const preview = this.preview;
    const warm = this.warm;
    if (this.frame === null && warm !== null) {
      // The answer's first page: the frame made ready for it becomes its frame.
      this.warm = null;
      if (this.#fit(warm)) preview.adopt(warm, true);
      else warm.discard();
    }
    const now = performance.now();
    const live = this.frame;
    if (live && preview.finals.includes(live) && this.#fit(live) && this.swaps) {
      const busy = !live.shown || live.swapping !== null;
      const since = now - (live.shown ? live.swapAt : live.startedAt);
      if (busy && since < LIVE_WAIT_MS) {
        this.next = doc;
        return;
      }
      if (!busy) {
        this.next = null;
        live.swapping = doc;
        live.swapAt = now;
        live.post({ flint: 'swap', doc });
        return;
      }
    }
    const starting = preview.finals.find((f) => f !== preview.front && !f.shown);
    if (starting && now - starting.startedAt < LIVE_WAIT_MS) {
      this.next = doc;
      return;
    }
    preview.run(doc, () => {}, true);
  }

  /**
   * Swaps a finished app's page `doc` into the frame its builds ran in, or else the frame made ready
   * (an answer done before its first build); `onShown` once it shows. False if there is neither:
   * the page then starts in a fresh frame, React's load and compile (most of a second) included.
   */
  runReady(doc, onShown) {
    const preview = this.preview;
    const live = this.frame;
    let frame = null;
    if (live && preview.finals.includes(live) && live.shown && this.swaps && this.#fit(live)) {
      frame = live;
    } else if (this.warm !== null && this.warm.loaded && this.#fit(this.warm)) {
      frame = this.warm;
      this.warm = null;
    }
    if (frame === null) return false;
    preview.adopt(frame, false);
    frame.onShown = onShown;
    frame.finishing = doc;
    frame.finishSent = false;
    // After the answer to a build's swap still in flight, if there is one.
    if (frame.swapping === null || frame.swapping === undefined) this.#finish(frame);
    return true;
  }

  #finish(frame) {
    frame.swapping = null;
    frame.finishSent = true;
    frame.post({ flint: 'swap', doc: frame.finishing });
  }

  /** `frame`'s answer to a `swap`. */
  swapped(frame, ok) {
    const finished = frame.finishing;
    if (finished !== undefined && finished !== null) {
      if (!frame.finishSent) {
        this.#finish(frame);
        return;
      }
      frame.finishing = null;
      if (ok) {
        frame.doc = finished;
        this.preview.showSwapped(frame);
      } else if (frame.run === this.preview.runs) {
        // Run as any finished page, in a fresh frame.
        this.preview.run(finished, frame.onShown ?? (() => {}));
      }
      return;
    }
    const doc = frame.swapping;
    if (frame !== this.frame || doc === null || doc === undefined) return;
    frame.swapping = null;
    if (ok) {
      // Started again after a reload, the frame runs the page it shows.
      frame.doc = doc;
    } else {
      this.swaps = false;
      this.next ??= doc;
    }
    this.shown();
  }
}
