// The page's table of what the preview's frames may send (app/js/frame_messages.js, derived from
// protocol/src/frames.rs): what each frame sends today passes, anything else is named and dropped.
import assert from 'node:assert/strict';
import { test } from 'node:test';

const { FROM_FRAME, messageProblem } = await import('../../app/js/frame_messages.js');

test('what the runtime, check and pick frames send passes the table', () => {
  for (const message of [
    { flint: 'ready' },
    { flint: 'applied', ms: 1.2 },
    { flint: 'applied', ms: 0, resync: true },
    { flint: 'applied', ms: 3, whole: false },
    { flint: 'console', level: 'warn', text: 'hi' },
    { flint: 'loaded' },
    { flint: 'gone' },
    { flint: 'pong', id: 4 },
    { flint: 'picked', path: [{ index: 0, tag: 'p' }], id: null },
    { flint: 'picked', cancelled: true },
    { flint: 'checked', results: [], text: 'page', ms: 12 },
    { flint: 'checked', failed: 'The checks stopped' },
    { flint: 'pixels', width: 320, height: 240, page_height: 600, rgba: 'AAAA', ms: 12 },
    { flint: 'pixels', failed: 'The page could not be drawn' },
  ]) {
    assert.equal(messageProblem(message), null, JSON.stringify(message));
  }
});

test('unknown kinds, missing and mistyped fields are named, and the message dropped', () => {
  assert.match(messageProblem(null), /not an object/);
  assert.match(messageProblem([{ flint: 'ready' }]), /not an object/);
  assert.match(messageProblem({ flint: 'navigate', url: 'x' }), /unknown kind "navigate"/);
  // Names inherited by every object are not kinds.
  assert.match(messageProblem({ flint: '__proto__' }), /unknown kind/);
  assert.match(messageProblem({ flint: 'toString' }), /unknown kind/);
  assert.match(messageProblem({ flint: 'applied' }), /"applied" needs ms: number/);
  assert.match(messageProblem({ flint: 'applied', ms: '3' }), /ms: number/);
  assert.match(messageProblem({ flint: 'applied', ms: 3, resync: 'yes' }), /resync: boolean\?/);
  assert.match(messageProblem({ flint: 'console', level: 'log', text: { big: 1 } }), /text: string/);
  assert.match(messageProblem({ flint: 'picked', path: 'body > p' }), /path: array\?/);
});

test('every kind the page handles is in the table', () => {
  assert.deepEqual(Object.keys(FROM_FRAME).sort(),
    ['applied', 'checked', 'console', 'gone', 'loaded', 'picked', 'pixels', 'pong', 'ready', 'swapped']);
});
