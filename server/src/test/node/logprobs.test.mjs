// Reads log probabilities from a running Patchbay server through the OpenAI SDK, as a client would.
// The server's address comes from PATCHBAY_BASE_URL (ending in /v1); its base model from PATCHBAY_MODEL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.env.PATCHBAY_BASE_URL, apiKey: 'unused', maxRetries: 0 });
const model = process.env.PATCHBAY_MODEL;

function assertLogprob(v) {
  assert.equal(typeof v, 'number');
  assert.ok(Number.isFinite(v) && v <= 0, `logprob ${v}`);
}

test('completions: logprobs give tokens, values, top dicts and offsets', async () => {
  const r = await client.completions.create({ model, prompt: 'the water', max_tokens: 5, logprobs: 2, ignore_eos: true });
  const c = r.choices[0];
  const lp = c.logprobs;
  assert.equal(lp.tokens.length, 5);
  assert.equal(lp.tokens.join(''), c.text);
  let offset = 0;
  lp.tokens.forEach((t, i) => {
    assertLogprob(lp.token_logprobs[i]);
    assert.ok(t in lp.top_logprobs[i], 'the sampled token is in its dict');
    assert.ok(Object.keys(lp.top_logprobs[i]).length <= 3);
    Object.values(lp.top_logprobs[i]).forEach(assertLogprob);
    assert.equal(lp.text_offset[i], offset);
    offset += [...t].length;
  });
});

test('completions: echo with logprobs starts with the prompt, its first token null', async () => {
  const r = await client.completions.create({ model, prompt: 'the water', max_tokens: 3, logprobs: 1, echo: true, ignore_eos: true });
  const c = r.choices[0];
  assert.ok(c.text.startsWith('the water'));
  assert.equal(c.logprobs.tokens.join(''), c.text);
  assert.equal(c.logprobs.token_logprobs[0], null);
  c.logprobs.token_logprobs.slice(1).forEach(assertLogprob);
});

test('completions: prompt_logprobs, a vLLM extension, pass through the SDK', async () => {
  const r = await client.completions.create({ model, prompt: 'the water', max_tokens: 1, prompt_logprobs: 2 });
  const prompt = r.choices[0].prompt_logprobs;
  assert.equal(prompt.length, r.usage.prompt_tokens);
  assert.equal(prompt[0], null);
  for (const dict of prompt.slice(1)) {
    for (const e of Object.values(dict)) {
      assertLogprob(e.logprob);
      assert.ok(e.rank >= 1);
      assert.equal(typeof e.decoded_token, 'string');
    }
  }
});

test('chat: logprobs and top_logprobs', async () => {
  const r = await client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, logprobs: true, top_logprobs: 3, ignore_eos: true,
  });
  const c = r.choices[0];
  assert.equal(c.logprobs.content.length, 4);
  assert.equal(c.logprobs.content.map((e) => e.token).join(''), c.message.content);
  for (const e of c.logprobs.content) {
    assertLogprob(e.logprob);
    assert.equal(Buffer.from(e.bytes).toString('utf8'), e.token);
    assert.equal(e.top_logprobs.length, 3);
    e.top_logprobs.forEach((t, i) => {
      assertLogprob(t.logprob);
      if (i > 0) assert.ok(t.logprob <= e.top_logprobs[i - 1].logprob);
    });
  }
});

test('chat: streamed chunks carry their tokens\' logprobs', async () => {
  const stream = await client.chat.completions.create({
    model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, logprobs: true, top_logprobs: 1,
    ignore_eos: true, stream: true,
  });
  let text = '';
  let tokens = '';
  let count = 0;
  for await (const chunk of stream) {
    const c = chunk.choices[0];
    if (!c) continue;
    text += c.delta.content ?? '';
    for (const e of c.logprobs?.content ?? []) {
      assertLogprob(e.logprob);
      tokens += e.token;
      count++;
    }
  }
  assert.equal(count, 4);
  assert.equal(tokens, text);
});

test('chat: top_logprobs out of range is a 400 naming the parameter', async () => {
  await assert.rejects(
    client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], logprobs: true, top_logprobs: 21 }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === 'top_logprobs',
  );
});
