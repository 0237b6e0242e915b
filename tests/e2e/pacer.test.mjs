// The streaming paint pacer (app/js/pacer.js) on its own, frame by frame with made-up clocks: no
// browser. What the editor and the previews rely on: cheap paints every frame, costly ones spread
// out, never more than MAX_BEHIND_MS behind, and the frame after a key or click left to the person.
import assert from 'node:assert/strict';
import { test } from 'node:test';

const { FRAME_MS, MAX_BEHIND_MS, Pacer } = await import('../../app/js/pacer.js');

/**
 * Drives `pacer` for `frames` animation frames with text arriving before each, painting when it
 * says so at a cost of `cost(i)` ms, the frame holding a paint running over by `over` ms and the
 * one after it by `overNext` (Monaco renders there). Returns the frame indices that painted and the
 * longest wait seen.
 */
function drive(pacer, frames, { cost = () => 1, over = 0, overNext = 0, inputAt = [] } = {}) {
  const painted = [];
  let now = 1000;
  let longestBehind = 0;
  let overrun = 0;
  let nextOverrun = 0;
  for (let i = 0; i < frames; i++) {
    pacer.pending(now - 1);
    if (inputAt.includes(i)) pacer.input(now - 2);
    now += overrun;
    pacer.frame(now);
    longestBehind = Math.max(longestBehind, pacer.behind(now));
    overrun = nextOverrun;
    nextOverrun = 0;
    if (pacer.shouldPaint(now)) {
      painted.push(i);
      pacer.painted(now, cost(i));
      overrun += over;
      nextOverrun = overNext;
    }
    now += FRAME_MS;
  }
  return { painted, longestBehind };
}

test('cheap paints happen every frame', () => {
  const { painted } = drive(new Pacer(), 30, { cost: () => 2 });
  assert.equal(painted.length, 30);
});

test('paints costing more than the budget are spread out, in proportion to their cost', () => {
  const costly = drive(new Pacer(), 120, { cost: () => 30 });
  const dearer = drive(new Pacer(), 120, { cost: () => 60 });
  // 30 ms a paint at 6 ms a frame: about one frame in five.
  assert.ok(costly.painted.length >= 18 && costly.painted.length <= 30, `30 ms paints: ${costly.painted.length} of 120 frames`);
  assert.ok(dearer.painted.length < costly.painted.length, 'dearer paints should come less often');
});

test('the frame a paint overruns counts as part of its cost', () => {
  const quickScript = drive(new Pacer(), 120, { cost: () => 1, over: 40 });
  assert.ok(quickScript.painted.length < 60, `a 1 ms paint whose frame runs 40 ms over painted ${quickScript.painted.length} of 120 frames`);
});

test('so does the frame after it, where the editor renders what the paint changed', () => {
  const { painted } = drive(new Pacer(), 120, { cost: () => 1, overNext: 40 });
  assert.ok(painted.length < 60, `a paint whose next frame runs 40 ms over painted ${painted.length} of 120 frames`);
});

test('text is never more than MAX_BEHIND_MS behind, however costly painting is', () => {
  const { painted, longestBehind } = drive(new Pacer(), 200, { cost: () => 5_000 });
  assert.ok(painted.length >= 10, `only ${painted.length} paints in 200 frames`);
  assert.ok(longestBehind <= MAX_BEHIND_MS + FRAME_MS + 1, `text waited ${longestBehind.toFixed(0)} ms`);
});

test('the frame after a key or a click does not paint, the next one does', () => {
  const { painted } = drive(new Pacer(), 10, { cost: () => 1, inputAt: [4] });
  assert.deepEqual(painted, [0, 1, 2, 3, 5, 6, 7, 8, 9]);
});

test('input does not hold text back past MAX_BEHIND_MS', () => {
  const every = Array.from({ length: 60 }, (_, i) => i);
  const { painted, longestBehind } = drive(new Pacer(), 60, { cost: () => 1, inputAt: every });
  assert.ok(painted.length >= 3, 'a person typing without pause still sees the stream');
  assert.ok(longestBehind <= MAX_BEHIND_MS + FRAME_MS + 1, `text waited ${longestBehind.toFixed(0)} ms`);
});

test('nothing queued, nothing painted', () => {
  const pacer = new Pacer();
  pacer.frame(0);
  assert.equal(pacer.shouldPaint(0), false);
  pacer.pending(1);
  pacer.frame(20);
  assert.equal(pacer.shouldPaint(20), true);
});
