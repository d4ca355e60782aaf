import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { recorded } from '../fakes/fake-server.js';
import { freePort } from '../helpers/serve.js';
import { checkMessagesStream, checkResponsesStream, parseSse } from '../protocols/helpers.js';
import {
  CLIENTS,
  NATIVE,
  parallelCalls,
  rawRequest,
  startHarness,
  THROUGH_SECOND_DELTA,
  UPSTREAMS,
  within,
  type ClientProtocol,
  type Harness,
  type UpstreamKind,
} from './harness.js';

/** Failure paths over the whole matrix: aborts, cuts, timeouts, refused connections, model rules. */
let h: Harness;
let closedPort: number;
beforeAll(async () => {
  closedPort = await freePort();
  h = await startHarness({
    providers: (urls) => ({
      'slow-oai': createOpenAIProvider({ baseURL: urls.chat + '/v1', apiKey: 'up-key', responses: false, timeouts: { headersMs: 150, bodyMs: 300 } }),
      'slow-claude': createAnthropicProvider({ baseURL: urls.anthropic, apiKey: 'up-key', timeouts: { headersMs: 150, bodyMs: 300 } }),
      'gone-oai': createOpenAIProvider({ baseURL: `http://127.0.0.1:${closedPort}/v1`, apiKey: 'up-key' }),
      'gone-claude': createAnthropicProvider({ baseURL: `http://127.0.0.1:${closedPort}`, apiKey: 'up-key' }),
      'wrong-key': createOpenAIProvider({ baseURL: urls.responses + '/v1', apiKey: 'up-key-revoked', responses: true, chat: false }),
    }),
    models: [
      { id: 'slow-gpt', provider: 'slow-oai', upstreamModel: 'gpt-4.1' },
      { id: 'slow-claude', provider: 'slow-claude', upstreamModel: 'claude-sonnet-4-5' },
      { id: 'gone-gpt', provider: 'gone-oai', upstreamModel: 'gpt-4.1' },
      { id: 'gone-claude', provider: 'gone-claude', upstreamModel: 'claude-sonnet-4-5' },
      { id: 'wrong-key', provider: 'wrong-key', upstreamModel: 'gpt-5' },
      { id: 'gpt-resp-stateful', provider: 'oai-responses', upstreamModel: 'gpt-5', previousResponseId: true, serviceTierAuto: true },
    ],
  });
});
afterAll(() => h.close());
beforeEach(() => h.reset());

const cells = CLIENTS.flatMap((client) => UPSTREAMS.map((kind) => [client, kind] as [ClientProtocol, UpstreamKind]));

