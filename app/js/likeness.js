// "Looks like the picture", the app's side: the prompt's picture decoded to pixels once (at the
// width a picture frame draws, at most PIXELS_WIDTH_MAX), and each finished page drawn by a hidden
// picture frame (picture.js) at the picture's own size. Rust sends both to the worker to compare.
//
// Drawing a page runs it a third time in this thread's process: at most DRAWING_MAX pages are drawn
// at once, the rest wait their turn, so ten tiles do not start ten frames on two cores.

import { PIXELS_WIDTH_MAX, createPicture } from './picture.js';

/** Pages drawn at once. */
const DRAWING_MAX = 2;
/** Pictures whose pixels are kept (a run has one; a few runs' worth spares a decode). */
const CACHED_MAX = 4;
/** How much of a page is drawn, in heights of its picture (as bench/vision.mjs measures). */
const HEIGHT_TIMES = 4;

const cache = new Map();
let drawing = 0;
const waiting = [];

/** Standard base64 of `bytes`, in chunks (a spread of millions of arguments would throw). */
function base64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 32768) s += String.fromCharCode(...bytes.subarray(i, i + 32768));
  return btoa(s);
}

/** The size a `width` × `height` picture is compared at: as picture.js scales a drawing. */
function comparedSize(width, height) {
  const scale = Math.min(1, PIXELS_WIDTH_MAX / width);
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/** The picture's pixels (`{width, height, rgba}`), decoded once per picture. */
function mockPixels(mediaType, data, width, height) {
  const key = `${width}x${height}:${data}`;
  let pixels = cache.get(key);
  if (!pixels) {
    pixels = (async () => {
      const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
      const bitmap = await createImageBitmap(new Blob([bytes], { type: mediaType }));
      const size = comparedSize(width, height);
      const canvas = new OffscreenCanvas(size.width, size.height);
      const context = canvas.getContext('2d');
      context.drawImage(bitmap, 0, 0, size.width, size.height);
      bitmap.close();
      return { ...size, rgba: base64(context.getImageData(0, 0, size.width, size.height).data) };
    })();
    cache.set(key, pixels);
    if (cache.size > CACHED_MAX) cache.delete(cache.keys().next().value);
    // A picture that failed to decode is tried again next time.
    pixels.catch(() => cache.delete(key));
  }
  return pixels;
}

function next() {
  while (drawing < DRAWING_MAX && waiting.length > 0) waiting.shift().start();
}

class Drawing {
  constructor(runtimeUrl, doc, mediaType, data, width, height, onDone) {
    this.args = { runtimeUrl, doc, mediaType, data, width, height };
    this.onDone = onDone;
    this.state = 'waiting';
    this.picture = null;
    waiting.push(this);
    next();
  }

  async start() {
    this.state = 'drawing';
    drawing += 1;
    const { runtimeUrl, doc, mediaType, data, width, height } = this.args;
    let mock;
    try {
      mock = await mockPixels(mediaType, data, width, height);
    } catch {
      this.#finish({ failed: 'The browser could not decode the picture to compare with.' });
      return;
    }
    if (this.state !== 'drawing') return;
    this.picture = createPicture(runtimeUrl, doc, width, HEIGHT_TIMES * height, height, (outcome) => {
      this.picture = null;
      this.#finish(typeof outcome.failed === 'string' ? { failed: outcome.failed } : {
        mock,
        page: { width: outcome.width, height: outcome.height, rgba: outcome.rgba },
      });
    });
  }

  #finish(result) {
    if (this.state !== 'drawing') return;
    this.#release();
    this.onDone(JSON.stringify(result));
  }

  #release() {
    if (this.state === 'drawing') drawing -= 1;
    if (this.state === 'waiting') waiting.splice(waiting.indexOf(this), 1);
    this.state = 'done';
    this.picture?.dispose();
    this.picture = null;
    queueMicrotask(next);
  }

  /** Forgets the drawing: its frame goes, its turn passes, and `onDone` is never called. */
  dispose() {
    if (this.state === 'done') return;
    this.#release();
    this.onDone = () => {};
  }
}

/**
 * Draws `doc` at the picture's size (`width` × `height` CSS px) once a turn is free, and calls
 * `onDone` once with JSON: `{mock, page}` (two `RgbaImage`s for the worker) or `{failed}`.
 */
export function drawForLikeness(runtimeUrl, doc, mediaType, data, width, height, onDone) {
  return new Drawing(runtimeUrl, doc, mediaType, data, width, height, onDone);
}
