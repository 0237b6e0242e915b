// "Looks like the picture": a finished page runs a third time in a hidden picture frame (the same
// sandboxed preview.html as every preview frame, see public/preview-pixels.js), laid out at the
// mock's width, and draws itself to pixels that the worker compares with the mock
// (`WorkerRequest::Likeness`, worker/src/likeness.rs).
//
// The pixels are the page's word: it shares the realm that draws it and can draw anything, which
// only hurts its own score. What this file defends is the app: a frame is asked once and answers
// once; a drawing is passed on only when its size is exactly what was asked for (at most
// PIXELS_WIDTH_MAX wide, no taller than asked, its bytes filling that size), so a page cannot make
// the app or the worker hold more than one bounded picture; a frame that sends more messages or
// bytes than the runtime ever does, or sends pixels unasked, is given up on at once.

import { messageProblem } from './frame_messages.js';
import { messageBytes } from './preview_frame.js';
import { frameQueue } from './preview_pacing.js';

/** Widest drawing accepted (px): protocol/src/frames.rs `PIXELS_WIDTH_MAX`, preview-pixels.js. */
export const PIXELS_WIDTH_MAX = 320;
/** Tallest drawing accepted (px): protocol/src/frames.rs `PIXELS_HEIGHT_MAX`. */
export const PIXELS_HEIGHT_MAX = 8 * PIXELS_WIDTH_MAX;
/** How long a page has to load, settle and be drawn (the runtime waits at most 1.5 s for its load). */
const PICTURE_MS = 5_000;
/** Messages a picture frame may send: the runtime sends two ('ready', 'pixels'). */
const MESSAGES_MAX = 4;
/** Bytes beyond the largest drawing a frame may send in all (as `messageBytes` counts them). */
const SLACK_BYTES = 64 * 1024;

// Picture frames live in a host of their own, out of sight and out of the pointer's way; each frame
// is sized to the mock (its width is what the page is laid out at, its height what `vh` means).
const HOST_STYLE = 'position:fixed;left:-24000px;top:0;width:0;height:0;overflow:hidden;visibility:hidden;pointer-events:none;';
let host = null;
function pictureHost() {
  if (!host || !host.isConnected) {
    host = document.createElement('div');
    host.setAttribute('style', HOST_STYLE);
    host.setAttribute('aria-hidden', 'true');
    host.dataset.testid = 'picture-frames';
    document.body.appendChild(host);
  }
  return host;
}

/** What a frame asked to draw `width` CSS px wide and at most `maxHeight` tall must send back. */
export function askedSize(width, maxHeight) {
  const scale = Math.min(1, PIXELS_WIDTH_MAX / width);
  const outWidth = Math.max(1, Math.round(width * scale));
  const heightMax = Math.min(PIXELS_HEIGHT_MAX, Math.ceil(maxHeight * scale));
  // A page never needs more CSS px than the drawing can hold.
  return { width, maxHeight: Math.floor(heightMax / scale), outWidth, heightMax };
}

/** The base64 length of `bytes` bytes (padded). */
const base64Length = (bytes) => Math.ceil(bytes / 3) * 4;

/** Why `data` (a checked `pixels` message) is not the drawing asked for (a sentence), or null. */
export function pixelsProblem(data, asked) {
  if (typeof data.failed === 'string') return null;
  const { width, height, rgba } = data;
  if (!Number.isInteger(width) || !Number.isInteger(height) || typeof rgba !== 'string') {
    return 'The page\'s drawing came back without its size or pixels.';
  }
  if (width !== asked.outWidth || height < 1 || height > asked.heightMax) {
    return `The page's drawing is ${width}×${height} px; ${asked.outWidth} px wide and at most ${asked.heightMax} tall was asked for.`;
  }
  if (rgba.length !== base64Length(width * height * 4)) {
    return `The page's drawing has ${rgba.length} characters of pixels, not the ${base64Length(width * height * 4)} its size needs.`;
  }
  return null;
}

