// The app's side of the preview (app/js/preview.js) driven on its own: a finished page superseded by
// the next before its frame has loaded never calls back, since the app drops a run's callback (a
// Rust closure) as soon as the next run replaces it, and calling a dropped closure throws.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startFrameHost } from './frame-host.mjs';

let host;
before(async () => {
  host = await startFrameHost();
});
after(async () => {
  await host?.close();
});

test('a finished page superseded while its frame loads never calls its callback; the newer one is shown', async () => {
  const { calls, firstLoaded, front } = await host.page.evaluate(async () => {
    const { FlintPreview } = await import('/app-js/preview.js');
    const { frameQueue } = await import('/app-js/preview_pacing.js');
    const until = async (ok, what) => {
      for (let i = 0; i < 400 && !ok(); i++) await new Promise((wake) => setTimeout(wake, 25));
      if (!ok()) throw new Error(what);
    };
    const box = document.createElement('div');
    box.style.cssText = 'position:relative;width:400px;height:300px';
    document.body.append(box);
    const preview = new FlintPreview(box, 'preview.html', () => {});
    const calls = [];
    let first = null;
    // The second run comes right after the first page is sent to its frame, before that frame
    // says it has loaded, and waits its turn behind other previews' frames (one per animation
    // frame): the first frame loads meanwhile.
    const receive = preview.receive.bind(preview);
    preview.receive = (frame, data) => {
      receive(frame, data);
      if (first === null && frame.kind === 'final' && frame.sent) {
        first = frame;
        for (let i = 0; i < 60; i++) frameQueue.add(() => {});
        preview.run('<!doctype html><p id="page">second</p>', () => calls.push('second'));
      }
    };
    preview.run('<!doctype html><p id="page">first</p>', () => calls.push('first'));
    await until(() => first?.loaded, 'the first page never loaded');
    await until(() => calls.length > 0 && preview.front?.loaded, 'the second page was never shown');
    return { calls, firstLoaded: first.loaded, front: preview.front?.doc };
  });
  assert.equal(firstLoaded, true);
  assert.deepEqual(calls, ['second'], 'a superseded run called back');
  assert.match(front, /second/);
});
