// Streaming previews that append (issue 26), run by the preview runtime (preview-runtime.js) in a
// runtime frame. Loaded by preview.html before the runtime, which takes `FlintLive` and deletes it.
//
// Why: a stream only ever appends, yet morphing every snapshot re-parses and re-compares the whole
// page, so each frame cost grew with the page. Here the text is parsed once, incrementally, into a
// document of its own that has no browsing context (`createHTMLDocument` + `open`/`write`: the HTML
// parser as the browser runs it, whose scripts never run and whose images never load). A
// MutationObserver on that document records exactly what each appended chunk changed — a text node
// that grew, an element opened, a cell foster-parented before its table — and those changes, and only
// those, are copied into the visible page, made inert on the way (the runtime's rules: nothing that
// runs, navigates or loads a document of its own). Anything the copy cannot place says so, and the
// runtime then morphs the whole page as before.
self.FlintLive = (() => {
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
  const setter = (proto, name) => {
    const set = Object.getOwnPropertyDescriptor(proto, name).set;
    return (self, value) => apply(set, self, [value]);
  };
  // Taken before any snapshot: `<img name="implementation">` would shadow it on the document.
  const implementation = document.implementation;
  const createDocument = method(DOMImplementation.prototype, 'createHTMLDocument');
  const open = method(Document.prototype, 'open');
  const write = method(Document.prototype, 'write');
  const importNode = method(Document.prototype, 'importNode');
  const createText = method(Document.prototype, 'createTextNode');
  const createComment = method(Document.prototype, 'createComment');
  const documentElement = getter(Document.prototype, 'documentElement');
  const headOf = getter(Document.prototype, 'head');
  const bodyOf = getter(Document.prototype, 'body');
  const parentNode = getter(Node.prototype, 'parentNode');
  const firstChild = getter(Node.prototype, 'firstChild');
  const nextSibling = getter(Node.prototype, 'nextSibling');
  const nodeType = getter(Node.prototype, 'nodeType');
  const nodeName = getter(Node.prototype, 'nodeName');
  const insertBefore = method(Node.prototype, 'insertBefore');
  const removeChild = method(Node.prototype, 'removeChild');
  const getData = getter(CharacterData.prototype, 'data');
  const setData = setter(CharacterData.prototype, 'data');
  const localName = getter(Element.prototype, 'localName');
  const getAttribute = method(Element.prototype, 'getAttribute');
  const setAttribute = method(Element.prototype, 'setAttribute');
  const removeAttribute = method(Element.prototype, 'removeAttribute');
  const attributeNames = method(Element.prototype, 'getAttributeNames');
  const Observer = MutationObserver;
  const observe = method(MutationObserver.prototype, 'observe');
  const takeRecords = method(MutationObserver.prototype, 'takeRecords');
  const disconnect = method(MutationObserver.prototype, 'disconnect');
  const isArray = Array.isArray;

  const ELEMENT = 1;
  const TEXT = 3;
  const COMMENT = 8;
  const DOCTYPE = 10;
  const WATCH = { childList: true, subtree: true, characterData: true, attributes: true };

  /**
   * Parses `html` into a document of its own and returns a mirror of it onto `view` (the visible
   * document). `rules.removed(el)`: whether the inert page leaves element `el` out (with all it
   * holds); `rules.clean(el)`: strips an element of the view of what would run or navigate.
   * Call `pair()` once the view shows this text (the runtime morphed it), then `append(chunk)`.
   */
  function start(html, view, rules) {
    const source = createDocument(implementation, '');
    open(source);
    write(source, html);
    const observer = new Observer(() => {});
    observe(observer, source, WATCH);
    // Source node → view node; null: left out of the view (and so is everything inside it).
    let map = new WeakMap();

    /** Pairs the children of `s` (source) with those of `v` (view): false where they differ. */
    function pairChildren(s, v) {
      let vc = firstChild(v);
      for (let sc = firstChild(s); sc; sc = nextSibling(sc)) {
        const type = nodeType(sc);
        if (type === DOCTYPE || (type === ELEMENT && rules.removed(sc))) {
          map.set(sc, null);
          continue;
        }
        if (!vc || nodeType(vc) !== type || nodeName(vc) !== nodeName(sc)) return false;
        map.set(sc, vc);
        // Template contents are not in the source's tree: whole morphs take them in.
        if ((type === ELEMENT && localName(sc) === 'template') || !pairChildren(sc, vc)) return false;
        vc = nextSibling(vc);
      }
      return vc === null;
    }

    /** Pairs the source with the view, which shows the same text: false where the view differs. */
    function pair() {
      map = new WeakMap();
      // The text may not have opened <html> yet: the chunk that does is copied like any other.
      map.set(source, view);
      const html = documentElement(source);
      if (!html) return true;
      map.set(html, documentElement(view));
      // Whitespace and comments between head and body are not shown: they are left out.
      for (let c = firstChild(html); c; c = nextSibling(c)) map.set(c, null);
      for (const [s, v] of [[headOf(source), headOf(view)], [bodyOf(source), bodyOf(view)]]) {
        if (s === null) continue;
        if (!v) return false;
        map.set(s, v);
        if (!pairChildren(s, v)) return false;
      }
      return true;
    }

    /** The view's node for source node `node`: null when left out, undefined when unknown. */
    function viewOf(node) {
      for (let n = node; n; n = parentNode(n)) {
        const v = map.get(n);
        if (v !== undefined) return n === node || v === null ? v : undefined;
      }
      return undefined;
    }

    /** Gives the view's `mine` the attributes of source element `n`, made inert. */
    function copyAttributes(mine, n) {
      for (const attr of attributeNames(mine)) removeAttribute(mine, attr);
      for (const attr of attributeNames(n)) setAttribute(mine, attr, getAttribute(n, attr));
      rules.clean(mine);
    }

    /** A view node for `n`, new in the source under `parent`: null to leave it out, undefined when it cannot be copied. */
    function make(n, parent) {
      const type = nodeType(n);
      if (type === TEXT) return createText(view, getData(n));
      if (type === COMMENT) return createComment(view, getData(n));
      if (type !== ELEMENT) return null;
      if (parent === source) {
        // <html>, opened by this chunk: the view's own, with its attributes.
        const mine = documentElement(view);
        if (!mine || localName(n) !== 'html') return undefined;
        copyAttributes(mine, n);
        return mine;
      }
      if (parent === documentElement(source)) {
        // The page's head or body, opened by this chunk: the view has its own already.
        const name = localName(n);
        const mine = name === 'head' ? headOf(view) : name === 'body' ? bodyOf(view) : null;
        if (!mine || firstChild(mine)) return undefined;
        copyAttributes(mine, n);
        return mine;
      }
      if (rules.removed(n) || localName(n) === 'template') return localName(n) === 'template' ? undefined : null;
      const copy = importNode(view, n, false);
      rules.clean(copy);
      return copy;
    }

    /** Puts the view's copy of `n` (added under source node `s`, shown as `v`) where the source has it. */
    function place(n, s, v) {
      // Moved or removed again since: a later record says where it is now.
      if (parentNode(n) !== s) return true;
      let mine = map.get(n);
      if (mine === null) return true;
      if (mine === undefined) {
        mine = make(n, s);
        if (mine === undefined) return false;
        map.set(n, mine);
        if (mine === null) return true;
      }
      let before = null;
      for (let next = nextSibling(n); next; next = nextSibling(next)) {
        const m = map.get(next);
        if (m && parentNode(m) === v) {
          before = m;
          break;
        }
      }
      // (The view's own <html>, <head> and <body> stay where they are.)
      if (parentNode(mine) !== v || (nextSibling(mine) !== before && v !== view)) insertBefore(v, mine, before);
      return true;
    }

    function mirror(record) {
      const s = record.target;
      const v = viewOf(s);
      if (v === null) return true;
      if (v === undefined) return false;
      if (record.type === 'characterData') {
        const text = getData(s);
        if (getData(v) !== text) setData(v, text);
        return true;
      }
      if (record.type === 'attributes') {
        const name = record.attributeName;
        const value = getAttribute(s, name);
        if (value === null) removeAttribute(v, name);
        else setAttribute(v, name, value);
        rules.clean(v);
        return true;
      }
      for (const gone of record.removedNodes) {
        const old = map.get(gone);
        if (old && parentNode(old)) removeChild(parentNode(old), old);
      }
      for (const added of record.addedNodes) {
        if (!place(added, s, v)) return false;
      }
      return true;
    }

    /** Parses `chunk` after the text so far and copies what it changed: false if the view cannot follow. */
    function append(chunk) {
      write(source, chunk);
      const records = takeRecords(observer);
      if (!isArray(records)) return false;
      for (const record of records) {
        if (!mirror(record)) return false;
      }
      return true;
    }

    function stop() {
      disconnect(observer);
    }

    /** The parsed page, for a whole morph: its `<html>` element (or null before there is one). */
    const root = () => documentElement(source);

    return { pair, append, stop, root };
  }

  return { start };
})();
