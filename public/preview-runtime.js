// Flint's preview runtime: runs inside the sandboxed preview frame (opaque origin) and turns the
// HTML snapshots the app posts while an answer streams into a live page, morphing the DOM with
// idiomorph so unchanged nodes stay put and nothing flickers. Scripts and inline event handlers are
// stripped: half-written code must not run. The complete page runs later in a fresh frame.
(() => {
  'use strict';

  const parser = new DOMParser();

  function inert(doc) {
    for (const script of doc.querySelectorAll('script')) script.remove();
    for (const el of doc.querySelectorAll('*')) {
      for (const name of el.getAttributeNames()) {
        if (name.startsWith('on')) el.removeAttribute(name);
      }
    }
    // A javascript: URL would run on click.
    for (const a of doc.querySelectorAll('[href^="javascript:" i]')) a.removeAttribute('href');
  }

  function syncAttributes(target, source) {
    for (const name of target.getAttributeNames()) {
      if (!source.hasAttribute(name)) target.removeAttribute(name);
    }
    for (const name of source.getAttributeNames()) {
      const value = source.getAttribute(name);
      if (target.getAttribute(name) !== value) target.setAttribute(name, value);
    }
  }

  function apply(html) {
    const next = parser.parseFromString(html, 'text/html');
    inert(next);
    syncAttributes(document.documentElement, next.documentElement);
    Idiomorph.morph(document.head, next.head, { morphStyle: 'innerHTML' });
    Idiomorph.morph(document.body, next.body, { morphStyle: 'outerHTML' });
  }

  window.addEventListener('message', (event) => {
    if (event.source !== parent) return;
    const data = event.data;
    if (!data || data.flint !== 'snapshot' || typeof data.html !== 'string') return;
    const started = performance.now();
    try {
      apply(data.html);
      // Lay out now, inside the measured time: the layout is part of what a snapshot costs.
      void document.documentElement.offsetHeight;
    } catch (err) {
      parent.postMessage({ flint: 'console', level: 'error', text: `Preview runtime: ${err}` }, '*');
    }
    // What the morph and its layout cost, so the app can budget how often previews are updated.
    parent.postMessage({ flint: 'applied', ms: performance.now() - started }, '*');
  });

  const ready = () => parent.postMessage({ flint: 'ready' }, '*');
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', ready);
  else ready();
})();
