import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { checkMessagesStream, checkResponsesStream } from '../protocols/helpers.js';

/**
 * The fakes are only worth what their strictness is: these check that they refuse what the real
 * APIs refuse, and that what they send satisfies the official SDKs and the strict stream checks.
 */
let openai: FakeUpstream;
let chatOnly: FakeUpstream;
let anthropic: FakeUpstream;
beforeAll(async () => {
  [openai, chatOnly, anthropic] = await Promise.all([startFakeOpenAI(), startFakeOpenAI({ endpoints: ['chat'] }), startFakeAnthropic()]);
});
afterAll(() => Promise.all([openai.close(), chatOnly.close(), anthropic.close()]));
beforeEach(() => {
  for (const fake of [openai, chatOnly, anthropic]) fake.reset();
});

type Json = Record<string, any>;

async function post(fake: FakeUpstream, path: string, body: Json, headers: Record<string, string>): Promise<{ status: number; json: Json }> {
  const response = await fetch(fake.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: response.status, json: (await response.json()) as Json };
}
const bearer = { authorization: 'Bearer up-key' };
const anthropicHeaders = { 'x-api-key': 'up-key', 'anthropic-version': '2023-06-01' };
const user = (content: unknown) => ({ role: 'user', content });
const chatCall = (id: string) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } });
const toolUse = (id: string) => ({ type: 'tool_use', id, name: 'f', input: {} });
const toolResult = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' });

