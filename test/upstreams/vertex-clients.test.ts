import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { createVertexProvider } from '../../src/providers/vertex/vertex-provider.js';
import type { NeutralUsage, UpstreamErrorSpec } from '../fakes/fake-server.js';
import { type FakeVertex, startFakeVertex, VERTEX_LOCATION } from '../fakes/fake-vertex.js';
import { serve, type Served } from '../helpers/serve.js';
import { type ClientDriver, clientDrivers, messageOf } from './client-drivers.js';
import {
  THROUGH_SECOND_DELTA,
  USAGE,
  expectedUsage,
  rateLimited,
  toolExchange,
  type ClientProtocol,
  weatherAndTimeByName,
  toolExchangeByName,
} from './harness.js';

type Json = Record<string, any>;

/**
 * The `openai` (Chat and Responses) and `@anthropic-ai/sdk` clients × Vertex AI's Gemini and
 * Claude, for the cells vertex.test.ts leaves open: a two-turn parallel tool loop (its first turn
 * streamed through the SDK helper, on Gemini 3 whose fake refuses a call replayed without its
 * signature), usage with cached and thinking tokens, upstream 429 (retry delay), 400 (the field
 * named) and 403, and a stream cut mid-answer.
 */
let fake: FakeVertex;
let gateway: Gateway;
let served: Served;
let CLIENTS: Record<ClientProtocol, ClientDriver>;

beforeAll(async () => {
  fake = await startFakeVertex();
  gateway = createGateway({
    keys: [{ key: 'sk-test' }],
    providers: { vtx: createVertexProvider({ credentials: fake.serviceAccount, location: VERTEX_LOCATION, baseURL: fake.url }) },
    models: [
      { id: 'vx-gemini', provider: 'vtx', upstreamModel: 'google/gemini-3-pro-preview' },
      { id: 'vx-claude', provider: 'vtx', upstreamModel: 'claude-sonnet-4-5@20250929' },
    ],
    logger: false,
  });
  served = await serve(gateway);
  CLIENTS = clientDrivers(
    new OpenAI({ baseURL: `${served.url}/v1`, apiKey: 'sk-test', maxRetries: 0 }),
    new Anthropic({ baseURL: served.url, apiKey: 'sk-test', maxRetries: 0 }),
  );
});
afterAll(async () => {
  await served.close();
  await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
  await fake.close();
});
beforeEach(() => fake.reset());

type Publisher = 'gemini' | 'claude';

interface VertexModel {
  model: string;
  usage: NeutralUsage;
  /** Frames through the second text delta. */
  throughSecondDelta: number;
  rateLimited: UpstreamErrorSpec;
  badField: UpstreamErrorSpec;
  /** The text of the 400, as the client must see it. */
  badFieldText: string;
}

const PUBLISHERS: Record<Publisher, VertexModel> = {
  gemini: {
    model: 'vx-gemini',
    // Gemini has no cache-write counter.
    usage: { input: 1300, cachedRead: 1000, output: 57, reasoning: 20 },
    throughSecondDelta: 2,
    // The fake adds Google's RetryInfo (7s) to every 429.
    rateLimited: { status: 429, message: 'Resource has been exhausted (e.g. check quota).' },
    badField: { status: 400, message: 'Invalid JSON payload received. Unknown name "foo" at \'generation_config\': Cannot find field.' },
    badFieldText: 'Unknown name "foo"',
  },
  claude: {
    model: 'vx-claude',
    usage: USAGE,
    throughSecondDelta: THROUGH_SECOND_DELTA.anthropic,
    rateLimited: rateLimited('anthropic'),
    badField: { status: 400, message: 'max_tokens: Input should be less than or equal to 64000', type: 'invalid_request_error' },
    badFieldText: 'max_tokens: Input should be less than or equal to 64000',
  },
};

/** Usage as each client protocol shows it: Gemini counts like OpenAI (thinking reported, no cache writes), Claude like Anthropic. */
function usageFor(publisher: Publisher, client: ClientProtocol): Json {
  const counted = PUBLISHERS[publisher].usage;
  return expectedUsage(publisher === 'claude' ? 'anthropic' : 'responses', client, { cacheWrite: 0, reasoning: 0, cachedRead: 0, ...counted });
}

// ---- the cells vertex.test.ts does not cover --------------------------------------------------

type Check = 'tool loop' | 'usage' | '429' | '400' | '403' | 'cut';
/** Covered in vertex.test.ts already. */
const COVERED = new Set([
  'chat gemini tool loop',
  'chat gemini usage',
  'chat claude usage',
  'messages gemini usage',
  'messages claude usage',
  'chat claude 400',
  'chat claude cut',
]);
const open = (check: Check) =>
  (['chat', 'responses', 'messages'] as const)
    .flatMap((client) => (['gemini', 'claude'] as const).map((publisher) => [client, publisher] as const))
    .filter(([client, publisher]) => !COVERED.has(`${client} ${publisher} ${check}`));

