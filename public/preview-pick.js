// Flint's pick mode, run by the preview runtime (preview-runtime.js) in a final frame: the person
// points at an element of the running page, it is outlined, and a click reports where it sits
// below <body> (each step's index among its parent's elements and its tag; the app matches that
// path against the source's own element tree, so a page carries no markers). A React project's
// elements do carry one, `data-flint-src` (their file and byte range, stamped by the worker's
// transform): the nearest one up from the click is reported with the path. Loaded by
// preview.html before the runtime, which takes `FlintPick` and deletes it before any page is
// written.
//
// The page shares this realm once written, so everything called while picking was taken here
// first (see the runtime's header). What it reports is the page's word: the app only uses the path
// to select source text and scope an edit the person then reviews.
self.FlintPick = (() => {
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
  const win = window;
  const doc = document;
  const ElementClass = Element;
  const createElement = method(Document.prototype, 'createElement');
  const appendChild = method(Node.prototype, 'appendChild');
  const documentElement = getter(Document.prototype, 'documentElement');
  const body = getter(Document.prototype, 'body');
  const getAttribute = method(Element.prototype, 'getAttribute');
  const setAttribute = method(Element.prototype, 'setAttribute');
  const remove = method(Element.prototype, 'remove');
  const localName = getter(Element.prototype, 'localName');
  const closest = method(Element.prototype, 'closest');
  const parentElement = getter(Node.prototype, 'parentElement');
  const childrenOf = getter(Element.prototype, 'children');
  const rectOf = method(Element.prototype, 'getBoundingClientRect');
  const addListener = method(EventTarget.prototype, 'addEventListener');
  const removeListener = method(EventTarget.prototype, 'removeEventListener');
  const preventDefault = method(Event.prototype, 'preventDefault');
  const stopImmediate = method(Event.prototype, 'stopImmediatePropagation');
  const eventTarget = getter(Event.prototype, 'target');
  const indexOf = (list, item) => apply(Array.prototype.indexOf, list, [item]);

  const PICK_STYLE = 'position:fixed;pointer-events:none;z-index:2147483647;outline:2px solid #f97316;'
    + 'background:rgba(249,115,22,0.12);border-radius:2px;';
  let picking = null;

  /** Where `el` sits below <body>: each step's index among its parent's elements and its tag. */
  function pathOf(el) {
    const path = [];
    const root = body(doc);
    let node = el;
    while (node && node !== root) {
      const parent = parentElement(node);
      if (!parent) return [];
      path.unshift({ index: indexOf(childrenOf(parent), node), tag: localName(node) });
      node = parent;
    }
    return node === root ? path : [];
  }

  function pick(on, send) {
    if (!on || picking) {
      if (!on) picking?.stop();
      return;
    }
    const overlay = createElement(doc, 'div');
    setAttribute(overlay, 'style', `${PICK_STYLE}display:none`);
    appendChild(documentElement(doc), overlay);
    const swallow = (event) => {
      preventDefault(event);
      stopImmediate(event);
    };
    const move = (event) => {
      const target = eventTarget(event);
      if (!(target instanceof ElementClass) || target === body(doc) || target === documentElement(doc)) {
        setAttribute(overlay, 'style', `${PICK_STYLE}display:none`);
        return;
      }
      const r = rectOf(target);
      setAttribute(overlay, 'style', `${PICK_STYLE}left:${r.left}px;top:${r.top}px;width:${r.width}px;height:${r.height}px`);
    };
    const click = (event) => {
      swallow(event);
      const target = eventTarget(event);
      const element = target instanceof ElementClass ? target : null;
      stop();
      // A React project's elements say where their JSX is (the worker's `data-flint-src`).
      const stamped = element ? closest(element, '[data-flint-src]') : null;
      send({
        flint: 'picked',
        path: element ? pathOf(element) : [],
        id: element ? getAttribute(element, 'id') : null,
        src: stamped ? getAttribute(stamped, 'data-flint-src') : null,
      });
    };
    const key = (event) => {
      if (event.key !== 'Escape') return;
      swallow(event);
      stop();
      send({ flint: 'picked', cancelled: true });
    };
    // The page hears none of the pointer's presses while picking: a click picks, it does not press.
    const listeners = [['mousemove', move], ['click', click], ['keydown', key],
      ['pointerdown', swallow], ['mousedown', swallow], ['pointerup', swallow], ['mouseup', swallow]];
    // Indexed, not `for…of`: a page's own array iterator would be handed these listeners, and
    // with them a way to send as often as it liked.
    const each = (fn) => {
      for (let i = 0; i < listeners.length; i++) fn(listeners[i][0], listeners[i][1]);
    };
    each((type, fn) => addListener(win, type, fn, true));
    function stop() {
      each((type, fn) => removeListener(win, type, fn, true));
      remove(overlay);
      picking = null;
    }
    picking = { stop };
  }

  return { pick };
})();
