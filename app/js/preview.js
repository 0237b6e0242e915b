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

const SANDBOX = 'allow-scripts';

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
    this.runtime = makeFrame(container, 'Preview');
    this.runtimeReady = false;
    this.finals = [];
    this.shownHandlers = new Map();
    this.front = null;
    this.latest = null;
    this.inFlight = false;
    this.frame = 0;
    this.newAnswer = false;
    this.onMessage = (event) => this.#receive(event);
    window.addEventListener('message', this.onMessage);
    this.runtime.src = runtimeUrl;
    this.#bringToFront(this.runtime);
  }

  /** A new answer starts: its first snapshot replaces whatever the previous answer left on screen. */
  begin() {
    this.newAnswer = true;
  }

  /** Shows `html` (a partial document) at the next animation frame; later snapshots replace it. */
  snapshot(html) {
    this.latest = html;
    if (!this.frame) {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.#postLatest();
      });
    }
  }

  /**
   * Runs the complete document `doc` (scripts included) in a fresh frame, swapped in once loaded;
   * then calls `onShown()`. A later `run` supersedes this one, whose `onShown` is then never called.
   */
  run(doc, onShown) {
    this.newAnswer = false;
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
    if (this.frame) cancelAnimationFrame(this.frame);
    this.runtime.remove();
    for (const f of this.finals) f.remove();
  }

  #postLatest() {
    if (!this.runtimeReady || this.inFlight || this.latest === null) return;
    const html = this.latest;
    this.latest = null;
    this.inFlight = true;
    this.runtime.contentWindow.postMessage({ flint: 'snapshot', html }, '*');
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
    const fromRuntime = event.source === this.runtime.contentWindow;
    const fromFinal = this.finals.some((f) => f.contentWindow === event.source);
    if (!fromRuntime && !fromFinal) return;
    switch (data.flint) {
      case 'ready':
        if (fromRuntime) {
          this.runtimeReady = true;
          this.#postLatest();
        }
        break;
      case 'applied':
        if (fromRuntime) {
          this.inFlight = false;
          if (this.newAnswer) {
            // The new answer is on screen: retire the previous answer's final frame.
            this.newAnswer = false;
            this.#bringToFront(this.runtime);
          }
          this.#postLatest();
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
