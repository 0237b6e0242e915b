// Monaco behind a small streaming-friendly surface, used by app/src/interop/editor.rs.
//
// Monaco's AMD build is not on the page at first: the editor loads its loader (from the folder
// index.html names in `<meta name="flint-monaco">`) once the app has painted and the page is idle,
// so the prompt is usable before 1 MB of editor script runs; text that arrives before is kept.
// Appends are buffered and applied with at most one `applyEdits` per animation
// frame: one edit per token collapses Monaco at a few thousand tokens/s, one per frame holds 50k.
// `setValue` is never used mid-stream (it re-tokenises the whole model), and the streamed text is
// kept out of the undo stack; one undo stop is pushed when the stream ends.
// While a stream runs, a `Pacer` (pacer.js) decides which frames paint: when an append costs more
// than the frame allows they come less often (never more than 250 ms behind, the end at once), and
// the frame after the person's key or click is left to them.

import { Pacer, watchInput } from './pacer.js';
import { StreamView } from './stream_view.js';
import { loadMonaco } from './monaco.js';

// How long a finished file waits for the run's status before it goes to Monaco (see `finish`).
const HANDOFF_WAIT_MS = 2_000;

/** Runs `f` after the next paint, once the page is idle (at most `timeout` ms later). */
function afterPaint(f, timeout = 500) {
  requestAnimationFrame(() => {
    if (globalThis.requestIdleCallback) requestIdleCallback(f, { timeout });
    else setTimeout(f, 0);
  });
}

export class FlintEditor {
  constructor(container) {
    this.editor = null;
    this.model = null;
    this.pending = [];
    this.pendingClear = false;
    this.language = 'markdown';
    this.frame = 0;
    this.pacer = new Pacer();
    watchInput(this.pacer);
    this.streaming = false;
    // True while Flint itself changes the text, so that only the person's edits reach `onEdit`.
    this.applying = false;
    this.onEdit = null;
    this.created = null;
    this.container = container;
    // A new file streams into this plain view and reaches Monaco when it ends (see stream_view.js);
    // `viewed` counts the pending appends already in the view. Benchmarks set
    // `__flintMonacoWhileStreaming` to compare with streaming into Monaco.
    this.view = null;
    this.viewed = 0;
    this.handoffs = 0;
    afterPaint(() => this.#load());
  }

  /** Loads Monaco (once) and creates the editor; resolves when it exists. */
  #load() {
    this.created ??= loadMonaco().then(
      (monaco) => this.#create(monaco, this.container),
      (err) => console.error('Flint: the editor failed to load:', err),
    );
    return this.created;
  }

