import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkItemCount } from '../../src/api/request-limits.js';
import { GatewayError } from '../../src/errors.js';
import { createGateway } from '../../src/gateway.js';
import { errorResponse } from '../../src/http/error-response.js';
import { checkHeaderSize } from '../../src/http/header-limit.js';
import { anthropicStyle } from '../../src/protocols/messages/style.js';
import { openaiStyle } from '../../src/protocols/openai/style.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { upstreamChunks } from '../../src/providers/http/upstream-client.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import type { CallContext, Provider } from '../../src/providers/provider.js';
import type { IRStreamEvent } from '../../src/protocols/ir.js';
import { serve, type Served } from '../helpers/serve.js';

/**
 * Issue 7, part 2: the new limits (`headerBytes`, `messages`, `requestBodyTimeoutMs`,
 * `streamIdleTimeoutMs`), each as an option with a default, checked by its module and, where the
 * routes already call it, over HTTP. `limits-wired.test.ts` holds the HTTP checks of the calls
 * the text pipeline and the gateway make.
 */

describe('options', () => {
  it('fills the defaults', () => {
    const gateway = createGateway({ keys: [{ key: 'k' }], logger: false });
    expect(gateway.options.limits).toMatchObject({
      headerBytes: 32 * 1024,
      messages: 10_000,
      requestBodyTimeoutMs: 60_000,
      streamIdleTimeoutMs: 300_000,
    });
  });

  it.each(['headerBytes', 'messages', 'requestBodyTimeoutMs', 'streamIdleTimeoutMs'])('refuses a bad %s, naming it', (name) => {
    for (const value of [0, -1, 1.5, '10', Number.NaN]) {
      expect(() => createGateway({ keys: [{ key: 'k' }], logger: false, limits: { [name]: value } as never })).toThrow(
        new TypeError(`options.limits.${name} must be a positive integer`),
      );
    }
  });
});

// ---- headerBytes --------------------------------------------------------------------------------

