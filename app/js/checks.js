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

import { HiddenRun, hiddenHost } from './hidden_run.js';

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
const checkHost = hiddenHost(HOST_STYLE, 'check-frames');

class PageCheck extends HiddenRun {
  constructor(runtimeUrl, doc, expect, onDone) {
    super(
      { runtimeUrl, host: checkHost, title: 'Checking the page', role: 'check', style: 'border:0;width:100%;height:100%;' },
      {
        messages: MESSAGES_MAX,
        bytes: REPORT_BYTES,
        ms: CHECK_MS,
        what: 'check',
        doing: 'checked',
        late: `The page did not finish loading and being clicked through in ${CHECK_MS / 1000} s: a script may loop or block.`,
      },
      onDone,
    );
    this.doc = doc;
    this.expect = expect;
  }

  ask() {
    return { flint: 'check', doc: this.doc, expect: this.expect };
  }

  answer(data) {
    if (data.flint !== 'checked') return null;
    return typeof data.failed === 'string' ? { failed: data.failed } : { results: data.results, text: data.text, ms: data.ms };
  }

  /** The outcome as the JSON the app reads, capped. */
  deliver(outcome) {
    let json;
    try {
      json = JSON.stringify(outcome);
    } catch (_) {
      json = undefined;
    }
    if (typeof json !== 'string' || json.length > REPORT_CHARS) {
      json = JSON.stringify({ failed: 'The page\'s checks came back in a form Flint does not read.' });
    }
    return json;
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
