// Loaded preview frames kept from one preview to the next, used by preview.js.
//
// Tiles come and go with every run, and making their frames (each loads preview.html) is about half
// of ten tiles' long frames (bench/browser.md, "Ten tiles again"). So a preview that goes away parks
// its frames here, `prepare` loads some ahead (when the person chooses how many variations), and a
// new preview takes them. Only a frame in which nothing but Flint's runtime ever ran is kept: a
// runtime frame (inert snapshots only; emptied when parked) or a final frame never given a page.
// Frames are moved with `moveBefore`, which keeps an iframe loaded; a browser without it keeps none.
import { messageProblem } from './frame_messages.js';
import { Frame } from './preview_frame.js';
import { frameQueue } from './preview_pacing.js';

// Per kind: the grid's most tiles.
const MAX_KEPT = 10;
const canMove = typeof Element !== 'undefined' && typeof Element.prototype.moveBefore === 'function';

// The owner of parked frames (in place of a preview): hears only that a frame is ready (a message
// checked against the frames' table like any other), and lets go of a frame that loads again.
const parked = {
  container: null,
  runtimeUrl: null,
  receive(frame, data) {
    if (messageProblem(data) === null && data.flint === 'ready') frame.ready = true;
  },
  reloaded(frame) {
    pool.drop(frame);
  },
};

export const pool = {
  frames: { runtime: [], final: [] },
  queued: { runtime: 0, final: 0 },

  /** Keeps `frame` if it is clean and there is room (true); otherwise the caller discards it. */
  park(frame) {
    if (!canMove || !frame?.port || frame.loads !== 1 || frame.warned || frame.muted) return false;
    if (frame.kind === 'final' && (frame.doc !== null || frame.sent)) return false;
    const list = this.frames[frame.kind];
    if (list.length >= MAX_KEPT || !parked.container) return false;
    frame.preview = parked;
    frame.el.classList.add('back');
    frame.el.removeAttribute('data-testid');
    parked.container.moveBefore(frame.el, null);
    // The last answer's page goes now, not when the next preview shows this frame.
    if (frame.kind === 'runtime') frame.post({ flint: 'snapshot', html: '' });
    list.push(frame);
    return true;
  },

  /** A kept frame of `kind` ('runtime' or 'final'), now `preview`'s, in its container; or null. */
  take(preview, kind) {
    const frame = this.frames[kind].pop();
    if (!frame) return null;
    frame.preview = preview;
    preview.container.moveBefore(frame.el, null);
    return frame;
  },

  drop(frame) {
    for (const kind of ['runtime', 'final']) this.frames[kind] = this.frames[kind].filter((f) => f !== frame);
    frame.discard();
  },

  /** Loads frames ahead for `count` previews of `runtimeUrl`, one per animation frame. */
  prepare(count, runtimeUrl) {
    if (!canMove || typeof document === 'undefined') return;
    if (!parked.container) {
      const holder = document.createElement('div');
      holder.className = 'preview-parking';
      holder.setAttribute('aria-hidden', 'true');
      document.body.appendChild(holder);
      parked.container = holder;
    }
    parked.runtimeUrl = runtimeUrl;
    for (const kind of ['runtime', 'final']) {
      const missing = Math.min(count, MAX_KEPT) - this.frames[kind].length - this.queued[kind];
      for (let i = 0; i < missing; i++) {
        this.queued[kind]++;
        frameQueue.add(() => {
          this.queued[kind]--;
          if (this.frames[kind].length < MAX_KEPT) this.frames[kind].push(new Frame(parked, kind));
        });
      }
    }
  },
};

/** Loads frames ahead for `count` previews (the variations or models about to run side by side). */
export function prepareFrames(count, runtimeUrl) {
  pool.prepare(count, runtimeUrl);
}
