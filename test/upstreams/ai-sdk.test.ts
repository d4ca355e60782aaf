import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { jsonSchema, stepCountIs, streamText, tool, type LanguageModel } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parallelCalls, startHarness, toolExchange, UPSTREAMS, type Harness } from './harness.js';

/**
 * The Vercel AI SDK's three model kinds as gateway clients (`@ai-sdk/openai` Responses and Chat,
 * `@ai-sdk/anthropic`), each running a streamed tool call and the follow-up turn with the tool
 * result, against every upstream protocol.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => h.reset());

const clients: [string, (model: string) => LanguageModel][] = [
  ['@ai-sdk/openai responses', (model) => createOpenAI({ baseURL: h.url + '/v1', apiKey: 'sk-test' }).responses(model)],
  ['@ai-sdk/openai chat', (model) => createOpenAI({ baseURL: h.url + '/v1', apiKey: 'sk-test' }).chat(model)],
  ['@ai-sdk/anthropic', (model) => createAnthropic({ baseURL: h.url + '/v1', apiKey: 'sk-test' })(model)],
];

const cases = clients.flatMap(([name, make]) => UPSTREAMS.map((kind) => [name, kind, make] as const));

describe('Vercel AI SDK clients', () => {
  it.each(cases)('%s → %s upstream: a streamed tool call, then the answer', async (_name, kind, make) => {
    const up = h.upstreams[kind];
    const calls = parallelCalls(kind).slice(0, 1);
    up.fake.reply({ text: ['Checking.'], toolCalls: calls, usage: { input: 40, cachedRead: 0, output: 12 } }, { text: ['It is ', '18°C in Paris.'] });

    const executed: unknown[] = [];
    const result = streamText({
      model: make(up.model),
      system: 'Be brief.',
      prompt: 'Weather in Paris?',
      maxRetries: 0,
      stopWhen: stepCountIs(3),
      // With its default `store: true` the Responses model sends earlier output back as
      // `item_reference`s, which the gateway resolves on models that keep conversations
      // (test/state/item-reference.test.ts) and checks on passthrough to a storing upstream
      // (ai-sdk-item-references.test.ts); translated upstreams take neither.
      providerOptions: { openai: { store: false } },
      tools: {
        get_weather: tool({
          description: 'Weather of a city',
          inputSchema: jsonSchema<{ city: string }>({
            type: 'object',
            properties: { city: { type: 'string' } },
            required: ['city'],
            additionalProperties: false,
          }),
          execute: async (input) => {
            executed.push(input);
            return '18°C';
          },
        }),
      },
    });

    const parts: string[] = [];
    for await (const part of result.fullStream) {
      if (part.type === 'error') throw part.error;
      parts.push(part.type);
    }
    expect(executed).toEqual([{ city: 'Paris' }]);
    // The call was streamed: its input arrived in deltas before the whole call.
    expect(parts).toContain('tool-input-delta');
    expect(parts.indexOf('tool-input-delta')).toBeLessThan(parts.indexOf('tool-call'));
    expect(await result.text).toBe('It is 18°C in Paris.');
    const steps = await result.steps;
    expect(steps).toHaveLength(2);
    expect(steps[0]!.finishReason).toBe('tool-calls');
    expect(steps[0]!.usage).toMatchObject({ inputTokens: 40, outputTokens: 12 });

    const [turn1, turn2] = up.fake.accepted();
    expect(turn1!.body.stream).toBe(true);
    expect(toolExchange(kind, turn2!.body)).toEqual({
      calls: [{ id: calls[0]!.id, name: 'get_weather', input: { city: 'Paris' } }],
      results: [{ id: calls[0]!.id, output: expect.stringContaining('18°C') }],
    });
  });
});
