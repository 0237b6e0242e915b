// A streaming React project's next page, swapped into the final frame that runs the last one
// (protocol/src/frames.rs, `ToFrame::Swap`). A fresh frame takes 0.6–0.9 s to start a React app,
// most of it fetching and compiling React; a frame that keeps React loaded takes the next build in
// tens of ms. Loaded by preview.html before the runtime, which takes `FlintSwap` and deletes it
// before any page is written.
//
// The worker versions a streaming build's module keys (`~7/App.tsx`), so the next page's modules
// are new keys: they join the frame's import map in a new `<script type="importmap">` (browsers
// merge import maps added after modules have loaded; one that cannot, or a key already mapped to
// another URL, fails the swap). The new modules are imported before anything on screen changes:
// if that fails the frame is left as it was and the app runs the page in a fresh frame. Then the
// old app is unmounted (the mount keeps its root in `globalThis.__flintRoot`, an entry that
// mounts itself its roots in `__flintRoots`), the project's
// styles and the root are replaced, and the page's mount module runs.
self.FlintSwap = (() => {
  'use strict';

  const apply = Reflect.apply;
  const method = (proto, name) => {
    const fn = proto[name];
    return (self, ...args) => apply(fn, self, args);
  };
  const parseFromString = method(DOMParser.prototype, 'parseFromString');
  const Parser = DOMParser;
  const queryAll = method(Document.prototype, 'querySelectorAll');
  const query = method(Document.prototype, 'querySelector');
  const getElementById = method(Document.prototype, 'getElementById');
  const createElement = method(Document.prototype, 'createElement');
  const importNode = method(Document.prototype, 'importNode');
  const appendChild = method(Node.prototype, 'appendChild');
  const replaceWith = method(Element.prototype, 'replaceWith');
  const remove = method(Element.prototype, 'remove');
  const setAttribute = method(Element.prototype, 'setAttribute');
  const text = Object.getOwnPropertyDescriptor(Node.prototype, 'textContent');
  const getText = (node) => apply(text.get, node, []);
  const setText = (node, value) => apply(text.set, node, [value]);
  const head = Object.getOwnPropertyDescriptor(Document.prototype, 'head').get;
  const body = Object.getOwnPropertyDescriptor(Document.prototype, 'body').get;
  const parseJSON = JSON.parse;
  const stringify = JSON.stringify;
  const encode = encodeURIComponent;
  const hasOwn = Object.hasOwn;
  const keysOf = Object.keys;
  // What the last page left that the next one replaces: its styles, an error note, the warm page's.
  const LEFT = 'style[data-flint-project], [data-flint-stopped], [data-flint-warm]';

  // Every specifier the frame's import maps map, and to what: read from the page's maps on the
  // first swap, then kept up to date here (reading every map again would parse each build anew).
  let known = null;

  /** Every specifier the frame's import maps map, and to what. */
  function mapped() {
    if (known !== null) return known;
    const all = {};
    for (const script of queryAll(document, 'script[type="importmap"]')) {
      try {
        const imports = parseJSON(getText(script)).imports ?? {};
        for (const key of keysOf(imports)) if (!hasOwn(all, key)) all[key] = imports[key];
      } catch (_) {
        // (A map the browser refused too.)
      }
    }
    known = all;
    return all;
  }

  /**
   * Swaps `doc` (a streaming project's page) in; `send` gets `{flint: 'swapped', ok}`.
   * Awaited, not `.then`: a page's own `Promise.prototype.then` must not get the callback.
   */
  async function swap(doc, send) {
    let ok = false;
    try {
      ok = await swapIn(doc);
    } catch (_) {
      ok = false;
    }
    send({ flint: 'swapped', ok });
  }

  async function swapIn(doc) {
    const next = parseFromString(new Parser(), doc, 'text/html');
    const map = query(next, 'script[type="importmap"]');
    const start = [...queryAll(next, 'script[type="module"]')].pop();
    if (!map || !start) return false;
    const imports = parseJSON(getText(map)).imports ?? {};
    const have = mapped();
    const added = {};
    for (const key of keysOf(imports)) {
      if (!hasOwn(have, key)) added[key] = imports[key];
      else if (have[key] !== imports[key]) return false;
    }
    const script = createElement(document, 'script');
    setAttribute(script, 'type', 'importmap');
    setText(script, stringify({ imports: added }));
    appendChild(apply(head, document, []), script);
    for (const key of keysOf(added)) have[key] = added[key];
    // The new modules load (and run their top level) before the screen changes; not an entry
    // the mount imports for its effect (`import "~7/main.tsx"`): a `main.tsx` mounts as it runs.
    const source = getText(start);
    const mounts = new Set([...source.matchAll(/import\s*"(~[^"]*)"/g)].map((m) => m[1]));
    const early = keysOf(added).filter((key) => key.startsWith('~') && !mounts.has(key));
    await Promise.all(early.map((key) => import(key)));

    // The root Flint's mount made, and those an entry that mounts itself made (`main.tsx`, through
    // the client worker/src/project/roots.rs keeps them with).
    const kept = globalThis.__flintRoots;
    const roots = [globalThis.__flintRoot, ...(Array.isArray(kept) ? kept : [])];
    globalThis.__flintRoot = undefined;
    globalThis.__flintRoots = [];
    for (const root of roots) {
      try {
        if (root && typeof root.unmount === 'function') root.unmount();
      } catch (_) {
        // (The old app's own error: it is going anyway.)
      }
    }
    for (const old of queryAll(document, LEFT)) remove(old);
    for (const style of queryAll(next, 'style[data-flint-project]')) {
      appendChild(apply(head, document, []), importNode(document, style, true));
    }
    // (A warm page's note, when a warm page is swapped into a frame made ready with another.)
    for (const note of queryAll(next, 'body > [data-flint-warm]')) {
      appendChild(apply(body, document, []), importNode(document, note, true));
    }
    const fresh = createElement(document, 'div');
    setAttribute(fresh, 'id', 'root');
    const old = getElementById(document, 'root');
    if (old) replaceWith(old, fresh);
    else appendChild(apply(body, document, []), fresh);
    await import(`data:text/javascript;charset=utf-8,${encode(source)}`);
    return true;
  }

  return { swap };
})();
