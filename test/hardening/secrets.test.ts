import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { encodePng } from '../../src/providers/codecs/png.js';
import type { ModelEntry } from '../../src/routing/model.js';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import { startFakeOpenAIMedia, type FakeOpenAIMedia } from '../fakes/fake-openai-media.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { startRawUpstream, type RawExchange, type RawUpstream } from '../fakes/raw-upstream.js';
import { serve, type Served } from '../helpers/serve.js';
import { CLIENT_PATHS, CLIENTS, type ClientProtocol, type UpstreamKind } from '../upstreams/harness.js';
import { authOf, bodyOf, captureLogger, closedPort, sendFrames } from './helpers.js';
import { BEFORE_TEXT, errorBody, jsonAnswer, kindOfPath, streamErrorFrame, streamFrames } from './wire.js';

/**
 * Secrets (issue 7, part 5): upstream keys, client keys and upstream addresses never reach a
 * client, a log line or a usage/attempt event, whatever happens (success, every upstream error
 * status, refused, timeout, bad request, in-stream error) on every route family; and no client
 * header can replace the upstream credentials.
 */

const SECRET = {
  openaiKey: 'up-SECRET-openai-4f1c9e',
  anthropicKey: 'up-SECRET-anthropic-8d2b7a',
  mediaKey: 'up-SECRET-media-3e6f0d',
  /** An operator-configured extra upstream header (OpenAI-Organization). */
  organization: 'org-SECRET-77aa01',
  clientKey: 'sk-CLIENT-SECRET-5a5a5a',
  wrongClientKey: 'sk-WRONG-SECRET-0b0b0b',
};
/** Headers a client may send hoping to change the upstream credentials. */
const SNEAKY_HEADERS: Record<string, string> = {
  'x-api-key': 'evil-x-api-key',
  'api-key': 'evil-api-key',
  'openai-organization': 'evil-org',
  'openai-project': 'evil-project',
  'anthropic-api-key': 'evil-anthropic-api-key',
  'x-goog-api-key': 'evil-goog',
  'proxy-authorization': 'Bearer evil-proxy',
  cookie: 'session=evil-cookie',
};
const TIMEOUTS = { headersMs: 300, bodyMs: 300 };
/** Headers real upstreams send with every answer, naming the account behind the key. */
const ACCOUNT_HEADERS = { 'openai-organization': SECRET.organization, 'anthropic-organization-id': 'org-SECRET-anthropic-42' };

let fakeOpenAI: FakeUpstream;
let fakeAnthropic: FakeUpstream;
let media: FakeOpenAIMedia;
let raw: RawUpstream;
let gonePort: number;
let gateway: Gateway;
let served: Served;
const log = captureLogger();
const events: unknown[] = [];
/** Everything every client got: status line, headers, body. */
const seen: string[] = [];

