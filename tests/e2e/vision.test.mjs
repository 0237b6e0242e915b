// Pictures in the prompt: a model that sees gets them with the prompt; one that does not gets the
// description a vision model streams (edited by the person first); with no vision model, the run
// is refused and nothing is sent; hostile files are refused with a sentence and nothing attached;
// a stored share link carries the pictures (never its fragment) and the opened prompt describes
// them only when asked.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertEventually, mockPng, openFlint, savedSession, seriousViolations, startGateway, useFlint, waitConnected,
  waitForStatus,
} from './harness.mjs';

const flint = useFlint({
  // `likeness-mock` does not see: it draws one look per seed, one of them the mock's.
  models: [{ id: 'see-images', vision: true }, 'likeness-mock'],
  toml: '[vision]\nmodel = "scripted/see-images"\n',
});

/** The mock as a JPEG carrying an EXIF block with a secret (as a phone's GPS position would be). */
async function jpegWithExif(page) {
  const bytes = await page.evaluate(async () => {
    const canvas = new OffscreenCanvas(320, 200);
    const g = canvas.getContext('2d');
    g.fillStyle = '#1e40af';
    g.fillRect(0, 0, 320, 200);
    const blob = await canvas.convertToBlob({ type: 'image/jpeg', quality: 0.9 });
    return Array.from(new Uint8Array(await blob.arrayBuffer()));
  });
  const jpeg = Buffer.from(bytes);
  const payload = Buffer.concat([Buffer.from('Exif\0\0', 'binary'), Buffer.from('GPS-SECRET-51.5072N-0.1276W')]);
  const app1 = Buffer.alloc(4);
  app1.writeUInt16BE(0xffe1, 0);
  app1.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), app1, payload, jpeg.subarray(2)]);
}

/** A PNG header claiming `width` × `height`, with no pixels behind it. */
function pngHeader(width, height) {
  const head = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(head, 0);
  head.writeUInt32BE(13, 8);
  head.write('IHDR', 12, 'ascii');
  head.writeUInt32BE(width, 16);
  head.writeUInt32BE(height, 20);
  head.writeUInt8(8, 24);
  head.writeUInt8(6, 25);
  return Buffer.concat([head, Buffer.alloc(64)]);
}

async function attach(page, name, buffer, mimeType = 'image/png') {
  await page.getByTestId('image-input').setInputFiles({ name, mimeType, buffer });
}

/** The upstream's requests for `model`, newest last. */
async function requestsFor(model) {
  return (await flint.upstream.requests()).filter((r) => r.model === model);
}

/** What a request's last user message carries: its text and its image parts. */
function lastUser(request) {
  const user = request.body.messages.filter((m) => m.role === 'user').at(-1);
  if (typeof user.content === 'string') return { text: user.content, images: [] };
  return {
    text: user.content.filter((p) => p.type === 'text').map((p) => p.text).join('\n'),
    images: user.content.filter((p) => p.type === 'image_url').map((p) => p.image_url.url),
  };
}

test('a model that does not see gets the vision model\'s description, as the person corrected it', async () => {
  await flint.upstream.reset();
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await waitConnected(page);
  await page.getByTestId('model-picker').selectOption('scripted/counter@300');
  await attach(page, 'mock.png', await mockPng(page));
  const chip = page.getByTestId('picture-chip');
  await chip.waitFor();
  assert.match(await chip.textContent(), /mock\.png.*320 × 200 px/);
  assert.equal(await chip.locator('img').getAttribute('alt'), 'mock.png, 320 × 200 px');
  await assertEventually(async () => /Described by scripted\/see-images/.test(
    await page.getByTestId('description-status').textContent()), 'the description did not finish', 15_000);
  const description = page.getByTestId('description');
  assert.ok((await description.inputValue()).trim().length > 0, 'the description is empty');
  const [describe] = await requestsFor('see-images');
  const sent = lastUser(describe);
  assert.equal(sent.images.length, 1, 'the vision model is sent the picture');
  assert.match(sent.images[0], /^data:image\/png;base64,/);
  assert.match(sent.text, /320 × 200 px/);
  await description.fill('Layout: a blue header band (EDITED BY THE PERSON) over a white page.');
  await page.getByTestId('prompt-input').fill('Build this page');
  await page.getByTestId('run-button').click();
  await waitForStatus(page, 'done');
  const [code] = await requestsFor('counter@300');
  const asked = lastUser(code);
  assert.equal(asked.images.length, 0, 'a model that does not see is never sent the image');
  assert.match(asked.text, /^Build this page/);
  assert.match(asked.text, /EDITED BY THE PERSON/, 'the person\'s correction is what is sent');
  assert.equal((await requestsFor('see-images')).length, 1, 'the same picture is not described twice');
  // The version keeps what its model was told the picture shows.
  const kept = page.getByTestId('version-description');
  assert.match(await kept.locator('summary').textContent(),
    /^v1 was made from 1 picture, described by scripted\/see-images$/);
  await kept.locator('summary').click();
  assert.match(await kept.locator('p').innerText(), /EDITED BY THE PERSON/);
  assert.deepEqual(await seriousViolations(page), [], 'axe with a picture and its description');
  // A reload keeps the picture and its description (not asked for again).
  await assertEventually(async () => (await savedSession(page))?.pictures?.images?.length === 1,
    'the session did not keep the picture');
  await page.reload();
  await page.getByTestId('picture-chip').waitFor();
  await assertEventually(async () => /EDITED BY THE PERSON/.test(await page.getByTestId('description').inputValue()),
    'the description did not come back');
  assert.equal((await requestsFor('see-images')).length, 1, 'a reload does not describe again');
  assert.match(await page.getByTestId('version-description').textContent(), /EDITED BY THE PERSON/,
    'the version\'s description did not come back with the session');
  await page.getByRole('button', { name: 'Remove mock.png' }).click();
  assert.equal(await page.getByTestId('picture-chip').count(), 0);
});

