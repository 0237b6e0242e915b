// How the previews' snapshots and frames are paced: shared by every preview (tiles included) and
// by the check frames (app/js/checks.js). Used by preview.js.

import { MAX_BEHIND_MS, Pacer, watchInput } from './pacer.js';

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

export const scheduler = {
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
