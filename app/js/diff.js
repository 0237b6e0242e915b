// Monaco's diff editor for reviewing a proposed edit, used by app/src/interop/diff_view.rs.
// Monaco itself is loaded by editor.js (once, for both).

import { loadMonaco } from './monaco.js';

// Monaco's diff view asks its editor worker for the diff; when the worker no longer holds the two
// texts (Monaco stops it, for one, whenever the page holds no model for a moment, and a request can
// fall in that gap) the view's own promise rejects with this message, uncaught inside Monaco, and the
// diff is never drawn. Seen once in CI (judge's Fix test). Each live view computes again instead, and
// the rejection, which only ever means that, is not reported as the page's error.
const LOST_DIFF = 'no diff result available';
const live = new Set();
globalThis.addEventListener?.('unhandledrejection', (event) => {
  if (event.reason?.message !== LOST_DIFF) return;
  event.preventDefault();
  for (const diff of live) diff.recompute();
});

// The review of a proposed edit: Monaco's diff editor between the current version and the result
// of the hunks kept so far. Read-only; keeping and rejecting happens in the hunk list beside it.
export class FlintDiff {
  constructor(container) {
    this.editor = null;
    this.shown = null;
    this.target = null;
    loadMonaco().then(
      (monaco) => this.#create(monaco, container),
      (err) => console.error('Flint: the diff view failed to load:', err),
    );
  }

  #create(monaco, container) {
    if (this.disposed) return;
    this.monaco = monaco;
    this.original = monaco.editor.createModel('', 'html');
    this.modified = monaco.editor.createModel('', 'html');
    this.editor = monaco.editor.createDiffEditor(container, {
      theme: 'vs-dark',
      automaticLayout: true,
      readOnly: true,
      originalEditable: false,
      renderSideBySide: false,
      renderMarginRevertIcon: false,
      minimap: { enabled: false },
      fontSize: 13,
      lineHeight: 19,
      scrollBeyondLastLine: false,
    });
    // Each side's text area is an input to assistive tech and needs a name (axe: serious). The diff
    // editor's own `originalAriaLabel`/`modifiedAriaLabel` leave it empty in this Monaco (0.57), so
    // each side is named directly.
    this.editor.getOriginalEditor().updateOptions({ ariaLabel: 'The code before the edit (read only)' });
    this.editor.getModifiedEditor().updateOptions({ ariaLabel: 'The code after the edit (read only)' });
    this.editor.setModel({ original: this.original, modified: this.modified });
    live.add(this);
    if (this.target) this.show(...this.target);
  }

  /** Shows `original` against `modified`, both in `language`. */
  show(original, modified, language) {
    this.target = [original, modified, language];
    if (!this.editor) return;
    for (const model of [this.original, this.modified]) {
      if (model.getLanguageId() !== language) this.monaco.editor.setModelLanguage(model, language);
    }
    const fresh = this.original.getValue() !== original;
    if (fresh) {
      this.original.setValue(original);
      // A new proposal: bring its first change into view once the diff is computed.
      const once = this.editor.onDidUpdateDiff(() => {
        once.dispose();
        this.editor.revealFirstDiff?.();
      });
    }
    if (this.modified.getValue() !== modified) this.modified.setValue(modified);
  }

  /** Computes the diff again (a new view of the same two texts). */
  recompute() {
    this.editor?.setModel({ original: this.original, modified: this.modified });
  }

  /** Scrolls the result to `line` (1-based). */
  reveal(line) {
    this.editor?.getModifiedEditor().revealLineInCenter(line);
  }

  dispose() {
    this.disposed = true;
    live.delete(this);
    this.editor?.dispose();
    this.original?.dispose();
    this.modified?.dispose();
  }
}

/** Creates the diff view in `container`; end-to-end tests read what it shows. */
export function createDiff(container) {
  const diff = new FlintDiff(container);
  globalThis.__flint = Object.assign(globalThis.__flint ?? {}, {
    diffShown: () => diff.target && { original: diff.target[0], modified: diff.target[1] },
  });
  return diff;
}
