// Flint's preview runtime: the script of public/preview.html, the one document every preview frame
// loads. The gateway serves that page with `Content-Security-Policy: sandbox allow-scripts`, and the
// frames carry sandbox="allow-scripts", so whatever runs here has an opaque origin.
//
// The app talks to a frame over a MessageChannel: on the frame's first `load` it posts one
// `{flint:'connect'}` message carrying a port, the only message it ever posts to the window. This
// script takes exactly one port, from `parent`, and then stops listening to window messages; all
// traffic (snapshot, append, applied, run, console, loaded, ping) goes over the port, each message
// checked against the table in preview-messages.js (protocol/src/frames.rs). A frame is one of:
// - a runtime frame, which gets HTML snapshots while an answer streams and morphs its DOM with
//   idiomorph, or, when a snapshot only extends the text it has, the appended text alone, copied
//   from an incremental parse (preview-live.js). An update that throws leaves the last good render
//   on screen. Whatever it shows is made inert first (no scripts, handlers, frames, plugins, `<base>`,
//   `<meta http-equiv>`, navigating URLs...): half-written code must not run, and nothing may
//   navigate this frame, which stays loaded for every later answer;
// - a check frame, which gets one complete document to run hidden and judge (preview-checks.js):
//   the person never sees it, so its buttons can be clicked. It is told nothing of the prompt (the
//   app matches the prompt's words against the text it reports);
// - a picture frame, which gets one complete document to run hidden, laid out at a mock's width,
//   and draws it to pixels for the likeness check (preview-pixels.js);
// - a final frame, which gets one complete document and writes it with document.open/write/close
//   (a few ms, where a srcdoc reload takes tens), console capture installed in between. The page
//   then shares this realm, so everything the app hears from a final frame is untrusted. It is
//   still told pick mode (preview-pick.js) and a streaming project's next page (preview-swap.js).
// Open ↗ shows a page in a tab as `<iframe src="preview.html#doc=…">` inside a wrapper without
// scripts: the document comes in the fragment instead of over a port.
(() => {
  'use strict';

  // Everything the runtime calls after a snapshot or a page may have changed the document or the
  // realm is taken now: named elements (`<img name="body">`, `<input name="getAttribute">` in a
  // form) shadow DOM methods and properties, and a final page could patch prototypes.
  const apply = Reflect.apply;
  const method = (proto, name) => {
    const fn = proto[name];
    return (self, ...args) => apply(fn, self, args);
  };
  const getter = (proto, name) => {
    const get = Object.getOwnPropertyDescriptor(proto, name).get;
    return (self) => apply(get, self, []);
  };
  const morph = Idiomorph.morph;
  // The parts the other preview-*.js scripts define, taken (and deleted) before any page can
  // reach them: appends copied from an incremental parse (preview-live.js), the checks, pick mode,
  // a picture frame's drawing, a final page's console capture, the table of messages a frame is
  // sent (anything else is dropped), and a streaming project's next page swapped in.
  const take = (name) => {
    const part = self[name];
    delete self[name];
    return part;
  };
  const streaming = take('FlintLive');
  const checks = take('FlintChecks');
  const picker = take('FlintPick');
  const pixels = take('FlintPixels');
  const capture = take('FlintCapture');
  const messages = take('FlintMessages');
  const swapper = take('FlintSwap');
  const warn = console.warn;
  const implementation = document.implementation;
  const createDocument = method(DOMImplementation.prototype, 'createHTMLDocument');
  const importNode = method(Document.prototype, 'importNode');
  const replaceChild = method(Node.prototype, 'replaceChild');
  const insertBefore = method(Node.prototype, 'insertBefore');
  const firstChildOf = getter(Node.prototype, 'firstChild');
  const matches = method(Element.prototype, 'matches');
  const now = performance.now.bind(performance);
  const queryAll = method(Document.prototype, 'querySelectorAll');
  const queryAllIn = method(DocumentFragment.prototype, 'querySelectorAll');
  const createElement = method(Document.prototype, 'createElement');
  const appendChild = method(Node.prototype, 'appendChild');
  const documentElement = getter(Document.prototype, 'documentElement');
  const head = getter(Document.prototype, 'head');
  const body = getter(Document.prototype, 'body');
  const attributeNames = method(Element.prototype, 'getAttributeNames');
  const getAttribute = method(Element.prototype, 'getAttribute');
  const setAttribute = method(Element.prototype, 'setAttribute');
  const hasAttribute = method(Element.prototype, 'hasAttribute');
  const removeAttribute = method(Element.prototype, 'removeAttribute');
  const remove = method(Element.prototype, 'remove');
  const closest = method(Element.prototype, 'closest');
  const localName = getter(Element.prototype, 'localName');
  const baseURI = getter(Node.prototype, 'baseURI');
  const templateContent = getter(HTMLTemplateElement.prototype, 'content');
  const offsetHeight = getter(HTMLElement.prototype, 'offsetHeight');
  const portPost = method(MessagePort.prototype, 'postMessage');
  // Read through the prototype's own getters: a page that defined `MessageEvent.prototype.data`
  // would otherwise be handed each message event, and with its `target` the port itself.
  const messageData = getter(MessageEvent.prototype, 'data');
  const messageSource = getter(MessageEvent.prototype, 'source');
  const messagePorts = getter(MessageEvent.prototype, 'ports');
  const open = method(Document.prototype, 'open');
  const write = method(Document.prototype, 'write');
  const close = method(Document.prototype, 'close');
  const addListener = method(EventTarget.prototype, 'addEventListener');
  const removeListener = method(EventTarget.prototype, 'removeEventListener');
  const preventDefault = method(Event.prototype, 'preventDefault');
  const eventTarget = getter(Event.prototype, 'target');
  const replaceState = method(History.prototype, 'replaceState');
  const decode = decodeURIComponent;
  const documentProto = Document.prototype;
  const formProto = HTMLFormElement.prototype;
  // Elements a form exposes as its own properties, by name and by id.
  const FORM_FIELDS = new Set(['button', 'fieldset', 'input', 'object', 'output', 'select', 'textarea', 'img']);

  // --- Snapshots: inert HTML ---

  // Elements that load or run something of their own, navigate the frame, or change how later
  // URLs resolve. (`script` matches SVG's too; `noscript` content is harmless, parsed as inert markup.)
  const REMOVED = [
    'script', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'portal', 'fencedframe',
    'base', 'meta[http-equiv]', 'param',
  ].join(',');
  // Attributes that target another browsing context or carry a document of their own.
  const DROPPED = new Set(['srcdoc', 'target', 'formtarget', 'ping', 'xlink:show', 'http-equiv']);
  // Where a `data:` URL is a document that would replace this frame when followed (elsewhere, as
  // in `<img src>` or SVG's `<image href>`, it is only a picture).
  const navigates = (element, attr) => attr === 'action' || attr === 'formaction'
    || ((attr === 'href' || attr === 'xlink:href') && (element === 'a' || element === 'area'));
  // Longest srcset kept: a few dozen candidates. A megabyte of them costs every morph to parse.
  const SRCSET_MAX = 4_000;

  /** The scheme of a URL as the URL parser sees it (it drops spaces, controls, tabs and newlines). */
  const scheme = (value) => {
    // eslint-disable-next-line no-control-regex
    const match = /^([a-z][a-z0-9+.-]*):/i.exec(value.replace(/[\u0000-\u0020]+/g, ''));
    return match ? match[1].toLowerCase() : '';
  };

  function inertElement(el) {
    const name = localName(el);
    // SVG animations can set an href (to a javascript: URL) when clicked or after a delay.
    if ((name === 'animate' || name === 'set') && /href|src|action/i.test(getAttribute(el, 'attributeName') ?? '')) {
      remove(el);
      return;
    }
    for (const attr of attributeNames(el)) {
      const lower = attr.toLowerCase();
      const value = getAttribute(el, attr) ?? '';
      const kind = scheme(value);
      if (lower.startsWith('on') || DROPPED.has(lower) || kind === 'javascript' || kind === 'vbscript'
        || (kind === 'data' && navigates(name, lower))
        || ((lower === 'srcset' || lower === 'imagesrcset') && value.length > SRCSET_MAX)
        // `<img name="body">` would shadow document.body, `<input name="getAttribute">` the
        // form's method, and the morph would fail on them.
        || (lower === 'name' && (name === 'img' || name === 'form') && value in documentProto)
        || ((lower === 'name' || lower === 'id') && FORM_FIELDS.has(name) && value in formProto)) {
        removeAttribute(el, attr);
      }
    }
  }

  function inert(root, all) {
    for (const el of all(root, REMOVED)) remove(el);
    for (const el of all(root, '*')) {
      inertElement(el);
      if (localName(el) === 'template') inert(templateContent(el), queryAllIn);
    }
  }

  function syncAttributes(target, source) {
    for (const name of attributeNames(target)) {
      if (!hasAttribute(source, name)) removeAttribute(target, name);
    }
    for (const name of attributeNames(source)) {
      const value = getAttribute(source, name);
      if (getAttribute(target, name) !== value) setAttribute(target, name, value);
    }
  }

  /** Whether the inert page leaves `el` out altogether (see `inert`). */
  function removed(el) {
    const name = localName(el);
    return matches(el, REMOVED) || ((name === 'animate' || name === 'set')
      && /href|src|action/i.test(getAttribute(el, 'attributeName') ?? ''));
  }
  const rules = { removed, clean: inertElement };

  // The answer's text as sent so far, the last text shown without error, and the incremental
  // mirror of it (preview-live.js), or null when the next update must morph the whole page.
  let text = '';
  let good = null;
  let live = null;

  /** Shows `html` by morphing the whole page (and starts a mirror of it for the appends after). */
  function applyWhole(html) {
    live?.stop();
    live = null;
    const mirror = streaming.start(html, document, rules);
    const next = createDocument(implementation, '');
    const root = mirror.root();
    if (root) replaceChild(next, importNode(next, root, true), documentElement(next));
    inert(next, queryAll);
    // A frameset was removed, or the text is too short to have opened them yet.
    if (!head(next)) insertBefore(documentElement(next), createElement(next, 'head'), firstChildOf(documentElement(next)));
    if (!body(next)) appendChild(documentElement(next), createElement(next, 'body'));
    syncAttributes(documentElement(document), documentElement(next));
    // The head as any other element (idiomorph's default merges heads, reordering them), and
    // outerHTML: innerHTML would put the new head inside the old one.
    morph(head(document), head(next), { morphStyle: 'outerHTML', head: { style: 'morph' } });
    morph(body(document), body(next), { morphStyle: 'outerHTML' });
    if (mirror.pair()) live = mirror;
    else mirror.stop();
  }

  /**
   * `kind` 'snapshot': `chunk` is the whole text; 'append': it follows the text so far. Appends are
   * copied from the incremental parse where it can follow, else the page is morphed whole. An
   * update that throws leaves the last good render on screen, and the next good one replaces it.
   */
  function update(kind, chunk) {
    text = kind === 'append' ? text + chunk : chunk;
    let whole = true;
    try {
      if (kind === 'append' && live && live.append(chunk)) whole = false;
      else applyWhole(text);
      good = text;
    } catch (err) {
      live?.stop();
      live = null;
      send({ flint: 'console', level: 'error', text: `Preview runtime: ${err}` });
      if (good !== null) {
        try {
          applyWhole(good);
        } catch (_) {
          // It showed before; whatever is on screen stays.
        }
        // The mirror follows the good text, not the one that failed: the next update is whole.
        live?.stop();
        live = null;
      }
    }
    return whole;
  }

  // A click on a link in a half-written page must not navigate the runtime frame (a link within
  // this document, `#anchor`, still scrolls); forms cannot submit in this sandbox anyway.
  const here = location.href.split('#')[0];
  const withinPage = (link) => {
    const href = getAttribute(link, 'href') ?? getAttribute(link, 'xlink:href');
    if (href === null) return true;
    try {
      // Resolved as the browser would follow it: against the document's base.
      return new URL(href, baseURI(document)).href.split('#')[0] === here;
    } catch (_) {
      return false;
    }
  };
  function blockNavigation(event) {
    const target = eventTarget(event);
    const link = target instanceof Element ? closest(target, 'a, area') : null;
    if (event.type === 'submit' || (link && !withinPage(link))) preventDefault(event);
  }

  /** Replaces this document with `doc`; `send` (or null) gets its console. Only ever once. */
  function writePage(doc, send) {
    open(document);
    // open() erased every listener on the window and document: capture goes in now, before the
    // page's first script.
    if (send) capture(send, checks.visible);
    write(document, doc);
    close(document);
  }

  // --- The app's port ---

  let port = null;
  let written = false;
  // A final frame (not a check frame) may be asked to pick.
  let canPick = false;
  const send = (message) => {
    try {
      portPost(port, message);
    } catch (_) {
      // The app closed the port (the frame is being discarded).
    }
  };

  /** Runs `doc` here, hidden, and reports its checks (see preview-checks.js) over the port. */
  async function check(doc, expect) {
    written = true;
    const started = now();
    open(document);
    const seen = checks.watch();
    write(document, doc);
    close(document);
    // Awaited, not `.then`: a page's own `Promise.prototype.then` would be handed the callback
    // that sends the report, and could call it as often as it liked.
    let report;
    try {
      report = await checks.judge(seen, expect);
    } catch (err) {
      send({ flint: 'checked', failed: `The checks stopped: ${err}` });
      return;
    }
    send({ flint: 'checked', results: report.results, text: report.text, ms: now() - started });
  }

  function receive(event) {
    const data = messageData(event);
    const problem = messages.problem(data);
    if (problem !== null) {
      apply(warn, console, [`Preview runtime: a message was dropped (${problem}).`]);
      return;
    }
    if (data.flint === 'ping') {
      send({ flint: 'pong', id: data.id });
      return;
    }
    // Pick mode is the one thing a written page's frame is still told: it only points.
    if (data.flint === 'pick' && written && canPick && picker) {
      picker.pick(data.on, send);
      return;
    }
    // A streaming project's next page goes to the frame running its last (the same answer's code).
    if (data.flint === 'swap') {
      return written && canPick && swapper ? swapper.swap(data.doc, send) : send({ flint: 'swapped', ok: false });
    }
    // Once a page is written it shares this realm: nothing more is taken from the app.
    if (written) return;
    const append = data.flint === 'append';
    if (data.flint === 'snapshot' || append) {
      // An append that does not follow the text this frame has (it was replaced, or a message
      // was refused) is not applied: the app then sends the whole text.
      if (append && data.at !== text.length) {
        send({ flint: 'applied', ms: 0, resync: true });
        return;
      }
      const started = now();
      const whole = update(append ? 'append' : 'snapshot', append ? data.text : data.html);
      // Lay out now, inside the measured time: the layout is part of what a snapshot costs.
      try {
        void offsetHeight(documentElement(document));
      } catch (_) {
        // (Nothing to lay out.)
      }
      // What the update and its layout cost, so the app can budget how often previews are updated.
      // (`whole`: whether the page was morphed whole rather than appended to.)
      send({ flint: 'applied', ms: now() - started, whole });
    } else if (data.flint === 'check' && checks) {
      // A check frame: the page runs here only to be judged, and nothing it logs is forwarded.
      check(data.doc, data.expect);
    } else if (data.flint === 'picture' && pixels) {
      // A picture frame: the page runs here only to be drawn; nothing it logs is forwarded.
      written = true;
      pixels.run(data.doc, data.width, data.max_height, (doc, afterOpen) => {
        open(document);
        afterOpen();
        write(document, doc);
        close(document);
      }, send);
    } else if (data.flint === 'run') {
      written = true;
      canPick = true;
      removeListener(document, 'click', blockNavigation, true);
      removeListener(document, 'submit', blockNavigation, true);
      writePage(data.doc, send);
    }
  }

  function connect(event) {
    const data = messageData(event);
    const ports = messagePorts(event);
    if (port !== null || messageSource(event) !== parent || parent === window) return;
    if (messages.problem(data) !== null || data.flint !== 'connect' || ports.length !== 1) return;
    port = ports[0];
    // Exactly one port, from the app: nothing that arrives on the window later is listened to.
    removeListener(window, 'message', connect);
    port.onmessage = receive;
    send({ flint: 'ready' });
  }

  // (Location's members are unforgeable: no page can have changed them.)
  const fragment = location.hash;
  if (fragment.startsWith('#doc=')) {
    // Open ↗: the page is in the address. Take it out before the page runs, so that its
    // location, base URL and hash routing see plain preview.html.
    let doc = null;
    try {
      doc = decode(fragment.slice(5));
    } catch (_) {
      // A cut or mangled address: leave the placeholder.
    }
    if (doc !== null) {
      try {
        replaceState(history, null, '', location.pathname);
      } catch (_) {
        // Not allowed here: the page sees the fragment, no worse.
      }
      written = true;
      // Not while this page is still being parsed: open() would then be ignored and the page
      // written into this one's head.
      addListener(window, 'load', () => setTimeout(() => writePage(doc, null)));
    }
  } else {
    addListener(window, 'message', connect);
    addListener(document, 'click', blockNavigation, true);
    addListener(document, 'submit', blockNavigation, true);
  }
})();