test('a model that sees gets the picture with the prompt, and no description is made', async () => {
  await flint.upstream.reset();
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await waitConnected(page);
  await page.getByTestId('model-picker').selectOption('scripted/see-images');
  const original = await jpegWithExif(page);
  assert.ok(original.includes('GPS-SECRET'), 'the fixture carries its secret');
  await attach(page, 'photo.jpg', original, 'image/jpeg');
  await page.getByTestId('picture-chip').waitFor();
  assert.match(await page.getByTestId('picture-route-line').textContent(), /scripted\/see-images sees the pictures/);
  assert.equal(await page.getByTestId('description').count(), 0, 'no description for a model that sees');
  await page.getByTestId('prompt-input').fill('Build this page');
  await page.getByTestId('run-button').click();
  // The scripted model answers in words (what it saw), not with a page.
  await waitForStatus(page, '(done|error)');
  const requests = await requestsFor('see-images');
  assert.equal(requests.length, 1, 'one request: the run, no description');
  const asked = lastUser(requests[0]);
  assert.equal(asked.images.length, 1);
  assert.equal(asked.text, 'Build this page');
  const sent = Buffer.from(asked.images[0].slice(asked.images[0].indexOf(',') + 1), 'base64');
  assert.ok(!sent.includes('GPS-SECRET') && !sent.includes('Exif'), 'the picture\'s metadata was sent');
});

test('hostile and broken files are refused with a sentence, and nothing is attached', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await waitConnected(page);
  const problem = page.getByTestId('picture-problem');
  const cases = [
    ['evil.svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), 'image/svg+xml', /SVG/],
    ['wide.png', pngHeader(30_000, 10), 'image/png', /30000|16384/],
    ['bomb.png', pngHeader(16_000, 16_000), 'image/png', /pixels|megapixel|too many|16000/i],
    ['cut.png', (await mockPng(page)).subarray(0, 20), 'image/png', /ends|whole|truncated|damaged/i],
    ['notes.png', Buffer.from('just some text, not a picture at all'), 'image/png', /not an image|not a picture|PNG, JPEG/i],
  ];
  for (const [name, buffer, type, says] of cases) {
    await attach(page, name, buffer, type);
    await assertEventually(async () => (await problem.textContent().catch(() => '')).startsWith(`${name} was not attached`),
      `${name} was not refused`);
    assert.match(await problem.textContent(), says, `${name}: ${await problem.textContent()}`);
    assert.equal(await page.getByTestId('picture-chip').count(), 0, `${name} was attached`);
  }
});

test('a picture pasted into the prompt or dropped anywhere is attached; a dropped text file is refused, Flint stays', async () => {
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await waitConnected(page);
  const png = [...await mockPng(page)];
  const carry = (target, type, files) => page.evaluate(([target, type, files]) => {
    const transfer = new DataTransfer();
    for (const [name, mime, bytes] of files) transfer.items.add(new File([new Uint8Array(bytes)], name, { type: mime }));
    const element = document.querySelector(target);
    const event = type === 'paste'
      ? new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true, cancelable: true })
      : new DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true });
    element.dispatchEvent(event);
    return event.defaultPrevented;
  }, [target, type, files]);
  assert.ok(await carry('[data-testid="prompt-input"]', 'paste', [['pasted.png', 'image/png', png]]), 'the paste was left to the browser');
  await assertEventually(async () => (await page.getByTestId('picture-chip').count()) === 1, 'the pasted picture was not attached');
  assert.ok(await carry('[data-testid="preview-tabs"], main, body', 'dragover', [['dropped.png', 'image/png', png]]), 'a file drag is not accepted');
  assert.ok(await carry('[data-testid="preview-tabs"], main, body', 'drop', [['dropped.png', 'image/png', png]]), 'the drop was left to the browser');
  await assertEventually(async () => (await page.getByTestId('picture-chip').count()) === 2, 'the dropped picture was not attached');
  assert.ok(await carry('body', 'drop', [['notes.txt', 'text/plain', [...Buffer.from('hello')]]]), 'a dropped text file would open in place of Flint');
  await assertEventually(async () => /^notes\.txt was not attached/.test(await page.getByTestId('picture-problem').textContent().catch(() => '')),
    'the text file was not refused');
  assert.equal(await page.getByTestId('picture-chip').count(), 2);
  assert.match(page.url(), new RegExp(`^${flint.gateway.url}`), 'Flint is still the page');
});