beforeAll(async () => {
  [fakeOpenAI, fakeAnthropic, media, raw, gonePort] = await Promise.all([
    startFakeOpenAI({ apiKey: SECRET.openaiKey }),
    startFakeAnthropic({ apiKey: SECRET.anthropicKey }),
    startFakeOpenAIMedia(),
    startRawUpstream(),
    closedPort(),
  ]);
  const gone = `http://127.0.0.1:${gonePort}`;
  const org = { 'OpenAI-Organization': SECRET.organization };
  const models: ModelEntry[] = [];
  for (const prefix of ['', 'raw-', 'gone-']) {
    const oai = `${prefix}oai`;
    models.push(
      { id: `${prefix}gpt`, provider: oai, upstreamModel: 'gpt-5' },
      { id: `${prefix}claude`, provider: `${prefix}claude`, upstreamModel: 'claude-sonnet-4-5' },
      { id: `${prefix}image`, provider: prefix ? oai : 'media', kind: 'image', upstreamModel: 'gpt-image-1.5' },
      { id: `${prefix}speech`, provider: prefix ? oai : 'media', kind: 'speech', upstreamModel: 'gpt-4o-mini-tts' },
      { id: `${prefix}video`, provider: prefix ? oai : 'media', kind: 'video', upstreamModel: 'sora-2' },
    );
  }
  gateway = createGateway({
    keys: [{ key: SECRET.clientKey, id: 'key_secrets' }],
    providers: {
      oai: createOpenAIProvider({ baseURL: fakeOpenAI.url + '/v1', apiKey: SECRET.openaiKey, responses: true, headers: org }),
      claude: createAnthropicProvider({ baseURL: fakeAnthropic.url, apiKey: SECRET.anthropicKey }),
      media: createOpenAIProvider({ baseURL: media.baseURL, apiKey: SECRET.mediaKey, headers: org }),
      'raw-oai': createOpenAIProvider({ baseURL: raw.url + '/v1', apiKey: SECRET.openaiKey, responses: true, headers: org, timeouts: TIMEOUTS }),
      'raw-claude': createAnthropicProvider({ baseURL: raw.url, apiKey: SECRET.anthropicKey, timeouts: TIMEOUTS }),
      'gone-oai': createOpenAIProvider({ baseURL: gone + '/v1', apiKey: SECRET.openaiKey, responses: true, headers: org }),
      'gone-claude': createAnthropicProvider({ baseURL: gone, apiKey: SECRET.anthropicKey }),
    },
    models,
    logger: log.logger,
    videoRefreshIntervalMs: 0,
    policies: { retry: { retries: 0 } },
    hooks: {
      onUsage: (event) => void events.push(event),
      onAttempt: (event) => void events.push(event),
    },
  });
  served = await serve(gateway);
});

afterAll(async () => {
  await served?.close();
  await Promise.all(Object.values(gateway?.options.providers ?? {}).map((provider) => provider.close?.()));
  await gateway?.dispose();
  await Promise.all([fakeOpenAI?.close(), fakeAnthropic?.close(), media?.close(), raw?.close()]);
});

// ---- driving requests and keeping what came back ---------------------------------------------

/** Sends a request and keeps everything the client got. */
async function call(path: string, init: RequestInit & { headers?: Record<string, string> }): Promise<{ status: number; text: string }> {
  const response = await fetch(served.url + path, init);
  const text = await response.text();
  seen.push(`${path} ${response.status}\n${[...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n')}\n\n${text}`);
  return { status: response.status, text };
}

function text(client: ClientProtocol, model: string, stream: boolean, headers: Record<string, string> = {}, key = SECRET.clientKey) {
  return call(CLIENT_PATHS[client], {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...authOf(client, key), ...headers },
    body: JSON.stringify(bodyOf(client, model, 'Hi', stream)),
  });
}

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${SECRET.clientKey}`, ...headers },
  body: JSON.stringify(body),
});

const PNG = Buffer.from(encodePng({ width: 2, height: 2, pixels: new Uint8Array(16).fill(90) }));

/** One request of every media route family on a model prefix (`''`, `raw-`, `gone-`). */
async function mediaCalls(prefix: string, headers: Record<string, string> = {}): Promise<number[]> {
  const statuses: number[] = [];
  statuses.push((await call('/v1/images/generations', json({ model: `${prefix}image`, prompt: 'a red square' }, headers))).status);
  const form = new FormData();
  form.append('model', `${prefix}image`);
  form.append('prompt', 'make it blue');
  form.append('image', new Blob([PNG], { type: 'image/png' }), 'red.png');
  statuses.push((await call('/v1/images/edits', { method: 'POST', headers: { authorization: `Bearer ${SECRET.clientKey}`, ...headers }, body: form })).status);
  statuses.push((await call('/v1/audio/speech', json({ model: `${prefix}speech`, voice: 'en_male_adam_v2', input: 'Hello' }, headers))).status);
  const created = await call('/v1/video/generations', json({ model: `${prefix}video`, prompt: 'a cat', seconds: 4 }, headers));
  statuses.push(created.status);
  if (created.status === 200) {
    const id = (JSON.parse(created.text) as { id: string }).id;
    const auth = { authorization: `Bearer ${SECRET.clientKey}`, ...headers };
    statuses.push((await call(`/v1/video/generations/${id}`, { headers: auth })).status);
    statuses.push((await call(`/v1/videos/${id}/content`, { headers: auth })).status);
  }
  return statuses;
}

/** The upstream kind of a model name. */
const kindOf = (model: string): UpstreamKind => (model.includes('claude') ? 'anthropic' : 'responses');

// ---- what no output may contain --------------------------------------------------------------

function forbidden(): string[] {
  const hosts = [fakeOpenAI.url, fakeAnthropic.url, media.url, raw.url, `http://127.0.0.1:${gonePort}`].map((url) => new URL(url).host);
  return [...Object.values(SECRET), 'SECRET', ...hosts, ...hosts.map((host) => host.replace('127.0.0.1', 'localhost'))];
}

