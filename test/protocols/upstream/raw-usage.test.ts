import { describe, expect, it } from 'vitest';
import { mergeUsage } from '../../../src/protocols/ir.js';
import { fromChatUsage } from '../../../src/protocols/chat/usage.js';
import { fromMessagesUsage } from '../../../src/protocols/messages/usage.js';
import { fromResponsesUsage } from '../../../src/protocols/responses/usage.js';

/** The upstream's own usage object rides along with the counters, for the usage event's `rawUsage`. */
describe('raw usage', () => {
  it('keeps the upstream object next to the converted counters', () => {
    const chat = { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14, prompt_tokens_details: { cached_tokens: 2 } };
    expect(fromChatUsage(chat)).toEqual({ input: 10, cachedRead: 2, output: 4, raw: chat });
    const responses = { input_tokens: 7, output_tokens: 3, total_tokens: 10 };
    expect(fromResponsesUsage(responses).raw).toBe(responses);
  });

  it('merges Anthropic’s two halves (message_start, message_delta) into one raw object', () => {
    const start = fromMessagesUsage({ input_tokens: 5, cache_read_input_tokens: 20, output_tokens: 1 });
    const delta = fromMessagesUsage({ output_tokens: 42 });
    expect(mergeUsage(start, delta)).toEqual({
      input: 25,
      cachedRead: 20,
      output: 42,
      raw: { input_tokens: 5, cache_read_input_tokens: 20, output_tokens: 42 },
    });
  });

  it('has no raw object when the upstream sent none', () => {
    expect(fromChatUsage(undefined)).toEqual({});
  });
});
