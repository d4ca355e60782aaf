import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { createGateway } from '../../src/gateway.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { createLocalProvider } from '../../src/providers/local/local-provider.js';
import type { ModelEntry } from '../../src/routing/model.js';

/**
 * The auth matrix of the spec's section 5 on every route: no key, wrong key, disabled key,
 * model outside the key's list, model outside the key's group, and which header styles count.
 */

// `-a` models serve the default group only; `-vip` ones the vip group (a model without
// `groups` would serve every group).
const models: ModelEntry[] = [
  { id: 'text-a', provider: 'local', upstreamModel: 'local-chat', groups: ['default'] },
  { id: 'text-vip', provider: 'local', upstreamModel: 'local-chat', groups: ['vip'] },
  { id: 'image-a', provider: 'local', kind: 'image', groups: ['default'] },
  { id: 'image-vip', provider: 'local', kind: 'image', groups: ['vip'] },
  { id: 'video-a', provider: 'local', kind: 'video', groups: ['default'] },
  { id: 'video-vip', provider: 'local', kind: 'video', groups: ['vip'] },
  { id: 'speech-a', provider: 'local', kind: 'speech', groups: ['default'] },
  { id: 'speech-vip', provider: 'local', kind: 'speech', groups: ['vip'] },
];

const gateway = createGateway({
  keys: [
    { key: 'sk-all' },
    { key: 'sk-off', disabled: true },
    { key: 'sk-text-a-only', models: ['text-a', 'image-a', 'video-a', 'speech-a'] },
    { key: 'sk-vip', group: 'vip' },
  ],
  providers: { local: createLocalProvider({ chunkDelayMs: 0 }) },
  models,
  logger: false,
});

type Kind = 'text' | 'image' | 'video' | 'speech';
interface RouteCase {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  anthropic?: boolean;
  kind?: Kind;
  body?: (model: string) => BodyInit;
  contentType?: string;
}

const json = (value: unknown) => JSON.stringify(value);
const editForm = (model: string) => {
  const form = new FormData();
  form.set('model', model);
  form.set('prompt', 'make it blue');
  form.set('image', new Blob([new Uint8Array([137, 80, 78, 71])], { type: 'image/png' }), 'a.png');
  return form;
};

