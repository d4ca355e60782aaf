import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { expect } from 'vitest';
import { keyId } from '../../src/auth/key-store.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { GatewayOptions, UsageEvent } from '../../src/options.js';
import { scopedPromptCacheKey } from '../../src/policy/prompt-cache-key.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import type { Provider } from '../../src/providers/provider.js';
import type { ModelEntry } from '../../src/routing/model.js';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream, NeutralUsage, UpstreamErrorSpec } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';

type Json = Record<string, any>;

export type ClientProtocol = 'chat' | 'responses' | 'messages';

/**
 * The three upstream protocols:
 * - `chat`: an OpenAI-compatible server with Chat Completions only (`responses: false`);
 * - `responses`: a Responses-only server (`responses: true, chat: false`): every client protocol
 *   but Responses is translated through Responses;
 * - `anthropic`: the Messages API.
 */
export type UpstreamKind = 'chat' | 'responses' | 'anthropic';
export const UPSTREAMS: readonly UpstreamKind[] = ['chat', 'responses', 'anthropic'];

export interface Upstream {
  kind: UpstreamKind;
  /** Public model id routed to it. */
  model: string;
  upstreamModel: string;
  fake: FakeUpstream;
  path: string;
}

export interface Harness {
  url: string;
  gateway: Gateway;
  upstreams: Record<UpstreamKind, Upstream>;
  openai: OpenAI;
  anthropic: Anthropic;
  usage: UsageEvent[];
  reset(): void;
  close(): Promise<void>;
}

/** The client protocol whose body the upstream gets unchanged (model mapped). */
export const NATIVE: Record<UpstreamKind, ClientProtocol> = { chat: 'chat', responses: 'responses', anthropic: 'messages' };

/** What the upstream gets for a client's `prompt_cache_key`: the harness key's own (`policy/prompt-cache-key.ts`). */
export function scopedCacheKey(value: string): string {
  return scopedPromptCacheKey({ prompt_cache_key: value }, { id: keyId(HARNESS_KEY), models: '*' }, 'key').prompt_cache_key as string;
}

const HARNESS_KEY = 'sk-test';

export interface HarnessOptions {
  /** More providers (given the fakes' base URLs) and models, e.g. a provider with short timeouts. */
  providers?: (urls: Record<UpstreamKind, string>) => Record<string, Provider>;
  models?: ModelEntry[];
  /** More gateway options (e.g. `captureContent`). */
  gateway?: Partial<GatewayOptions>;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const [chatFake, responsesFake, anthropicFake] = await Promise.all([
    startFakeOpenAI({ endpoints: ['chat'] }),
    startFakeOpenAI({ endpoints: ['responses'] }),
    startFakeAnthropic(),
  ]);
  const usage: UsageEvent[] = [];
  const gateway = createGateway({
    keys: [{ key: HARNESS_KEY }],
    providers: {
      'oai-chat': createOpenAIProvider({ baseURL: chatFake.url + '/v1', apiKey: 'up-key', responses: false }),
      'oai-responses': createOpenAIProvider({ baseURL: responsesFake.url + '/v1', apiKey: 'up-key', responses: true, chat: false }),
      claude: createAnthropicProvider({ baseURL: anthropicFake.url, apiKey: 'up-key' }),
      ...options.providers?.({ chat: chatFake.url, responses: responsesFake.url, anthropic: anthropicFake.url }),
    },
    models: [
      { id: 'gpt-chat', provider: 'oai-chat', upstreamModel: 'gpt-4.1' },
      { id: 'gpt-resp', provider: 'oai-responses', upstreamModel: 'gpt-5' },
      { id: 'claude', provider: 'claude', upstreamModel: 'claude-sonnet-4-5' },
      ...(options.models ?? []),
    ],
    logger: false,
    hooks: { onUsage: (event) => void usage.push(event) },
    ...options.gateway,
  });
  const served: Served = await serve(gateway);
  const upstreams: Record<UpstreamKind, Upstream> = {
    chat: { kind: 'chat', model: 'gpt-chat', upstreamModel: 'gpt-4.1', fake: chatFake, path: '/v1/chat/completions' },
    responses: { kind: 'responses', model: 'gpt-resp', upstreamModel: 'gpt-5', fake: responsesFake, path: '/v1/responses' },
    anthropic: { kind: 'anthropic', model: 'claude', upstreamModel: 'claude-sonnet-4-5', fake: anthropicFake, path: '/v1/messages' },
  };
  return {
    url: served.url,
    gateway,
    upstreams,
    openai: new OpenAI({ baseURL: served.url + '/v1', apiKey: 'sk-test', maxRetries: 0 }),
    anthropic: new Anthropic({ baseURL: served.url, apiKey: 'sk-test', maxRetries: 0 }),
    usage,
    reset() {
      for (const upstream of Object.values(upstreams)) upstream.fake.reset();
      usage.length = 0;
    },
    async close() {
      await served.close();
      await Promise.all(Object.values(upstreams).map((upstream) => upstream.fake.close()));
      await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
    },
  };
}

// ---- what the upstream received, in neutral terms ------------------------------------------

