// Local model servers found by the gateway (issue 29): a fake Ollama that starts after the page has
// loaded is found by the picker's Rescan, the embedded demo model's note offers its best-sized model,
// and that model runs a prompt; the fake never sees a key.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test } from 'node:test';
import {
  assertEventually, editorText, freePort, openFlint, useFlint, waitForStatus,
} from './harness.mjs';

const ollamaPort = await freePort();
const flint = useFlint({
  toml: `[discovery]
ports = { ollama = ${ollamaPort}, llama_cpp = 0, lm_studio = 0, vllm = 0, sglang = 0, litellm = 0 }`,
});

const PAGE = '<!DOCTYPE html>\n<html><body><button id="b">0</button>'
  + '<script>b.onclick = () => b.textContent = +b.textContent + 1;</script></body></html>';

/** An Ollama-shaped server: its model list, a window, and a streamed answer. */
function startFakeOllama(port) {
  const seen = { paths: [], keys: 0 };
  const server = createServer((req, res) => {
    seen.paths.push(req.url);
    if (req.headers.authorization) seen.keys += 1;
    const json = (body) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify(body)); };
    if (req.url === '/api/tags') {
      return json({ models: [
        { name: 'qwen2.5-coder:1.5b', details: { family: 'qwen2', parameter_size: '1.5B' } },
        { name: 'qwen2.5-coder:7b', details: { family: 'qwen2', parameter_size: '7.6B' } },
      ] });
    }
    if (req.url === '/api/show') return json({ model_info: { 'qwen2.context_length': 32768 } });
    if (req.url === '/v1/chat/completions') {
      res.setHeader('content-type', 'text/event-stream');
      const text = '```html\n' + PAGE + '\n```\n';
      for (const piece of text.match(/[\s\S]{1,24}/g)) {
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: piece } }] })}\n\n`);
      }
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
      return res.end('data: [DONE]\n\n');
    }
    res.statusCode = 404;
    res.end('not found');
  });
  return new Promise((ok) => server.listen(port, '127.0.0.1', () => ok({ server, seen })));
}

test('Rescan finds an Ollama started after the page loaded, and its model runs a prompt', async () => {
  const { page, problems } = await openFlint(flint.browser, flint.gateway.url);
  const picker = page.getByTestId('model-picker');
  const options = () => picker.locator('option').evaluateAll((os) => os.map((o) => o.value));
  assert.ok(!(await options()).some((v) => v.startsWith('ollama/')), 'nothing is found before the server runs');

  // The demo model says what it is; with nothing found it offers nothing.
  const local = await picker.locator('option', { hasText: /smollm2/i }).first().getAttribute('value');
  await picker.selectOption(local);
  const note = page.getByTestId('demo-model-note');
  await note.waitFor();
  assert.match(await note.textContent(), /135M demo model/);
  assert.equal(await page.getByTestId('use-found-model').count(), 0);

  const ollama = await startFakeOllama(ollamaPort);
  try {
    const rescan = page.getByRole('button', { name: 'Rescan' });
    await rescan.focus();
    await page.keyboard.press('Enter');
    const status = page.getByTestId('rescan-status');
    await assertEventually(async () => /Found Ollama at 127\.0\.0\.1:\d+ \(2 models\)/.test(await status.textContent()),
      'the Rescan did not report the server');
    await assertEventually(async () => (await options()).includes('ollama/qwen2.5-coder:7b'),
      'the found models never joined the picker');

    const use = page.getByTestId('use-found-model');
    await use.waitFor();
    assert.match(await use.textContent(), /qwen2\.5-coder:7b/, 'the best-sized model is offered');
    await use.click();
    assert.equal(await picker.inputValue(), 'ollama/qwen2.5-coder:7b');
    await note.waitFor({ state: 'detached' });

    await page.getByTestId('prompt-input').fill('a button that counts clicks');
    await page.getByTestId('prompt-input').press('Control+Enter');
    await waitForStatus(page, 'done');
    assert.ok((await editorText(page)).includes('b.onclick'), 'the found model\'s page reached the editor');
    assert.ok(ollama.seen.paths.includes('/v1/chat/completions'), `paths: ${ollama.seen.paths}`);
    assert.equal(ollama.seen.keys, 0, 'a key was sent to a found server');
    assert.deepEqual(problems, []);
  } finally {
    ollama.server.close();
  }
});
