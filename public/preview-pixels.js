// "Looks like the picture": a picture frame (a hidden sandboxed frame of its own, laid out at the
// mock's width) runs a finished page and draws it to pixels, which the app hands to the worker's
// likeness check. Loaded by preview.html before the runtime, which takes `FlintPixels` and deletes
// it before any page is written.
//
// The frame has an opaque origin and no network of its own to lend, so it draws itself: the live
// DOM is serialised into an SVG <foreignObject>, the SVG decoded as an image from a data: URL and
// drawn to a canvas (Chromium does not taint a canvas for a data: SVG, foreignObject or not), and
// the canvas read back. Scripts do not run in an SVG image and it loads nothing from outside, so
// the page's own <style> is what styles it; a canvas is kept as an image of its drawing and typed
// values as attributes, but images from URLs and web fonts are left out: a layout's blocks,
// colours and text are what the check compares. The pixels are the page's word
// (it shares this realm and can draw anything): a page that lies only hurts its own score, and the
// app checks their size against what it asked for (app/js/picture.js).
self.FlintPixels = (() => {
  'use strict';

  const apply = Reflect.apply;
  const method = (proto, name) => {
    const fn = proto[name];
    return (self, ...args) => apply(fn, self, args);
  };
  const getter = (proto, name) => {
    const get = Object.getOwnPropertyDescriptor(proto, name).get;
    return (self) => apply(get, self, []);
  };
  const doc = document;
  const serialize = method(XMLSerializer.prototype, 'serializeToString');
  const Serializer = XMLSerializer;
  const cloneNode = method(Node.prototype, 'cloneNode');
  const queryAllIn = method(Element.prototype, 'querySelectorAll');
  const remove = method(Element.prototype, 'remove');
  const documentElement = getter(Document.prototype, 'documentElement');
  const scrollHeight = getter(Element.prototype, 'scrollHeight');
  const styleOf = getter(HTMLElement.prototype, 'style');
  const setProperty = method(CSSStyleDeclaration.prototype, 'setProperty');
  const removeProperty = method(CSSStyleDeclaration.prototype, 'removeProperty');
  const createElement = method(Document.prototype, 'createElement');
  const queryAllDoc = method(Document.prototype, 'querySelectorAll');
  const toDataURL = method(HTMLCanvasElement.prototype, 'toDataURL');
  const replaceWith = method(Element.prototype, 'replaceWith');
  const setAttribute = method(Element.prototype, 'setAttribute');
  const getAttribute = method(Element.prototype, 'getAttribute');
  const inputValue = getter(HTMLInputElement.prototype, 'value');
  const textareaValue = getter(HTMLTextAreaElement.prototype, 'value');
  const checkedOf = getter(HTMLInputElement.prototype, 'checked');
  const TextArea = HTMLTextAreaElement;
  const setText = Object.getOwnPropertyDescriptor(Node.prototype, 'textContent').set;
  const bodyOf = getter(Document.prototype, 'body');
  const computed = (el) => apply(getComputedStyle, window, [el]);
  const getPropertyValue = method(CSSStyleDeclaration.prototype, 'getPropertyValue');
  const getContext = method(HTMLCanvasElement.prototype, 'getContext');
  const setWidth = Object.getOwnPropertyDescriptor(HTMLCanvasElement.prototype, 'width').set;
  const setHeight = Object.getOwnPropertyDescriptor(HTMLCanvasElement.prototype, 'height').set;
  const drawImage = method(CanvasRenderingContext2D.prototype, 'drawImage');
  const fillRect = method(CanvasRenderingContext2D.prototype, 'fillRect');
  const getImageData = method(CanvasRenderingContext2D.prototype, 'getImageData');
  const setFill = Object.getOwnPropertyDescriptor(CanvasRenderingContext2D.prototype, 'fillStyle').set;
  const setSmoothing = Object.getOwnPropertyDescriptor(CanvasRenderingContext2D.prototype, 'imageSmoothingQuality').set;
  const imageDataBytes = getter(ImageData.prototype, 'data');
  const ImageType = Image;
  const setSrc = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, 'src').set;
  const decodeImage = method(HTMLImageElement.prototype, 'decode');
  const encodeURI = encodeURIComponent;
  const fromCharCode = String.fromCharCode;
  const subarray = method(Uint8ClampedArray.prototype, 'subarray');
  const toBase64 = btoa;
  const join = method(Array.prototype, 'join');
  const push = method(Array.prototype, 'push');
  const now = performance.now.bind(performance);
  const min = Math.min;
  const max = Math.max;
  const ceil = Math.ceil;
  const round = Math.round;

  // Widest picture sent back, in pixels: the check compares a 64-cell grid, so 320 px (5 a cell)
  // is plenty, and a 1440 px mock's page comes back at 320×(its height × 0.22) — a few hundred KB
  // rather than megabytes. The app refuses anything wider (app/js/picture.js, the same number).
  const OUT_WIDTH_MAX = 320;
  // Elements that draw nothing in an SVG image or carry what should not be copied into one.
  const LEFT_OUT = 'script,noscript,iframe,object,embed,link[rel~="stylesheet" i],template';

  /** The page's height when laid out `width` CSS px wide (the frame should already be that wide). */
  function heightAt(root, width) {
    const style = styleOf(root);
    setProperty(style, 'width', `${width}px`);
    try {
      return scrollHeight(root);
    } finally {
      removeProperty(style, 'width');
    }
  }

  /**
   * The background a browser window would show behind the page: the root's, or else the body's
   * (CSS propagates it to the whole canvas). In an SVG image the root is only a box, so it is set
   * on the copy's root, stretched to the drawn height.
   */
  function canvasBackground(root) {
    for (const el of [root, bodyOf(doc)]) {
      if (!el) continue;
      const style = computed(el);
      const colour = getPropertyValue(style, 'background-color');
      const image = getPropertyValue(style, 'background-image');
      if (image !== 'none' || (colour !== 'transparent' && colour !== 'rgba(0, 0, 0, 0)')) {
        return `${colour} ${image === 'none' ? '' : image}`;
      }
    }
    return '#fff';
  }

  /**
   * What the copy would lose that the page shows: a canvas's drawing (as an image of it, unless
   * the page tainted it), and what was typed into fields (a copy keeps only their attributes).
   * The copy's elements come in the same document order as the page's.
   */
  function keepState(copy) {
    const canvases = queryAllDoc(doc, 'canvas');
    const copies = queryAllIn(copy, 'canvas');
    for (let i = 0; i < canvases.length && i < copies.length; i++) {
      try {
        const image = createElement(doc, 'img');
        setAttribute(image, 'src', toDataURL(canvases[i]));
        setAttribute(image, 'style', getAttribute(copies[i], 'style') ?? '');
        setAttribute(image, 'width', getAttribute(copies[i], 'width') ?? '300');
        setAttribute(image, 'height', getAttribute(copies[i], 'height') ?? '150');
        replaceWith(copies[i], image);
      } catch (_) {
        // A tainted canvas stays blank in the drawing.
      }
    }
    const fields = queryAllDoc(doc, 'input, textarea');
    const fieldCopies = queryAllIn(copy, 'input, textarea');
    for (let i = 0; i < fields.length && i < fieldCopies.length; i++) {
      const field = fields[i];
      if (field instanceof TextArea) {
        apply(setText, fieldCopies[i], [textareaValue(field)]);
      } else {
        setAttribute(fieldCopies[i], 'value', inputValue(field));
        if (checkedOf(field)) setAttribute(fieldCopies[i], 'checked', '');
      }
    }
  }

  /** The document as XHTML, without what an SVG image would not show anyway. */
  function markup(root, height) {
    const copy = cloneNode(root, true);
    // Before anything is removed, while the copy's elements still line up with the page's.
    keepState(copy);
    for (const el of queryAllIn(copy, LEFT_OUT)) remove(el);
    const style = styleOf(copy);
    setProperty(style, 'background', canvasBackground(root));
    setProperty(style, 'min-height', `${height}px`);
    // As the root of a window it would contain its children's margins; as a box in an SVG image
    // a heading's top margin would collapse through it and leave a white strip above the page.
    setProperty(style, 'display', 'flow-root');
    return serialize(new Serializer(), copy);
  }

  /** Latin-1 string of `bytes`, in slices (one `fromCharCode` per 32 KB), then base64. */
  function base64(bytes) {
    const parts = [];
    for (let i = 0; i < bytes.length; i += 32_768) {
      push(parts, apply(fromCharCode, null, subarray(bytes, i, i + 32_768)));
    }
    return toBase64(join(parts, ''));
  }

  /**
   * Draws the page now in this frame `width` CSS px wide and at most `maxHeight` tall, scaled down
   * to at most OUT_WIDTH_MAX px wide. Resolves to the `pixels` message (see protocol/src/frames.rs).
   */
  async function picture(width, maxHeight) {
    const started = now();
    const root = documentElement(doc);
    if (!root) return { flint: 'pixels', failed: 'The page has no document to draw.' };
    const pageHeight = max(1, heightAt(root, width));
    const height = min(pageHeight, maxHeight);
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">`
      + `<foreignObject x="0" y="0" width="100%" height="100%">${markup(root, height)}</foreignObject></svg>`;
    const image = new ImageType(width, height);
    apply(setSrc, image, [`data:image/svg+xml;charset=utf-8,${encodeURI(svg)}`]);
    try {
      await decodeImage(image);
    } catch (_) {
      return { flint: 'pixels', failed: 'The page could not be drawn (its markup is not well-formed as XHTML).' };
    }
    const scale = min(1, OUT_WIDTH_MAX / width);
    const outWidth = max(1, round(width * scale));
    const outHeight = max(1, ceil(height * scale));
    const canvas = createElement(doc, 'canvas');
    apply(setWidth, canvas, [outWidth]);
    apply(setHeight, canvas, [outHeight]);
    const context = getContext(canvas, '2d', { willReadFrequently: true });
    // A page with no background of its own shows white, as a browser window does.
    apply(setFill, context, ['#fff']);
    fillRect(context, 0, 0, outWidth, outHeight);
    apply(setSmoothing, context, ['high']);
    drawImage(context, image, 0, 0, outWidth, outHeight);
    let bytes;
    try {
      bytes = imageDataBytes(getImageData(context, 0, 0, outWidth, outHeight));
    } catch (err) {
      return { flint: 'pixels', failed: `The page's drawing could not be read back (${err && err.name}).` };
    }
    return {
      flint: 'pixels', width: outWidth, height: outHeight, page_height: pageHeight, rgba: base64(bytes), ms: now() - started,
    };
  }

  // How long a page has to load, then to settle (fonts, a first render by script), before it is
  // drawn as it stands.
  const LOAD_WAIT_MS = 1_500;
  const SETTLE_MS = 60;
  const setTimer = setTimeout;
  const PromiseType = Promise;
  const addListener = method(EventTarget.prototype, 'addEventListener');
  const win = window;

  /**
   * Writes `doc` into this frame with `writeDoc(doc, afterOpen)` (the runtime's document.open,
   * then `afterOpen`, then write and close), waits for it to load and settle, draws it, and hands
   * the `pixels` message to `send`.
   */
  async function run(doc, width, maxHeight, writeDoc, send) {
    let loaded;
    const load = new PromiseType((resolve) => {
      loaded = resolve;
      setTimer(resolve, LOAD_WAIT_MS);
    });
    // open() drops every listener of the window: the load listener goes in after it.
    writeDoc(doc, () => addListener(win, 'load', loaded));
    await load;
    await new PromiseType((resolve) => setTimer(resolve, SETTLE_MS));
    let message;
    try {
      message = await picture(width, maxHeight);
    } catch (err) {
      message = { flint: 'pixels', failed: `The page could not be drawn: ${err}` };
    }
    send(message);
  }

  return { picture, run };
})();