export interface ToolExchange {
  calls: { id: string; name: string; input: unknown }[];
  results: { id: string; output: string }[];
}

/**
 * The two-call tool loop the client tests run (the weather in Paris, the time there) as the
 * upstream must have received it on the second turn, matched by the calls' ids.
 */
export function weatherAndTimeExchange(weatherId: string, timeId: string): ToolExchange {
  return {
    calls: [
      { id: weatherId, name: 'get_weather', input: { city: 'Paris' } },
      { id: timeId, name: 'get_time', input: { tz: 'Europe/Paris' } },
    ],
    results: [
      { id: weatherId, output: '18°C' },
      { id: timeId, output: '14:05' },
    ],
  };
}

/**
 * The tool calls replayed and the results sent, by tool name (for clients whose call ids are
 * their SDK's own), a Gemini body read as well as the other protocols.
 */
export function toolExchangeByName(
  kind: UpstreamKind | 'gemini',
  body: Json,
): { calls: { name: string; input: unknown }[]; results: { name: string; output: string }[] } {
  if (kind !== 'gemini') {
    const exchange = toolExchange(kind, body);
    const names = new Map(exchange.calls.map((call) => [call.id, call.name]));
    return {
      calls: exchange.calls.map(({ name, input }) => ({ name, input })),
      results: exchange.results.map(({ id, output }) => ({ name: names.get(id) ?? `unknown ${id}`, output })),
    };
  }
  const parts: Json[] = body.contents.flatMap((content: Json) => content.parts);
  return {
    calls: parts.filter((part) => part.functionCall).map((part) => ({ name: part.functionCall.name, input: part.functionCall.args })),
    results: parts
      .filter((part) => part.functionResponse)
      .map((part) => ({ name: part.functionResponse.name, output: JSON.stringify(part.functionResponse.response) })),
  };
}

/** The same loop matched by tool name, for clients whose call ids are their SDK's own. */
export function weatherAndTimeByName(): { calls: unknown[]; results: unknown[] } {
  return {
    calls: [
      { name: 'get_weather', input: { city: 'Paris' } },
      { name: 'get_time', input: { tz: 'Europe/Paris' } },
    ],
    results: [
      { name: 'get_weather', output: expect.stringContaining('18°C') },
      { name: 'get_time', output: expect.stringContaining('14:05') },
    ],
  };
}

/** The tool calls replayed and the tool results sent, however the upstream protocol words them. */
export function toolExchange(kind: UpstreamKind, body: Json): ToolExchange {
  const calls: ToolExchange['calls'] = [];
  const results: ToolExchange['results'] = [];
  const text = (content: unknown): string =>
    typeof content === 'string' ? content : Array.isArray(content) ? content.map((part: Json) => part.text ?? '').join('') : '';
  if (kind === 'chat') {
    for (const message of body.messages) {
      for (const call of message.tool_calls ?? []) calls.push({ id: call.id, name: call.function.name, input: JSON.parse(call.function.arguments) });
      if (message.role === 'tool') results.push({ id: message.tool_call_id, output: text(message.content) });
    }
  } else if (kind === 'responses') {
    for (const item of body.input) {
      if (item.type === 'function_call') calls.push({ id: item.call_id, name: item.name, input: JSON.parse(item.arguments) });
      if (item.type === 'function_call_output') results.push({ id: item.call_id, output: text(item.output) });
    }
  } else {
    for (const message of body.messages) {
      if (typeof message.content === 'string') continue;
      for (const block of message.content) {
        if (block.type === 'tool_use') calls.push({ id: block.id, name: block.name, input: block.input });
        if (block.type === 'tool_result') results.push({ id: block.tool_use_id, output: text(block.content) });
      }
    }
  }
  return { calls, results };
}

/** The system prompt and the user texts the upstream received. */
export function promptOf(kind: UpstreamKind, body: Json): { system: string; user: string[] } {
  const text = (content: unknown): string =>
    typeof content === 'string' ? content : Array.isArray(content) ? content.map((part: Json) => part.text ?? '').join('') : '';
  if (kind === 'anthropic') {
    return {
      system: text(body.system),
      user: body.messages
        .filter((m: Json) => m.role === 'user')
        .map((m: Json) => text(m.content))
        .filter((t: string) => t !== ''),
    };
  }
  if (kind === 'chat') {
    return {
      system: body.messages
        .filter((m: Json) => m.role === 'system' || m.role === 'developer')
        .map((m: Json) => text(m.content))
        .join('\n\n'),
      user: body.messages.filter((m: Json) => m.role === 'user').map((m: Json) => text(m.content)),
    };
  }
  const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  const system = [body.instructions, ...input.filter((m: Json) => m.role === 'system' || m.role === 'developer').map((m: Json) => text(m.content))];
  return {
    system: system.filter((t) => typeof t === 'string' && t !== '').join('\n\n'),
    user: input.filter((m: Json) => m.role === 'user').map((m: Json) => text(m.content)),
  };
}

// ---- usage as each client protocol must show it ---------------------------------------------

/**
 * Usage the upstream reports for a neutral script (OpenAI upstreams have no cache-write counter;
 * Anthropic's input excludes both cache counters), as each client protocol must show it.
 */