/** What the client sees of an error, in the route's shape. */
async function errorOf(client: ClientProtocol, response: Response): Promise<{ status: number; type: string; message: string; code?: string | null }> {
  const json = (await response.json()) as any;
  if (client === 'messages') {
    expect(json.type).toBe('error');
    return { status: response.status, type: json.error.type, message: json.error.message };
  }
  expect(Object.keys(json.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  return { status: response.status, type: json.error.type, message: json.error.message, code: json.error.code };
}

describe('client disconnect aborts the upstream at once', () => {
  it.each(cells)('%s client → %s upstream, mid-stream', async (client, kind) => {
    const up = h.upstreams[kind];
    up.fake.reply({ text: ['Once', ' upon', ' a time'], stallAfter: THROUGH_SECOND_DELTA[kind] });
    const controller = new AbortController();
    const response = await rawRequest(h.url, client, up.model, { stream: true, signal: controller.signal });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let seen = '';
    while (!seen.includes('upon')) seen += new TextDecoder().decode((await reader.read()).value);
    controller.abort();

    const upstream = up.fake.last();
    await within(upstream.closed, 2000, 'the upstream connection close');
    expect(upstream.closedEarly).toBe(true);
  });

  it.each(cells.flatMap(([client, kind]) => [false, true].map((stream) => [client, kind, stream] as const)))(
    '%s client → %s upstream, waiting for the headers (stream: %s)',
    async (client, kind, stream) => {
      const up = h.upstreams[kind];
      up.fake.reply({ hang: true });
      const controller = new AbortController();
      const pending = rawRequest(h.url, client, up.model, { stream, signal: controller.signal }).catch((error: unknown) => error);
      await expect.poll(() => up.fake.accepted().length).toBe(1);
      controller.abort();
      expect(await pending).toMatchObject({ name: 'AbortError' });

      const upstream = up.fake.last();
      await within(upstream.closed, 2000, 'the upstream connection close');
      expect(upstream.closedEarly).toBe(true);
    },
  );
});

describe('a cut or failed upstream stream never looks complete', () => {
  it.each(cells)('%s client → %s upstream: the raw stream ends with the protocol error event', async (client, kind) => {
    const up = h.upstreams[kind];
    up.fake.reply({ text: ['Once', ' upon', ' a time'], cutAfter: THROUGH_SECOND_DELTA[kind] });
    const response = await rawRequest(h.url, client, up.model, { stream: true });
    expect(response.status).toBe(200);
    const text = await response.text();
    const frames = parseSse(text);
    const last = frames.at(-1)!;
    if (client === 'chat') {
      expect(JSON.parse(last.data).error.message).toBeTypeOf('string');
      expect(text).not.toContain('[DONE]');
      expect(text).not.toContain('"finish_reason":"stop"');
    } else if (client === 'responses') {
      const events = frames.map((frame) => JSON.parse(frame.data));
      expect(events.some((event) => event.type === 'error')).toBe(true);
      expect(events.some((event) => event.type === 'response.completed')).toBe(false);
    } else {
      expect(last.event).toBe('error');
      expect(text).not.toContain('message_stop');
    }
  });

  it.each(CLIENTS)('%s client: a Chat upstream that ends after the finish chunk without [DONE] still completes', async (client) => {
    const recording = recorded('chat-parallel-tools.txt').replace('data: [DONE]\n\n', '');
    h.upstreams.chat.fake.reply({ raw: recording });
    const text = await (await rawRequest(h.url, client, 'gpt-chat', { stream: true })).text();
    expect(text).not.toMatch(/"error":\{|event: error/);
    await expect.poll(() => h.usage.length).toBe(1);
    expect(h.usage[0]).toMatchObject({ status: 'ok', usage: { input: 82, output: 47 } });
  });

  it.each(UPSTREAMS)('a JSON answer cut halfway from a %s upstream is a 502', async (kind) => {
    for (const client of CLIENTS) {
      h.upstreams[kind].fake.reply({ text: ['Hello'], cutAfter: 1 });
      const error = await errorOf(client, await rawRequest(h.url, client, h.upstreams[kind].model));
      expect(error.status).toBe(502);
    }
  });
});

describe('what a stream reports', () => {
  it.each(cells)('%s client → %s upstream: an upstream error event is reported to onUsage as an error', async (client, kind) => {
    const up = h.upstreams[kind];
    up.fake.reply({
      text: ['Once', ' upon'],
      usage: { input: 9, output: 2 },
      streamError: { after: THROUGH_SECOND_DELTA[kind], message: 'boom', type: 'server_error' },
    });
    const text = await (await rawRequest(h.url, client, up.model, { stream: true })).text();
    expect(text).toContain('boom');
    await expect.poll(() => h.usage.length).toBe(1);
    expect(h.usage[0]!.status).toBe('error');
  });

  it.each([false, true])('a Chat upstream’s error frame written `{ "error": … }` fails the passed-through stream (then [DONE]: %s)', async (done) => {
    const delta = {
      id: 'c1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4.1',
      choices: [{ index: 0, delta: { role: 'assistant', content: 'Once' }, finish_reason: null }],
    };
    const spacedError = '{ "error": { "message": "boom", "type": "server_error", "param": null, "code": null } }';
    h.upstreams.chat.fake.reply({ raw: `data: ${JSON.stringify(delta)}\n\ndata: ${spacedError}\n\n` + (done ? 'data: [DONE]\n\n' : '') });
    const text = await (await rawRequest(h.url, 'chat', 'gpt-chat', { stream: true })).text();
    // The upstream's own error is the end: no second error frame claiming a cut stream.
    const errors = parseSse(text).filter((frame) => frame.data !== '[DONE]' && JSON.parse(frame.data).error);
    expect(errors.map((frame) => JSON.parse(frame.data).error.message)).toEqual(['boom']);
    await expect.poll(() => h.usage.length).toBe(1);
    expect(h.usage[0]!.status).toBe('error');
  });

  it.each(cells)('%s client → %s upstream: an answer cut by max tokens says so', async (client, kind) => {
    for (const stream of [false, true]) {
      h.upstreams[kind].fake.reply({ text: ['Once upon'], finish: 'length' });
      const response = await rawRequest(h.url, client, h.upstreams[kind].model, { stream });
      const text = await response.text();
      if (client === 'chat') expect(text).toContain('"finish_reason":"length"');
      else if (client === 'responses') expect(text).toMatch(/"status":"incomplete".*"incomplete_details":\{"reason":"max_output_tokens"\}/s);
      else expect(text).toContain('"stop_reason":"max_tokens"');
    }
  });

  it.each(CLIENTS.filter((client) => client !== 'messages'))(
    '%s client: a no-argument tool call streamed by Anthropic has "{}" as arguments',
    async (client) => {
      for (const stream of [false, true]) {
        h.upstreams.anthropic.fake.reply({ toolCalls: [{ name: 'get_time', args: [] }] });
        const text = await (await rawRequest(h.url, client, 'claude', { stream })).text();
        if (client === 'chat' && stream) {
          const fragments = parseSse(text)
            .filter((frame) => frame.data !== '[DONE]')
            .flatMap((frame) => JSON.parse(frame.data).choices[0]?.delta.tool_calls ?? [])
            .map((call: any) => call.function.arguments);
          expect(fragments.join(''), `stream: ${stream}`).toBe('{}');
        } else if (client === 'chat') {
          expect(JSON.parse(text).choices[0].message.tool_calls[0].function.arguments).toBe('{}');
        } else {
          const response = stream ? checkResponsesStream(text).at(-1)!.response : JSON.parse(text);
          expect(response.output[0].arguments, `stream: ${stream}`).toBe('{}');
        }
      }
    },
  );
});

describe('translated and passed-through streams keep every SDK invariant', () => {
  it.each(cells)('%s client → %s upstream: reasoning, text and two tool calls', async (client, kind) => {
    const up = h.upstreams[kind];
    up.fake.reply({
      reasoning: ['Think', 'ing.'],
      text: ['Let me ', 'check.'],
      toolCalls: [
        { name: 'get_weather', args: ['{"city":', '"Paris"}'] },
        { name: 'get_time', args: ['{}'] },
      ],
    });
    const response = await rawRequest(h.url, client, up.model, { stream: true, extra: client === 'chat' ? { stream_options: { include_usage: true } } : {} });
    const text = await response.text();
    if (client === 'responses') {
      const events = checkResponsesStream(text);
      const output = events.at(-1)!.response.output;
      expect(output.filter((item: any) => item.type === 'function_call').map((item: any) => [item.name, item.arguments])).toEqual([
        ['get_weather', '{"city":"Paris"}'],
        ['get_time', '{}'],
      ]);
    } else if (client === 'messages') {
      const events = checkMessagesStream(text);
      expect(events.at(-1)!.type).toBe('message_stop');
      const blocks = events.filter((event) => event.type === 'content_block_start').map((event) => event.content_block.type);
      expect(blocks.filter((type) => type === 'tool_use')).toHaveLength(2);
    } else {
      const frames = parseSse(text);
      expect(frames.at(-1)!.data).toBe('[DONE]');
      const chunks = frames.slice(0, -1).map((frame) => JSON.parse(frame.data));
      expect(chunks[0].choices[0].delta.role).toBe('assistant');
      const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
      expect(calls.filter((call: any) => call.id).map((call: any) => [call.index, call.function.name])).toEqual([
        [0, 'get_weather'],
        [1, 'get_time'],
      ]);
      expect(chunks.some((chunk) => chunk.choices[0]?.finish_reason === 'tool_calls')).toBe(true);
      expect(chunks.at(-1).usage.completion_tokens).toBeTypeOf('number');
    }
  });
});

describe('JSON answers', () => {
  it.each(cells)('%s client → %s upstream: reasoning, text and two tool calls', async (client, kind) => {
    const up = h.upstreams[kind];
    up.fake.reply({ reasoning: ['Thinking.'], text: ['Let me ', 'check.'], toolCalls: parallelCalls(kind) });
    const json = (await (await rawRequest(h.url, client, up.model)).json()) as any;
    const calls: [string, string, unknown][] =
      client === 'chat'
        ? json.choices[0].message.tool_calls.map((call: any) => [call.id, call.function.name, JSON.parse(call.function.arguments)])
        : client === 'responses'
          ? json.output.filter((item: any) => item.type === 'function_call').map((item: any) => [item.call_id, item.name, JSON.parse(item.arguments)])
          : json.content.filter((block: any) => block.type === 'tool_use').map((block: any) => [block.id, block.name, block.input]);
    expect(calls).toEqual(parallelCalls(kind).map((call) => [call.id, call.name, JSON.parse(call.args.join(''))]));
    const text =
      client === 'chat'
        ? json.choices[0].message.content
        : client === 'responses'
          ? json.output
              .filter((item: any) => item.type === 'message')
              .flatMap((item: any) => item.content.map((part: any) => part.text))
              .join('')
          : json.content
              .filter((block: any) => block.type === 'text')
              .map((block: any) => block.text)
              .join('');
    expect(text).toBe('Let me check.');
    const finish = client === 'chat' ? json.choices[0].finish_reason : client === 'responses' ? json.status : json.stop_reason;
    expect(finish).toBe({ chat: 'tool_calls', responses: 'completed', messages: 'tool_use' }[client]);
  });
});

describe('recorded upstream streams', () => {
  it.each([
    ['chat', 'chat-parallel-tools.txt'],
    ['responses', 'responses-reasoning-tool.txt'],
    ['anthropic', 'anthropic-thinking-text-tool.txt'],
  ] as [UpstreamKind, string][])('a %s recording (%s) reaches a passthrough client byte for byte', async (kind, name) => {
    const recording = recorded(name);
    h.upstreams[kind].fake.reply({ raw: recording });
    const extra = kind === 'chat' ? { stream_options: { include_usage: true } } : {};
    const response = await rawRequest(h.url, NATIVE[kind], h.upstreams[kind].model, { stream: true, extra });
    expect(await response.text()).toBe(recording);
    await expect.poll(() => h.usage.length).toBe(1);
    expect(h.usage[0]!.status).toBe('ok');
    expect(h.usage[0]!.usage.output).toBeGreaterThan(0);
  });

  it.each([
    ['chat', 'chat-parallel-tools.txt', ['get_weather', 'get_time']],
    ['responses', 'responses-reasoning-tool.txt', ['get_weather']],
    ['anthropic', 'anthropic-thinking-text-tool.txt', ['get_weather']],
  ] as [UpstreamKind, string, string[]][])('a %s recording (%s) translates for the other clients', async (kind, name, toolNames) => {
    for (const client of CLIENTS.filter((c) => c !== NATIVE[kind])) {
      h.upstreams[kind].fake.reply({ raw: recorded(name) });
      const text = await (await rawRequest(h.url, client, h.upstreams[kind].model, { stream: true })).text();
      const names =
        client === 'responses'
          ? checkResponsesStream(text)
              .at(-1)!
              .response.output.filter((item: any) => item.type === 'function_call')
              .map((item: any) => item.name)
          : client === 'messages'
            ? checkMessagesStream(text)
                .filter((event) => event.content_block?.type === 'tool_use')
                .map((event) => event.content_block.name)
            : parseSse(text)
                .filter((frame) => frame.data !== '[DONE]')
                .flatMap((frame) => JSON.parse(frame.data).choices[0]?.delta.tool_calls ?? [])
                .filter((call: any) => call.id)
                .map((call: any) => call.function.name);
      expect(names, `${client} client`).toEqual(toolNames);
    }
  });
});

describe('upstream failures in the route’s error shape', () => {
  it.each(CLIENTS)('%s client: connection refused → 502', async (client) => {
    for (const model of ['gone-gpt', 'gone-claude']) {
      for (const stream of [false, true]) {
        const error = await errorOf(client, await rawRequest(h.url, client, model, { stream }));
        expect(error.status).toBe(502);
        expect(error.message).not.toContain(String(closedPort));
      }
    }
  });

  // undici's timers tick coarsely (about a second), so the combinations run at the same time.
  it('no response headers in time → 504, for every client protocol, JSON or stream', async () => {
    const combos = CLIENTS.flatMap((client) =>
      (['slow-gpt', 'slow-claude'] as const).flatMap((model) => [false, true].map((stream) => ({ client, model, stream }))),
    );
    for (let i = 0; i < combos.length / 2; i++) {
      h.upstreams.chat.fake.reply({ hang: true });
      h.upstreams.anthropic.fake.reply({ hang: true });
    }
    const started = Date.now();
    const errors = await Promise.all(
      combos.map(async ({ client, model, stream }) => ({
        client,
        model,
        stream,
        ...(await errorOf(client, await rawRequest(h.url, client, model, { stream }))),
      })),
    );
    for (const error of errors) expect(error, JSON.stringify(error)).toMatchObject({ status: 504, type: 'timeout_error' });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a stream that goes silent past the body timeout ends with an error event', async () => {
    for (const _ of CLIENTS) h.upstreams.chat.fake.reply({ text: ['Once', ' upon'], stallAfter: THROUGH_SECOND_DELTA.chat });
    const texts = await Promise.all(CLIENTS.map(async (client) => (await rawRequest(h.url, client, 'slow-gpt', { stream: true })).text()));
    CLIENTS.forEach((client, i) => {
      expect(texts[i]).toContain('upon');
      expect(texts[i]).toContain(client === 'messages' ? 'event: error' : 'timeout');
      expect(texts[i]).not.toMatch(/\[DONE\]|message_stop|response\.completed/);
    });
  });

  it.each(CLIENTS)('%s client: an upstream 401 (the gateway’s own credentials) → 502, upstream key never shown', async (client) => {
    const error = await errorOf(client, await rawRequest(h.url, client, 'wrong-key'));
    expect(error.status).toBe(502);
    expect(error.message).not.toMatch(/up-|API key provided/);
  });

  it.each(cells)('%s client → %s upstream: context overflow → 400 context_length_exceeded', async (client, kind) => {
    h.upstreams[kind].fake.reply({
      error:
        kind === 'anthropic'
          ? { status: 400, type: 'invalid_request_error', message: 'prompt is too long: 215023 tokens > 200000 maximum' }
          : {
              status: 400,
              type: 'invalid_request_error',
              code: 'context_length_exceeded',
              message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130218 tokens.",
            },
    });
    const error = await errorOf(client, await rawRequest(h.url, client, h.upstreams[kind].model));
    expect(error.status).toBe(400);
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toMatch(/too long|maximum context length/);
    if (client !== 'messages') expect(error.code).toBe('context_length_exceeded');
  });

  it.each(cells)('%s client → %s upstream: 5xx statuses pass through, the upstream’s words do not', async (client, kind) => {
    for (const status of [500, 503]) {
      h.upstreams[kind].fake.reply({ error: { status, message: `upstream says ${status}` } });
      const error = await errorOf(client, await rawRequest(h.url, client, h.upstreams[kind].model, { stream: status === 503 }));
      expect(error).toMatchObject({ status, message: `The upstream answered with status ${status}.` });
    }
  });
});

describe('model rules answer 400 before any upstream call', () => {
  it.each(['gpt-resp', 'gpt-chat', 'claude'])('previous_response_id on %s', async (model) => {
    const error = await errorOf('responses', await rawRequest(h.url, 'responses', model, { extra: { previous_response_id: 'resp_123' } }));
    expect(error).toMatchObject({ status: 400, code: 'unsupported_parameter' });
    expect(error.message).toContain('previous_response_id');
    for (const kind of UPSTREAMS) expect(h.upstreams[kind].fake.requests).toHaveLength(0);
  });

  it.each(['chat', 'responses'] as const)('service_tier "auto" from a %s client', async (client) => {
    const error = await errorOf(client, await rawRequest(h.url, client, 'gpt-resp', { extra: { service_tier: 'auto' } }));
    expect(error).toMatchObject({ status: 400, code: 'unsupported_value' });
    for (const kind of UPSTREAMS) expect(h.upstreams[kind].fake.requests).toHaveLength(0);
  });

  it('a model that allows them passes service_tier on, and answers previous_response_id from the gateway’s own store', async () => {
    await h.openai.responses.create({ model: 'gpt-resp-stateful', input: 'Hi', service_tier: 'auto' });
    expect(h.upstreams.responses.fake.requests[0]!.body).toMatchObject({ service_tier: 'auto' });
    // An id the gateway never stored for this key is unknown, whatever the upstream may hold.
    const error = await h.openai.responses.create({ model: 'gpt-resp-stateful', input: 'Hi', previous_response_id: 'resp_123' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error).toMatchObject({ param: 'previous_response_id' });
    expect(h.upstreams.responses.fake.requests).toHaveLength(1);
  });
});