describe('openai and @anthropic-ai/sdk clients × Vertex AI', () => {
  it.each(open('tool loop'))('%s → %s: a two-turn parallel tool loop, the results reaching the upstream', async (client, publisher) => {
    const vx = PUBLISHERS[publisher];
    // Claude's ids in its style; the Gemini fake makes its own.
    const ids = publisher === 'claude' ? ['toolu_01Weather', 'toolu_01Time'] : [];
    const withId = (i: number) => {
      const id = ids[i];
      return id ? { id } : {};
    };
    fake.reply(
      {
        toolCalls: [
          { ...withId(0), name: 'get_weather', args: ['{"city":', ' "Paris"}'] },
          { ...withId(1), name: 'get_time', args: ['{"tz":"Europe/Paris"}'] },
        ],
        usage: vx.usage,
      },
      { text: ['It is 18°C at 14:05.'] },
    );
    const turn = await CLIENTS[client].toolTurn(vx.model);
    expect(turn.calls.map(({ name, input }) => ({ name, input }))).toEqual([
      { name: 'get_weather', input: { city: 'Paris' } },
      { name: 'get_time', input: { tz: 'Europe/Paris' } },
    ]);
    expect(turn.usage).toMatchObject(usageFor(publisher, client));

    expect(await turn.answer(['18°C', '14:05'])).toBe('It is 18°C at 14:05.');
    const [first, second] = fake.accepted();
    expect(first!.path).toMatch(/:(streamGenerateContent|streamRawPredict)$/);
    expect(toolExchangeByName(publisher === 'claude' ? 'anthropic' : 'gemini', second!.body)).toEqual(weatherAndTimeByName());
    if (publisher === 'gemini') {
      // Gemini 3 refuses a call replayed without the signature it issued; it was accepted, and here it is.
      const replayed = (second!.body.contents as Json[]).find((content) => content.role === 'model')!;
      expect(replayed.parts[0].thoughtSignature).toEqual(expect.any(String));
    } else {
      expect(toolExchange('anthropic', second!.body).results.map((result) => result.id)).toEqual(ids);
    }
  });

  it.each(open('usage'))('%s → %s: usage with cached and thinking tokens, JSON and through the stream helper', async (client, publisher) => {
    const vx = PUBLISHERS[publisher];
    fake.reply({ text: ['Hello'], usage: vx.usage }, { text: ['Hel', 'lo'], usage: vx.usage });
    const json = await CLIENTS[client].ask(vx.model);
    expect(json.usage).toMatchObject(usageFor(publisher, client));
    const streamed = await CLIENTS[client].stream(vx.model, () => {});
    expect(streamed.text).toBe('Hello');
    expect(streamed.usage).toMatchObject(usageFor(publisher, client));
  });

  it.each(open('429'))('%s → %s: an upstream 429 is the SDK’s 429 with the retry delay', async (client, publisher) => {
    const vx = PUBLISHERS[publisher];
    fake.reply({ error: vx.rateLimited });
    const error = await CLIENTS[client].stream(vx.model, () => {}).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CLIENTS[client].errorClass);
    const apiError = error as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).toBe(429);
    expect(apiError.headers?.get('retry-after')).toBe('7');
    expect(messageOf(apiError)).toContain(publisher === 'claude' ? 'Rate limit reached' : 'Resource has been exhausted');
  });

  it.each(open('400'))('%s → %s: an upstream 400 is the SDK’s 400 naming the field', async (client, publisher) => {
    const vx = PUBLISHERS[publisher];
    fake.reply({ error: vx.badField });
    const error = await CLIENTS[client].ask(vx.model).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CLIENTS[client].errorClass);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect(messageOf(error)).toContain(vx.badFieldText);
  });

  it.each(open('403'))('%s → %s: an upstream 403 is a 502 (the gateway’s credentials), the upstream text kept out', async (client, publisher) => {
    const vx = PUBLISHERS[publisher];
    fake.reply({ error: { status: 403, message: 'Permission denied on resource project secret-project-42.', type: 'permission_error' } });
    const error = await CLIENTS[client].ask(vx.model).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CLIENTS[client].errorClass);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect(messageOf(error)).toContain('rejected the gateway');
    expect((error as Error).message).not.toContain('secret-project-42');
  });

  it.each(open('cut'))('%s → %s: a stream cut mid-answer makes the stream helper throw after the text so far', async (client, publisher) => {
    const vx = PUBLISHERS[publisher];
    fake.reply({ text: ['Once', ' upon', ' a time'], cutAfter: vx.throughSecondDelta });
    const deltas: string[] = [];
    const error = await CLIENTS[client].stream(vx.model, (delta) => deltas.push(delta)).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CLIENTS[client].errorClass);
    expect(deltas.join('')).toBe('Once upon');
  });
});