export function expectedUsage(kind: UpstreamKind, client: ClientProtocol, usage: Required<NeutralUsage>): Json {
  const cacheWrite = kind === 'anthropic' ? usage.cacheWrite : 0;
  // Reasoning is an OpenAI counter; Anthropic reports none (thinking is inside output_tokens).
  const reasoning = kind === 'anthropic' ? 0 : usage.reasoning;
  switch (client) {
    case 'chat':
      return {
        prompt_tokens: usage.input,
        completion_tokens: usage.output,
        total_tokens: usage.input + usage.output,
        prompt_tokens_details: expect.objectContaining({ cached_tokens: usage.cachedRead, ...(cacheWrite ? { cache_write_tokens: cacheWrite } : {}) }),
        completion_tokens_details: expect.objectContaining({ reasoning_tokens: reasoning }),
      };
    case 'responses':
      return {
        input_tokens: usage.input,
        input_tokens_details: expect.objectContaining({ cached_tokens: usage.cachedRead, ...(cacheWrite ? { cache_write_tokens: cacheWrite } : {}) }),
        output_tokens: usage.output,
        output_tokens_details: expect.objectContaining({ reasoning_tokens: reasoning }),
        total_tokens: usage.input + usage.output,
      };
    case 'messages':
      return {
        input_tokens: usage.input - usage.cachedRead - cacheWrite,
        cache_read_input_tokens: usage.cachedRead,
        cache_creation_input_tokens: cacheWrite,
        output_tokens: usage.output,
      };
  }
}

// ---- shared scripts ---------------------------------------------------------------------------

/** Non-zero cache and reasoning counters, so a wrong conversion shows. */
export const USAGE: Required<NeutralUsage> = { input: 1300, cachedRead: 1000, cacheWrite: 200, output: 57, reasoning: 20 };

/** Two parallel calls with their arguments in fragments, with ids in the upstream's style. */
export function parallelCalls(kind: UpstreamKind): { id: string; name: string; args: string[] }[] {
  const [a, b] = kind === 'anthropic' ? ['toolu_01Weather', 'toolu_01Time'] : ['call_Weather', 'call_Time'];
  return [
    { id: a!, name: 'get_weather', args: ['{"city":', ' "Par', 'is"}'] },
    { id: b!, name: 'get_time', args: ['{"tz":"Europe/', 'Paris"}'] },
  ];
}

export const WEATHER_SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
export const TIME_SCHEMA = { type: 'object', properties: { tz: { type: 'string' } }, required: ['tz'] };

/** Frames of a rendered text stream up to and including its second text delta. */
export const THROUGH_SECOND_DELTA: Record<UpstreamKind, number> = { chat: 3, responses: 6, anthropic: 5 };

/** A 429 with the retry headers of each upstream family. */
export function rateLimited(kind: UpstreamKind): UpstreamErrorSpec {
  return {
    status: 429,
    message: 'Rate limit reached for requests. Please try again in 7s.',
    type: kind === 'anthropic' ? 'rate_limit_error' : 'requests',
    code: kind === 'anthropic' ? null : 'rate_limit_exceeded',
    headers:
      kind === 'anthropic'
        ? { 'retry-after': '7', 'anthropic-ratelimit-requests-remaining': '0', 'anthropic-ratelimit-requests-reset': '2026-01-01T00:00:07Z' }
        : { 'retry-after': '7', 'retry-after-ms': '7000', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '7s' },
  };
}

/** The upstream credential went upstream, never the client's key. */
export function expectUpstreamCredentials(kind: UpstreamKind, headers: Record<string, string>): void {
  if (kind === 'anthropic') {
    expect(headers['x-api-key']).toBe('up-key');
    expect(headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  } else {
    expect(headers.authorization).toBe('Bearer up-key');
  }
  expect(JSON.stringify(headers)).not.toContain('sk-test');
}

export const CLIENTS: readonly ClientProtocol[] = ['chat', 'responses', 'messages'];
export const CLIENT_PATHS: Record<ClientProtocol, string> = { chat: '/v1/chat/completions', responses: '/v1/responses', messages: '/v1/messages' };

/** A minimal request of a client protocol over plain fetch, for what SDKs hide (raw frames, aborts). */
export function rawRequest(
  url: string,
  client: ClientProtocol,
  model: string,
  init: { stream?: boolean; signal?: AbortSignal; extra?: Json } = {},
): Promise<Response> {
  const stream = init.stream ?? false;
  const body =
    client === 'chat'
      ? { model, messages: [{ role: 'user', content: 'Hi' }], stream }
      : client === 'responses'
        ? { model, input: 'Hi', stream }
        : { model, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }], stream };
  const auth: Record<string, string> =
    client === 'messages' ? { 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01' } : { authorization: 'Bearer sk-test' };
  return fetch(url + CLIENT_PATHS[client], {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify({ ...body, ...init.extra }),
    ...(init.signal ? { signal: init.signal } : {}),
  });
}

/** Resolves when the promise does, or fails the test after `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
    }),
  ]);
}
