// Page checks, used by app/src/interop/checks.rs: a complete page runs a second time in a hidden
// check frame (the same sandboxed preview.html as every preview frame, see public/preview-checks.js),
// where its buttons can be clicked without touching the page the person sees, and reports what works.
//
// The frame is spoken to over its own MessagePort, like the preview's frames, and told nothing of
// the prompt: only the fixed list of elements to look for, and whether to watch for a clock. It
// reports its checks and the page's text; app/src/judge/ matches the prompt's words against that
// text, so no page ever sees them. What comes back is the page's word (it shares the realm that
// judges it): this file only passes it on as JSON, capped in size; app/src/judge/ reads known names
// only. A page that never answers (a loop, a stall) is given up on after CHECK_MS; one that
// navigates or floods its port is given up on at once.

import { messageProblem } from './frame_messages.js';
import { messageBytes } from './preview_frame.js';
import { frameQueue } from './preview_pacing.js';

/**
 * How long a page has, from the moment it is sent, to be loaded, clicked through and judged: up to
 * 1.5 s to load, 2.5 s to show it keeps time (a clock), half a second of clicks, and room for a
 * machine busy with eight streams.
 */
const CHECK_MS = 8_000;
/** Messages a check frame may send: the runtime sends two ('ready', 'checked'). */
const MESSAGES_MAX = 20;
/**
 * Bytes a check frame may send in all (as `messageBytes` counts them), and the longest report passed
 * on, in UTF-16 units: the runtime's report is at most 100,000 characters of text and 64 short results.
 */
const REPORT_BYTES = 1024 * 1024;
const REPORT_CHARS = 1024 * 1024;

// Check frames live in one host of their own, laid out at a desktop size wherever the preview they
// check is (a tile's grid may be display:none while the person looks at the main preview, and a frame
// there would have no layout to judge). Invisible, and out of the way of the pointer.
const HOST_STYLE = 'position:fixed;left:-12000px;top:0;width:1024px;height:768px;visibility:hidden;pointer-events:none;';
let host = null;
function checkHost() {
  if (!host || !host.isConnected) {
    host = document.createElement('div');
    host.setAttribute('style', HOST_STYLE);
    host.setAttribute('aria-hidden', 'true');
    host.dataset.testid = 'check-frames';
    document.body.appendChild(host);
  }
  return host;
}

class PageCheck {
  constructor(runtimeUrl, doc, expect, onDone) {
    this.runtimeUrl = runtimeUrl;
    this.doc = doc;
    this.expect = expect;
    this.onDone = onDone;
    this.done = false;
    this.el = null;
    this.port = null;
    this.loads = 0;
    this.messages = 0;
    this.bytes = 0;
    this.timer = 0;
    // Frames are created one per animation frame, in turn with the previews' own.
    frameQueue.add(() => this.#create());
  }

  #create() {
    if (this.done) return;
    const el = document.createElement('iframe');
    el.setAttribute('sandbox', 'allow-scripts');
    el.setAttribute('title', 'Checking the page');
    el.setAttribute('aria-hidden', 'true');
    el.setAttribute('tabindex', '-1');
    el.setAttribute('data-role', 'check');
    el.setAttribute('style', 'border:0;width:100%;height:100%;');
    el.addEventListener('load', () => this.#load());
    el.src = this.runtimeUrl;
    checkHost().appendChild(el);
    this.el = el;
  }

  #load() {
    // The second load is the checked page's own (document.open/write/close fires it on the frame);
    // a third is the page reloading or navigating away.
    if (++this.loads === 2 && this.timer) return;
    if (this.loads > 1) {
      this.#finish({ failed: 'The page reloaded or navigated away on its own while it was checked.' });
      return;
    }
    const channel = new MessageChannel();
    this.port = channel.port1;
    this.port.onmessage = (event) => this.#receive(event.data);
    this.el.contentWindow.postMessage({ flint: 'connect' }, '*', [channel.port2]);
  }

  #receive(data) {
    if (this.done) return;
    this.bytes += messageBytes(data, REPORT_BYTES - this.bytes);
    if (++this.messages > MESSAGES_MAX || this.bytes > REPORT_BYTES) {
      this.#finish({ failed: 'The page sent its check frame more than Flint\'s runtime ever does.' });
      return;
    }
    const problem = messageProblem(data);
    if (problem !== null) {
      if (!this.warned) console.warn(`A check frame's message was dropped (${problem}).`);
      this.warned = true;
      return;
    }
    if (data.flint === 'ready' && !this.timer) {
      this.port.postMessage({ flint: 'check', doc: this.doc, expect: this.expect });
      this.timer = setTimeout(() => this.#finish({
        failed: `The page did not finish loading and being clicked through in ${CHECK_MS / 1000} s: a script may loop or block.`,
      }), CHECK_MS);
    } else if (data.flint === 'checked') {
      this.#finish(typeof data.failed === 'string'
        ? { failed: data.failed }
        : { results: data.results, text: data.text, ms: data.ms });
    }
  }

  #finish(outcome) {
    if (this.done) return;
    this.#stop();
    let json;
    try {
      json = JSON.stringify(outcome);
    } catch (_) {
      json = undefined;
    }
    if (typeof json !== 'string' || json.length > REPORT_CHARS) {
      json = JSON.stringify({ failed: 'The page\'s checks came back in a form Flint does not read.' });
    }
    // Not from inside this task: the app may drop this check (and its callback) in answer; a
    // check disposed before then has a callback that does nothing.
    queueMicrotask(() => this.onDone(json));
  }

  #stop() {
    this.done = true;
    clearTimeout(this.timer);
    this.port?.close();
    this.port = null;
    this.el?.remove();
    this.el = null;
  }

  /** Forgets the check: its frame goes and `onDone` is never called. */
  dispose() {
    this.done = true;
    this.#stop();
    this.onDone = () => {};
  }
}

/** Runs `doc` in a hidden check frame and judges it; `onDone(json)` gets the outcome once. */
export function createCheck(runtimeUrl, doc, expectJson, onDone) {
  let expect = [];
  try {
    expect = JSON.parse(expectJson);
  } catch (_) {
    // The app's own list; an unreadable one checks only what every page is checked for.
  }
  return new PageCheck(runtimeUrl, doc, expect, onDone);
}