describe('fake OpenAI refuses what OpenAI refuses', () => {
  const chat = (messages: Json[], extra: Json = {}) => ({ model: 'gpt-4.1', messages, ...extra });
  it.each([
    ['no key', chat([user('hi')]), {}, 401, "didn't provide an API key"],
    ['a wrong key', chat([user('hi')]), { authorization: 'Bearer nope' }, 401, 'Incorrect API key'],
    ['an unknown model', { ...chat([user('hi')]), model: 'gpt-9' }, bearer, 404, 'does not exist'],
    ['an unknown role', chat([{ role: 'bot', content: 'x' }]), bearer, 400, "Invalid value: 'bot'"],
    [
      'a tool message without a call',
      chat([user('hi'), { role: 'tool', tool_call_id: 'call_1', content: 'x' }]),
      bearer,
      400,
      "must be a response to a preceeding message with 'tool_calls'",
    ],
    [
      'a tool message with another id',
      chat([user('hi'), { role: 'assistant', content: null, tool_calls: [chatCall('call_1')] }, { role: 'tool', tool_call_id: 'call_2', content: 'x' }]),
      bearer,
      400,
      'preceeding',
    ],
    [
      'an unanswered call',
      chat([
        user('hi'),
        { role: 'assistant', content: null, tool_calls: [chatCall('call_1'), chatCall('call_2')] },
        { role: 'tool', tool_call_id: 'call_1', content: 'x' },
      ]),
      bearer,
      400,
      'did not have response messages: call_2',
    ],
    ['stream_options without stream', chat([user('hi')], { stream_options: { include_usage: true } }), bearer, 400, "only allowed when 'stream' is enabled"],
    ['tool_choice without tools', chat([user('hi')], { tool_choice: 'auto' }), bearer, 400, "only allowed when 'tools' are specified"],
    ['a Responses field', chat([user('hi')], { instructions: 'x' }), bearer, 400, 'Unrecognized request argument supplied: instructions'],
  ])('Chat: %s', async (_name, body, headers, status, message) => {
    const { status: got, json } = await post(openai, '/v1/chat/completions', body, headers);
    expect(got).toBe(status);
    expect(json.error.message).toContain(message);
    expect(Object.keys(json.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  });

  const responses = (input: unknown, extra: Json = {}) => ({ model: 'gpt-5', input, ...extra });
  it.each([
    [
      'an output without its call',
      responses([user('hi'), { type: 'function_call_output', call_id: 'call_1', output: 'x' }]),
      'No tool call found for function call output with call_id call_1',
    ],
    [
      'a call without its output',
      responses([user('hi'), { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' }]),
      'No tool output found for function call call_1',
    ],
    ['input_text in an assistant message', responses([{ role: 'assistant', content: [{ type: 'input_text', text: 'x' }] }]), "Invalid value: 'input_text'"],
    [
      'stream_options.include_usage',
      responses('hi', { stream: true, stream_options: { include_usage: true } }),
      "Unknown parameter: 'stream_options.include_usage'",
    ],
    ['a Chat-only field', responses('hi', { seed: 1 }), 'Unrecognized request argument supplied: seed'],
    ['nested Chat tools', responses('hi', { tools: [{ type: 'function', function: { name: 'f' } }] }), "Missing required parameter: 'tools[0].name'"],
    ['previous_response_id (nothing is stored)', responses('hi', { previous_response_id: 'resp_1' }), "Previous response with id 'resp_1' not found."],
  ])('Responses: %s', async (_name, body, message) => {
    const { status, json } = await post(openai, '/v1/responses', body, bearer);
    expect(status).toBe(400);
    expect(json.error.message).toContain(message);
  });

  it('a chat-only server has no /v1/responses', async () => {
    const { status } = await post(chatOnly, '/v1/responses', { model: 'gpt-5', input: 'hi' }, bearer);
    expect(status).toBe(404);
  });

  it('records every request, refused ones with the reason', async () => {
    await post(openai, '/v1/chat/completions', chat([user('hi')], { x_custom_field: 1 }), bearer);
    await post(openai, '/v1/chat/completions', chat([]), bearer);
    expect(openai.requests.map((r) => [r.body.x_custom_field, r.rejected?.status])).toEqual([
      [1, undefined],
      [undefined, 400],
    ]);
    expect(openai.accepted()).toHaveLength(1);
  });
});

describe('fake Anthropic refuses what Anthropic refuses', () => {
  const body = (messages: Json[], extra: Json = {}) => ({ model: 'claude-sonnet-4-5', max_tokens: 100, messages, ...extra });
  it.each([
    ['no x-api-key', body([user('hi')]), { 'anthropic-version': '2023-06-01' }, 401, 'x-api-key header is required'],
    ['no anthropic-version', body([user('hi')]), { 'x-api-key': 'up-key' }, 400, 'anthropic-version'],
    ['no max_tokens', { model: 'claude-sonnet-4-5', messages: [user('hi')] }, anthropicHeaders, 400, 'max_tokens: Field required'],
    ['an assistant first', body([{ role: 'assistant', content: 'x' }]), anthropicHeaders, 400, 'first message must use the "user" role'],
    ['two user turns in a row', body([user('a'), user('b')]), anthropicHeaders, 400, 'roles must alternate'],
    [
      'an image in a system message',
      body([user('hi'), { role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'https://x.test/a.png' } }] }]),
      anthropicHeaders,
      400,
      "expected tags: 'text', 'tool_addition', 'tool_removal'",
    ],
    [
      'five cache breakpoints',
      body([user([1, 2, 3, 4, 5].map((n) => ({ type: 'text', text: `part ${n}`, cache_control: { type: 'ephemeral' } })))]),
      anthropicHeaders,
      400,
      'A maximum of 4 blocks with cache_control',
    ],
    ['an empty text block', body([user([{ type: 'text', text: '' }])]), anthropicHeaders, 400, 'text content blocks must be non-empty'],
    [
      'an unanswered tool_use',
      body([user('hi'), { role: 'assistant', content: [toolUse('toolu_1'), toolUse('toolu_2')] }, user([toolResult('toolu_1')])]),
      anthropicHeaders,
      400,
      'without `tool_result` blocks immediately after: toolu_2',
    ],
    [
      'a tool_result for another id',
      body([user('hi'), { role: 'assistant', content: [toolUse('toolu_1')] }, user([toolResult('toolu_9'), toolResult('toolu_1')])]),
      anthropicHeaders,
      400,
      'unexpected `tool_use_id`',
    ],
    [
      'text before the tool_result',
      body([user('hi'), { role: 'assistant', content: [toolUse('toolu_1')] }, user([{ type: 'text', text: 'x' }, toolResult('toolu_1')])]),
      anthropicHeaders,
      400,
      'tool_result blocks must come first',
    ],
    [
      'a tool id with bad characters',
      body([user('hi'), { role: 'assistant', content: [toolUse('call:1')] }, user([toolResult('call:1')])]),
      anthropicHeaders,
      400,
      "String should match pattern '^[a-zA-Z0-9_-]+$'",
    ],
    [
      'thinking without its signature',
      body([
        user('hi'),
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'x' },
            { type: 'text', text: 'y' },
          ],
        },
        user('more'),
      ]),
      anthropicHeaders,
      400,
      'signature',
    ],
    ['a trailing-space prefill', body([user('hi'), { role: 'assistant', content: 'Sure, ' }]), anthropicHeaders, 400, 'trailing whitespace'],
    [
      'an OpenAI field',
      body([user('hi')], { stream_options: { include_usage: true } }),
      anthropicHeaders,
      400,
      'stream_options: Extra inputs are not permitted',
    ],
  ])('%s', async (_name, requestBody, headers, status, message) => {
    const { status: got, json } = await post(anthropic, '/v1/messages', requestBody, headers);
    expect(got).toBe(status);
    expect(json).toMatchObject({ type: 'error', error: { message: expect.stringContaining(message) } });
  });
});

