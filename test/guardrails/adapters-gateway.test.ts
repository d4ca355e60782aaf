import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import type { GuardrailConfig } from '../../src/guardrails/guardrail.js';
import type { UsageEvent } from '../../src/policy/events.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { MODERATION_MARKERS, startFakeModeration } from '../fakes/fake-openai-moderation.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import { type FakePresidio, startFakePresidio } from '../fakes/fake-presidio.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';

/**
 * The remote guardrails through the gateway, with the openai SDK as the client: a fail-closed
 * adapter that times out refuses, a fail-open one passes and is reported; a moderation flag
 * blocks; Presidio's spans mask the prompt the upstream gets.
 */

let upstream: FakeUpstream;
let moderation: FakeUpstream;
let presidio: FakePresidio;
let gateway: Served | undefined;
const events: UsageEvent[] = [];

beforeAll(async () => {
  [upstream, moderation, presidio] = await Promise.all([startFakeOpenAI(), startFakeModeration(), startFakePresidio()]);
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([upstream.close(), moderation.close(), presidio.close()]);
});
beforeEach(() => {
  upstream.reset();
  moderation.reset();
  presidio.reset();
  events.length = 0;
});

async function client(guardrails: GuardrailConfig[]): Promise<OpenAI> {
  await gateway?.close();
  const instance = createGateway({
    providers: {
      oai: createOpenAIProvider({ baseURL: `${upstream.url}/v1`, apiKey: 'up-key' }),
      mod: createOpenAIProvider({ baseURL: `${moderation.url}/v1`, apiKey: 'up-key' }),
    },
    models: [{ id: 'gpt-4.1', provider: 'oai' }],
    keys: [{ key: 'sk-test', id: 'k1', models: '*' }],
    policies: { guardrails },
    hooks: { onUsage: (event) => void events.push(event) },
  });
  gateway = await serve(instance as never);
  return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
}

const ask = (openai: OpenAI, content: string) => openai.chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content }] });

async function outcomes(): Promise<UsageEvent['guardrails']> {
  await expect.poll(() => events.length).toBeGreaterThan(0);
  return events[0]!.guardrails;
}

describe('a remote guardrail that does not answer', () => {
  it('fails closed: the SDK gets a 503 guardrail_unavailable, the model is never called', async () => {
    const openai = await client([{ type: 'presidio', name: 'presidio', analyzerUrl: presidio.url, phase: 'input', timeoutMs: 150 }]);
    presidio.reply({ hang: true });
    const error = await ask(openai, 'hello there').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('guardrail_unavailable');
    expect(upstream.requests).toHaveLength(0);
    expect(await outcomes()).toEqual([expect.objectContaining({ guardrail: 'presidio', outcome: 'failed_closed' })]);
  });

  it('fails open when told to: the answer comes, and the outcome says failed_open', async () => {
    const openai = await client([{ type: 'presidio', name: 'presidio', analyzerUrl: presidio.url, phase: 'input', timeoutMs: 150, failOpen: true }]);
    presidio.reply({ hang: true });
    const answer = await ask(openai, 'hello there');
    expect(answer.choices[0]!.message.content).toBe('Hello from upstream.');
    expect(await outcomes()).toEqual([expect.objectContaining({ guardrail: 'presidio', outcome: 'failed_open' })]);
  });

  it('an analyzer error (500) is a failure too', async () => {
    const openai = await client([{ type: 'presidio', name: 'presidio', analyzerUrl: presidio.url, phase: 'input' }]);
    presidio.reply({ error: { status: 500, message: 'boom' } });
    await expect(ask(openai, 'hello there')).rejects.toMatchObject({ status: 503 });
  });
});

describe('remote guardrails that answer', () => {
  it('Presidio’s spans mask the prompt the upstream gets', async () => {
    const openai = await client([{ type: 'presidio', name: 'presidio', analyzerUrl: presidio.url, phase: 'input', action: 'mask' }]);
    await ask(openai, 'Write to ana@example.com today');
    expect(upstream.last().body.messages[0].content).toBe('Write to [REDACTED:email_address] today');
    expect(await outcomes()).toEqual([expect.objectContaining({ guardrail: 'presidio', outcome: 'masked', categories: ['email_address'] })]);
  });

  it('a moderation flag blocks the prompt with a 400 naming the guardrail and the category', async () => {
    const openai = await client([{ type: 'openai-moderation', name: 'moderation', provider: 'mod', phase: 'input' }]);
    const error = await ask(openai, `please ${MODERATION_MARKERS.violence}`).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toContain('`moderation`');
    expect((error as Error).message).toContain('violence');
    expect((error as Error).message).not.toContain(MODERATION_MARKERS.violence);
    expect(upstream.requests).toHaveLength(0);
    expect(moderation.last().headers.authorization).toBe('Bearer up-key');
  });

  it('a mask on a checker that only flags is refused when the gateway is made', async () => {
    await expect(client([{ type: 'openai-moderation', provider: 'mod', action: 'mask' }])).rejects.toThrow(/cannot mask/);
  });
});