function expectClean(what: string, output: string): void {
  for (const secret of forbidden()) {
    const at = output.indexOf(secret);
    expect(at, `${what} contains ${secret}: …${output.slice(Math.max(0, at - 200), at + 100)}…`).toBe(-1);
  }
}

// ---- the scenarios ---------------------------------------------------------------------------

describe('nothing secret reaches clients, logs or events', () => {
  it('successes on every route family', async () => {
    for (const client of CLIENTS) {
      for (const model of ['gpt', 'claude']) {
        for (const stream of [false, true]) expect((await text(client, model, stream)).status, `${client} ${model} ${stream}`).toBe(200);
      }
    }
    media.videoStatuses = [{ status: 'completed', progress: 100 }];
    expect(await mediaCalls('')).toEqual([200, 200, 200, 200, 200, 200]);
    expect((await call('/v1/models', { headers: { authorization: `Bearer ${SECRET.clientKey}` } })).status).toBe(200);
    // Answers whose headers name the upstream account.
    raw.script = async (exchange) => {
      const kind = kindOfPath(exchange.request.path);
      if (exchange.request.body?.stream !== true) return exchange.json(200, jsonAnswer(kind, 'Hello'), ACCOUNT_HEADERS);
      exchange.sseHead(ACCOUNT_HEADERS);
      await sendFrames(exchange, streamFrames(kind, ['Hel', 'lo']));
      exchange.endChunked();
    };
    for (const client of CLIENTS) {
      for (const model of ['raw-gpt', 'raw-claude']) {
        for (const stream of [false, true]) expect((await text(client, model, stream)).status, `${client} ${model} ${stream}`).toBe(200);
      }
    }
  });

  it.each([401, 403, 429, 500, 400])('upstream %s on every route family', async (status) => {
    raw.script = (exchange) => {
      const kind = kindOfPath(exchange.request.path);
      // The worst an upstream does: OpenAI's 401 quotes the key it got; this one quotes it whole,
      // and its other errors quote the key and the address they were sent to.
      const received = exchange.request.headers.authorization ?? exchange.request.headers['x-api-key'] ?? '';
      const message =
        status === 401 || status === 403
          ? `Incorrect API key provided: ${received}.`
          : `upstream says ${status} to ${received} (organization ${exchange.request.headers['openai-organization']}) at http://${exchange.request.headers.host}/v1`;
      exchange.json(status, errorBody(kind, message, status === 429 ? 'rate_limit_error' : 'server_error'), {
        ...ACCOUNT_HEADERS,
        ...(status === 429 ? { 'retry-after': '1' } : {}),
      });
    };
    for (const client of CLIENTS) {
      for (const model of ['raw-gpt', 'raw-claude']) {
        for (const stream of [false, true]) {
          const answer = await text(client, model, stream);
          expect(answer.status, `${client} ${model} stream: ${stream}`).toBe(status === 401 || status === 403 ? 502 : status);
        }
      }
    }
    const statuses = await mediaCalls('raw-');
    expect(statuses.every((code) => code >= 400)).toBe(true);
  });

  it.each([401, 403, 500])('upstream %s while reading a video task and its content', async (status) => {
    media.videoStatuses = [{ status: 'completed', progress: 100 }];
    const created = await call('/v1/video/generations', json({ model: 'video', prompt: 'a dog', seconds: 4 }));
    const id = (JSON.parse(created.text) as { id: string }).id;
    const auth = { authorization: `Bearer ${SECRET.clientKey}` };
    const failure = { status, body: { error: { message: `Incorrect API key provided: ${SECRET.mediaKey}`, type: 'invalid_request_error' } } };
    media.failNext = failure;
    await call(`/v1/video/generations/${id}`, { headers: auth });
    media.failNext = failure;
    const content = await call(`/v1/videos/${id}/content`, { headers: auth });
    expect(content.status).toBeGreaterThanOrEqual(400);
  });

  it('refused connections on every route family', async () => {
    for (const client of CLIENTS) {
      for (const model of ['gone-gpt', 'gone-claude']) {
        for (const stream of [false, true]) expect((await text(client, model, stream)).status).toBe(502);
      }
    }
    expect(await mediaCalls('gone-')).toEqual([502, 502, 502, 502]);
  });

  it('timeouts on every route family', async () => {
    raw.script = () => {}; // never answers
    const answers = await Promise.all(
      CLIENTS.flatMap((client) => ['raw-gpt', 'raw-claude'].flatMap((model) => [false, true].map((stream) => text(client, model, stream)))),
    );
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 504));
    expect(await mediaCalls('raw-')).toEqual([504, 504, 504, 504]);
  });

  it('in-stream errors and cut streams', async () => {
    for (const ending of ['error event', 'reset'] as const) {
      raw.script = async (exchange: RawExchange) => {
        const kind = kindOfPath(exchange.request.path);
        exchange.sseHead();
        await sendFrames(exchange, streamFrames(kind, ['Once', ' upon']).slice(0, BEFORE_TEXT[kind] + 1));
        if (ending === 'reset') return exchange.reset();
        await sendFrames(exchange, [streamErrorFrame(kind, 'overloaded, try later')]);
        exchange.endChunked();
      };
      for (const client of CLIENTS) {
        for (const model of ['raw-gpt', 'raw-claude']) {
          const answer = await text(client, model, true);
          expect(answer.status).toBe(200);
          expect(answer.text).toMatch(/"error"/);
        }
      }
    }
  });

  it('an upstream error event quoting the key is blanked out when translated', async () => {
    raw.script = async (exchange: RawExchange) => {
      const kind = kindOfPath(exchange.request.path);
      const received = exchange.request.headers.authorization ?? exchange.request.headers['x-api-key'] ?? '';
      exchange.sseHead();
      await sendFrames(exchange, [...streamFrames(kind, ['Once']).slice(0, BEFORE_TEXT[kind] + 1), streamErrorFrame(kind, `key ${received} is over quota`)]);
      exchange.endChunked();
    };
    // Passed-through streams are forwarded byte for byte, their error events included (see the report).
    const translated = CLIENTS.flatMap((client) =>
      ['raw-gpt', 'raw-claude']
        .filter((model) => !(client === 'messages' ? model === 'raw-claude' : model === 'raw-gpt'))
        .map((model) => [client, model] as const),
    );
    for (const [client, model] of translated) {
      const answer = await text(client, model, true);
      expect(answer.text, `${client} → ${model}`).toContain('is over quota');
      expect(answer.text).toContain('[redacted]');
    }
  });

  it('bad requests: a wrong client key, no key, an unknown model, an invalid body', async () => {
    for (const client of CLIENTS) {
      expect((await text(client, 'gpt', false, {}, SECRET.wrongClientKey)).status).toBe(401);
      const path = CLIENT_PATHS[client];
      expect(
        (await call(path, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: '{}' })).status,
      ).toBe(401);
      expect((await text(client, 'no-such-model', false)).status).toBeGreaterThanOrEqual(400);
      const invalid = await call(path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...authOf(client, SECRET.clientKey) },
        body: '{"model":',
      });
      expect(invalid.status).toBe(400);
    }
    expect((await call('/v1/images/generations', json({ model: 'image' }))).status).toBe(400);
  });

  it('then: no client answer, log line or event names a key or an upstream address', async () => {
    await new Promise((resolve) => setTimeout(resolve, 50)); // events are delivered after the answer
    // The checks can fail: upstreams did get the keys (and echoed them), and upstream messages
    // do reach clients, with what they quoted blanked out.
    expect(raw.requests.some((request) => request.headers.authorization === `Bearer ${SECRET.openaiKey}`)).toBe(true);
    expect(raw.requests.some((request) => request.headers['x-api-key'] === SECRET.anthropicKey)).toBe(true);
    expect(seen.some((output) => output.includes('upstream says 429 to [redacted] (organization [redacted]) at [host]'))).toBe(true);
    expect(seen.length).toBeGreaterThan(100);
    expect(events.length).toBeGreaterThan(50);
    expect(log.entries.length).toBeGreaterThan(0);
    seen.forEach((output, i) => {
      expectClean(`client answer #${i}`, output);
    });
    expectClean('the log', log.text());
    expectClean('the usage and attempt events', JSON.stringify(events));
  });

  it('and the client key never went upstream', () => {
    const upstream = [...fakeOpenAI.requests, ...fakeAnthropic.requests, ...media.requests, ...raw.requests].map((request) =>
      JSON.stringify({ headers: request.headers, body: 'body' in request ? request.body : request.json }),
    );
    expect(upstream.length).toBeGreaterThan(50);
    for (const request of upstream) {
      expect(request).not.toContain(SECRET.clientKey);
      expect(request).not.toContain(SECRET.wrongClientKey);
    }
  });
});

