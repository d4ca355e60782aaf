import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { UsageEvent } from '../../src/policy/events.js';
import { checkTopLevelKeys } from '../../src/http/top-level-keys.js';
import { geminiRequestKeys } from '../../src/protocols/gemini/field-names.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { type FakeGoChat, GO_USAGE, startFakeGoChat } from '../fakes/fake-go-chat.js';
import { serve, type Served } from '../helpers/serve.js';

/**
 * Security review 2026-11-26, finding 1 (issue 22, item 7): passthrough sends the client's JSON
 * text on, and an upstream whose decoder matches keys case-insensitively, last one winning (Go's
 * `encoding/json`, as Ollama's OpenAI layer decodes) reads `"MODEL"` where the gateway read
 * `model`. A key scoped to `cheap` must not run another model, nor turn off the usage the gateway
 * asks for, whatever spelling, escape or repetition of a key it sends.
 */

const CHEAP_KEY = 'sk-tenant-cheap-1234';
let upstream: FakeGoChat;
let gateway: Gateway;
let served: Served;
const usage: UsageEvent[] = [];

beforeAll(async () => {
  upstream = await startFakeGoChat();
  gateway = createGateway({
    keys: [
      { key: CHEAP_KEY, id: 'tenant-cheap', models: ['cheap'] },
      { key: 'sk-admin', id: 'admin', group: 'admins' },
    ],
    providers: { ollama: createOpenAIProvider({ baseURL: `${upstream.url}/v1`, apiKey: 'up-key', responses: false }) },
    models: [
      { id: 'cheap', provider: 'ollama', upstreamModel: 'llama3.2:1b', price: { input: 0.1, output: 0.1 } },
      { id: 'expensive', provider: 'ollama', upstreamModel: 'llama3.1:405b', price: { input: 100, output: 100 }, groups: ['admins'] },
    ],
    logger: { info() {}, warn() {}, error() {} },
    policies: { retry: { retries: 0 } },
    hooks: { onUsage: (event) => void usage.push(event) },
  });
  served = await serve(gateway);
});

afterAll(async () => {
  await served?.close();
  await gateway?.dispose();
  await upstream?.close();
});

beforeEach(() => {
  upstream.decoded.length = 0;
  usage.length = 0;
});

const MESSAGES = '"messages":[{"role":"user","content":"hi"}]';

/** A request whose body is the exact text given (escapes and duplicates as written). */
function post(path: string, text: string, headers: Record<string, string> = { authorization: `Bearer ${CHEAP_KEY}` }): Promise<Response> {
  return fetch(served.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: text });
}

async function refusal(response: Response): Promise<{ status: number; param?: string | undefined; message: string }> {
  const body = (await response.json()) as { error: { param?: string; message: string } };
  return { status: response.status, param: body.error.param, message: body.error.message };
}

describe('a Chat body an upstream could read another way', () => {
  it('serves the key its own model, priced as that model (control)', async () => {
    const response = await post('/v1/chat/completions', `{"model":"cheap",${MESSAGES}}`);
    expect(response.status).toBe(200);
    expect(upstream.decoded).toEqual([{ model: 'llama3.2:1b' }]);
    expect(usage[0]).toMatchObject({ model: 'cheap', costUsd: 0.2 });
  });

  it.each([
    ['"MODEL"', 'MODEL'],
    ['"Model"', 'Model'],
    ['"\\u004dODEL"', 'MODEL'],
    ['"mod\\u0045l"', 'modEl'],
  ])('refuses another spelling of model (%s): nothing reaches the upstream', async (key, named) => {
    const response = await post('/v1/chat/completions', `{"model":"cheap",${key}:"llama3.1:405b",${MESSAGES}}`);
    expect(await refusal(response)).toMatchObject({ status: 400, param: named });
    expect(upstream.decoded).toEqual([]);
  });

  it('refuses a repeated key, escaped or not, whichever copy the upstream keeps', async () => {
    for (const text of [
      `{"model":"cheap","mod\\u0065l":"cheap",${MESSAGES}}`,
      `{"model":"cheap","temperature":0,"temperature":1,${MESSAGES}}`,
      `{"model":"cheap","stream":false,"stream":true,${MESSAGES}}`,
    ]) {
      const { status, param, message } = await refusal(await post('/v1/chat/completions', text));
      expect({ status, param }).toEqual({ status: 400, param: text.includes('temperature') ? 'temperature' : text.includes('stream') ? 'stream' : 'model' });
      expect(message).toMatch(/more than once/);
    }
    expect(upstream.decoded).toEqual([]);
  });

  it('refuses keys Go folds into stream or stream_options (ſ is s, K is k) and upper-case stream keys', async () => {
    for (const key of ['STREAM', 'ſtream', 'Stream_Options', 'ſtream_options', 'stream_optionſ']) {
      const response = await post('/v1/chat/completions', `{"model":"cheap","${key}":true,${MESSAGES}}`);
      expect(await refusal(response), key).toMatchObject({ status: 400, param: key });
    }
    // A non-ASCII key is refused whatever field it folds to: `\u212a` is the Kelvin sign.
    expect(await refusal(await post('/v1/chat/completions', `{"model":"cheap","\\u212aeep_alive":1,${MESSAGES}}`))).toMatchObject({
      status: 400,
      param: '\u212aeep_alive',
    });
    expect(upstream.decoded).toEqual([]);
  });

  it('asks for usage in a way the upstream cannot read as no: the stream is charged', async () => {
    for (const options of [
      '{"include_usage":true,"INCLUDE_USAGE":false}',
      '{"include_usage":true,"\\u0131nclude_usage":false}',
      '{"Include_Usage":false}',
      '{}',
    ]) {
      const response = await post('/v1/chat/completions', `{"model":"cheap","stream":true,"stream_options":${options},${MESSAGES}}`);
      expect(response.status, options).toBe(200);
      const text = await response.text();
      expect(text).toContain('[DONE]');
      // A client that did not ask for usage does not get the usage chunk the gateway asked for.
      expect(text.includes('"prompt_tokens"'), options).toBe(options.startsWith('{"include_usage":true'));
    }
    expect(upstream.decoded.map((request) => request.stream_options?.include_usage)).toEqual([true, true, true, true]);
    expect(usage.map((event) => [event.usage, event.costUsd])).toEqual(
      Array(4).fill([{ input: GO_USAGE.prompt_tokens, output: GO_USAGE.completion_tokens }, 0.2]),
    );
  });

  it('answers the official SDK with an error naming the key', async () => {
    const client = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: CHEAP_KEY, maxRetries: 0 });
    const error = await client.chat.completions
      .create({ model: 'cheap', messages: [{ role: 'user', content: 'hi' }], ...({ MODEL: 'llama3.1:405b' } as object) })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, param: 'MODEL', code: 'ambiguous_parameter' });
    expect(upstream.decoded).toEqual([]);
  });
});

