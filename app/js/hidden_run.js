// A finished page run once more in a hidden sandboxed frame of its own (a check frame, a picture
// frame): the frame is made in turn with the previews' own, given a port on its first load, asked
// once when its runtime says `ready`, and given up on when it reloads or navigates, sends more
// messages or bytes than the runtime ever does, or does not answer in time. What is asked and what
// the answer means are the subclass's (`ask`, `answer`); every message is checked against the one
// table (`messageProblem`) before either sees it.

import { messageProblem } from './frame_messages.js';
import { messageBytes } from './preview_frame.js';
import { frameQueue } from './preview_pacing.js';

/** A host for hidden frames: a fixed box out of sight and out of the pointer's way. */
export function hiddenHost(style, testid) {
  let host = null;
  return () => {
    if (!host || !host.isConnected) {
      host = document.createElement('div');
      host.setAttribute('style', style);
      host.setAttribute('aria-hidden', 'true');
      host.dataset.testid = testid;
      document.body.appendChild(host);
    }
    return host;
  };
}

export class HiddenRun {
  /**
   * `frame`: `{ runtimeUrl, host, title, role, style }`; `limits`: `{ messages, bytes, ms, what,
   * doing, late }` (`what` names the frame in sentences, 'check'; `doing` what it does, 'checked';
   * `late` the sentence for a page that did not finish in `ms`).
   */
  constructor(frame, limits, onDone) {
    this.frame = frame;
    this.limits = limits;
    this.onDone = onDone;
    this.done = false;
    this.sent = false;
    this.el = null;
    this.port = null;
    this.loads = 0;
    this.messages = 0;
    this.bytes = 0;
    this.timer = 0;
    this.warned = false;
    // Frames are created one per animation frame, in turn with the previews' own.
    frameQueue.add(() => this.create());
  }

  create() {
    if (this.done) return;
    const el = document.createElement('iframe');
    el.setAttribute('sandbox', 'allow-scripts');
    el.setAttribute('title', this.frame.title);
    el.setAttribute('aria-hidden', 'true');
    el.setAttribute('tabindex', '-1');
    el.setAttribute('data-role', this.frame.role);
    el.setAttribute('style', this.frame.style);
    el.addEventListener('load', () => this.load());
    el.src = this.frame.runtimeUrl;
    this.frame.host().appendChild(el);
    this.el = el;
  }

  load() {
    // The second load is the page's own (document.open/write/close fires it on the frame); a third
    // is the page reloading or navigating away.
    if (++this.loads === 2 && this.sent) return;
    if (this.loads > 1) {
      this.finish({ failed: `The page reloaded or navigated away on its own while it was ${this.limits.doing}.` });
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
    const { messages, bytes, ms, what, late } = this.limits;
    this.bytes += messageBytes(data, bytes - this.bytes);
    if (++this.messages > messages || this.bytes > bytes) {
      this.finish({ failed: `The page sent its ${what} frame more than Flint's runtime ever does.` });
      return;
    }
    const problem = messageProblem(data);
    if (problem !== null) {
      if (!this.warned) console.warn(`A ${what} frame's message was dropped (${problem}).`);
      this.warned = true;
      return;
    }
    if (data.flint === 'ready' && !this.sent) {
      this.sent = true;
      this.port.postMessage(this.ask());
      this.timer = setTimeout(() => this.finish({ failed: late }), ms);
    } else if (data.flint !== 'ready') {
      const outcome = this.answer(data);
      if (outcome) this.finish(outcome);
    }
  }

  finish(outcome) {
    if (this.done) return;
    this.stop();
    const delivered = this.deliver(outcome);
    // Not from inside this task: the app may drop this run (and its callback) in answer; one
    // disposed before then has a callback that does nothing.
    queueMicrotask(() => this.onDone(delivered));
  }

  /** What `onDone` is given for `outcome` (as it is, unless a subclass says otherwise). */
  deliver(outcome) {
    return outcome;
  }

  stop() {
    this.done = true;
    clearTimeout(this.timer);
    this.port?.close();
    this.port = null;
    this.el?.remove();
    this.el = null;
  }

  /** Forgets the run: its frame goes and `onDone` is never called. */
  dispose() {
    this.stop();
    this.onDone = () => {};
  }
}
