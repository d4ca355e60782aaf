import express, { type RequestHandler } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createGateway } from 'infergate';
import { expressMiddleware } from 'infergate/express';
import { buildApp as buildFastifyApp } from '../../examples/fastify/app.ts';
import { createLocalProvider } from '../../src/providers/local/local-provider.js';
import { fastifyHost, listening } from './node-server.js';
import { solidPng } from './png.js';
import type { RunningHost } from './suite.js';

const hosts: RunningHost[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.close()));
});

function gateway() {
  return createGateway({ keys: [{ key: 'sk-1' }], providers: { local: createLocalProvider({ chunkDelayMs: 0 }) }, logger: false });
}

async function expressWith(...parsers: RequestHandler[]): Promise<string> {
  const app = express();
  if (parsers.length > 0) app.use(...parsers);
  app.use('/gw', expressMiddleware(gateway()));
  const host = await listening(app.listen(0, '127.0.0.1'), '/gw');
  hosts.push(host);
  return host.origin + host.mount;
}

const chat = (body: string) => ({
  method: 'POST',
  headers: { authorization: 'Bearer sk-1', 'content-type': 'application/json' },
  body,
});

function editForm(): FormData {
  const form = new FormData();
  form.append('model', 'local-image');
  form.append('prompt', 'a square');
  form.append('image[]', new Blob([solidPng(4, 4, [0, 128, 0, 255])], { type: 'image/png' }), 'a.png');
  form.append('image[]', new Blob([solidPng(4, 4, [0, 0, 128, 255])], { type: 'image/png' }), 'b.png');
  return form;
}

describe('Express: whatever body parser ran first, the body reaches the gateway once', () => {
  const body = JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'parsed?' }] });
  const answer = 'You said: "parsed?". This is infergate\'s offline local model.';

  it.each<[string, RequestHandler[]]>([
    ['no parser', []],
    ['express.json()', [express.json()]],
    ['express.json() keeping rawBody', [express.json({ verify: (req, _res, buf) => void Object.assign(req, { rawBody: buf }) })]],
    ['express.raw() for every type', [express.raw({ type: () => true, limit: '10mb' })]],
    ['express.text() for JSON', [express.text({ type: 'application/json' })]],
    ['express.urlencoded() (does not apply)', [express.urlencoded({ extended: false })]],
  ])('%s', async (_name, parsers) => {
    const base = await expressWith(...parsers);
    const response = await fetch(`${base}/v1/chat/completions`, chat(body));
    expect(response.status).toBe(200);
    expect(((await response.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe(answer);

    const edit = await fetch(`${base}/v1/images/edits`, { method: 'POST', headers: { authorization: 'Bearer sk-1' }, body: editForm() });
    expect(edit.status, await edit.clone().text()).toBe(200);
    expect(((await edit.json()) as { data: unknown[] }).data).toHaveLength(1);
  });

  it('answers a JSON syntax error found by express.json() in the gateway’s shape, per route', async () => {
    const base = await expressWith(express.json());
    const openai = await fetch(`${base}/v1/chat/completions`, chat('{"model":'));
    expect(openai.status).toBe(400);
    expect(await openai.json()).toMatchObject({ error: { code: 'invalid_json', type: 'invalid_request_error' } });
    const anthropic = await fetch(`${base}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'sk-1', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: '{"model":',
    });
    expect(anthropic.status).toBe(400);
    expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it('leaves the host’s own errors to the host (a parser limit it set)', async () => {
    const base = await expressWith(express.json({ limit: 10 }));
    const response = await fetch(`${base}/v1/chat/completions`, chat(body));
    expect(response.status).toBe(413);
    expect(response.headers.get('x-request-id')).toBeNull();
  });
});

describe('Fastify: the plugin’s scope leaves bodies unread, the host’s keeps its parsers', () => {
  it('the host’s JSON routes still parse while the gateway reads its own bodies', async () => {
    const app = buildFastifyApp();
    const host = fastifyHost(app, await app.listen({ port: 0, host: '127.0.0.1' }), '/ai');
    hosts.push(host);
    const { origin } = host;
    const echo = await fetch(`${origin}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(await echo.json()).toEqual({ received: { a: 1 } });
    const bad = await fetch(`${origin}/ai/v1/chat/completions`, {
      ...chat('{"model":'),
      headers: { authorization: 'Bearer sk-app-alice', 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: 'invalid_json' } });
    const plain = await fetch(`${origin}/ai/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-app-alice', 'content-type': 'text/plain' },
      body: 'hi',
    });
    expect(plain.status).toBe(400);
    expect(await plain.json()).toMatchObject({ error: { code: 'invalid_content_type' } });
  });
});