const routes: RouteCase[] = [
  { name: 'models', method: 'GET', path: '/v1/models' },
  { name: 'responses', method: 'POST', path: '/v1/responses', kind: 'text', body: (model) => json({ model, input: 'hi' }) },
  { name: 'responses alias', method: 'POST', path: '/responses', kind: 'text', body: (model) => json({ model, input: 'hi' }) },
  { name: 'chat', method: 'POST', path: '/v1/chat/completions', kind: 'text', body: (model) => json({ model, messages: [{ role: 'user', content: 'hi' }] }) },
  {
    name: 'messages',
    method: 'POST',
    path: '/v1/messages',
    anthropic: true,
    kind: 'text',
    body: (model) => json({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
  },
  { name: 'images', method: 'POST', path: '/v1/images/generations', kind: 'image', body: (model) => json({ model, prompt: 'a cat' }) },
  { name: 'image edits', method: 'POST', path: '/v1/images/edits', kind: 'image', body: editForm, contentType: 'multipart' },
  { name: 'video create', method: 'POST', path: '/v1/video/generations', kind: 'video', body: (model) => json({ model, prompt: 'waves' }) },
  { name: 'video status', method: 'GET', path: '/v1/video/generations/video_unknown' },
  { name: 'video content', method: 'GET', path: '/v1/videos/video_unknown/content' },
  {
    name: 'speech',
    method: 'POST',
    path: '/v1/audio/speech',
    kind: 'speech',
    body: (model) => json({ model, input: 'hello', voice: 'en_female_anna_v1' }),
  },
];

function send(route: RouteCase, auth: Record<string, string>, model?: string): Promise<Response> {
  const headers: Record<string, string> = { ...auth };
  if (route.anthropic) headers['anthropic-version'] = '2023-06-01';
  if (route.body && route.contentType !== 'multipart') headers['content-type'] = 'application/json';
  const init: RequestInit = { method: route.method, headers };
  if (route.body) init.body = route.body(model ?? `${route.kind}-a`);
  return Promise.resolve(gateway.fetch(`http://gateway.test${route.path}`, init));
}

/** The key in the header style the route's clients use. */
const own = (route: RouteCase, key: string): Record<string, string> => (route.anthropic ? { 'x-api-key': key } : { authorization: `Bearer ${key}` });

async function expectError(response: Response, status: number, route: RouteCase): Promise<Record<string, unknown>> {
  expect(response.status).toBe(status);
  const body = (await response.json()) as Record<string, any>;
  if (route.anthropic) {
    expect(body.type).toBe('error');
    expect(typeof body.error.type).toBe('string');
  } else {
    expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  }
  expect(typeof body.error.message).toBe('string');
  return body.error;
}

describe.each(routes)('auth on $name ($method $path)', (route) => {
  it('answers 401 with no key', async () => {
    const error = await expectError(await send(route, {}), 401, route);
    expect(String(error.message)).toMatch(/key/i);
  });

  it('answers 401 for an unknown key and never repeats it', async () => {
    const response = await send(route, own(route, 'sk-nope-secret-123'));
    const text = await response.clone().text();
    expect(text).not.toContain('sk-nope-secret-123');
    await expectError(response, 401, route);
  });

  it('answers 401 for a disabled key', async () => {
    const error = await expectError(await send(route, own(route, 'sk-off')), 401, route);
    expect(String(error.message)).toMatch(/disabled/);
  });

  if (route.anthropic || route.path === '/v1/models') {
    // The models listing serves Anthropic's clients too (Claude Code sends x-api-key alone).
    it('takes x-api-key and also Authorization: Bearer (as @anthropic-ai/sdk 1.x sends it)', async () => {
      expect((await send(route, { 'x-api-key': 'sk-all' })).status).toBe(200);
      expect((await send(route, { authorization: 'Bearer sk-all' })).status).toBe(200);
    });
  } else {
    it('takes Bearer only: x-api-key alone is no key', async () => {
      await expectError(await send(route, { 'x-api-key': 'sk-all' }), 401, route);
      expect((await send(route, { authorization: 'Bearer sk-all' })).status).not.toBe(401);
    });
  }

  if (route.kind) {
    // As for a model that does not exist: the key learns nothing of the models beyond its scope.
    it('answers 404 for a model outside the key list', async () => {
      const other = route.kind === 'text' ? 'text-vip' : `${route.kind}-vip`;
      const error = await expectError(await send(route, own(route, 'sk-text-a-only'), other), 404, route);
      expect(String(error.message)).toContain(other);
    });

    it('answers 404 for a model outside the key group', async () => {
      await expectError(await send(route, own(route, 'sk-vip'), `${route.kind}-a`), 404, route);
      // The same key reaches its own group's model past auth and scope.
      const response = await send(route, own(route, 'sk-vip'), `${route.kind}-vip`);
      expect([401, 403, 404]).not.toContain(response.status);
    });
  }
});

describe('GET /v1/models is filtered by the key scope', () => {
  const list = async (key: string) => {
    const response = await gateway.fetch('http://gateway.test/v1/models', { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    return (await response.json()) as { object: string; data: { id: string; object: string; owned_by: string; supported_endpoint_types: string[] }[] };
  };

  it('lists everything in the default group for a * key, with new-api endpoint types', async () => {
    const body = await list('sk-all');
    expect(body.object).toBe('list');
    expect(body.data.map((model) => model.id)).toEqual(['text-a', 'image-a', 'video-a', 'speech-a']);
    const byId = Object.fromEntries(body.data.map((model) => [model.id, model]));
    expect(byId['text-a']).toMatchObject({
      object: 'model',
      owned_by: 'local',
      supported_endpoint_types: ['openai', 'openai-response', 'anthropic', 'gemini'],
    });
    expect(byId['image-a']!.supported_endpoint_types).toEqual(['image-generation']);
    expect(byId['video-a']!.supported_endpoint_types).toEqual(['openai-video']);
    expect(byId['speech-a']!.supported_endpoint_types).toEqual(['openai-audio-speech']);
  });

  it('lists only the group models for a group key, and only listed ones for a listed key', async () => {
    expect((await list('sk-vip')).data.map((model) => model.id)).toEqual(['text-vip', 'image-vip', 'video-vip', 'speech-vip']);
    expect((await list('sk-text-a-only')).data.map((model) => model.id)).toEqual(['text-a', 'image-a', 'video-a', 'speech-a']);
  });
});

describe('a key store that cannot answer', () => {
  const { logger, lines } = recordingLogger();
  const failing = createGateway({
    keys: {
      lookup() {
        throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      },
    },
    providers: { local: createLocalProvider({ chunkDelayMs: 0 }) },
    models,
    logger,
  });
  const body = json({ model: 'text-a', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });

  it('refuses the request with a 503 in the route’s error shape (fails closed), and logs why', async () => {
    const chat = await failing.fetch('http://gateway.test/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: 'Bearer sk-secret-123', 'content-type': 'application/json' },
      body,
    });
    expect(chat.status).toBe(503);
    expect(chat.headers.get('retry-after')).toBe('1');
    const text = await chat.text();
    expect(text).not.toContain('sk-secret-123');
    expect(text).not.toContain('ECONNREFUSED');
    expect(JSON.parse(text)).toEqual({
      error: { message: expect.stringMatching(/API keys cannot be checked/), type: expect.any(String), param: null, code: 'key_store_unavailable' },
    });
    expect(lines.some((line) => line.level === 'warn' && String(line.fields?.detail).includes('ECONNREFUSED'))).toBe(true);

    const messages = await failing.fetch('http://gateway.test/v1/messages', {
      method: 'POST',
      headers: { 'x-api-key': 'sk-secret-123', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body,
    });
    expect(messages.status).toBe(503);
    expect(await messages.json()).toMatchObject({ type: 'error', error: { type: expect.any(String) } });

    const gemini = await failing.fetch('http://gateway.test/v1beta/models/text-a:generateContent', {
      method: 'POST',
      headers: { 'x-goog-api-key': 'sk-secret-123', 'content-type': 'application/json' },
      body: json({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    expect(gemini.status).toBe(503);
    expect(await gemini.json()).toMatchObject({ error: { code: 503, status: 'UNAVAILABLE' } });
  });

  it('answers a GatewayError the store throws on purpose as it is', async () => {
    const refusing = createGateway({
      keys: {
        lookup() {
          throw new GatewayError({ status: 403, message: 'This tenant is suspended.', code: 'tenant_suspended' });
        },
      },
      providers: { local: createLocalProvider({ chunkDelayMs: 0 }) },
      models,
      logger: false,
    });
    const response = await refusing.fetch('http://gateway.test/v1/models', { headers: { authorization: 'Bearer sk-x' } });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: { code: 'tenant_suspended' } });
  });
});