describe('the fakes’ streams satisfy the official SDKs', () => {
  const reply = {
    reasoning: ['Think', 'ing.'],
    text: ['Hel', 'lo'],
    toolCalls: [
      { name: 'get_weather', args: ['{"city":', '"Paris"}'] },
      { name: 'get_time', args: ['{}'] },
    ],
    usage: { input: 100, cachedRead: 60, cacheWrite: 10, output: 20, reasoning: 5 },
  };

  it('Chat Completions', async () => {
    openai.reply(reply);
    const client = new OpenAI({ baseURL: openai.url + '/v1', apiKey: 'up-key', maxRetries: 0 });
    const final = await client.chat.completions
      .stream({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }], stream_options: { include_usage: true } })
      .finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe('Hello');
    expect(final.choices[0]!.message.tool_calls!.map((call) => (call.type === 'function' ? call.function.arguments : ''))).toEqual(['{"city":"Paris"}', '{}']);
    expect(final.usage).toMatchObject({ prompt_tokens: 100, prompt_tokens_details: { cached_tokens: 60 } });
  });

  it('Responses', async () => {
    openai.reply(reply, reply);
    const raw = await (
      await fetch(openai.url + '/v1/responses', {
        method: 'POST',
        headers: { ...bearer, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-5', input: 'hi', stream: true }),
      })
    ).text();
    const events = checkResponsesStream(raw);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, i) => i));
    const client = new OpenAI({ baseURL: openai.url + '/v1', apiKey: 'up-key', maxRetries: 0 });
    const final = await client.responses.stream({ model: 'gpt-5', input: 'hi' }).finalResponse();
    expect(final.output.map((item) => item.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
    expect(final.output_text).toBe('Hello');
    expect(final.usage).toMatchObject({ input_tokens: 100, input_tokens_details: { cached_tokens: 60 } });
  });

  it('Messages', async () => {
    anthropic.reply(reply, reply);
    const raw = await (
      await fetch(anthropic.url + '/v1/messages', {
        method: 'POST',
        headers: { ...anthropicHeaders, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [user('hi')], stream: true }),
      })
    ).text();
    checkMessagesStream(raw);
    const client = new Anthropic({ baseURL: anthropic.url, apiKey: 'up-key', maxRetries: 0 });
    const final = await client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(final.content.map((block) => block.type)).toEqual(['thinking', 'text', 'tool_use', 'tool_use']);
    expect(final.content[2]).toMatchObject({ input: { city: 'Paris' } });
    // Anthropic's input excludes the cache.
    expect(final.usage).toMatchObject({ input_tokens: 30, cache_read_input_tokens: 60, cache_creation_input_tokens: 10, output_tokens: 20 });
  });
});
