import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { createGateway } from '../../src/gateway.js';
import type { GatewayPlugin } from '../../src/index.js';
import type { Logger } from '../../src/logger.js';
import { createLocalProvider } from '../../src/providers/local/local-provider.js';
import type { Provider } from '../../src/providers/provider.js';

const bearer = { authorization: 'Bearer sk-1', 'content-type': 'application/json' };
const chatBody = JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'Hello there' }] });

/** A plugin that writes down each stage it sees, with what the stage told it. */
function recordingPlugin(stages: string[]): GatewayPlugin {
  return {
    onRequest: ({ request }) => void stages.push(`request ${new URL(request.url).pathname}`),
    onGatewayRequest: ({ requestId }) => void stages.push(`gateway-request ${requestId.slice(0, 4)}`),
    onAuthenticated: ({ key }) => void stages.push(`authenticated ${key.id}`),
    onAttempt: (event) => void stages.push(`attempt ${event.attempt} ${event.status}`),
    onUsage: (event) => void stages.push(`usage ${event.status} ${event.httpStatus}`),
    onGatewayResponse: ({ response }) => void stages.push(`gateway-response ${response.status}`),
    onResponse: ({ response }) => void stages.push(`response ${response.status}`),
  };
}

/** The local provider, failing every text call as an upstream outage would. */
function failingLocal(): Provider {
  const down = () => {
    throw new GatewayError({ status: 503, message: 'The upstream is down.', code: 'upstream_unavailable' });
  };
  return { ...createLocalProvider({ chunkDelayMs: 0 }), text: { stream: down, generate: down } };
}

function capturingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const write = (message: string, fields?: Record<string, unknown>) => lines.push(JSON.stringify({ message, ...fields }));
  return { lines, info: write, warn: write, error: write };
}