describe('every route that sends a JSON body on', () => {
  const openai = { authorization: `Bearer ${CHEAP_KEY}` };
  const anthropic = { 'x-api-key': CHEAP_KEY, 'anthropic-version': '2023-06-01' };
  const gemini = { 'x-goog-api-key': CHEAP_KEY };
  const routes: [string, string, Record<string, string>, string][] = [
    ['/v1/responses', '{"model":"cheap","input":"hi","Previous_Response_Id":"resp_x"}', openai, 'Previous_Response_Id'],
    ['/v1/responses/input_tokens', '{"model":"cheap","input":"hi","MODEL":"expensive"}', openai, 'MODEL'],
    ['/v1/responses/compact', '{"model":"cheap","input":"hi","model":"expensive"}', openai, 'model'],
    ['/v1/messages', `{"model":"cheap","max_tokens":8,${MESSAGES},"ſtream":true}`, anthropic, 'ſtream'],
    ['/v1/messages/count_tokens', `{"model":"cheap",${MESSAGES},"Model":"expensive"}`, anthropic, 'Model'],
    ['/v1/embeddings', '{"model":"cheap","input":"hi","MODEL":"expensive"}', openai, 'MODEL'],
    ['/v1/images/generations', '{"model":"cheap","prompt":"a cat","Model":"expensive"}', openai, 'Model'],
    ['/v1/audio/speech', '{"model":"cheap","input":"hi","voice":"alloy","Model":"expensive"}', openai, 'Model'],
    ['/v1/video/generations', '{"model":"cheap","prompt":"a cat","MODEL":"expensive"}', openai, 'MODEL'],
    ['/v1beta/models/cheap:generateContent', '{"contents":[{"parts":[{"text":"hi"}]}],"CachedContent":"cachedContents/x"}', gemini, 'CachedContent'],
    ['/v1beta/models/cheap:streamGenerateContent', '{"contents":[],"generation_config":{},"generationConfig":{}}', gemini, 'generationConfig'],
    ['/v1beta/models/cheap:countTokens', '{"contents":[],"contents":[{"parts":[{"text":"hi"}]}]}', gemini, 'contents'],
    ['/v1beta/models/cheap:embedContent', '{"content":{"parts":[{"text":"hi"}]},"taskType":"X","tasktype":"Y"}', gemini, 'tasktype'],
  ];

  it.each(routes)('%s refuses %s', async (path, text, headers, param) => {
    const response = await post(path, text, headers);
    expect(response.status).toBe(400);
    const body = JSON.stringify(await response.json());
    // Each route answers in its own error shape; every shape names the key.
    expect(body).toContain(JSON.stringify(param).slice(1, -1));
    expect(upstream.decoded).toEqual([]);
  });

  it('keeps Gemini bodies that use Google’s own spellings', () => {
    expect(() => checkTopLevelKeys(['contents', 'system_instruction', 'generationConfig', 'someNewField'], geminiRequestKeys)).not.toThrow();
  });
});