describe('client headers cannot change the upstream credentials', () => {
  it.each(CLIENTS.flatMap((client) => ['gpt', 'claude'].map((model) => [client, model] as const)))('%s client → %s', async (client, model) => {
    // On the Messages route x-api-key is the client's own key, so a forged Bearer rides along instead.
    const { 'x-api-key': _own, ...others } = SNEAKY_HEADERS;
    const headers = client === 'messages' ? { ...others, authorization: 'Bearer evil-bearer' } : SNEAKY_HEADERS;
    for (const stream of [false, true]) {
      expect((await text(client, model, stream, headers)).status).toBe(200);
      const fake = kindOf(model) === 'anthropic' ? fakeAnthropic : fakeOpenAI;
      const sent = fake.last().headers;
      if (kindOf(model) === 'anthropic') {
        expect(sent['x-api-key']).toBe(SECRET.anthropicKey);
        expect(sent.authorization).toBeUndefined();
      } else {
        expect(sent.authorization).toBe(`Bearer ${SECRET.openaiKey}`);
        expect(sent['openai-organization']).toBe(SECRET.organization);
        expect(sent['x-api-key']).toBeUndefined();
      }
      expect(JSON.stringify(sent)).not.toMatch(/evil|CLIENT-SECRET/);
    }
  });

  it('media routes', async () => {
    const before = media.requests.length;
    media.videoStatuses = [{ status: 'completed', progress: 100 }];
    expect(await mediaCalls('', SNEAKY_HEADERS)).toEqual([200, 200, 200, 200, 200, 200]);
    const sent = media.requests.slice(before);
    expect(sent.length).toBeGreaterThanOrEqual(5);
    for (const request of sent) {
      expect(request.headers.authorization, request.path).toBe(`Bearer ${SECRET.mediaKey}`);
      expect(JSON.stringify(request.headers)).not.toMatch(/evil|CLIENT-SECRET/);
    }
  });
});
