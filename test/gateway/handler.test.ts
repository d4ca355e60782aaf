import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { createGateway } from '../../src/gateway.js';
import type { Logger } from '../../src/logger.js';
import type { GatewayOptions, UsageEvent } from '../../src/options.js';
import { createLocalProvider, localModels } from '../../src/providers/local/local-provider.js';
import type { FlatProvider } from '../../src/providers/provider.js';

const local = () => createLocalProvider({ chunkDelayMs: 0 });

function capturingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const write = (message: string, fields?: Record<string, unknown>) => lines.push(JSON.stringify({ message, ...fields }));
  return { lines, info: write, warn: write, error: write };
}

function make(options: Partial<GatewayOptions> = {}) {
  return createGateway({ keys: [{ key: 'sk-1' }], providers: { local: local() }, logger: false, ...options });
}

const bearer = { authorization: 'Bearer sk-1', 'content-type': 'application/json' };
const chatBody = JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'Hello there' }] });

describe('routing', () => {
  const gateway = make();

  it('answers an unknown path with 404 in the OpenAI shape', async () => {
    const response = await gateway.fetch('http://gw.test/v1/nope', { headers: bearer });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { message: 'Unknown path /v1/nope.', type: 'invalid_request_error', param: null, code: 'not_found' } });
  });

  it('answers a wrong method with 405 and Allow, in the route error shape', async () => {
    const chat = await gateway.fetch('http://gw.test/v1/chat/completions', { headers: bearer });
    expect(chat.status).toBe(405);
    expect(chat.headers.get('allow')).toBe('POST');
    expect((await chat.json()).error.code).toBe('method_not_allowed');

    const messages = await gateway.fetch('http://gw.test/v1/messages', { method: 'GET' });
    expect(messages.status).toBe(405);
    expect(await messages.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it('answers a WebSocket handshake on the Responses paths with 426 in the OpenAI shape (Codex then uses HTTP); a plain GET still gets 405', async () => {
    const handshake = {
      ...bearer,
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
    };
    for (const path of ['/v1/responses', '/responses']) {
      const refused = await gateway.fetch(`http://gw.test${path}`, { headers: handshake });
      expect(refused.status).toBe(426);
      expect(await refused.json()).toEqual({
        error: {
          message: `WebSocket is not supported on ${path}; send the request over HTTP (POST).`,
          type: 'invalid_request_error',
          param: null,
          code: 'websocket_not_supported',
        },
      });
      // The token list of the header, in any case.
      expect((await gateway.fetch(`http://gw.test${path}`, { headers: { ...handshake, upgrade: 'h2c, WebSocket' } })).status).toBe(426);

      const plain = await gateway.fetch(`http://gw.test${path}`, { headers: bearer });
      expect(plain.status).toBe(405);
      expect(plain.headers.get('allow')).toBe('POST');
      expect((await plain.json()).error.code).toBe('method_not_allowed');
    }
    // Only the Responses paths: elsewhere a handshake is a wrong method like any other.
    expect((await gateway.fetch('http://gw.test/v1/chat/completions', { headers: handshake })).status).toBe(405);
    // A stored response is still read with GET, whatever its headers.
    expect((await gateway.fetch('http://gw.test/v1/responses/resp_missing', { headers: handshake })).status).toBe(404);
  });

  it('sends a request id on every response, request-id too on /v1/messages, and the contract version', async () => {
    const models = await gateway.fetch('http://gw.test/v1/models', { headers: bearer });
    expect(models.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
    expect(models.headers.get('x-contract-version')).toBe('2026-11-22');
    const missing = await gateway.fetch('http://gw.test/v1/missing');
    expect(missing.headers.get('x-request-id')).toMatch(/^req_/);

    const message = await gateway.fetch('http://gw.test/v1/messages', {
      method: 'POST',
      headers: { 'x-api-key': 'sk-1', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-chat', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(message.status).toBe(200);
    expect(message.headers.get('request-id')).toBe(message.headers.get('x-request-id'));
  });

  it('serves under a base path and nowhere else', async () => {
    const mounted = make({ basePath: '/ai/' });
    expect((await mounted.fetch('http://gw.test/ai/v1/models', { headers: bearer })).status).toBe(200);
    expect((await mounted.fetch('http://gw.test/v1/models', { headers: bearer })).status).toBe(404);
    expect((await mounted.fetch('http://gw.test/aiv1/models', { headers: bearer })).status).toBe(404);
  });
});

describe('the Messages endpoint (spec section 9)', () => {
  const send = (gateway: ReturnType<typeof make>, headers: Record<string, string>) =>
    gateway.fetch('http://gw.test/v1/messages', {
      method: 'POST',
      headers: { 'x-api-key': 'sk-1', 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'local-chat', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }),
    });

  it('requires anthropic-version as a YYYY-MM-DD date', async () => {
    const gateway = make();
    const missing = await send(gateway, {});
    expect(missing.status).toBe(400);
    expect((await missing.json()).error).toEqual({ type: 'invalid_request_error', message: expect.stringContaining('anthropic-version') });
    const bad = await send(gateway, { 'anthropic-version': 'latest' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toContain('YYYY-MM-DD');
  });

  it('can be switched off: 404 in the Anthropic shape, and the listing stops offering anthropic', async () => {
    const gateway = make({ messages: false });
    const response = await send(gateway, { 'anthropic-version': '2023-06-01' });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const listing = await (await gateway.fetch('http://gw.test/v1/models', { headers: bearer })).json();
    for (const model of listing.data) expect(model.supported_endpoint_types).not.toContain('anthropic');
  });
});

describe('model rules before any upstream call', () => {
  let calls = 0;
  const counting: FlatProvider = {
    type: 'counting',
    streamText(request, call) {
      calls++;
      return local().text!.stream!(request, call);
    },
  };
  const gateway = make({ providers: { local: counting }, models: localModels('local') });

  it.each([
    ['previous_response_id', { previous_response_id: 'resp_1' }],
    ['service_tier', { service_tier: 'auto' }],
  ])('rejects %s with 400 naming it', async (param, extra) => {
    const response = await gateway.fetch('http://gw.test/v1/responses', {
      method: 'POST',
      headers: bearer,
      body: JSON.stringify({ model: 'local-chat', input: 'hi', ...extra }),
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ param, type: 'invalid_request_error' });
    expect(calls).toBe(0);
  });

  it('names an unknown model', async () => {
    const response = await gateway.fetch('http://gw.test/v1/chat/completions', {
      method: 'POST',
      headers: bearer,
      body: JSON.stringify({ model: 'gpt-unknown', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(404);
    expect((await response.json()).error).toMatchObject({ param: 'model', code: 'model_not_found', message: expect.stringContaining('gpt-unknown') });
  });
});

describe('unexpected errors', () => {
  it('are masked as 500 with no stack or detail, and logged without the key', async () => {
    const logger = capturingLogger();
    const broken: FlatProvider = {
      type: 'broken',
      // biome-ignore lint/correctness/useYield: a stream that fails before its first event
      async *streamText() {
        throw new Error('database password is hunter2');
      },
    };
    const gateway = make({ providers: { local: broken }, models: localModels('local'), logger });
    const response = await gateway.fetch('http://gw.test/v1/chat/completions', { method: 'POST', headers: bearer, body: chatBody });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toMatch(/hunter2|at .*\.ts|stack/);
    expect(JSON.parse(text).error).toMatchObject({ type: 'server_error', param: null });
    expect(logger.lines.join('\n')).toContain('hunter2');
    expect(logger.lines.join('\n')).not.toContain('sk-1');
  });
});

describe('a GatewayError from a second copy of the package', () => {
  // A custom provider built against another install of infergate throws that copy's class;
  // the `?copy` query makes vitest load src/errors.ts again as a separate module instance.
  const copyPath = '../../src/errors.js?copy';

  it('is answered with its own status and message, not masked as a 500', async () => {
    const copy = (await import(copyPath)) as typeof import('../../src/errors.js');
    expect(copy.GatewayError).not.toBe(GatewayError);
    const thrown = new copy.GatewayError({ status: 404, message: 'This tenant has no such model.', code: 'tenant_model_missing' });
    expect(thrown).not.toBeInstanceOf(GatewayError);

    const foreign: FlatProvider = {
      type: 'foreign',
      // biome-ignore lint/correctness/useYield: a stream that fails before its first event
      async *streamText() {
        throw thrown;
      },
    };
    const gateway = make({ providers: { local: foreign }, models: localModels('local') });
    const chat = await gateway.fetch('http://gw.test/v1/chat/completions', { method: 'POST', headers: bearer, body: chatBody });
    expect(chat.status).toBe(404);
    expect(await chat.json()).toEqual({
      error: { message: 'This tenant has no such model.', type: 'invalid_request_error', param: null, code: 'tenant_model_missing' },
    });

    const messages = await gateway.fetch('http://gw.test/v1/messages', {
      method: 'POST',
      headers: { 'x-api-key': 'sk-1', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-chat', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(messages.status).toBe(404);
    expect(await messages.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error', message: 'This tenant has no such model.' } });
  });
});

describe('hooks and host context', () => {
  it('onRequest can answer early and onResponse can change the response', async () => {
    const gateway = make({
      hooks: {
        onRequest({ request, respondWith }) {
          if (new URL(request.url).pathname === '/healthz') respondWith(new Response('ok'));
        },
        onResponse({ response, setResponse }) {
          const copy = new Response(response.body, response);
          copy.headers.set('x-host', 'yes');
          setResponse(copy);
        },
      },
    });
    const health = await gateway.fetch('http://gw.test/healthz');
    expect(await health.text()).toBe('ok');
    expect(health.headers.get('x-host')).toBe('yes');
    expect((await gateway.fetch('http://gw.test/v1/models', { headers: bearer })).headers.get('x-host')).toBe('yes');
  });

  it("an onRequest failure is answered in the route's error shape: Anthropic's on /v1/messages, OpenAI's on chat", async () => {
    const gateway = make({
      hooks: {
        onRequest({ request }) {
          if (request.headers.get('x-tenant') === 'blocked')
            throw new GatewayError({ status: 403, message: 'This tenant is blocked.', code: 'tenant_blocked' });
          throw new Error('hook bug');
        },
      },
    });
    const blocked = { ...bearer, 'x-tenant': 'blocked' };
    const messages = await gateway.fetch('http://gw.test/v1/messages', { method: 'POST', headers: blocked, body: '{}' });
    expect(messages.status).toBe(403);
    expect(await messages.json()).toEqual({
      type: 'error',
      error: { type: 'permission_error', message: 'This tenant is blocked.' },
      request_id: messages.headers.get('request-id'),
    });
    expect(messages.headers.get('request-id')).toBe(messages.headers.get('x-request-id'));

    const crashed = await gateway.fetch('http://gw.test/v1/messages', { method: 'POST', headers: bearer, body: '{}' });
    expect(crashed.status).toBe(500);
    expect(await crashed.json()).toMatchObject({ type: 'error', error: { type: 'api_error' } });

    const chat = await gateway.fetch('http://gw.test/v1/chat/completions', { method: 'POST', headers: blocked, body: chatBody });
    expect(chat.status).toBe(403);
    expect(await chat.json()).toEqual({ error: { message: 'This tenant is blocked.', type: 'permission_error', param: null, code: 'tenant_blocked' } });
  });

  it('onUsage reports one event per request with the normalized usage', async () => {
    const events: UsageEvent[] = [];
    const gateway = make({ hooks: { onUsage: (event) => void events.push(event) } });
    const json = await gateway.fetch('http://gw.test/v1/chat/completions', { method: 'POST', headers: bearer, body: chatBody });
    const body = await json.json();
    const stream = await gateway.fetch('http://gw.test/v1/chat/completions', {
      method: 'POST',
      headers: bearer,
      body: JSON.stringify({ model: 'local-chat', stream: true, messages: [{ role: 'user', content: 'Hello there' }] }),
    });
    await stream.text();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ model: 'local-chat', provider: 'local', endpoint: '/v1/chat/completions', status: 'ok' });
    expect(events[0]!.keyId).toMatch(/^key_/);
    expect(events[0]!.usage.input).toBe(body.usage.prompt_tokens);
    expect(events[0]!.usage.output).toBe(body.usage.completion_tokens);
    expect(events[1]!.usage).toEqual(events[0]!.usage);
  });

  it('a custom KeyStore can resolve keys from the host context', async () => {
    const gateway = createGateway({
      keys: {
        lookup(key, { serverContext }) {
          const user = (serverContext as { user?: { plan: string } }).user;
          if (key === 'host-session' && user) return { id: `user-${user.plan}`, models: ['local-chat'] };
          return undefined;
        },
      },
      providers: { local: local() },
      logger: false,
    });
    const headers = { authorization: 'Bearer host-session' };
    expect((await gateway.fetch('http://gw.test/v1/models', { headers }, { user: { plan: 'pro' } })).status).toBe(200);
    expect((await gateway.fetch('http://gw.test/v1/models', { headers })).status).toBe(401);
    const listing = await (await gateway.fetch('http://gw.test/v1/models', { headers }, { user: { plan: 'pro' } })).json();
    expect(listing.data.map((model: { id: string }) => model.id)).toEqual(['local-chat']);
  });
});

describe('options are validated at construction', () => {
  it.each([
    [{}, /options.keys is required/],
    [{ keys: [{ key: '' }] }, /options.keys\[0\].key/],
    [{ keys: [{ key: 'k' }], basePath: 'ai' }, /basePath must start with/],
    [{ keys: [{ key: 'k' }], models: [{ id: 'm', provider: 'nope' }] }, /models\[0\].provider "nope"/],
    [{ keys: [{ key: 'k' }], contractVersion: 'v1' }, /contractVersion/],
    [{ keys: [{ key: 'k' }], limits: { jsonBodyBytes: -1 } }, /jsonBodyBytes/],
  ])('%j throws a clear error', (options, message) => {
    expect(() => createGateway(options as GatewayOptions)).toThrowError(message);
  });
});
