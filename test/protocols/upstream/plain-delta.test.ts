import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plainContentDelta } from '../../../src/protocols/chat/plain-delta.js';
import { plainTextDelta } from '../../../src/protocols/messages/plain-delta.js';
import { stringLiteralAt } from '../../../src/protocols/string-literal.js';

const chatChunk = (delta: unknown, rest: Record<string, unknown> = {}) =>
  JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: null }],
    ...rest,
  });

describe('stringLiteralAt', () => {
  it('reads any string as JSON.parse does, escapes included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string(), (value, after) => {
        const text = `{"a":${JSON.stringify(value)}${after}`;
        const literal = stringLiteralAt(text, 5);
        expect(literal?.value).toBe(value);
        expect(literal?.end).toBe(5 + JSON.stringify(value).length);
      }),
    );
  });

  it('finds no string where there is no quote or no closing quote', () => {
    expect(stringLiteralAt('{"a":1}', 5)).toBeUndefined();
    expect(stringLiteralAt('"open \\" still', 0)).toBeUndefined();
  });
});

describe('plainContentDelta (Chat chunks read without parsing)', () => {
  it('reads the text of a text-only chunk, whatever the text holds', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        expect(plainContentDelta(chatChunk({ content: text }))).toBe(text);
      }),
    );
  });

  it('leaves every other chunk to the parser', () => {
    const others = {
      'reasoning beside the text': chatChunk({ content: 'a', reasoning_content: 'b' }),
      'a tool call beside the text': chatChunk({ content: 'a', tool_calls: [{ index: 0, function: { arguments: '{}' } }] }),
      usage: chatChunk({ content: 'a' }, { usage: { prompt_tokens: 1 } }),
      'a finish reason': chatChunk({ content: 'a' }).replace('"finish_reason":null', '"finish_reason":"stop"'),
      'a second choice': chatChunk({ content: 'a' }).replace('"choices":[{', '"choices":[{"index":0,"delta":{"content":"x"}},{'),
      'an error': chatChunk({ content: 'a' }, { error: { message: 'boom' } }),
      'choice 1 only': chatChunk({ content: 'a' }).replace('"index":0', '"index":1'),
      'a refusal': chatChunk({ refusal: 'no' }),
      'another key order': chatChunk({ content: 'a' }).replace('"index":0,"delta":{"content":"a"}', '"delta":{"content":"a"},"index":0'),
    };
    for (const [what, chunk] of Object.entries(others)) expect(plainContentDelta(chunk), what).toBeUndefined();
  });
});

describe('plainTextDelta (Anthropic events read without parsing)', () => {
  it('reads the index and text of a text_delta event', () => {
    fc.assert(
      fc.property(fc.nat(40), fc.string({ unit: 'binary' }), (index, text) => {
        const data = JSON.stringify({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
        expect(plainTextDelta(data)).toEqual({ index, text });
      }),
    );
  });

  it('leaves other deltas and events with more fields to the parser', () => {
    const event = (delta: unknown, extra = {}) => JSON.stringify({ type: 'content_block_delta', index: 0, delta, ...extra });
    expect(plainTextDelta(event({ type: 'input_json_delta', partial_json: '{' }))).toBeUndefined();
    expect(plainTextDelta(event({ type: 'text_delta', text: 'a', citations: [] }))).toBeUndefined();
    expect(plainTextDelta(event({ type: 'text_delta', text: 'a' }, { more: 1 }))).toBeUndefined();
    expect(plainTextDelta(JSON.stringify({ type: 'content_block_start', index: 0 }))).toBeUndefined();
  });
});
