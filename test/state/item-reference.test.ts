import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool, type ModelMessage } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ModelEntry } from '../../src/routing/model.js';
import { startHarness, type Harness } from '../upstreams/harness.js';

type Json = Record<string, any>;

/**
 * `item_reference` end to end: the Vercel AI SDK's Responses model with its default `store: true`
 * sends earlier assistant text back as `{ type: 'item_reference', id: 'msg_…' }`. On a model
 * flagged `previousResponseId` the gateway keeps every response's items, expands the references
 * and a Chat-only upstream receives the whole conversation.
 */

const models: ModelEntry[] = [{ id: 'gpt-chat-state', provider: 'oai-chat', upstreamModel: 'gpt-4.1', previousResponseId: true }];

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ models });
});
afterAll(() => h.close());
beforeEach(() => h.reset());

/** The AI SDK's Responses model, recording the bodies it sends the gateway. */
function responsesModel(model: string, sent: Json[]) {
  const provider = createOpenAI({
    baseURL: h.url + '/v1',
    apiKey: 'sk-test',
    fetch: (input, init) => {
      if (typeof init?.body === 'string') sent.push(JSON.parse(init.body) as Json);
      return fetch(input, init);
    },
  });
  return provider.responses(model);
}

const weather = tool({
  description: 'Weather of a city',
  inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }),
  execute: async () => '18°C',
});

/** The Chat messages an upstream request carried, reduced to role, text and tool calls. */
function transcript(body: Json): Json[] {
  return body.messages.map((message: Json) => ({
    role: message.role,
    text: typeof message.content === 'string' ? message.content : (message.content ?? []).map((part: Json) => part.text ?? '').join(''),
    ...(message.tool_calls ? { calls: message.tool_calls.map((call: Json) => `${call.function.name}(${call.function.arguments})`) } : {}),
  }));
}

describe('item_reference from the Vercel AI SDK (store: true)', () => {
  it('expands the references of a tool round trip and of a second turn; the upstream gets everything', async () => {
    const up = h.upstreams.chat;
    up.fake.reply(
      { text: ['Checking.'], toolCalls: [{ id: 'call_W', name: 'get_weather', args: ['{"city":"Paris"}'] }] },
      { text: ['It is ', '18°C in Paris.'] },
      { text: ['Sunny, 21°C.'] },
    );
    const sent: Json[] = [];
    const model = responsesModel('gpt-chat-state', sent);

    // Turn 1, streamed: a tool call, then the answer with the result.
    const first = streamText({
      model,
      system: 'Be brief.',
      prompt: 'Weather in Paris?',
      tools: { get_weather: weather },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    for await (const part of first.fullStream) if (part.type === 'error') throw part.error;
    expect(await first.text).toBe('It is 18°C in Paris.');
    const turn1Messages = (await first.response).messages;

    // Turn 2, as JSON: the whole conversation again, the assistant's text as references.
    const messages: ModelMessage[] = [{ role: 'user', content: 'Weather in Paris?' }, ...turn1Messages, { role: 'user', content: 'And tomorrow?' }];
    const second = await generateText({ model, system: 'Be brief.', messages, tools: { get_weather: weather }, maxRetries: 0 });
    expect(second.text).toBe('Sunny, 21°C.');

    // The SDK did send references, to the ids the gateway gave its output messages.
    expect(sent).toHaveLength(3);
    const references = (body: Json) => body.input.filter((item: Json) => item.type === 'item_reference');
    expect(references(sent[1]!)).toEqual([{ type: 'item_reference', id: expect.stringMatching(/^msg_/) }]);
    expect(references(sent[2]!)).toHaveLength(2);
    expect(JSON.stringify(sent)).not.toContain('Checking.');

    const [step1, step2, turn2] = up.fake.accepted();
    expect(transcript(step1!.body)).toEqual([
      { role: 'system', text: 'Be brief.' },
      { role: 'user', text: 'Weather in Paris?' },
    ]);
    const roundTrip = [
      { role: 'system', text: 'Be brief.' },
      { role: 'user', text: 'Weather in Paris?' },
      { role: 'assistant', text: 'Checking.', calls: ['get_weather({"city":"Paris"})'] },
      { role: 'tool', text: expect.stringContaining('18°C') },
    ];
    expect(transcript(step2!.body)).toEqual(roundTrip);
    expect(transcript(turn2!.body)).toEqual([...roundTrip, { role: 'assistant', text: 'It is 18°C in Paris.' }, { role: 'user', text: 'And tomorrow?' }]);
    expect(JSON.stringify(turn2!.body)).not.toContain('item_reference');
  });

  it('answers 404 for a reference the key never stored, in OpenAI’s words', async () => {
    const response = await fetch(h.url + '/v1/responses', {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-chat-state',
        input: [
          { role: 'user', content: 'Hi' },
          { type: 'item_reference', id: 'msg_nowhere' },
        ],
      }),
    });
    expect(response.status).toBe(404);
    expect((await response.json()) as Json).toEqual({
      error: expect.objectContaining({
        message: "Item with id 'msg_nowhere' not found.",
        type: 'invalid_request_error',
        param: 'input[1].id',
        code: 'item_not_found',
      }),
    });
    expect(h.upstreams.chat.fake.accepted()).toHaveLength(0);
  });

  it('still answers 400 on a model that keeps no items, saying how to fix it', async () => {
    const response = await fetch(h.url + '/v1/responses', {
      method: 'POST',
      headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-chat',
        input: [
          { role: 'user', content: 'Hi' },
          { type: 'item_reference', id: 'msg_1' },
        ],
      }),
    });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as Json;
    expect(error).toMatchObject({ param: 'input[1].type', code: 'unsupported_parameter' });
    expect(error.message).toMatch(/store: false/);
    expect(error.message).toMatch(/previousResponseId/);
  });
});