class PagePicture {
  constructor(runtimeUrl, doc, width, maxHeight, viewHeight, onDone) {
    this.runtimeUrl = runtimeUrl;
    this.doc = doc;
    this.asked = askedSize(width, maxHeight);
    this.viewHeight = viewHeight;
    this.onDone = onDone;
    this.bytesMax = 2 * base64Length(this.asked.outWidth * this.asked.heightMax * 4) + SLACK_BYTES;
    this.done = false;
    this.sent = false;
    this.el = null;
    this.port = null;
    this.loads = 0;
    this.messages = 0;
    this.bytes = 0;
    this.timer = 0;
    frameQueue.add(() => this.#create());
  }

  #create() {
    if (this.done) return;
    const el = document.createElement('iframe');
    el.setAttribute('sandbox', 'allow-scripts');
    el.setAttribute('title', 'Drawing the page');
    el.setAttribute('aria-hidden', 'true');
    el.setAttribute('tabindex', '-1');
    el.setAttribute('data-role', 'picture');
    el.setAttribute('style', `border:0;width:${this.asked.width}px;height:${this.viewHeight}px;`);
    el.addEventListener('load', () => this.#load());
    el.src = this.runtimeUrl;
    pictureHost().appendChild(el);
    this.el = el;
  }

  #load() {
    // The second load is the page's own (document.open/write/close); a third is it navigating.
    if (++this.loads === 2 && this.sent) return;
    if (this.loads > 1) {
      this.#finish({ failed: 'The page reloaded or navigated away on its own while it was drawn.' });
      return;
    }
    const channel = new MessageChannel();
    this.port = channel.port1;
    this.port.onmessage = (event) => this.receive(event.data);
    this.el.contentWindow.postMessage({ flint: 'connect' }, '*', [channel.port2]);
  }

  /** One message from the frame (public for the tests, which play a frame). */
  receive(data) {
    if (this.done) return;
    this.bytes += messageBytes(data, this.bytesMax - this.bytes);
    if (++this.messages > MESSAGES_MAX || this.bytes > this.bytesMax) {
      this.#finish({ failed: 'The page sent its picture frame more than Flint\'s runtime ever does.' });
      return;
    }
    const problem = messageProblem(data);
    if (problem !== null) {
      if (!this.warned) console.warn(`A picture frame's message was dropped (${problem}).`);
      this.warned = true;
      return;
    }
    if (data.flint === 'ready' && !this.sent) {
      this.sent = true;
      this.port.postMessage({ flint: 'picture', doc: this.doc, width: this.asked.width, max_height: this.asked.maxHeight });
      this.timer = setTimeout(() => this.#finish({
        failed: `The page was not drawn within ${PICTURE_MS / 1000} s: a script may loop or block.`,
      }), PICTURE_MS);
    } else if (data.flint === 'pixels') {
      if (!this.sent) {
        this.#finish({ failed: 'The page sent pixels before it was asked to draw.' });
        return;
      }
      const wrong = pixelsProblem(data, this.asked);
      this.#finish(wrong !== null ? { failed: wrong } : typeof data.failed === 'string' ? { failed: data.failed } : {
        width: data.width, height: data.height, rgba: data.rgba, page_height: data.page_height ?? null, ms: data.ms ?? null,
      });
    }
  }

  #finish(outcome) {
    if (this.done) return;
    this.#stop();
    // Not from inside this task: the app may drop this picture (and its callback) in answer.
    queueMicrotask(() => this.onDone(outcome));
  }

  #stop() {
    this.done = true;
    clearTimeout(this.timer);
    this.port?.close();
    this.port = null;
    this.el?.remove();
    this.el = null;
  }

  /** Forgets the picture: its frame goes and `onDone` is never called. */
  dispose() {
    this.done = true;
    this.#stop();
    this.onDone = () => {};
  }
}

/**
 * Runs `doc` in a hidden picture frame `width` CSS px wide and `viewHeight` tall (the mock's size)
 * and draws at most `maxHeight` CSS px of it; `onDone(outcome)` gets, once, either
 * `{width, height, rgba, page_height, ms}` (a `RgbaImage` for the worker, plus the page's height)
 * or `{failed}` with a sentence.
 */
export function createPicture(runtimeUrl, doc, width, maxHeight, viewHeight, onDone) {
  return new PagePicture(runtimeUrl, doc, width, maxHeight, viewHeight, onDone);
}
