// The app's side of the preview (app/js/preview.js) driven on its own: a finished page superseded
// before its frame has loaded (by the next page, or by a new answer) never calls back, since the app
// drops a run's callback (a Rust closure) as soon as the next run replaces it, and calling a dropped
// closure throws ("closure invoked recursively or after being dropped").
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

for (const by of ['run', 'begin']) {
  test(`a finished page superseded (by ${by === 'run' ? 'the next page' : 'a new answer'}) while its frame loads never calls its callback`, async () => {
    const { calls, firstLoaded, front } = await host.page.evaluate(async (by) => {
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
      // What supersedes it comes right after the first page is sent to its frame, before that
      // frame says it has loaded; a next page waits its turn behind other previews' frames (one
      // per animation frame): the first frame loads meanwhile.
      const receive = preview.receive.bind(preview);
      preview.receive = (frame, data) => {
        receive(frame, data);
        if (first === null && frame.kind === 'final' && frame.sent) {
          first = frame;
          for (let i = 0; i < 60; i++) frameQueue.add(() => {});
          if (by === 'run') preview.run('<!doctype html><p id="page">second</p>', () => calls.push('second'));
          else preview.begin();
        }
      };
      preview.run('<!doctype html><p id="page">first</p>', () => calls.push('first'));
      await until(() => first?.loaded, 'the first page never loaded');
      if (by === 'run') await until(() => calls.length > 0 && preview.front?.loaded, 'the second page was never shown');
      else await new Promise((wake) => setTimeout(wake, 300));
      return { calls, firstLoaded: first.loaded, front: preview.front?.doc ?? null };
    }, by);
    assert.equal(firstLoaded, true);
    assert.deepEqual(calls, by === 'run' ? ['second'] : [], 'a superseded run called back');
    if (by === 'run') assert.match(front, /second/);
  });
}
