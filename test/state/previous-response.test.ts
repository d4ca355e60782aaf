import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import type { FunctionTool, Response as OpenAIResponse, ResponseCreateParamsNonStreaming } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import type { ModelEntry } from '../../src/routing/model.js';
import { MemoryResponseStore } from '../../src/state/memory-response-store.js';
import { RedisResponseStore } from '../../src/state/redis-response-store.js';
import { serve, type Served } from '../helpers/serve.js';
import { redisTargets } from '../redis/targets.js';
import { rawRequest, startHarness, toolExchange, UPSTREAMS, WEATHER_SCHEMA, type Harness, type UpstreamKind } from '../upstreams/harness.js';

type Json = Record<string, any>;

/**
 * `previous_response_id` end to end: the real OpenAI SDK against the gateway, whose models flagged
 * `previousResponseId: true` rebuild the conversation from the response store and send it whole
 * to whatever upstream serves them (the strict loopback fakes: Chat only, Responses only,
 * Anthropic). None of them ever sees `previous_response_id`.
 */

const STATEFUL: Record<UpstreamKind, string> = { chat: 'gpt-chat-state', responses: 'gpt-resp-state', anthropic: 'claude-state' };
const statefulModels: ModelEntry[] = [
  { id: STATEFUL.chat, provider: 'oai-chat', upstreamModel: 'gpt-4.1', previousResponseId: true },
  { id: STATEFUL.responses, provider: 'oai-responses', upstreamModel: 'gpt-5', previousResponseId: true },
  { id: STATEFUL.anthropic, provider: 'claude', upstreamModel: 'claude-sonnet-4-5', previousResponseId: true },
];

let h: Harness;
beforeAll(async () => {
  // No `responseStore` option: a model with `previousResponseId` gets the memory store by default.
  h = await startHarness({ models: statefulModels });
});
afterAll(() => h.close());
beforeEach(() => h.reset());

/** One turn through the SDK, as JSON or through the streaming helper. */
async function turn(params: Omit<ResponseCreateParamsNonStreaming, 'stream'>, stream: boolean, client: OpenAI = h.openai): Promise<OpenAIResponse> {
  if (!stream) return client.responses.create(params);
  return client.responses.stream(params).finalResponse();
}

/** The conversation the upstream received, in neutral terms: system texts and each turn's text. */
function transcriptOf(kind: UpstreamKind, body: Json): { role: string; text: string }[] {
  const text = (content: unknown): string =>
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((part: Json) => (part.type === 'text' || part.type?.endsWith('_text') ? part.text : '')).join('')
        : '';
  const out: { role: string; text: string }[] = [];
  if (kind === 'chat') {
    for (const message of body.messages)
      if (text(message.content) !== '') out.push({ role: message.role === 'developer' ? 'system' : message.role, text: text(message.content) });
  } else if (kind === 'responses') {
    if (body.instructions) out.push({ role: 'system', text: body.instructions });
    for (const item of body.input) {
      if ((item.type ?? 'message') === 'message') out.push({ role: item.role === 'developer' ? 'system' : item.role, text: text(item.content) });
    }
  } else {
    if (body.system !== undefined && text(body.system) !== '') out.push({ role: 'system', text: text(body.system) });
    for (const message of body.messages) if (text(message.content) !== '') out.push({ role: message.role, text: text(message.content) });
  }
  return out;
}