  #create(monaco, container) {
    if (this.disposed) return;
    this.monaco = monaco;
    this.editor = monaco.editor.create(container, {
      model: null,
      theme: 'vs-dark',
      automaticLayout: true,
      minimap: { enabled: false },
      fontSize: 13,
      lineHeight: 19,
      scrollBeyondLastLine: false,
      renderLineHighlight: 'none',
      readOnly: this.streaming,
      tabSize: 2,
      // Decorations that re-scan the text on every append and that nobody reads mid-stream.
      occurrencesHighlight: 'off',
      selectionHighlight: false,
      matchBrackets: 'never',
      stickyScroll: { enabled: false },
      unicodeHighlight: { ambiguousCharacters: false, invisibleCharacters: false },
      // 'dimmed' greys the number after a final newline below legible contrast (axe-core).
      renderFinalNewline: 'on',
    });
    this.#adopt(monaco.editor.createModel('', this.language));
    this.warm = this.#warmUp(monaco);
    this.#schedule();
  }

  // Monaco loads the editor worker host and each language's tokenizer the first time they are
  // needed: 400–500 ms of script on these machines, which would otherwise land in the first frames
  // of the first stream. Load them while the person is still typing the prompt.
  #warmUp(monaco) {
    return new Promise((resolve) => {
      const idle = globalThis.requestIdleCallback ?? ((f) => setTimeout(f, 50));
      idle(() => {
        const scratch = monaco.editor.createModel('<style>a{}</style><script>1</script>', 'html');
        const host = document.createElement('div');
        host.style.cssText = 'position:absolute;left:-9999px;width:200px;height:50px';
        document.body.appendChild(host);
        const hidden = monaco.editor.create(host, { model: scratch, minimap: { enabled: false } });
        for (const language of ['markdown', 'html', 'css', 'javascript']) monaco.editor.tokenize('x', language);
        // Two frames: the worker host and the tokenizers are loaded by then.
        requestAnimationFrame(() => requestAnimationFrame(() => {
          hidden.dispose();
          scratch.dispose();
          host.remove();
          resolve();
        }));
      });
    });
  }

  /** Resolves once the editor exists and Monaco's lazily loaded parts are in (loading it now if
   * it has not started). */
  ready() {
    return this.#load().then(() => this.warm);
  }

  /** Calls `callback()` after each change the person makes (not after Flint's own appends). */
  setOnEdit(callback) {
    this.onEdit = callback;
  }

  /** Clears the editor for a new file in `language`. */
  reset(language) {
    this.pending = [];
    this.pendingClear = true;
    this.viewed = 0;
    // A stream starting again keeps the view; code shown otherwise (a version, a restore) goes to Monaco.
    if (this.view?.shown) {
      if (this.streaming) this.view.clear();
      else this.view.hide();
    }
    this.language = language || 'plaintext';
    this.#schedule();
  }

  /** Queues `text` to be appended at the next animation frame. */
  append(text) {
    if (text.length === 0) return;
    this.pending.push(text);
    this.pacer.pending(performance.now());
    this.#schedule();
  }

  /**
   * Replaces lines, in order (`edits` is JSON: `[{start, end, text}]`, 0-based lines, `end`
   * exclusive, each edit on the text the previous ones left): an edit stream's blocks as they apply,
   * so Monaco re-tokenises a few lines rather than the whole file.
   */
  editLines(json) {
    const edits = JSON.parse(json);
    if (edits.length === 0) return true;
    // Edits change a file already in Monaco: the file streaming into the view goes there first.
    this.#leaveView();
    // Not created yet (or the benchmark's comparison): the app sends the edited text whole
    // (`replaceText`), so the rule of line edits lives in Rust alone (`apply_line_edits`).
    if (!this.model || globalThis.__flintWholeTextEdits) return false;
    this.#flush();
    this.applying = true;
    try {
      const { Range } = this.monaco;
      for (const { start, end, text } of edits) {
        const lines = this.model.getLineCount();
        const range = end + 1 <= lines
          ? new Range(start + 1, 1, end + 1, 1)
          : new Range(Math.min(start + 1, lines), start + 1 <= lines ? 1 : this.model.getLineMaxColumn(lines),
            lines, this.model.getLineMaxColumn(lines));
        this.model.applyEdits([{ range, text }]);
      }
    } finally {
      this.applying = false;
    }
    return true;
  }

  /** The whole text replaced, in the current language (line edits `editLines` did not make). */
  replaceText(text) {
    this.reset(this.language);
    this.append(text);
  }

  /** A stream starts: the editor is read-only until it ends. */
  begin() {
    this.streaming = true;
    this.pacer.reset();
    this.editor?.updateOptions({ readOnly: true });
  }

  /** The stream ended: flush now, one undo stop, editable again. */
  finish() {
    this.streaming = false;
    if (this.frame) {
      cancelAnimationFrame(this.frame);
      this.frame = 0;
    }
    if (!this.view?.shown) {
      this.#settle();
      return;
    }
    // Monaco's first render of the whole file is one long task: the status the person waits for
    // ("done" once the page shows, or "cancelled" after Esc) paints first (`ended`), and Monaco
    // gets the file once the page is idle after that frame, unless another stream has started.
    // Should no status come, the file goes to Monaco within HANDOFF_WAIT_MS anyway.
    const handoff = ++this.handoffs;
    setTimeout(() => this.#handOver(handoff), HANDOFF_WAIT_MS);
  }

  /** The run's status has left "streaming": the finished file goes to Monaco after its paint. */
  ended() {
    const handoff = this.handoffs;
    afterPaint(() => this.#handOver(handoff));
  }

  // Monaco gets the finished file as a new model, built off-screen and swapped in: editing the
  // shown model made Monaco lay out and render behind the view (a 16 KB slice cost 60-85 ms of
  // script, style and layout traced at Esc; one edit of 500 KB, 60-100 ms), where a new model
  // costs building its text buffer and rendering one viewport. The model is built in one idle
  // task and shown in the next: together they were one task of 50-65 ms. `__flintWholeHandoff`:
  // the benchmark's comparison (one edit of the shown model); `__flintOneTaskHandoff`, both in one.
  #handOver(handoff) {
    if (handoff !== this.handoffs || this.streaming || !this.view?.shown) return;
    if (!this.model || !this.pendingClear || globalThis.__flintWholeHandoff) {
      this.#settle();
      return;
    }
    const parts = this.pending;
    const count = parts.length;
    const model = this.monaco.editor.createModel(parts.join(''), this.language);
    const show = () => {
      const current = handoff === this.handoffs && !this.streaming && this.view?.shown;
      // The text changed in between (reset, more appends, a flush): this model is not the file.
      if (!current || this.pending !== parts || parts.length !== count || !this.pendingClear) {
        model.dispose();
        if (current) this.#settle();
        return;
      }
      const old = this.model;
      this.#adopt(model);
      this.pending = [];
      this.pendingClear = false;
      old.dispose();
      this.#settle();
    };
    if (globalThis.__flintOneTaskHandoff) show();
    else afterPaint(show);
  }

  // `model` becomes the editor's: the person's edits to it reach `onEdit`.
  #adopt(model) {
    this.model = model;
    model.onDidChangeContent(() => {
      if (!this.applying && !this.streaming) this.onEdit?.();
    });
    this.editor.setModel(model);
  }

  #settle() {
    this.#leaveView();
    this.#flush();
    if (this.model) this.model.pushStackElement();
    this.editor?.updateOptions({ readOnly: false });
  }

  /** Selects UTF-16 offsets `start`..`end` of the text and scrolls them into view. */
  select(start, end) {
    if (!this.model || !this.editor || this.streaming) return;
    this.#flush();
    const a = this.model.getPositionAt(start);
    const b = this.model.getPositionAt(end);
    const range = { startLineNumber: a.lineNumber, startColumn: a.column, endLineNumber: b.lineNumber, endColumn: b.column };
    this.editor.setSelection(range);
    this.editor.revealRangeInCenterIfOutsideViewport(range);
  }

  /** The editor's text, including appends not yet painted. */
  text() {
    const shown = this.pendingClear || !this.model ? '' : this.model.getValue();
    return shown + this.pending.join('');
  }

  dispose() {
    this.disposed = true;
    // A hand-over still waiting (its model built, not yet shown) finds itself superseded.
    this.handoffs++;
    if (this.frame) cancelAnimationFrame(this.frame);
    this.editor?.dispose();
    this.model?.dispose();
  }

  #schedule() {
    if (!this.frame && this.model) this.frame = requestAnimationFrame((now) => this.#tick(now));
  }

  // One animation frame: paint what is queued if the pacer says so, else look again next frame.
  #tick(now) {
    this.frame = 0;
    this.pacer.frame(now);
    const waiting = this.view?.shown ? this.pending.length > this.viewed : this.pendingClear || this.pending.length > 0;
    if (!waiting) {
      if (this.pacer.measuring()) this.#schedule();
      return;
    }
    if (this.streaming && !this.pacer.shouldPaint(now)) {
      this.#schedule();
      return;
    }
    const started = performance.now();
    this.#flush();
    this.pacer.painted(now, performance.now() - started);
    // The next frames too, so the pacer sees what this paint cost them (layout and rendering).
    this.#schedule();
  }

  // `intoMonaco`: everything pending goes to Monaco, none to the stream view.
  #flush(intoMonaco = false) {
    if (!this.model) return;
    this.applying = true;
    try {
      this.#applyPending(this.model, intoMonaco);
    } finally {
      this.applying = false;
    }
  }

  #applyPending(model, intoMonaco) {
    if (!intoMonaco && this.streaming && this.pendingClear && !globalThis.__flintMonacoWhileStreaming) {
      this.#toView();
      return;
    }
    if (this.pendingClear) {
      this.pendingClear = false;
      model.applyEdits([{ range: model.getFullModelRange(), text: '' }]);
      if (model.getLanguageId() !== this.language) {
        this.monaco.editor.setModelLanguage(model, this.language);
      }
    }
    if (this.pending.length === 0) return;
    const text = this.pending.length === 1 ? this.pending[0] : this.pending.join('');
    this.pending = [];
    const lastLine = model.getLineCount();
    const lastColumn = model.getLineMaxColumn(lastLine);
    const follow = this.#bottomVisible(lastLine);
    // A cursor at the end is carried along by appends, and Monaco measures the cursor's pixel
    // position (getClientRects, a forced layout) in every frame that shows it: the largest single
    // cost of a streaming editor in bench/relay.md. While a stream paints, a cursor the appends
    // would carry waits at the top instead (one the person placed or a selection stays put).
    const selection = this.streaming && this.editor?.getSelection();
    const carried = selection && selection.isEmpty() && selection.positionLineNumber === lastLine
      && selection.positionColumn === lastColumn;
    model.applyEdits([{ range: new this.monaco.Range(lastLine, lastColumn, lastLine, lastColumn), text }]);
    if (carried) this.editor.setPosition({ lineNumber: 1, column: 1 });
    // setScrollTop rather than revealLine: revealing also measures the line horizontally, which
    // forces a layout read every frame.
    if (follow) this.editor.setScrollTop(this.editor.getScrollHeight(), 1 /* Immediate */);
  }

  // A new file streaming: its appends go to the plain view, the model keeps the old text (cleared
  // in `text()` by `pendingClear`) until `#leaveView` hands it the whole new one.
  #toView() {
    this.view ??= new StreamView(this.container);
    if (!this.view.shown) {
      this.view.show();
      this.viewed = 0;
    }
    if (this.pending.length > this.viewed) {
      const text = this.pending.length - this.viewed === 1 ? this.pending[this.viewed] : this.pending.slice(this.viewed).join('');
      this.viewed = this.pending.length;
      this.view.append(text);
    }
  }

  // The view's text into Monaco in one edit, Monaco shown again at the end if the view followed it.
  #leaveView() {
    if (!this.view?.shown) return;
    const following = this.view.hide();
    this.viewed = 0;
    this.#flush(true);
    if (following && this.editor) this.editor.setScrollTop(this.editor.getScrollHeight(), 1 /* Immediate */);
  }

  // Follow the stream only while the user has not scrolled up to read.
  #bottomVisible(lastLine) {
    const ranges = this.editor?.getVisibleRanges() ?? [];
    if (ranges.length === 0) return true;
    return ranges[ranges.length - 1].endLineNumber >= lastLine - 1;
  }
}

/** Creates the editor in `container` and makes its text readable by end-to-end tests. */
export function createEditor(container) {
  const editor = new FlintEditor(container);
  globalThis.__flint = Object.assign(globalThis.__flint ?? {}, {
    editorSelection: () => {
      const selection = editor.editor?.getSelection();
      return selection ? editor.model.getValueInRange(selection) : '';
    },
    editorText: () => editor.text(),
    editorReady: () => editor.ready(),
  });
  return editor;
}
