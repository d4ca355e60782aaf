import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExampleOptions } from '../../examples/shared/catalog.ts';
import { solidPng } from './png.js';
import { type HttpUpstream, startHttpUpstream } from '../mcp/fixtures/http-upstream.js';
import { startSlowUpstream, type SlowUpstream } from './slow-upstream.js';

/** A host app serving the gateway, listening on loopback. */
export interface RunningHost {
  /** `http://127.0.0.1:port` */
  origin: string;
  /** Where the gateway is mounted: `/ai`, or `/api` for Next.js. */
  mount: string;
  close(): Promise<void>;
}

export interface HostUnderTest {
  name: string;
  /** Builds the host's example app with these options and makes it listen. */
  start(options: ExampleOptions): Promise<RunningHost>;
  /** For hosts that start slowly (a child process, a dev server). */
  startTimeoutMs?: number;
}

/** Keys of the examples' user table (examples/shared/users.ts). */
const ALICE = 'sk-app-alice'; // pro plan: every model
const BOB = 'sk-app-bob'; // suspended
const CAROL = 'sk-app-carol'; // free plan: local-chat only

const SLOW_MODEL = 'slow-upstream';

function json(key: string, body: unknown): RequestInit {
  return { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/**
 * The transport suite: the same cases against every host (Express, Fastify, Next.js, Bun, Deno,
 * node:http), each running its example app in its real runtime, over real HTTP. It checks what
 * a host can get wrong: bodies (JSON, multipart, binary), streaming without buffering, headers,
 * error shapes, the mount path, the host's context reaching the key store and hooks, and a
 * client that leaves mid-stream cancelling the upstream call.
 */
export function transportSuite(host: HostUnderTest): void {
  describe(`transport on ${host.name}`, () => {
    let upstream: SlowUpstream;
    let mcpUpstream: HttpUpstream;
    let running: RunningHost;
    let base: string;

    beforeAll(async () => {
      upstream = await startSlowUpstream();
      mcpUpstream = await startHttpUpstream({ tools: registerCountdown });
      running = await host.start({ upstream: { baseURL: upstream.baseURL, models: [SLOW_MODEL] }, mcpServerUrl: `${mcpUpstream.url}/mcp` });
      base = running.origin + running.mount;
    }, host.startTimeoutMs ?? 30_000);

    afterAll(async () => {
      await running?.close();
      await upstream?.close();
      await mcpUpstream?.close();
    });

    it('serves /mcp: the SDK client initializes, lists and calls a tool; answers stream as SSE; DELETE ends the session', async () => {
      const client = new Client({ name: 'host-test', version: '1' });
      const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${ALICE}` } } });
      await client.connect(transport);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['tools__echo', 'tools__hang', 'tools__countdown']);
      const marker = randomUUID();
      expect((await client.callTool({ name: 'tools__echo', arguments: { text: marker } })).content).toEqual([{ type: 'text', text: marker }]);
      await transport.terminateSession();
      expect(transport.sessionId).toBeUndefined();
      await client.close();

      // The answer to a request is an SSE stream, through the host as the gateway wrote it.
      const initialize = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ALICE}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        }),
      });
      expect(initialize.status).toBe(200);
      expect(initialize.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(initialize.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
      const [data] = [...(await initialize.text()).matchAll(/^data: (\{.*\})$/gm)].map((match) => JSON.parse(match[1]!));
      expect(data).toMatchObject({ jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-06-18', serverInfo: { name: 'infergate' } } });
      // A call whose upstream reports progress as it goes: each notification reaches the client as
      // it is sent, before the result (a host that buffers delivers them all at the end).
      const session = initialize.headers.get('mcp-session-id')!;
      const countdown = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${ALICE}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          'mcp-session-id': session,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'tools__countdown', arguments: {}, _meta: { progressToken: 'p' } },
        }),
      });
      expect(countdown.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reads = await timedReads(countdown);
      const events = reads.flatMap((read) => [...read.text.matchAll(/^data: (\{.*\})$/gm)].map((match) => ({ at: read.at, message: JSON.parse(match[1]!) })));
      expect(events.map((event) => event.message.method ?? event.message.id)).toEqual([...Array(COUNTDOWN_STEPS).fill('notifications/progress'), 2]);
      expect(events[0]!.message.params).toMatchObject({ progressToken: 'p', progress: 1, total: COUNTDOWN_STEPS });
      expect(events.at(-1)!.at - events[0]!.at).toBeGreaterThan(COUNTDOWN_GAP_MS * (COUNTDOWN_STEPS - 2));
      const end = await fetch(`${base}/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${ALICE}`, 'mcp-session-id': session } });
      expect(end.status).toBe(200);
      // The host passes the gateway's JSON-RPC refusals through: 405 with Allow, a suspended user's 401.
      const get = await fetch(`${base}/mcp`, { headers: { authorization: `Bearer ${ALICE}`, accept: 'text/event-stream' } });
      expect(get.status).toBe(405);
      expect(get.headers.get('allow')).toBe('POST, DELETE');
      expect(await get.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000 } });
    });

    it('JSON request and response', async () => {
      const models = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${ALICE}` } });
      expect(models.status).toBe(200);
      expect(models.headers.get('content-type')).toMatch(/^application\/json/);
      const listing = (await models.json()) as { data: { id: string }[] };
      expect(listing.data.map((model) => model.id)).toEqual(expect.arrayContaining(['local-chat', SLOW_MODEL]));

      const chat = await fetch(`${base}/v1/chat/completions`, json(ALICE, { model: 'local-chat', messages: [{ role: 'user', content: 'Hello, host' }] }));
      expect(chat.status).toBe(200);
      const completion = (await chat.json()) as { choices: { message: { content: string } }[]; usage: { total_tokens: number } };
      expect(completion.choices[0]!.message.content).toBe('You said: "Hello, host". This is infergate\'s offline local model.');
      expect(completion.usage.total_tokens).toBeGreaterThan(0);

      // Through a real upstream (the openai provider), JSON both ways.
      const viaUpstream = await fetch(`${base}/v1/chat/completions`, json(ALICE, { model: SLOW_MODEL, messages: [{ role: 'user', content: randomUUID() }] }));
      expect(viaUpstream.status).toBe(200);
      expect(((await viaUpstream.json()) as typeof completion).choices[0]!.message.content).toBe('slow but sure');
    });

    it('streams SSE as it is produced, not buffered', async () => {
      const started = performance.now();
      const response = await fetch(
        `${base}/v1/chat/completions`,
        json(ALICE, { model: 'local-reasoner', stream: true, messages: [{ role: 'user', content: 'Tell me about streaming' }] }),
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reads = await timedReads(response);
      const text = reads.map((read) => read.text).join('');
      expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      const deltas = [...text.matchAll(/^data: (\{.*\})$/gm)].map((m) => JSON.parse(m[1]!).choices[0]?.delta ?? {});
      expect(deltas.map((delta) => delta.content ?? '').join('')).toBe('You said: "Tell me about streaming". This is infergate\'s offline local model.');
      expect(deltas.some((delta) => delta.reasoning_content)).toBe(true);
      // The local model pauses 15 ms between its chunks (a dozen here): a host that buffers
      // delivers them in one or two reads at the end.
      expect(reads.length).toBeGreaterThanOrEqual(6);
      const spread = reads.at(-1)!.at - reads[0]!.at;
      expect(spread).toBeGreaterThan(80);
      expect(reads[0]!.at - started).toBeLessThan(reads.at(-1)!.at - started - 80);
    });

    it('streams Anthropic Messages events with x-api-key', async () => {
      const response = await fetch(`${base}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': ALICE, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local-chat', max_tokens: 256, stream: true, messages: [{ role: 'user', content: 'Hi' }] }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('request-id')).toBe(response.headers.get('x-request-id'));
      const events = [...(await response.text()).matchAll(/^event: (\S+)$/gm)].map((m) => m[1]);
      expect(events[0]).toBe('message_start');
      expect(events).toContain('content_block_delta');
      expect(events.at(-1)).toBe('message_stop');
    });

    it('uploads several files in a multipart image edit', async () => {
      const form = new FormData();
      form.append('model', 'local-image');
      form.append('prompt', 'a blue square on red');
      form.append('image[]', new Blob([solidPng(8, 8, [255, 0, 0, 255])], { type: 'image/png' }), 'red.png');
      form.append('image[]', new Blob([solidPng(8, 8, [0, 0, 255, 255])], { type: 'image/png' }), 'blue.png');
      const response = await fetch(`${base}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${ALICE}` }, body: form });
      expect(response.status, await peek(response)).toBe(200);
      const result = (await response.json()) as { created: number; data: { b64_json?: string; url?: string }[] };
      expect(result.created).toBeGreaterThan(0);
      expect(result.data.length).toBeGreaterThanOrEqual(1);
      const image = Buffer.from(result.data[0]!.b64_json ?? '', 'base64');
      expect(image.subarray(1, 4).toString('latin1')).toBe('PNG');
    });

    it('downloads speech audio as bytes', async () => {
      const response = await fetch(
        `${base}/v1/audio/speech`,
        json(ALICE, { model: 'local-speech', input: 'Hello from the transport suite.', voice: 'en_female_anna_v1', response_format: 'wav' }),
      );
      expect(response.status, await peek(response)).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^audio\/(wav|x-wav|wave)/);
      const audio = Buffer.from(await response.arrayBuffer());
      expect(audio.subarray(0, 4).toString('latin1')).toBe('RIFF');
      expect(audio.subarray(8, 12).toString('latin1')).toBe('WAVE');
      expect(audio.length).toBeGreaterThan(1000);
    });

    it('creates a video, polls it and downloads its content as video/mp4', async () => {
      const created = await fetch(`${base}/v1/video/generations`, json(ALICE, { model: 'local-video', prompt: 'a ball rolling', seconds: 1 }));
      expect(created.status, await peek(created)).toBe(200);
      const task = (await created.json()) as { id: string; status: string };
      expect(task.status).toBe('queued');
      const deadline = Date.now() + 30_000;
      let status = task.status;
      while (status !== 'completed' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const polled = await fetch(`${base}/v1/video/generations/${task.id}`, { headers: { authorization: `Bearer ${ALICE}` } });
        expect(polled.status).toBe(200);
        status = ((await polled.json()) as { status: string }).status;
        expect(status).not.toBe('failed');
      }
      expect(status).toBe('completed');
      const content = await fetch(`${base}/v1/videos/${task.id}/content`, { headers: { authorization: `Bearer ${ALICE}` } });
      expect(content.status).toBe(200);
      expect(content.headers.get('content-type')).toBe('video/mp4');
      const video = Buffer.from(await content.arrayBuffer());
      expect(video.subarray(4, 8).toString('latin1')).toBe('ftyp');
    }, 45_000);

    it('authenticates through the host: its user table feeds the key store, its context reaches hooks', async () => {
      const models = (key?: string) => fetch(`${base}/v1/models`, key ? { headers: { authorization: `Bearer ${key}` } } : {});

      const ok = await models(ALICE);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('x-app-user')).toBe('alice');
      expect(ok.headers.get('x-request-id')).toMatch(/^req_/);
      expect(ok.headers.get('x-contract-version')).toMatch(/^\d{4}-\d{2}-\d{2}$/);

      const missing = await models();
      expect(missing.status).toBe(401);
      expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('missing_api_key');
      const unknown = await models('sk-not-a-user');
      expect(unknown.status).toBe(401);
      expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
      const suspended = await models(BOB);
      expect(suspended.status).toBe(401);
      expect(((await suspended.json()) as { error: { code: string } }).error.code).toBe('api_key_disabled');

      const freePlan = await fetch(`${base}/v1/chat/completions`, json(CAROL, { model: 'local-reasoner', messages: [{ role: 'user', content: 'Hi' }] }));
      expect(freePlan.status).toBe(404);
      expect(((await freePlan.json()) as { error: { code: string } }).error.code).toBe('model_not_found');
      const freeModel = await fetch(`${base}/v1/chat/completions`, json(CAROL, { model: 'local-chat', messages: [{ role: 'user', content: 'Hi' }] }));
      expect(freeModel.status).toBe(200);
      expect(freeModel.headers.get('x-app-user')).toBe('carol');
      await freeModel.body?.cancel();

      const anthropicMissing = await fetch(`${base}/v1/messages`, {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local-chat', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }),
      });
      expect(anthropicMissing.status).toBe(401);
      expect(await anthropicMissing.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    });

    it('answers errors in the route’s shape, from the gateway rather than the host', async () => {
      const unknown = await fetch(`${base}/v1/nope`, { headers: { authorization: `Bearer ${ALICE}` } });
      expect(unknown.status).toBe(404);
      expect(unknown.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await unknown.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'not_found' } });

      const wrongMethod = await fetch(`${base}/v1/chat/completions`, { headers: { authorization: `Bearer ${ALICE}` } });
      expect(wrongMethod.status).toBe(405);
      expect(wrongMethod.headers.get('allow')).toBe('POST');
      await wrongMethod.body?.cancel();

      const badJson = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
        body: '{"model": "local-chat", "messages": [',
      });
      expect(badJson.status).toBe(400);
      expect(await badJson.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_json' } });

      const invalidMessages = await fetch(`${base}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': ALICE, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local-chat', messages: [{ role: 'user', content: 'Hi' }] }),
      });
      expect(invalidMessages.status).toBe(400);
      expect(await invalidMessages.json()).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.stringContaining('max_tokens') },
      });
    });

    it('serves below its mount path only', async () => {
      const mounted = await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${ALICE}` } });
      expect(mounted.status).toBe(200);
      await mounted.body?.cancel();
      const outside = await fetch(`${running.origin}/v1/models`, { headers: { authorization: `Bearer ${ALICE}` } });
      expect(outside.status).toBe(404);
      await outside.body?.cancel();
      const alias = await fetch(`${base}/responses`, json(ALICE, { model: 'local-chat', input: 'Hi' }));
      expect(alias.status).toBe(200);
      expect(((await alias.json()) as { object: string }).object).toBe('response');
    });

    it('aborts the upstream call when the client leaves mid-stream', async () => {
      const marker = `abort-${randomUUID()}`;
      const client = new AbortController();
      const response = await fetch(`${base}/v1/chat/completions`, {
        ...json(ALICE, { model: SLOW_MODEL, stream: true, messages: [{ role: 'user', content: marker }] }),
        signal: client.signal,
      });
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let received = '';
      while (!received.includes('tick 1 ')) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended early: ${received}`);
        received += decoder.decode(value, { stream: true });
      }
      expect(upstream.call(marker)?.ended).toBeUndefined();
      client.abort();
      await waitFor(() => upstream.call(marker)?.ended !== undefined, 5_000);
      expect(upstream.call(marker)).toMatchObject({ ended: 'early' });
      expect(upstream.call(marker)!.chunksSent).toBeLessThan(40);
    });
  });
}

/** Reads a body to its end, noting when each piece arrived. */
const COUNTDOWN_STEPS = 4;
const COUNTDOWN_GAP_MS = 60;

/** An upstream tool that reports its progress every `COUNTDOWN_GAP_MS`, then answers. */
function registerCountdown(server: McpServer): void {
  server.registerTool('countdown', { description: 'Counts down, reporting progress' }, async (extra) => {
    const token = extra._meta?.progressToken;
    for (let step = 1; step <= COUNTDOWN_STEPS; step++) {
      await new Promise((resolve) => setTimeout(resolve, COUNTDOWN_GAP_MS));
      if (token !== undefined)
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: step, total: COUNTDOWN_STEPS } });
    }
    return { content: [{ type: 'text', text: 'liftoff' }] };
  });
}

async function timedReads(response: Response): Promise<{ at: number; text: string }[]> {
  const reads: { at: number; text: string }[] = [];
  const decoder = new TextDecoder();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    reads.push({ at: performance.now(), text: decoder.decode(chunk, { stream: true }) });
  }
  return reads;
}

/** The body of an unexpected answer, for the assertion message; leaves `response` readable. */
async function peek(response: Response): Promise<string> {
  if (response.ok) return '';
  return response.clone().text();
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
