// A plain view of a new file while it streams, laid over Monaco, used by editor.js.
//
// Why: traced while one stream paints (bench/relay.md, "Every renderer"), Monaco's per-frame work —
// its render script, the paint, commit and layout of its view lines, the HTML it parses for them —
// was about two thirds of the app page's busy time. Appending text to plain blocks costs a small
// part of that, so while a new file streams its text goes here and Monaco gets it whole, once, when
// the stream ends (the colours arrive then). Edits to an existing file stream in Monaco as before.
//
// Lines that are complete go into a block of their own per paint, and only the unfinished last
// line is rewritten, so each paint lays out what it added rather than the whole text.

/** Lines from the bottom within which the view keeps following the stream. */
const FOLLOW_SLACK_PX = 40;

export class StreamView {
  constructor(container) {
    this.root = document.createElement('div');
    this.root.className = 'stream-view';
    this.root.hidden = true;
    this.root.setAttribute('aria-label', 'The answer as it streams');
    this.tail = document.createElement('div');
    this.root.append(this.tail);
    this.following = true;
    // Scrolled up by the person: stop following until they come back to the bottom.
    this.root.addEventListener('scroll', () => {
      const { scrollTop, scrollHeight, clientHeight } = this.root;
      this.following = scrollHeight - scrollTop - clientHeight <= FOLLOW_SLACK_PX;
    }, { passive: true });
    container.append(this.root);
  }

  get shown() {
    return !this.root.hidden;
  }

  /** Shows the view, empty. */
  show() {
    this.clear();
    this.root.hidden = false;
    this.following = true;
  }

  /** Empties the view (a stream started again). */
  clear() {
    this.root.replaceChildren(this.tail);
    this.tail.textContent = '';
  }

  /** Adds `text` at the end, following it while the person has not scrolled up. */
  append(text) {
    const all = this.tail.textContent + text;
    const cut = all.lastIndexOf('\n');
    if (cut >= 0) {
      const done = document.createElement('div');
      done.textContent = all.slice(0, cut);
      this.tail.before(done);
    }
    this.tail.textContent = all.slice(cut + 1);
    if (this.following) this.root.scrollTop = this.root.scrollHeight;
  }

  /** Hides the view; whether it was following the end (so Monaco should show the end too). */
  hide() {
    const following = this.following;
    this.root.hidden = true;
    this.clear();
    return following;
  }
}
