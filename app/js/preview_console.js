// The previews' console lines: limited per preview, clipped, and handed to the app once per
// animation frame. Used by preview.js.

/** Console lines a preview may show per second; the rest are counted and reported in one line. */
export const CONSOLE_LINES_PER_S = 200;
/** Longest console line shown, in UTF-16 units. */
export const CONSOLE_LINE_CHARS = 4_000;
/** Lines a preview holds between two animation frames (the panel keeps no more than this). */
export const CONSOLE_QUEUE_MAX = 500;

// Every preview's console lines reach the app in one go per animation frame, so a page that logs
// thousands of lines costs the console panel one update per frame.
export const consoleOut = {
  previews: new Set(),
  frame: 0,
  request(preview) {
    this.previews.add(preview);
    if (!this.frame) this.frame = requestAnimationFrame(() => this.flush());
  },
  flush() {
    this.frame = 0;
    const previews = [...this.previews];
    this.previews.clear();
    for (const preview of previews) preview.flushConsole();
  },
};

/** Console text as a string, whatever was posted. */
function consoleText(text) {
  if (typeof text === 'string') return text;
  try {
    return String(text);
  } catch (_) {
    return '(unprintable)';
  }
}

/**
 * The console limits of one preview: at most `perSecond` lines in any one-second window, each
 * clipped to `lineChars`; the lines dropped in a window are reported in one line when it ends.
 */
export class ConsoleLimiter {
  constructor({ perSecond = CONSOLE_LINES_PER_S, lineChars = CONSOLE_LINE_CHARS } = {}) {
    this.perSecond = perSecond;
    this.lineChars = lineChars;
    this.start = -Infinity;
    this.sent = 0;
    this.dropped = 0;
  }

  /** The lines to show for one line posted at `now` (ms): `[level, text]` pairs, maybe none. */
  add(level, text, now) {
    const out = this.roll(now);
    if (this.sent < this.perSecond) {
      this.sent++;
      const line = consoleText(text);
      const level_ = ['log', 'info', 'warn', 'error'].includes(level) ? level : 'log';
      out.push([level_, line.length > this.lineChars ? `${line.slice(0, this.lineChars)}… (cut)` : line]);
    } else {
      this.dropped++;
    }
    return out;
  }

  /** Ends the window if it is over at `now`: the report of its dropped lines, if any. */
  roll(now) {
    const out = [];
    if (now - this.start >= 1000) {
      if (this.dropped > 0) {
        const n = this.dropped;
        out.push(['warn', `${n} console line${n === 1 ? '' : 's'} dropped (a preview may log ${this.perSecond} a second)`]);
      }
      this.start = now;
      this.sent = 0;
      this.dropped = 0;
    }
    return out;
  }

  /** Milliseconds until the window ends, when lines were dropped in it (else null). */
  pending(now) {
    return this.dropped > 0 ? Math.max(0, this.start + 1000 - now) : null;
  }
}

/** One preview's console: its pages' lines limited and clipped, Flint's own notes unlimited, all
 * queued and handed to `onConsole(level, text)` once per animation frame (`consoleOut`). */
export class PreviewConsole {
  constructor(onConsole) {
    this.onConsole = onConsole;
    this.limiter = new ConsoleLimiter();
    this.lines = [];
    this.dropTimer = 0;
    this.disposed = false;
  }

  /** A console line from a page. */
  log(level, text) {
    const now = performance.now();
    for (const line of this.limiter.add(level, text, now)) this.#queue(line);
    const wait = this.limiter.pending(now);
    if (wait !== null && !this.dropTimer) {
      // Report the dropped lines when the window ends, even if the page then falls silent.
      this.dropTimer = setTimeout(() => {
        this.dropTimer = 0;
        for (const line of this.limiter.roll(performance.now())) this.#queue(line);
      }, wait + 1);
    }
  }

  /** A line from Flint itself about this preview (not limited). */
  note(level, text) {
    this.#queue([level, text]);
  }

  /** Hands the waiting lines to the app (`consoleOut` calls it). */
  flushConsole() {
    const lines = this.lines;
    this.lines = [];
    if (this.disposed) return;
    for (const [level, text] of lines) this.onConsole(level, text);
  }

  dispose() {
    this.disposed = true;
    consoleOut.previews.delete(this);
    clearTimeout(this.dropTimer);
  }

  #queue(line) {
    if (this.disposed) return;
    this.lines.push(line);
    if (this.lines.length > CONSOLE_QUEUE_MAX) this.lines.splice(0, this.lines.length - CONSOLE_QUEUE_MAX);
    consoleOut.request(this);
  }
}