describe.each([false, true])('previous_response_id (stream: %s)', (stream) => {
  it.each(UPSTREAMS)('continues a chat-only conversation on the %s upstream, without turn 1’s instructions', async (kind) => {
    h.upstreams.chat.fake.reply({ text: ['Ahoy', ' Ada!'] });
    const first = await turn({ model: STATEFUL.chat, instructions: 'Talk like a pirate.', input: 'My name is Ada.' }, stream);
    expect(first.output_text).toBe('Ahoy Ada!');
    expect(first.id).toMatch(/^resp_/);

    h.upstreams[kind].fake.reply({ text: ['Your name', ' is Ada.'] });
    const second = await turn({ model: STATEFUL[kind], previous_response_id: first.id, input: 'What is my name?' }, stream);
    expect(second.status).toBe('completed');
    expect(second.output_text).toBe('Your name is Ada.');

    const received = h.upstreams[kind].fake.last().body;
    expect(received).not.toHaveProperty('previous_response_id');
    expect(transcriptOf(kind, received)).toEqual([
      { role: 'user', text: 'My name is Ada.' },
      { role: 'assistant', text: 'Ahoy Ada!' },
      { role: 'user', text: 'What is my name?' },
    ]);
    expect(JSON.stringify(received)).not.toContain('pirate');
  });

  it.each(UPSTREAMS)('chains three turns on the %s upstream; each turn’s instructions are its own', async (kind) => {
    const model = STATEFUL[kind];
    const fake = h.upstreams[kind].fake;
    fake.reply({ text: ['One.'] }, { text: ['Two.'] }, { text: ['Three.'] });
    const first = await turn({ model, instructions: 'Count.', input: [{ role: 'user', content: 'Start.' }] }, stream);
    const second = await turn({ model, previous_response_id: first.id, input: 'Go on.' }, stream);
    const third = await turn({ model, previous_response_id: second.id, instructions: 'Be formal.', input: 'Once more.' }, stream);
    expect(third.output_text).toBe('Three.');
    expect(new Set([first.id, second.id, third.id]).size).toBe(3);

    const [one, two, three] = fake.accepted().map((request) => transcriptOf(kind, request.body));
    expect(one).toEqual([
      { role: 'system', text: 'Count.' },
      { role: 'user', text: 'Start.' },
    ]);
    expect(two).toEqual([
      { role: 'user', text: 'Start.' },
      { role: 'assistant', text: 'One.' },
      { role: 'user', text: 'Go on.' },
    ]);
    expect(three).toEqual([
      { role: 'system', text: 'Be formal.' },
      { role: 'user', text: 'Start.' },
      { role: 'assistant', text: 'One.' },
      { role: 'user', text: 'Go on.' },
      { role: 'assistant', text: 'Two.' },
      { role: 'user', text: 'Once more.' },
    ]);
  });

  it.each(UPSTREAMS)('answers a tool call on the %s upstream with only the function_call_output', async (kind) => {
    const model = STATEFUL[kind];
    const fake = h.upstreams[kind].fake;
    const tools: FunctionTool[] = [{ type: 'function', name: 'get_weather', parameters: WEATHER_SCHEMA, strict: false }];
    fake.reply({ toolCalls: [{ name: 'get_weather', args: ['{"city":', '"Paris"}'] }] }, { text: ['18°C in Paris.'] });
    const first = await turn({ model, tools, input: 'Weather in Paris?' }, stream);
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ name: 'get_weather', arguments: '{"city":"Paris"}' });

    const second = await turn(
      { model, tools, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call!.call_id, output: '18°C' }] },
      stream,
    );
    expect(second.output_text).toBe('18°C in Paris.');
    const exchange = toolExchange(kind, fake.last().body);
    expect(exchange.calls).toEqual([{ id: call!.call_id, name: 'get_weather', input: { city: 'Paris' } }]);
    expect(exchange.results).toEqual([{ id: call!.call_id, output: '18°C' }]);
  });

  it('does not store a response created with store: false', async () => {
    h.upstreams.chat.fake.reply({ text: ['Not kept.'] });
    const first = await turn({ model: STATEFUL.chat, input: 'Hi', store: false }, stream);
    expect(first.output_text).toBe('Not kept.');
    const error = await turn({ model: STATEFUL.chat, previous_response_id: first.id, input: 'Again' }, stream).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error).toMatchObject({ status: 404, param: 'previous_response_id', code: 'previous_response_not_found' });
    expect(h.upstreams.chat.fake.requests).toHaveLength(1);
  });
});

