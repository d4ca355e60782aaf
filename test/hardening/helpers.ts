import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import type { Logger } from '../../src/logger.js';
import type { RawExchange } from '../fakes/raw-upstream.js';
import { freePort } from '../helpers/serve.js';
import { CLIENT_PATHS, type ClientProtocol } from '../upstreams/harness.js';

export { within } from '../upstreams/harness.js';
/** A loopback port nothing listens on. */
export const closedPort = freePort;

type Json = Record<string, any>;

export interface LogEntry {
  level: 'info' | 'warn' | 'error';
  message: string;
  fields?: Record<string, unknown>;
}

/** A logger that keeps every entry, and the entries as one string to grep. */
export function captureLogger(): { logger: Logger; entries: LogEntry[]; text(): string } {
  const entries: LogEntry[] = [];
  const log = (level: LogEntry['level']) => (message: string, fields?: Record<string, unknown>) =>
    void entries.push({ level, message, ...(fields ? { fields } : {}) });
  return {
    logger: { info: log('info'), warn: log('warn'), error: log('error') },
    entries,
    text: () => entries.map((entry) => JSON.stringify(entry, errorFields)).join('\n'),
  };
}

/** JSON.stringify replacer that keeps an Error's message, stack and cause (which it drops otherwise). */
function errorFields(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack, cause: value.cause };
  return value;
}

/** A request body of a client protocol whose user text is `marker`, so a raw upstream can tell requests apart. */
export function bodyOf(client: ClientProtocol, model: string, marker: string, stream: boolean): Json {
  if (client === 'chat') return { model, messages: [{ role: 'user', content: marker }], stream };
  if (client === 'responses') return { model, input: marker, stream };
  return { model, max_tokens: 64, messages: [{ role: 'user', content: marker }], stream };
}

