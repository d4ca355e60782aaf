import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';
import { CLIENT_PATHS, within, type ClientProtocol } from '../upstreams/harness.js';

/**
 * The new limits over HTTP where the gateway and the text pipeline make the call
 * (`src/gateway.ts` → `checkHeaderSize`; `src/api/text.ts` → `checkItemCount`, the body deadline
 * and `CallContext.idleTimeoutMs`). Each answer is checked in the route's own error shape.
 */

const KEY = 'sk-test';
let chatFake: FakeUpstream;
let anthropicFake: FakeUpstream;
let served: Served;

beforeAll(async () => {
  [chatFake, anthropicFake] = await Promise.all([startFakeOpenAI({ endpoints: ['chat'] }), startFakeAnthropic()]);
  served = await serve(
    createGateway({
      keys: [{ key: KEY }],
      providers: {
        'oai-chat': createOpenAIProvider({ baseURL: chatFake.url + '/v1', apiKey: 'up-key', responses: false }),
        claude: createAnthropicProvider({ baseURL: anthropicFake.url, apiKey: 'up-key' }),
      },
      models: [
        { id: 'gpt-chat', provider: 'oai-chat', upstreamModel: 'gpt-4.1' },
        { id: 'claude', provider: 'claude', upstreamModel: 'claude-sonnet-4-5' },
      ],
      limits: { headerBytes: 4096, messages: 3, requestBodyTimeoutMs: 300, streamIdleTimeoutMs: 300 },
      logger: false,
    }),
  );
});
afterAll(async () => {
  await served.close();
  await Promise.all([chatFake.close(), anthropicFake.close()]);
});

const auth = (client: ClientProtocol): Record<string, string> =>
  client === 'messages' ? { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${KEY}` };

function post(client: ClientProtocol, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(served.url + CLIENT_PATHS[client], {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth(client), ...headers },
    body: JSON.stringify(body),
  });
}

/** The error a client reads, whatever the route's shape. */
async function errorOf(
  client: ClientProtocol,
  response: Response,
): Promise<{ status: number; type: string; message: string; param?: string | null; code?: string | null }> {
  const json = (await response.json()) as any;
  if (client === 'messages') {
    expect(json.type).toBe('error');
    return { status: response.status, type: json.error.type, message: json.error.message };
  }
  return { status: response.status, ...json.error };
}

const turns = (count: number) => Array.from({ length: count }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i}` }));

describe('headerBytes → 431 in the route shape (gateway.ts calls checkHeaderSize)', () => {
  it.each(['chat', 'messages'] as const)('%s route', async (client) => {
    const model = client === 'chat' ? 'gpt-chat' : 'claude';
    const response = await post(client, { model, max_tokens: 16, messages: turns(1) }, { 'x-padding': 'p'.repeat(8 * 1024) });
    const error = await errorOf(client, response);
    expect(error).toMatchObject({ status: 431, type: 'invalid_request_error' });
    expect(error.message).toContain('4096 bytes');
    if (client === 'chat') expect(error.code).toBe('request_headers_too_large');
    expect(chatFake.requests.length + anthropicFake.requests.length).toBe(0);
  });
});

describe('messages → 400 naming messages / input (text.ts calls checkItemCount)', () => {
  it('chat: 4 messages over a limit of 3', async () => {
    const error = await errorOf('chat', await post('chat', { model: 'gpt-chat', messages: turns(4) }));
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'messages', code: 'too_many_items' });
  });

  it('responses: 4 input items over a limit of 3', async () => {
    const error = await errorOf('responses', await post('responses', { model: 'gpt-chat', input: turns(4) }));
    expect(error).toMatchObject({ status: 400, param: 'input', code: 'too_many_items' });
  });

  it('messages: 4 content blocks over a limit of 3, in the Anthropic shape', async () => {
    const content = Array.from({ length: 4 }, (_, i) => ({ type: 'text', text: `part ${i}` }));
    const error = await errorOf('messages', await post('messages', { model: 'claude', max_tokens: 16, messages: [{ role: 'user', content }] }));
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', message: expect.stringMatching(/content blocks/) });
  });

  it('up to the limit passes', async () => {
    expect((await post('chat', { model: 'gpt-chat', messages: turns(3) })).status).toBe(200);
  });
});

describe('requestBodyTimeoutMs → 408 on the text routes (text.ts passes the deadline)', () => {
  it.each(['chat', 'responses', 'messages'] as const)('%s route, a body trickled past the deadline', async (client) => {
    const socket = connect(Number(new URL(served.url).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let received = '';
    socket.on('data', (data: Buffer) => (received += data.toString('utf8')));
    const headers = Object.entries({ ...auth(client), 'content-type': 'application/json', 'content-length': '100000' })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(`POST ${CLIENT_PATHS[client]} HTTP/1.1\r\nhost: gw.test\r\n${headers}\r\n{"model":"gpt-chat","messages":[`);
    await within(new Promise((resolve) => socket.once('close', resolve)), 3000, 'the 408 and the close');
    const [head = '', body = ''] = received.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 408 /);
    expect(head.toLowerCase()).toContain('connection: close');
    const json = JSON.parse(body);
    if (client === 'messages')
      expect(json).toEqual({
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.stringContaining('requestBodyTimeoutMs') },
        request_id: /^request-id: (.*)$/im.exec(head)?.[1],
      });
    else expect(json.error).toMatchObject({ code: 'request_body_timeout', type: 'invalid_request_error' });
  });
});

describe('streamIdleTimeoutMs → the stream ends with its error frame (text.ts puts it in CallContext)', () => {
  it('chat client → chat upstream (passthrough)', async () => {
    chatFake.reply({ text: ['Once', ' upon', ' a time'], stallAfter: 3 });
    const response = await post('chat', { model: 'gpt-chat', messages: turns(1), stream: true });
    expect(response.status).toBe(200);
    const text = await within(response.text(), 3000, 'the end of the stream');
    expect(text).toContain('upon');
    expect(text).toMatch(/"error":\{[^}]*"code":"upstream_timeout"/);
    expect(text).not.toContain('[DONE]');
  });

  it('chat client → Anthropic upstream (translated)', async () => {
    anthropicFake.reply({ text: ['Once', ' upon', ' a time'], stallAfter: 4 });
    const response = await post('chat', { model: 'claude', messages: turns(1), stream: true });
    expect(response.status).toBe(200);
    const text = await within(response.text(), 3000, 'the end of the stream');
    expect(text).toMatch(/"error":\{[^}]*"code":"upstream_timeout"/);
    expect(text).not.toContain('[DONE]');
  });

  it('messages client → Anthropic upstream (passthrough): an error event, no message_stop', async () => {
    anthropicFake.reply({ text: ['Once', ' upon', ' a time'], stallAfter: 4 });
    const response = await post('messages', { model: 'claude', max_tokens: 64, messages: turns(1), stream: true });
    expect(response.status).toBe(200);
    const text = await within(response.text(), 3000, 'the end of the stream');
    expect(text).toMatch(/event: error\ndata: \{"type":"error","error":\{"type":"timeout_error"/);
    expect(text).not.toContain('message_stop');
  });
});