test('without a vision model, a run with a picture for a model that does not see is refused and nothing is sent', async () => {
  const gateway = await startGateway({ upstreamUrl: flint.upstream.url, models: [{ id: 'see-images', vision: true }] });
  try {
    await flint.upstream.reset();
    const { page } = await openFlint(flint.browser, gateway.url);
    await waitConnected(page);
    await page.getByTestId('model-picker').selectOption('scripted/counter@300');
    await attach(page, 'mock.png', await mockPng(page));
    await page.getByTestId('picture-chip').waitFor();
    assert.match(await page.getByTestId('picture-route-line').textContent(), /no vision model/);
    await page.getByTestId('run-button').click();
    await assertEventually(async () => /does not see images/.test(
      await page.getByTestId('error-message').textContent().catch(() => '')), 'the run was not refused');
    assert.deepEqual(await flint.upstream.requests(), [], 'nothing reached the upstream');
  } finally {
    await gateway.stop();
  }
});

test('a pasted mock is described as it streams and corrected; four variations of a model that does not see get the correction and are ranked by likeness', async () => {
  await flint.upstream.reset();
  const { page } = await openFlint(flint.browser, flint.gateway.url);
  await waitConnected(page);
  await page.getByTestId('model-picker').selectOption('scripted/likeness-mock');
  await page.getByTestId('variations-count').selectOption('4');
  // Every status line the description box shows, however briefly.
  await page.evaluate(() => {
    window.__statuses = [];
    new MutationObserver(() => {
      const line = document.querySelector('[data-testid="description-status"]')?.textContent ?? '';
      if (line && window.__statuses.at(-1) !== line) window.__statuses.push(line);
    }).observe(document.body, { childList: true, subtree: true, characterData: true });
  });
  const png = [...await mockPng(page)];
  const pasted = await page.evaluate((bytes) => {
    const transfer = new DataTransfer();
    transfer.items.add(new File([new Uint8Array(bytes)], 'mock.png', { type: 'image/png' }));
    const event = new ClipboardEvent('paste', { clipboardData: transfer, bubbles: true, cancelable: true });
    document.querySelector('[data-testid="prompt-input"]').dispatchEvent(event);
    return event.defaultPrevented;
  }, png);
  assert.ok(pasted, 'the paste was left to the browser');
  await page.getByTestId('picture-chip').waitFor();
  await assertEventually(async () => /Described by/.test(await page.getByTestId('description-status').textContent()),
    'the description did not finish', 15_000);
  const statuses = await page.evaluate(() => window.__statuses);
  assert.match(statuses[0], /scripted\/see-images is describing the pictures/, `not seen streaming: ${statuses}`);
  await page.getByTestId('description').fill('A dark blue header band (CORRECTED) above a white page with one button.');
  await page.getByTestId('prompt-input').fill('Build this page');
  await page.getByTestId('run-button').click();
  const tiles = page.getByTestId('variation-tile');
  await assertEventually(async () => (await tiles.count()) === 4, 'there are not four tiles');
  await waitForStatus(page, 'done');
  const runs = await requestsFor('likeness-mock');
  assert.equal(runs.length, 4, 'four variations');
  for (const run of runs) {
    const asked = lastUser(run);
    assert.equal(asked.images.length, 0, 'a variation of a model that does not see was sent the picture');
    assert.match(asked.text, /CORRECTED/, 'a variation did not get the corrected description');
  }
  const scored = page.locator('[data-testid="variation-tile"] [data-testid="likeness"][data-state="done"]');
  await assertEventually(async () => (await scored.count()) === 4, 'not every tile shows a likeness score', 30_000);
  // The tile whose seed draws the mock's look ranks first.
  const first = page.locator('[data-testid="variation-tile"][data-rank="1"]');
  const best = Number(await first.getByTestId('likeness').getAttribute('data-score'));
  const scores = [];
  for (let i = 0; i < 4; i++) scores.push(Number(await tiles.nth(i).getByTestId('likeness').getAttribute('data-score')));
  assert.equal(best, Math.max(...scores), `the first-ranked tile is not the likest: ${best} of ${scores}`);
  assert.ok(best > Math.min(...scores), `the looks were not told apart: ${scores}`);
  assert.equal((await requestsFor('see-images')).length, 1, 'one description for the four variations');
});

