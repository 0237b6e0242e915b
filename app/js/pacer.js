// How often streamed text is painted (the editor's appends, the previews' snapshots): every
// animation frame while painting is cheap, less often when a paint costs more than the frame
// allows, never more than MAX_BEHIND_MS behind, and never in the frame after the person pressed a
// key or a pointer, so their input is what that frame paints. Nothing here drops text: a skipped
// paint leaves it queued for the next, and the stream's end is painted at once by the caller.
// Loaded by editor.js and preview.js (as a wasm-bindgen snippet beside them); no DOM at import.

/** One frame at 60 Hz, in ms. */
export const FRAME_MS = 1000 / 60;
/** The share of a frame streamed paints may take on average (the rest is the page's and input's). */
export const BUDGET_MS = 6;
/** The longest painted text may lag what arrived, in ms. */
export const MAX_BEHIND_MS = 250;
// Frames after a paint whose overrun is counted as the paint's: the one holding it, and the next,
// where Monaco renders what the paint changed (it schedules its view render for the next frame).
const SETTLE_FRAMES = 2;
// Weight of the newest paint in the smoothed cost: one slow paint stretches the interval at once,
// cheap ones bring it back over a few frames.
const NEW_COST_WEIGHT = 0.4;

/**
 * The pacing decision for one painter. Call `frame(now)` at the start of every animation frame
 * that has something to paint (and while `measuring()`), then `shouldPaint(now)`; after painting,
 * `painted(now, ms)` with what the paint cost synchronously. What the next SETTLE_FRAMES frames run
 * over by counts against that paint (the layout and rendering of it happen after it returns).
 */
export class Pacer {
  constructor({ frameMs = FRAME_MS, budgetMs = BUDGET_MS, maxBehindMs = MAX_BEHIND_MS } = {}) {
    this.frameMs = frameMs;
    this.budgetMs = budgetMs;
    this.maxBehindMs = maxBehindMs;
    this.cost = 0;
    this.lastPaint = -Infinity;
    this.lastFrame = null;
    // Frames left in the last paint's measuring window, and what it has cost so far.
    this.settling = 0;
    this.measured = 0;
    this.inputAt = -Infinity;
    this.yieldFrame = false;
    this.waitingSince = null;
  }

  /** Text arrived at `now` that is not painted yet. */
  pending(now) {
    this.waitingSince ??= now;
  }

  /** An animation frame starts at `now`. */
  frame(now) {
    if (this.settling > 0 && this.lastFrame !== null) {
      this.measured += Math.max(0, now - this.lastFrame - this.frameMs);
      if (--this.settling === 0) this.#learn(this.measured);
    }
    // A key or pointer since the previous frame began: this frame is the person's.
    this.yieldFrame = this.inputAt > (this.lastFrame ?? -Infinity);
    this.lastFrame = now;
  }

  /** How long to leave between two paints: the cost spread so it takes `budgetMs` per frame. */
  interval() {
    return Math.min(this.maxBehindMs, (this.cost * this.frameMs) / this.budgetMs);
  }

  /** How long the oldest unpainted text has waited at `now` (0 when nothing waits). */
  behind(now) {
    return this.waitingSince === null ? 0 : now - this.waitingSince;
  }

  /** Whether to paint in the frame that started at `now`. */
  shouldPaint(now) {
    if (this.waitingSince === null) return false;
    if (this.behind(now) >= this.maxBehindMs) return true;
    if (this.yieldFrame) return false;
    // Rounded down a little so a paint due "this frame" is not put off by timer jitter.
    return now - this.lastPaint >= this.interval() - 2;
  }

  /** Painted at `now`, costing `ms` of the frame's script. */
  painted(now, ms) {
    // Painting every frame: each window is cut short by the next paint, and learns what it saw.
    if (this.settling > 0) this.#learn(this.measured);
    this.lastPaint = now;
    this.waitingSince = null;
    this.settling = SETTLE_FRAMES;
    this.measured = ms;
  }

  /** Whether the frames after the last paint are still being timed (call `frame` for them). */
  measuring() {
    return this.settling > 0;
  }

  /** The person pressed a key or a pointer at `now`. */
  input(now) {
    this.inputAt = now;
  }

  /** A new stream: its first text is painted at once (what paints cost is kept). */
  reset() {
    this.lastPaint = -Infinity;
  }

  #learn(ms) {
    this.cost = this.cost === 0 ? ms : this.cost * (1 - NEW_COST_WEIGHT) + ms * NEW_COST_WEIGHT;
  }
}

// Every pacer hears the person's keys and pointers, from one pair of listeners on the window
// (capturing, so a handler that stops propagation cannot hide them). Weakly held: a disposed
// editor's pacer goes with it.
const listening = new Set();
let watching = false;

/** Makes `pacer` hear the page's keydown and pointerdown events. */
export function watchInput(pacer) {
  listening.add(new WeakRef(pacer));
  if (watching || typeof window === 'undefined') return;
  watching = true;
  const heard = () => {
    const now = performance.now();
    for (const ref of listening) {
      const p = ref.deref();
      if (p) p.input(now);
      else listening.delete(ref);
    }
  };
  window.addEventListener('keydown', heard, true);
  window.addEventListener('pointerdown', heard, true);
}