describe('headerBytes: checkHeaderSize', () => {
  const request = (headers: Record<string, string>, path = '/v1/chat/completions') => new Request(`http://gw.test${path}`, { method: 'POST', headers });

  it('counts the request line and every header line as on the wire', () => {
    // `POST /v1/chat/completions HTTP/1.1\r\n` is 36 bytes; `x-a: 12345\r\n` is 12.
    const exact = 36 + 12;
    expect(() => checkHeaderSize(request({ 'x-a': '12345' }), exact)).not.toThrow();
    expect(() => checkHeaderSize(request({ 'x-a': '12345' }), exact - 1)).toThrow(GatewayError);
    // A longer path counts too.
    expect(() => checkHeaderSize(request({ 'x-a': '12345' }, '/v1/chat/completions?x=1'), exact)).toThrow(GatewayError);
  });

  it('answers 431 request_headers_too_large', () => {
    let error: GatewayError | undefined;
    try {
      checkHeaderSize(request({ cookie: 'x'.repeat(5000) }), 4096);
    } catch (caught) {
      error = caught as GatewayError;
    }
    expect(error).toMatchObject({ status: 431, type: 'invalid_request_error', code: 'request_headers_too_large' });
    expect(error!.message).toContain('4096 bytes');
  });

  describe('over HTTP, wired through the onRequest hook (as a host may do today)', () => {
    let served: Served;
    beforeAll(async () => {
      const gateway = createGateway({
        keys: [{ key: 'sk-test' }],
        logger: false,
        limits: { headerBytes: 4096 },
        hooks: {
          onRequest({ request, requestId, respondWith }) {
            try {
              checkHeaderSize(request, 4096);
            } catch (error) {
              respondWith(errorResponse(error, new URL(request.url).pathname === '/v1/messages' ? anthropicStyle : openaiStyle, requestId));
            }
          },
        },
      });
      served = await serve(gateway);
    });
    afterAll(() => served.close());

    it('8 KB of headers (under Node own 16 KiB) → 431 in the OpenAI shape', async () => {
      const response = await fetch(`${served.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json', 'x-padding': 'p'.repeat(8 * 1024) },
        body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(response.status).toBe(431);
      expect(await response.json()).toEqual({
        error: { message: expect.stringContaining('4096 bytes'), type: 'invalid_request_error', param: null, code: 'request_headers_too_large' },
      });
    });

    it('… and in the Anthropic shape on /v1/messages', async () => {
      const response = await fetch(`${served.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json', 'x-padding': 'p'.repeat(8 * 1024) },
        body: JSON.stringify({ model: 'local-chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(response.status).toBe(431);
      expect(await response.json()).toEqual({
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.stringContaining('4096 bytes') },
        request_id: response.headers.get('request-id'),
      });
    });

    it('headers under the limit pass', async () => {
      const response = await fetch(`${served.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json', 'x-padding': 'p'.repeat(1024) },
        body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(response.status).toBe(200);
    });
  });
});

// ---- messages -----------------------------------------------------------------------------------

describe('messages: checkItemCount', () => {
  const failure = (run: () => void): GatewayError => {
    try {
      run();
    } catch (error) {
      if (error instanceof GatewayError) return error;
      throw error;
    }
    throw new Error('expected a GatewayError');
  };
  const messages = (count: number, content: unknown = 'hi') => Array.from({ length: count }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content }));

  it('accepts up to the limit', () => {
    expect(() => checkItemCount('chat', { messages: messages(5) }, 5)).not.toThrow();
    expect(() => checkItemCount('responses', { input: messages(5) }, 5)).not.toThrow();
    expect(() => checkItemCount('responses', { input: 'just text' }, 1)).not.toThrow();
    expect(() => checkItemCount('messages', { messages: messages(5) }, 5)).not.toThrow();
  });

  it('more messages than the limit → 400 too_many_items naming messages / input', () => {
    expect(failure(() => checkItemCount('chat', { messages: messages(6) }, 5))).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      code: 'too_many_items',
      param: 'messages',
      message: expect.stringMatching(/Too many messages: 6; .* at most 5/),
    });
    expect(failure(() => checkItemCount('messages', { messages: messages(6) }, 5))).toMatchObject({ status: 400, param: 'messages' });
    expect(failure(() => checkItemCount('responses', { input: messages(6) }, 5))).toMatchObject({
      status: 400,
      param: 'input',
      message: expect.stringMatching(/Too many input items: 6/),
    });
  });

  it('counts content blocks across messages, nested tool result blocks and the Anthropic system blocks', () => {
    const parts = (count: number) => Array.from({ length: count }, () => ({ type: 'text', text: 'x' }));
    expect(() => checkItemCount('chat', { messages: messages(2, parts(5)) }, 10)).not.toThrow();
    expect(failure(() => checkItemCount('chat', { messages: messages(2, parts(6)) }, 10))).toMatchObject({
      status: 400,
      param: 'messages',
      message: expect.stringMatching(/content blocks/),
    });
    const toolResult = [{ type: 'tool_result', tool_use_id: 't', content: parts(9) }];
    expect(failure(() => checkItemCount('messages', { messages: [{ role: 'user', content: toolResult }] }, 9))).toMatchObject({ param: 'messages' });
    expect(failure(() => checkItemCount('messages', { system: parts(8), messages: messages(1, parts(2)) }, 9))).toMatchObject({ param: 'messages' });
    const output = { type: 'function_call_output', call_id: 'c', output: parts(6) };
    expect(failure(() => checkItemCount('responses', { input: [output] }, 5))).toMatchObject({ param: 'input' });
  });

  it('leaves a malformed body to validation', () => {
    for (const body of [{}, { messages: 'x' }, { messages: null }, { messages: [null, 1, 'x', { content: 7 }] }]) {
      expect(() => checkItemCount('chat', body, 4)).not.toThrow();
    }
  });

  it('counts 100,000 messages against a limit above them, and one more limit below them refuses', () => {
    const body = { messages: messages(100_000) };
    expect(() => checkItemCount('chat', body, 200_000)).not.toThrow();
    expect(failure(() => checkItemCount('chat', body, 99_999))).toMatchObject({ param: 'messages' });
  });
});

// ---- requestBodyTimeoutMs ----------------------------------------------------------------------

/** Sends the head and the start of a body on a raw socket, then nothing: what a slowloris does. */
async function trickle(
  url: string,
  path: string,
  contentType: string,
  start: string,
): Promise<{ status: number; headers: string; body: string; elapsedMs: number }> {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  const started = Date.now();
  let received = '';
  socket.on('data', (data: Buffer) => (received += data.toString('utf8')));
  socket.write(
    `POST ${path} HTTP/1.1\r\nhost: gw.test\r\nauthorization: Bearer sk-test\r\ncontent-type: ${contentType}\r\ncontent-length: 100000\r\n\r\n${start}`,
  );
  // The gateway answers, then closes the connection (it does not wait for the rest).
  await new Promise((resolve) => socket.once('close', resolve));
  const [head = '', body = ''] = received.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body, elapsedMs: Date.now() - started };
}

describe('requestBodyTimeoutMs over HTTP (JSON and multipart routes)', () => {
  let served: Served;
  beforeAll(async () => {
    served = await serve(createGateway({ keys: [{ key: 'sk-test' }], logger: false, limits: { requestBodyTimeoutMs: 300 } }));
  });
  afterAll(() => served.close());

  it.each([
    ['/v1/images/generations', 'application/json', '{"model":"local-image","prompt":"a'],
    ['/v1/audio/speech', 'application/json', '{"model":"local-speech","input":"a'],
    ['/v1/video/generations', 'application/json', '{"model":"local-video","prompt":"a'],
    ['/v1/images/edits', 'multipart/form-data; boundary=XYZ', '--XYZ\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nmake it'],
  ])('%s: a body still incomplete at the deadline → 408 request_body_timeout, connection closed', async (path, contentType, start) => {
    const answer = await trickle(served.url, path, contentType, start);
    expect(answer.status).toBe(408);
    expect(answer.elapsedMs).toBeGreaterThanOrEqual(250);
    expect(answer.elapsedMs).toBeLessThan(5000);
    expect(answer.headers).toContain('connection: close');
    expect(JSON.parse(answer.body)).toEqual({
      error: {
        message: expect.stringContaining('300 ms (limits.requestBodyTimeoutMs)'),
        type: 'invalid_request_error',
        param: null,
        code: 'request_body_timeout',
      },
    });
  });

  it('a body that arrives in time is served', async () => {
    const response = await fetch(`${served.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-image', prompt: 'a lighthouse', size: '64x64' }),
    });
    expect(response.status).toBe(200);
  });
});

// ---- streamIdleTimeoutMs -----------------------------------------------------------------------

/** An upstream that answers a stream's headers and first frame, then stays silent. */
async function startSilentUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      if (request.url?.endsWith('/messages')) {
        response.write(
          `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage: { input_tokens: 1, output_tokens: 0 } } })}\n\n`,
        );
      } else {
        response.write(
          `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`,
        );
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('streamIdleTimeoutMs: the providers honour the idle limit a call carries', () => {
  let upstream: Awaited<ReturnType<typeof startSilentUpstream>>;
  const providers: Provider[] = [];
  beforeAll(async () => {
    upstream = await startSilentUpstream();
  });
  afterAll(async () => {
    await Promise.all(providers.map((provider) => provider.close?.()));
    await upstream.close();
  });
  const call = (idleTimeoutMs: number | undefined): CallContext => ({
    signal: new AbortController().signal,
    requestId: 'req_test',
    key: { id: 'key_test' } as CallContext['key'],
    model: { id: 'm', provider: 'p', upstreamModel: 'm' } as CallContext['model'],
    serverContext: undefined,
    ...(idleTimeoutMs === undefined ? {} : { idleTimeoutMs }),
  });
  const openai = (timeouts?: { bodyMs: number }) => {
    const provider = createOpenAIProvider({ baseURL: `${upstream.url}/v1`, apiKey: 'k', responses: false, ...(timeouts ? { timeouts } : {}) });
    providers.push(provider);
    return provider;
  };

  it('passthrough: the body read fails with 504 upstream_timeout after the idle limit', async () => {
    const reply = await openai().text!.passthrough!({ protocol: 'chat', body: { model: 'm', messages: [], stream: true }, headers: new Headers() }, call(300));
    const started = Date.now();
    const chunks: Uint8Array[] = [];
    const read = (async () => {
      for await (const chunk of upstreamChunks(reply.body)) chunks.push(chunk);
    })();
    await expect(read).rejects.toMatchObject({ status: 504, code: 'upstream_timeout' });
    expect(chunks.length).toBeGreaterThan(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('translated (Anthropic upstream): the event stream fails with 504 after the idle limit', async () => {
    const provider = createAnthropicProvider({ baseURL: upstream.url, apiKey: 'k' });
    providers.push(provider);
    const events: IRStreamEvent[] = [];
    const read = (async () => {
      for await (const event of provider.text!.stream!(
        { model: 'm', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: true, passthrough: {} },
        call(300),
      ))
        events.push(event);
    })();
    await expect(read).rejects.toMatchObject({ status: 504, code: 'upstream_timeout' });
  });

  it("the provider's own timeouts.bodyMs wins over the gateway's limit", async () => {
    const reply = await openai({ bodyMs: 5000 }).text!.passthrough!(
      { protocol: 'chat', body: { model: 'm', messages: [], stream: true }, headers: new Headers() },
      call(100),
    );
    const iterator = upstreamChunks(reply.body)[Symbol.asyncIterator]();
    await iterator.next(); // the first frame
    const outcome = await Promise.race([
      iterator.next().then(
        () => 'data',
        () => 'timed out',
      ),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 600)),
    ]);
    expect(outcome).toBe('still waiting');
    // The body itself: the iterator still has the raced read pending.
    (reply.body as unknown as { destroy(): void }).destroy();
  });
});