test('a stored share link carries the picture: the opened prompt attaches it and describes it only when asked', async () => {
  await flint.upstream.reset();
  const maker = await openFlint(flint.browser, flint.gateway.url);
  await maker.page.getByTestId('model-picker').selectOption('scripted/counter@300');
  await attach(maker.page, 'mock.png', await mockPng(maker.page));
  await maker.page.getByTestId('picture-chip').waitFor();
  await assertEventually(async () => /Described by/.test(await maker.page.getByTestId('description-status').textContent()),
    'the maker\'s description did not finish', 15_000);
  const picture = lastUser((await requestsFor('see-images'))[0]).images[0];
  await maker.page.getByTestId('prompt-input').fill('Build this page');
  await maker.page.getByTestId('share-button').click();
  const short = await maker.page.getByTestId('share-link').inputValue();
  assert.match(short, /\/s\/[0-9a-f]{32}$/, `a prompt with a picture is not shared as a stored link: ${short}`);
  assert.match(await maker.page.getByTestId('share-pictures').textContent(), /the prompt and its picture/);
  await maker.context.close();
  // The redirect names the stored link; the picture itself never goes into an address.
  const redirect = await fetch(short, { redirect: 'manual' });
  assert.match(redirect.headers.get('location'), /^\/#p=v1\.[A-Za-z0-9_-]+&s=[0-9a-f]{32}$/);

  await flint.upstream.reset();
  const { page, problems, context } = await openFlint(flint.browser, flint.gateway.url, new URL(short).pathname);
  await page.getByTestId('shared-link-banner').waitFor({ timeout: 10_000 });
  assert.equal(await page.getByTestId('prompt-input').inputValue(), 'Build this page');
  const chip = page.getByTestId('picture-chip');
  await chip.waitFor({ timeout: 10_000 });
  assert.match(await chip.textContent(), /mock\.png.*320 × 200 px/);
  await page.getByTestId('describe-held').waitFor();
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.deepEqual(await flint.upstream.requests(), [], 'the shared picture was described before anyone asked');
  // A reload keeps it held: still nothing described until the person asks.
  await assertEventually(async () => (await savedSession(page))?.pictures?.held === true,
    'the session did not keep the picture held');
  await page.reload();
  await page.getByTestId('picture-chip').waitFor({ timeout: 10_000 });
  await page.getByTestId('describe-held').waitFor();
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.deepEqual(await flint.upstream.requests(), [], 'a reload described the shared picture before anyone asked');
  await page.getByTestId('describe-shared').click();
  await assertEventually(async () => /Described by scripted\/see-images/.test(
    await page.getByTestId('description-status').textContent().catch(() => '')), 'the description did not finish', 15_000);
  const described = await requestsFor('see-images');
  assert.equal(described.length, 1);
  assert.equal(lastUser(described[0]).images[0], picture, 'the vision model is not sent the very picture shared');
  await page.getByTestId('run-button').click();
  await waitForStatus(page, 'done');
  const asked = lastUser((await requestsFor('counter@300'))[0]);
  assert.equal(asked.images.length, 0, 'a model that does not see is never sent the image');
  assert.match(asked.text, /^Build this page[\s\S]*<picture-description>/, 'the code model did not get the description');
  assert.deepEqual(problems, []);
  await context.close();
});

test('where stored links are off, Share says the link will not carry the picture and still offers the text link', async () => {
  const { page, context } = await openFlint(flint.browser, flint.gateway.url);
  // As a gateway with `share.enabled = false` answers.
  await page.route('**/api/share', (route) => route.fulfill({
    status: 404, contentType: 'text/plain', body: 'this Flint does not store shared links; share the long link instead',
  }));
  await page.getByTestId('model-picker').selectOption('scripted/see-images');
  await attach(page, 'mock.png', await mockPng(page));
  await page.getByTestId('picture-chip').waitFor();
  await page.getByTestId('share-button').click();
  const why = page.getByTestId('share-no-pictures');
  await why.waitFor();
  assert.match(await why.textContent(), /not its 1 picture: pictures travel only in a stored link.*share\.enabled/);
  const link = await page.getByTestId('share-link').inputValue();
  assert.match(new URL(link).hash, /^#p=v1\.[A-Za-z0-9_-]+$/, `the text link is not offered: ${link}`);
  assert.ok(link.length < 2_000, 'the picture went into the link');
  await context.close();
});
