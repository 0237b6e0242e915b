// One preview frame: a sandboxed iframe loading preview.html and the MessagePort the app talks to it
// over (preview.js says why). Used by preview.js.

const SANDBOX = 'allow-scripts';

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

// Messages and bytes a frame may send in a second. The runtime's own capture sends at most about
// 200 lines a second of at most 4,000 characters (1.6 MB) and one `applied` per snapshot, so a frame
// past either is not Flint's runtime talking: its port is closed. Bytes as well as messages: 1,500
// messages of 100 KB a second passed the count alone and stalled the app for seconds.
export const FRAME_MESSAGES_PER_S = 2_000;
export const FRAME_BYTES_PER_S = 4_000_000;
// Deeper than any message the runtime sends: the walk below stops there.
const DEPTH_MAX = 8;

/**
 * About how many bytes `data` (a message as received) holds in memory, or Infinity once over
 * `limit`: strings two bytes a character, other values 8. The runtime sends plain objects, arrays,
 * strings, numbers and booleans; anything else (a buffer, a Map, a Blob) is not it talking.
 */
export function messageBytes(data, limit = Infinity) {
  let total = 0;
  const walk = (value, depth) => {
    if (total > limit) return;
    if (typeof value === 'string') {
      total += 2 * value.length;
    } else if (value === null || typeof value !== 'object') {
      total += 8;
    } else if (depth >= DEPTH_MAX
      || (!Array.isArray(value) && Object.getPrototypeOf(value) !== Object.prototype)) {
      total = Infinity;
    } else {
      total += 8;
      for (const key of Object.keys(value)) {
        total += 2 * key.length;
        walk(value[key], depth + 1);
        if (total > limit) return;
      }
    }
  };
  walk(data, 0);
  return total > limit ? Infinity : total;
}

/** What a frame may send over its port: messages and bytes in any one-second window. */
export class PortLimit {
  constructor({ messagesPerS = FRAME_MESSAGES_PER_S, bytesPerS = FRAME_BYTES_PER_S } = {}) {
    this.messagesPerS = messagesPerS;
    this.bytesPerS = bytesPerS;
    this.windowStart = -Infinity;
    this.messages = 0;
    this.bytes = 0;
  }

  /** Counts `data`, received at `now` (ms): null while within the limits, else which was passed. */
  over(now, data) {
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.messages = 0;
      this.bytes = 0;
    }
    if (++this.messages > this.messagesPerS) return 'messages';
    this.bytes += messageBytes(data, this.bytesPerS - this.bytes);
    return this.bytes > this.bytesPerS ? 'bytes' : null;
  }
}
// How long a final frame that loaded again has to answer a ping: a page that rewrote itself with
// document.open() still holds the port; one that navigated or reloaded does not. (A page leaving
// says so first, from `pagehide`, unless it erased that listener with document.open(): the ping is
// the fallback, generous because a busy page answers late.)
const PING_MS = 3_000;

/** One sandboxed frame loading preview.html, and the port the app talks to it over. */
export class Frame {
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
    // A streaming project's frame: the page being swapped in, and when it was sent (live runs).
    this.swapping = null;
    this.swapAt = 0;
    // What it sent in the current one-second window.
    this.limit = new PortLimit();
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

  /** Counts a message: null, or 'messages' or 'bytes' when the frame sent more than it may in this second. */
  flooding(now, data) {
    return this.limit.over(now, data);
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