describe('previous_response_id refusals', () => {
  it('answers 404 in the OpenAI shape for an unknown id, before any upstream call', async () => {
    const response = await rawRequest(h.url, 'responses', STATEFUL.chat, { extra: { previous_response_id: 'resp_unknown' } });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: {
        message: "Previous response with id 'resp_unknown' not found.",
        type: 'invalid_request_error',
        param: 'previous_response_id',
        code: 'previous_response_not_found',
      },
    });
    for (const kind of UPSTREAMS) expect(h.upstreams[kind].fake.requests).toHaveLength(0);
  });

  it('keeps answering 400 on a model not configured for it, as the spec says of current models', async () => {
    h.upstreams.chat.fake.reply({ text: ['Hi.'] });
    const first = await h.openai.responses.create({ model: STATEFUL.chat, input: 'Hi' });
    for (const kind of UPSTREAMS) {
      const error = await h.openai.responses
        .create({ model: h.upstreams[kind].model, previous_response_id: first.id, input: 'Again' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ status: 400, param: 'previous_response_id', code: 'unsupported_parameter' });
    }
    expect(h.upstreams.chat.fake.requests).toHaveLength(1);
  });

  it('does not store a failed response', async () => {
    h.upstreams.chat.fake.reply({ text: ['Hel', 'lo'], streamError: { after: 1, status: 500, message: 'upstream broke' } });
    const stream = h.openai.responses.stream({ model: STATEFUL.chat, input: 'Hi' });
    let id: string | undefined;
    stream.on('response.created', (event) => (id = event.response.id));
    await stream.finalResponse().catch(() => undefined);
    expect(id).toMatch(/^resp_/);
    const error = await h.openai.responses.create({ model: STATEFUL.chat, previous_response_id: id!, input: 'Again' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('previous_response_id across keys', () => {
  let gateway: Gateway;
  let served: Served;
  const clients: Record<'owner' | 'other', OpenAI> = {} as never;
  beforeAll(async () => {
    gateway = createGateway({
      keys: [{ key: 'sk-owner' }, { key: 'sk-other' }],
      providers: { 'oai-chat': createOpenAIProvider({ baseURL: h.upstreams.chat.fake.url + '/v1', apiKey: 'up-key', responses: false }) },
      models: [{ id: STATEFUL.chat, provider: 'oai-chat', upstreamModel: 'gpt-4.1', previousResponseId: true }],
      responseStore: new MemoryResponseStore(),
      logger: false,
    });
    served = await serve(gateway);
    clients.owner = new OpenAI({ baseURL: served.url + '/v1', apiKey: 'sk-owner', maxRetries: 0 });
    clients.other = new OpenAI({ baseURL: served.url + '/v1', apiKey: 'sk-other', maxRetries: 0 });
  });
  afterAll(async () => {
    await served.close();
    await gateway.dispose();
    await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
  });

  it('answers another key 404, exactly as for an unknown id, and lets the owner continue', async () => {
    h.upstreams.chat.fake.reply({ text: ['Secret kept.'] });
    const first = await clients.owner.responses.create({ model: STATEFUL.chat, input: 'The code is 1234.' });

    const asOther = await fetch(served.url + '/v1/responses', {
      method: 'POST',
      headers: { authorization: 'Bearer sk-other', 'content-type': 'application/json' },
      body: JSON.stringify({ model: STATEFUL.chat, previous_response_id: first.id, input: 'What is the code?' }),
    });
    const unknown = await fetch(served.url + '/v1/responses', {
      method: 'POST',
      headers: { authorization: 'Bearer sk-other', 'content-type': 'application/json' },
      body: JSON.stringify({ model: STATEFUL.chat, previous_response_id: 'resp_unknown', input: 'What is the code?' }),
    });
    expect(asOther.status).toBe(404);
    expect(unknown.status).toBe(404);
    const [otherBody, unknownBody] = (await Promise.all([asOther.json(), unknown.json()])) as Json[];
    expect(otherBody).toEqual({
      error: {
        message: `Previous response with id '${first.id}' not found.`,
        type: 'invalid_request_error',
        param: 'previous_response_id',
        code: 'previous_response_not_found',
      },
    });
    expect({ ...otherBody!.error, message: undefined }).toEqual({ ...unknownBody!.error, message: undefined });
    expect(JSON.stringify(otherBody)).not.toContain('1234');

    const error = await clients.other.responses.create({ model: STATEFUL.chat, previous_response_id: first.id, input: 'Code?' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(h.upstreams.chat.fake.requests).toHaveLength(1);

    h.upstreams.chat.fake.reply({ text: ['It is 1234.'] });
    const second = await clients.owner.responses.create({ model: STATEFUL.chat, previous_response_id: first.id, input: 'What is the code?' });
    expect(second.output_text).toBe('It is 1234.');
  });
});

const targets = await redisTargets();

describe.each(targets)('previous_response_id through Redis ($name)', (target) => {
  afterAll(() => target.close());

  it('continues on another gateway instance that shares the RedisResponseStore', async () => {
    const keyPrefix = `infergate-test-${randomBytes(4).toString('hex')}:`;
    const stores = [0, 1].map(() => new RedisResponseStore({ ...target.connection, keyPrefix }));
    const gateways = stores.map((responseStore) =>
      createGateway({
        keys: [{ key: 'sk-test' }],
        providers: { 'oai-chat': createOpenAIProvider({ baseURL: h.upstreams.chat.fake.url + '/v1', apiKey: 'up-key', responses: false }) },
        models: [{ id: STATEFUL.chat, provider: 'oai-chat', upstreamModel: 'gpt-4.1', previousResponseId: true }],
        responseStore,
        logger: false,
      }),
    );
    const servers = await Promise.all(gateways.map((gateway) => serve(gateway)));
    try {
      const [a, b] = servers.map((server) => new OpenAI({ baseURL: server.url + '/v1', apiKey: 'sk-test', maxRetries: 0 }));
      h.upstreams.chat.fake.reply({ text: ['Noted.'] }, { text: ['Blue.'] });
      const first = await a!.responses.stream({ model: STATEFUL.chat, instructions: 'Be brief.', input: 'My favourite colour is blue.' }).finalResponse();
      const second = await b!.responses.create({ model: STATEFUL.chat, previous_response_id: first.id, input: 'Which colour?' });
      expect(second.output_text).toBe('Blue.');
      expect(transcriptOf('chat', h.upstreams.chat.fake.last().body)).toEqual([
        { role: 'user', text: 'My favourite colour is blue.' },
        { role: 'assistant', text: 'Noted.' },
        { role: 'user', text: 'Which colour?' },
      ]);
    } finally {
      for (const server of servers) await server.close();
      for (const gateway of gateways) {
        await gateway.dispose();
        await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
      }
      for (const store of stores) await store.close();
      const cleanup = target.client();
      await Promise.all((await target.keys(`${keyPrefix}*`)).map((key) => cleanup.del(key)));
    }
  });
});