/** Lets the plugins' unawaited stages (attempt, usage) run. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('plugins by stage', () => {
  it('a plugin sees every stage of a text request, in order', async () => {
    const stages: string[] = [];
    const gateway = createGateway({
      keys: [{ key: 'sk-1', id: 'key-one' }],
      providers: { local: createLocalProvider({ chunkDelayMs: 0 }) },
      logger: false,
      plugins: [recordingPlugin(stages)],
    });
    const response = await gateway.fetch('http://gw.test/v1/chat/completions', { method: 'POST', headers: bearer, body: chatBody });
    expect(response.status).toBe(200);
    await response.json();
    await settled();
    expect(stages).toEqual([
      'request /v1/chat/completions',
      'gateway-request req_',
      'authenticated key-one',
      'attempt 1 ok',
      'usage ok 200',
      'gateway-response 200',
      'response 200',
    ]);
  });

  it('a plugin sees the failed attempt, the failed request and its error answer', async () => {
    const stages: string[] = [];
    const gateway = createGateway({
      keys: [{ key: 'sk-1', id: 'key-one' }],
      providers: { local: failingLocal() },
      logger: false,
      plugins: [recordingPlugin(stages)],
    });
    const response = await gateway.fetch('http://gw.test/v1/chat/completions', { method: 'POST', headers: bearer, body: chatBody });
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ error: { code: 'upstream_unavailable' } });
    await settled();
    expect(stages).toEqual([
      'request /v1/chat/completions',
      'gateway-request req_',
      'authenticated key-one',
      'attempt 1 error',
      'usage error 503',
      'gateway-response 503',
      'response 503',
    ]);
  });

  it('a failing plugin is logged and never changes the answer; the hooks still run beside it', async () => {
    const logger = capturingLogger();
    const hookUsage: string[] = [];
    const broken: GatewayPlugin = {
      onAttempt: async () => Promise.reject(new Error('attempt stage bug')),
      onUsage: async () => Promise.reject(new Error('usage stage bug')),
      onGatewayResponse: async () => Promise.reject(new Error('response stage bug')),
    };
    const gateway = createGateway({
      keys: [{ key: 'sk-1' }],
      providers: { local: createLocalProvider({ chunkDelayMs: 0 }) },
      logger,
      hooks: { onUsage: (event) => void hookUsage.push(event.status) },
      plugins: [broken],
    });
    const response = await gateway.fetch('http://gw.test/v1/chat/completions', { method: 'POST', headers: bearer, body: chatBody });
    expect(response.status).toBe(200);
    expect((await response.json()).choices[0].message.content).toEqual(expect.any(String));
    await settled();
    expect(hookUsage).toEqual(['ok']);
    const logged = logger.lines.join('\n');
    for (const bug of ['attempt stage bug', 'usage stage bug', 'response stage bug']) expect(logged).toContain(bug);
  });

  it("onAuthenticated fails closed: a GatewayError refuses with its status in the route's shape, any other throw is a 500", async () => {
    const logger = capturingLogger();
    const usage: string[] = [];
    const gateway = createGateway({
      keys: [
        { key: 'sk-1', id: 'active' },
        { key: 'sk-suspended', id: 'suspended' },
        { key: 'sk-buggy', id: 'buggy' },
      ],
      providers: { local: createLocalProvider({ chunkDelayMs: 0 }) },
      logger,
      hooks: { onUsage: (event) => void usage.push(event.keyId) },
      plugins: [
        {
          onAuthenticated: async ({ key }) => {
            if (key.id === 'suspended') throw new GatewayError({ status: 403, message: 'Tenant suspended.', code: 'tenant_suspended' });
            if (key.id === 'buggy') throw new Error('authorization backend bug');
          },
        },
      ],
    });
    const ask = (key: string, path = '/v1/chat/completions', body = chatBody) =>
      gateway.fetch(`http://gw.test${path}`, { method: 'POST', headers: { ...bearer, authorization: `Bearer ${key}`, 'x-api-key': key }, body });

    const suspended = await ask('sk-suspended');
    expect(suspended.status).toBe(403);
    expect(await suspended.json()).toMatchObject({ error: { message: 'Tenant suspended.', code: 'tenant_suspended' } });
    const messages = await ask(
      'sk-suspended',
      '/v1/messages',
      JSON.stringify({ model: 'local-chat', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }),
    );
    expect(messages.status).toBe(403);
    expect(await messages.json()).toMatchObject({ type: 'error', error: { message: 'Tenant suspended.' } });

    const buggy = await ask('sk-buggy');
    expect(buggy.status).toBe(500);
    expect(JSON.stringify(await buggy.json())).not.toContain('authorization backend bug');
    expect(logger.lines.join('\n')).toContain('authorization backend bug');

    expect((await ask('sk-1')).status).toBe(200);
    await settled();
    expect(usage).toEqual(['active']);
  });

  it('a plugin can answer early and change the answer, after the hooks', async () => {
    const gateway = createGateway({
      keys: [{ key: 'sk-1' }],
      providers: { local: createLocalProvider({ chunkDelayMs: 0 }) },
      logger: false,
      hooks: {
        onResponse: ({ response, setResponse }) => {
          const copy = new Response(response.body, response);
          copy.headers.set('x-order', 'hook');
          setResponse(copy);
        },
      },
      plugins: [
        {
          onGatewayRequest: ({ request, respondWith }) => {
            if (new URL(request.url).pathname === '/healthz') respondWith(new Response('ok'));
          },
          onGatewayResponse: ({ response, setResponse }) => {
            const copy = new Response(response.body, response);
            copy.headers.append('x-order', 'plugin');
            setResponse(copy);
          },
        },
      ],
    });
    const health = await gateway.fetch('http://gw.test/healthz');
    expect(await health.text()).toBe('ok');
    expect(health.headers.get('x-order')).toBe('hook, plugin');
    expect(health.headers.get('x-request-id')).toMatch(/^req_/);
  });
});
