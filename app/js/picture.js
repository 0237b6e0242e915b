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

import { HiddenRun, hiddenHost } from './hidden_run.js';

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
const pictureHost = hiddenHost(HOST_STYLE, 'picture-frames');

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

class PagePicture extends HiddenRun {
  constructor(runtimeUrl, doc, width, maxHeight, viewHeight, onDone) {
    const asked = askedSize(width, maxHeight);
    super(
      {
        runtimeUrl,
        host: pictureHost,
        title: 'Drawing the page',
        role: 'picture',
        style: `border:0;width:${asked.width}px;height:${viewHeight}px;`,
      },
      {
        messages: MESSAGES_MAX,
        bytes: 2 * base64Length(asked.outWidth * asked.heightMax * 4) + SLACK_BYTES,
        ms: PICTURE_MS,
        what: 'picture',
        doing: 'drawn',
        late: `The page was not drawn within ${PICTURE_MS / 1000} s: a script may loop or block.`,
      },
      onDone,
    );
    this.doc = doc;
    this.asked = asked;
  }

  ask() {
    return { flint: 'picture', doc: this.doc, width: this.asked.width, max_height: this.asked.maxHeight };
  }

  answer(data) {
    if (data.flint !== 'pixels') return null;
    if (!this.sent) return { failed: 'The page sent pixels before it was asked to draw.' };
    const wrong = pixelsProblem(data, this.asked);
    if (wrong !== null) return { failed: wrong };
    if (typeof data.failed === 'string') return { failed: data.failed };
    return { width: data.width, height: data.height, rgba: data.rgba, page_height: data.page_height ?? null, ms: data.ms ?? null };
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
