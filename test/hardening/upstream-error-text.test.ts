import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { UsageEvent } from '../../src/policy/events.js';
import { blankHostNames } from '../../src/providers/http/host-names.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { startRawUpstream, type RawUpstream } from '../fakes/raw-upstream.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { serve, type Served } from '../helpers/serve.js';

/**
 * Security review 2026-11-26, finding 13: what a tenant reads of an upstream's failure. A 4xx keeps
 * what SDKs and agents read (message, type, code, param) with host names blanked; a 5xx says only
 * its status, type and code, the upstream's words going to the operator's events; the operator's
 * rate-limit headers stay behind; and a failure the request itself may have provoked does not cool
 * the deployment down for every tenant.
 */

describe('blankHostNames', () => {
  it.each([
    ['bad request; you sent auth [redacted] to internal-llm-01.corp', 'bad request; you sent auth [redacted] to [host]'],
    ['dial tcp 10.0.3.4:11434: connect: connection refused', 'dial tcp [host]: connect: connection refused'],
    ['POST "http://llm.internal:8080/v1/chat" failed', 'POST "[host]" failed'],
    ['upstream [::1]:11434 and ollama:11434 and localhost', 'upstream [host] and [host] and [host]'],
    ['see api.example.com.', 'see [host].'],
    ['auth=node-7.svc,', 'auth=[host],'],
  ])('blanks %j', (text, blanked) => {
    expect(blankHostNames(text)).toBe(blanked);
  });

  it.each([
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
    'messages.0.content.1.image_url: Input should be a valid URL',
    'Invalid value for tools.function.parameters: gpt-4.1 does not take it (see README.md, e.g. version 1.2.3).',
    'prompt is too long: 201234 tokens > 200000 maximum',
  ])('keeps what clients read: %j', (text) => {
    expect(blankHostNames(text)).toBe(text);
  });

  it('stays linear on text a client could have made the upstream echo', () => {
    const hostile = `${'a-'.repeat(400_000)}${'a.'.repeat(400_000)}${'.'.repeat(400_000)}x ${'9:'.repeat(400_000)}`;
    expect(blankHostNames(hostile)).toBe(hostile);
  });
});

const KEY = 'sk-tenant-errors';
let fake: FakeUpstream;
let raw: RawUpstream;
let gateway: Gateway;
let served: Served;
const usage: UsageEvent[] = [];
const log = recordingLogger();
const OPERATOR_LIMITS = {
  'x-ratelimit-limit-requests': '10000',
  'x-ratelimit-remaining-tokens': '1999000',
  'anthropic-ratelimit-tokens-remaining': '42',
  'retry-after': '1',
};

beforeAll(async () => {
  [fake, raw] = await Promise.all([startFakeOpenAI({ endpoints: ['chat'] }), startRawUpstream()]);
  gateway = createGateway({
    keys: [{ key: KEY, id: 'tenant' }],
    providers: {
      oai: createOpenAIProvider({ baseURL: `${fake.url}/v1`, apiKey: 'up-key', responses: false }),
      lax: createOpenAIProvider({ baseURL: `${raw.url}/v1`, apiKey: 'up-key', responses: false }),
    },
    models: [
      { id: 'gpt', provider: 'oai', upstreamModel: 'gpt-4.1' },
      { id: 'lax', provider: 'lax', upstreamModel: 'lax-1' },
    ],
    logger: log.logger,
    policies: { retry: { retries: 0, failuresBeforeCooldown: 3, cooldownMs: 60_000 } },
    hooks: { onUsage: (event) => void usage.push(event) },
  });
  served = await serve(gateway);
});

afterAll(async () => {
  await served?.close();
  await gateway?.dispose();
  await Promise.all([fake?.close(), raw?.close()]);
});

beforeEach(() => {
  usage.length = 0;
  gateway.options.policies.health.clear();
});

function chat(model: string): Promise<Response> {
  return fetch(`${served.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
}

const rateLimitHeaders = (response: Response) => [...response.headers.keys()].filter((name) => name.includes('ratelimit'));

describe('an upstream error as a tenant reads it', () => {
  it('a 4xx keeps message, type, code and param for the SDK, host names blanked', async () => {
    fake.reply({
      error: {
        status: 400,
        message: 'Invalid value for temperature; request logged by internal-llm-01.corp (http://10.0.3.4:11434/v1)',
        type: 'invalid_request_error',
        code: 'invalid_value',
        headers: OPERATOR_LIMITS,
      },
    });
    const client = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const error = await client.chat.completions.create({ model: 'gpt', messages: [{ role: 'user', content: 'hi' }] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'invalid_value' });
    expect((error as Error).message).toContain('Invalid value for temperature; request logged by [host] ([host])');
    expect([...(error as InstanceType<typeof OpenAI.APIError>).headers!.keys()].filter((name) => name.includes('ratelimit'))).toEqual([]);
  });

  it('a 429 keeps retry-after, not the operator’s rate-limit headers', async () => {
    fake.reply({ error: { status: 429, message: 'Rate limit reached for gpt-4.1 in organization org-x', type: 'requests', headers: OPERATOR_LIMITS } });
    const response = await chat('gpt');
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(rateLimitHeaders(response)).toEqual([]);
  });

  it('a 5xx says its status, type and code; its own words go to the operator only', async () => {
    fake.reply({
      error: { status: 503, message: 'panic: no backend; pool at internal-llm-01.corp:8080 drained', type: 'overloaded_error', code: 'no_capacity' },
    });
    const response = await chat('gpt');
    expect(response.status).toBe(503);
    expect((await response.json()) as unknown).toEqual({
      error: { message: 'The upstream answered with status 503.', type: 'overloaded_error', param: null, code: 'no_capacity' },
    });
    expect(usage[0]!.error).toEqual({ status: 503, code: 'no_capacity', message: 'The upstream answered with status 503.' });
    expect(log.lines.at(-1)).toMatchObject({
      message: 'request failed',
      fields: { status: 503, message: 'The upstream answered with status 503.', detail: 'panic: no backend; pool at [host] drained' },
    });
  });
});

describe('deployment health', () => {
  const laxDeployment = () => gateway.options.catalog.deployments(gateway.options.catalog.get('lax')!)[0]!;

  it('is not cooled down by answers the request may have provoked (an event stream to a JSON request)', async () => {
    raw.script = async (exchange) => {
      exchange.sseHead();
      exchange.chunk('data: {"choices":[]}\n\n');
      exchange.endChunked();
    };
    for (let i = 0; i < 4; i++) {
      const response = await chat('lax');
      expect(response.status).toBe(502);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('upstream_invalid_response');
    }
    expect(gateway.options.policies.health.isCooling(laxDeployment())).toBe(false);
  });

  it('is cooled down by the upstream’s own failures', async () => {
    raw.script = (exchange) => exchange.json(500, { error: { message: 'boom' } });
    for (let i = 0; i < 3; i++) expect((await chat('lax')).status).toBe(500);
    expect(gateway.options.policies.health.isCooling(laxDeployment())).toBe(true);
  });
});