export function authOf(client: ClientProtocol, key: string): Record<string, string> {
  return client === 'messages' ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${key}` };
}

/** A client request over plain fetch, to see exactly what a client gets. */
export function send(
  url: string,
  client: ClientProtocol,
  body: Json,
  key: string,
  init: { signal?: AbortSignal; headers?: Record<string, string> } = {},
): Promise<Response> {
  return fetch(url + CLIENT_PATHS[client], {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...authOf(client, key), ...init.headers },
    body: JSON.stringify(body),
    ...(init.signal ? { signal: init.signal } : {}),
  });
}

/** What a client got, judged by its protocol's rules. */
export type Outcome =
  | { kind: 'error'; phase: 'before' | 'in-stream'; status: number; requestId: string; message: string; type: string; text: string }
  | { kind: 'ok'; status: number; requestId: string; text: string };

/**
 * Reads a response to the end and classifies it. An error must be well formed in the client's
 * protocol: the route's JSON error body before the stream, or the protocol's terminal error event
 * in it (Chat `data: {"error":…}` without `[DONE]`, Responses `event: error` without
 * `response.completed`, Messages `event: error` without `message_stop`). Anything malformed fails.
 */
export async function outcomeOf(client: ClientProtocol, response: Response): Promise<Outcome> {
  const requestId = response.headers.get('x-request-id') ?? '';
  // CRLF line ends are valid SSE (and passthrough keeps the upstream's); judge the frames alike.
  const text = (await response.text()).replace(/\r\n/g, '\n');
  const type = response.headers.get('content-type') ?? '';
  if (response.status !== 200) {
    expect(type, text).toMatch(/^application\/json/);
    const json = JSON.parse(text) as Json;
    if (client === 'messages') {
      expect(json.type).toBe('error');
      expect(Object.keys(json.error).sort()).toEqual(['message', 'type']);
    } else {
      expect(Object.keys(json.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    }
    expect(json.error.message).toBeTypeOf('string');
    return { kind: 'error', phase: 'before', status: response.status, requestId, message: json.error.message, type: json.error.type, text };
  }
  if (!type.startsWith('text/event-stream')) {
    JSON.parse(text);
    return { kind: 'ok', status: 200, requestId, text };
  }
  const frames = sseFrames(text);
  const last = frames.at(-1);
  expect(last, 'a stream with no frame at all').toBeDefined();
  if (client === 'chat') {
    if (last!.data === '[DONE]') return { kind: 'ok', status: 200, requestId, text };
    const error = (JSON.parse(last!.data) as Json).error;
    expect(error, `the stream neither ends with [DONE] nor with an error chunk:\n${text.slice(-500)}`).toBeDefined();
    expect(Object.keys(error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(text).not.toContain('[DONE]');
    return { kind: 'error', phase: 'in-stream', status: 200, requestId, message: error.message, type: error.type, text };
  }
  const events = frames.map((frame) => ({ event: frame.event, data: JSON.parse(frame.data) as Json }));
  if (client === 'responses') {
    if (events.some((e) => e.data.type === 'response.completed')) {
      expect(events.at(-1)!.data.type).toBe('response.completed');
      return { kind: 'ok', status: 200, requestId, text };
    }
    // The protocol's failure: `error` (what the SDKs throw on), then optionally `response.failed`, last.
    const failure = events.find((e) => e.data.type === 'error');
    expect(failure, `the stream neither completes nor has an error event:\n${text.slice(-500)}`).toBeDefined();
    expect(['error', 'response.failed']).toContain(events.at(-1)!.data.type);
    expect(events.filter((e) => e.data.type === 'error' || e.data.type === 'response.failed').length).toBeLessThanOrEqual(2);
    const error = failure!.data.error;
    expect(error.message).toBeTypeOf('string');
    return { kind: 'error', phase: 'in-stream', status: 200, requestId, message: error.message, type: error.type ?? error.code, text };
  }
  if (last!.event === 'message_stop') return { kind: 'ok', status: 200, requestId, text };
  expect(last!.event, `the stream neither stops nor fails:\n${text.slice(-500)}`).toBe('error');
  expect(text).not.toContain('message_stop');
  const error = (JSON.parse(last!.data) as Json).error;
  expect(Object.keys(error).sort()).toEqual(['message', 'type']);
  return { kind: 'error', phase: 'in-stream', status: 200, requestId, message: error.message, type: error.type, text };
}

/** Splits SSE text into frames; each must have exactly one `data:` line and end with a blank line. */
export function sseFrames(text: string): { event?: string; data: string }[] {
  expect(text.endsWith('\n\n'), `a stream that ends mid-frame: ${JSON.stringify(text.slice(-200))}`).toBe(true);
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      let event: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
        else if (!line.startsWith(':')) throw new Error(`unexpected SSE line: ${JSON.stringify(line)}`);
      }
      expect(data, block).toHaveLength(1);
      return { ...(event !== undefined ? { event } : {}), data: data[0]! };
    });
}

export interface SdkClients {
  openai: OpenAI;
  anthropic: Anthropic;
}

export function sdkClients(url: string, key: string): SdkClients {
  return {
    openai: new OpenAI({ baseURL: url + '/v1', apiKey: key, maxRetries: 0, logLevel: 'off' }),
    anthropic: new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0, logLevel: 'off' }),
  };
}

/**
 * One request through the official SDK of the client protocol, streams read with its stream
 * helper to the final object. Resolves with the error it threw, or undefined on success.
 */
export async function sdkError(sdk: SdkClients, client: ClientProtocol, model: string, marker: string, stream: boolean): Promise<unknown> {
  const messages = [{ role: 'user' as const, content: marker }];
  try {
    if (client === 'chat') {
      if (stream) await sdk.openai.chat.completions.stream({ model, messages }).finalChatCompletion();
      else await sdk.openai.chat.completions.create({ model, messages });
    } else if (client === 'responses') {
      if (stream) await sdk.openai.responses.stream({ model, input: marker }).finalResponse();
      else await sdk.openai.responses.create({ model, input: marker });
    } else if (stream) {
      await sdk.anthropic.messages.stream({ model, max_tokens: 64, messages }).finalMessage();
    } else {
      await sdk.anthropic.messages.create({ model, max_tokens: 64, messages });
    }
    return undefined;
  } catch (error) {
    return error;
  }
}

/** The SDK error classes a well-formed error must map to. */
export function isSdkApiError(client: ClientProtocol, error: unknown): boolean {
  return client === 'messages' ? error instanceof Anthropic.APIError : error instanceof OpenAI.APIError;
}

/** Active handles and requests by type (`Timeout`, `TCPSocketWrap`, …), as Node counts them. */
export function activeResources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

/**
 * Waits (up to `ms`) until no resource type counts more than in `baseline`, calling `tick` on
 * each round (e.g. to close idle keep-alive connections); returns the last counts seen, so a
 * test can show what stayed.
 */
export async function settleTo(baseline: Record<string, number>, types: readonly string[], ms = 3000, tick?: () => void): Promise<Record<string, number>> {
  const deadline = Date.now() + ms;
  for (;;) {
    tick?.();
    const now = activeResources();
    if (types.every((type) => (now[type] ?? 0) <= (baseline[type] ?? 0)) || Date.now() > deadline) return now;
    await sleep(20);
  }
}

/** Writes frames one HTTP chunk each, a turn of the event loop apart (so they arrive in separate reads). */
export async function sendFrames(exchange: RawExchange, frames: readonly string[]): Promise<void> {
  for (const frame of frames) {
    if (exchange.gone) return;
    exchange.chunk(frame);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Polls `check` until it holds or `ms` passed (usable in concurrent tests, unlike `expect.poll`). */
export async function waitUntil(check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await sleep(10);
}

/**
 * Bytes waiting in the kernel's queues of one loopback TCP connection, both ends (receive queue
 * not read by the app yet, send queue not acknowledged yet), from `ss`; undefined without `ss`.
 * Lets a test tell memory the gateway holds from bytes parked in socket buffers.
 */
export function kernelQueued(portA: number, portB: number): number | undefined {
  let out: string;
  try {
    out = execFileSync('ss', ['-tnH'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
  let queued = 0;
  for (const line of out.split('\n')) {
    const [, recv, send, local, peer] = line.trim().split(/\s+/);
    const ports = [local, peer].map((address) => Number(address?.split(':').pop()));
    if ((ports[0] === portA && ports[1] === portB) || (ports[0] === portB && ports[1] === portA)) queued += Number(recv) + Number(send);
  }
  return queued;
}
