// The live preview's frames, used by app/src/interop/preview.rs.
//
// Every frame is `sandbox="allow-scripts"` without `allow-same-origin`: generated code runs in an
// opaque origin and can reach the app only through postMessage, which is accepted only from our own
// frames. Two kinds of frame:
// - the runtime frame (public/preview.html) stays loaded; while an answer streams it receives HTML
//   snapshots (at most one per animation frame, never more than one in flight) and morphs its DOM
//   with idiomorph, scripts stripped;
// - when the answer is complete, a final frame (srcdoc = console capture + the document) loads
//   hidden behind the visible one and is swapped in on `load`, so there is never a blank frame.
// Exactly one frame, the visible one, carries data-testid="preview-frame".
//
// Several previews (variation tiles) share one frame budget: see `scheduler` below.

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
const FRAME_BUDGET_MS = 8;
const OFFSCREEN_INTERVAL_MS = 500;

const scheduler = {
  waiting: new Set(),
  frame: 0,
  allowance: 0,
  lastRun: 0,
  // Benchmarks set `__flintPreviewBudgetMs = Infinity` to compare with updating every preview.
  budget() {
    return globalThis.__flintPreviewBudgetMs ?? FRAME_BUDGET_MS;
  },
  request(preview) {
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
    const ready = [...this.waiting]
      .filter((p) => p.canPost() && (p.visible || now - p.lastPosted >= OFFSCREEN_INTERVAL_MS))
      .sort((a, b) => (b.visible - a.visible) || (a.lastPosted - b.lastPosted));
    for (const preview of ready) {
      if (this.allowance <= 0) break;
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
const frameQueue = {
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

function makeFrame(container, title) {
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', SANDBOX);
  frame.setAttribute('title', title);
  frame.className = 'preview-frame back';
  container.appendChild(frame);
  return frame;
}

export class FlintPreview {
  constructor(container, runtimeUrl, onConsole) {
    this.container = container;
    this.onConsole = onConsole;
    this.runtime = null;
    this.runtimeReady = false;
    this.disposed = false;
    this.runs = 0;
    this.finals = [];
    this.shownHandlers = new Map();
    this.front = null;
    this.latest = null;
    this.inFlight = false;
    this.newAnswer = false;
    // For the scheduler: the last morph's cost (ms), when it was last posted, whether it is seen.
    this.cost = 1;
    this.lastPosted = -Infinity;
    this.visible = true;
    this.visibility = new IntersectionObserver((entries) => {
      this.visible = entries.some((e) => e.isIntersecting);
    });
    this.visibility.observe(container);
    this.onMessage = (event) => this.#receive(event);
    window.addEventListener('message', this.onMessage);
    frameQueue.add(() => {
      if (this.disposed) return;
      this.runtime = makeFrame(container, 'Preview');
      this.runtime.src = runtimeUrl;
      if (!this.front) this.#bringToFront(this.runtime);
    });
  }

  /** A new answer starts: its first snapshot replaces whatever the previous answer left on screen. */
  begin() {
    this.newAnswer = true;
    // A finished page still waiting for its frame belongs to the previous answer.
    this.runs++;
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
    this.inFlight = true;
    this.lastPosted = now;
    this.runtime.contentWindow.postMessage({ flint: 'snapshot', html }, '*');
  }

  /**
   * Runs the complete document `doc` (scripts included) in a fresh frame, swapped in once loaded;
   * then calls `onShown()`. A later `run` supersedes this one, whose `onShown` is then never called.
   */
  run(doc, onShown) {
    this.newAnswer = false;
    const run = ++this.runs;
    frameQueue.add(() => {
      if (!this.disposed && run === this.runs) this.#runNow(doc, onShown);
    });
  }

  #runNow(doc, onShown) {
    for (const pending of this.finals.filter((f) => f !== this.front)) {
      this.shownHandlers.delete(pending);
      pending.remove();
    }
    this.finals = this.finals.filter((f) => f === this.front);
    const frame = makeFrame(this.container, 'Preview (running)');
    this.finals.push(frame);
    // Shown on `load`, or earlier when the page's DOM is ready (the capture script says so): a
    // subresource that never answers (a CDN with no network) must not hold the page back.
    let shown = false;
    this.shownHandlers.set(frame, () => {
      if (shown || !this.finals.includes(frame)) return;
      shown = true;
      this.shownHandlers.delete(frame);
      this.#bringToFront(frame);
      onShown();
    });
    frame.addEventListener('load', () => this.shownHandlers.get(frame)?.(), { once: true });
    frame.srcdoc = doc;
  }

  dispose() {
    window.removeEventListener('message', this.onMessage);
    scheduler.forget(this);
    this.visibility.disconnect();
    this.disposed = true;
    this.runtime?.remove();
    for (const f of this.finals) f.remove();
  }

  #bringToFront(frame) {
    if (this.front === frame) return;
    const previous = this.front;
    frame.classList.remove('back');
    frame.setAttribute('data-testid', 'preview-frame');
    this.front = frame;
    if (previous) {
      previous.removeAttribute('data-testid');
      previous.classList.add('back');
    }
    // Final frames that are no longer shown are finished with; the runtime frame is kept for reuse.
    for (const old of this.finals) {
      if (old !== frame) {
        this.shownHandlers.delete(old);
        old.remove();
      }
    }
    this.finals = this.finals.filter((f) => f === frame);
  }

  #receive(event) {
    const data = event.data;
    if (!data || typeof data !== 'object' || typeof data.flint !== 'string') return;
    const fromRuntime = this.runtime !== null && event.source === this.runtime.contentWindow;
    const fromFinal = this.finals.some((f) => f.contentWindow === event.source);
    if (!fromRuntime && !fromFinal) return;
    switch (data.flint) {
      case 'ready':
        if (fromRuntime) {
          this.runtimeReady = true;
          if (this.latest !== null) scheduler.request(this);
        }
        break;
      case 'applied':
        if (fromRuntime) {
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
        if (fromFinal) {
          const frame = this.finals.find((f) => f.contentWindow === event.source);
          this.shownHandlers.get(frame)?.();
        }
        break;
      case 'console': {
        const level = ['log', 'info', 'warn', 'error'].includes(data.level) ? data.level : 'log';
        this.onConsole(level, typeof data.text === 'string' ? data.text : String(data.text));
        break;
      }
      default:
        break;
    }
  }
}

/** Creates the preview inside `container`; `onConsole(level, text)` receives the pages' console. */
export function createPreview(container, runtimeUrl, onConsole) {
  return new FlintPreview(container, runtimeUrl, onConsole);
}
