import { describe, expect, it } from 'vitest';
import { cacheWanted, uncacheableReason } from '../../src/cache/cacheability.js';
import { MemoryCacheStore } from '../../src/cache/memory-cache-store.js';
import type { ResolvedResponseCache } from '../../src/cache/response-cache-options.js';
import type { ModelEntry } from '../../src/routing/model.js';

const settings: ResolvedResponseCache = { ttlMs: 1000, maxEntryBytes: 1000, allowSampling: false, store: new MemoryCacheStore() };
const model: ModelEntry = { id: 'm', provider: 'p', cache: true };
const reason = (protocol: 'chat' | 'responses' | 'messages' | 'gemini', body: Record<string, unknown>, keepsResponses = false) =>
  uncacheableReason(protocol, { temperature: 0, ...body }, model, settings, keepsResponses);

describe('what may be cached', () => {
  it('temperature 0 only, unless sampling is allowed (for the cache or the model)', () => {
    expect(uncacheableReason('chat', {}, model, settings, false)).toBe('sampling');
    expect(reason('chat', { temperature: 0.3 })).toBe('sampling');
    expect(reason('chat', {})).toBeUndefined();
    expect(uncacheableReason('gemini', { generationConfig: { temperature: 0 } }, model, settings, false)).toBeUndefined();
    expect(uncacheableReason('gemini', { temperature: 0 }, model, settings, false)).toBe('sampling');
    expect(uncacheableReason('chat', { temperature: 1 }, { ...model, cache: { allowSampling: true } }, settings, false)).toBeUndefined();
    expect(uncacheableReason('chat', {}, model, { ...settings, allowSampling: true }, false)).toBeUndefined();
  });

  it('not several answers, log probabilities or audio', () => {
    expect(reason('chat', { n: 2 })).toBe('several answers');
    expect(reason('chat', { n: 1 })).toBeUndefined();
    expect(uncacheableReason('gemini', { generationConfig: { temperature: 0, candidateCount: 2 } }, model, settings, false)).toBe('several answers');
    expect(reason('chat', { logprobs: true })).toBe('logprobs');
    expect(reason('responses', { store: false, include: ['message.output_text.logprobs'] })).toBe('logprobs');
    expect(reason('responses', { store: false, include: ['reasoning.encrypted_content'] })).toBeUndefined();
    expect(reason('chat', { modalities: ['text', 'audio'] })).toBe('audio output');
  });

  it('not with tools the upstream runs; function and custom tools are fine', () => {
    expect(reason('chat', { tools: [{ type: 'function', function: { name: 'f' } }] })).toBeUndefined();
    expect(reason('chat', { web_search_options: {} })).toBe('hosted tools');
    expect(
      reason('responses', {
        store: false,
        tools: [
          { type: 'function', name: 'f' },
          { type: 'custom', name: 'g' },
        ],
      }),
    ).toBeUndefined();
    expect(reason('responses', { store: false, tools: [{ type: 'file_search' }] })).toBe('hosted tools');
    expect(reason('messages', { tools: [{ name: 'f', input_schema: {} }] })).toBeUndefined();
    expect(reason('messages', { tools: [{ type: 'web_search_20250305', name: 'web_search' }] })).toBe('hosted tools');
    expect(reason('messages', { mcp_servers: [{ type: 'url', url: 'https://mcp.example', name: 'x' }] })).toBe('hosted tools');
    expect(
      uncacheableReason('gemini', { generationConfig: { temperature: 0 }, tools: [{ functionDeclarations: [] }] }, model, settings, false),
    ).toBeUndefined();
    expect(uncacheableReason('gemini', { generationConfig: { temperature: 0 }, tools: [{ googleSearch: {} }] }, model, settings, false)).toBe('hosted tools');
  });

  it('not stateful Responses requests', () => {
    expect(reason('responses', { store: false })).toBeUndefined();
    expect(reason('responses', {})).toBeUndefined();
    expect(reason('responses', {}, true)).toBe('stateful');
    expect(reason('responses', { store: true })).toBe('stateful');
    expect(reason('responses', { store: false, previous_response_id: 'resp_1' })).toBe('stateful');
    expect(reason('responses', { store: false, background: true })).toBe('stateful');
    expect(reason('responses', { store: false, conversation: 'conv_1' })).toBe('stateful');
  });
});

describe('who opts in', () => {
  const request = (header?: string) => new Request('http://gateway.test/', { headers: header === undefined ? {} : { 'x-infergate-cache': header } });
  const key = (cache?: boolean) => ({ id: 'k', models: '*' as const, ...(cache === undefined ? {} : { cache }) });
  const plain: ModelEntry = { id: 'plain', provider: 'p' };

  it('header off, then key false, then header on, then key true, then the model', () => {
    expect(cacheWanted(request('off'), key(true), model)).toBe(false);
    expect(cacheWanted(request('on'), key(false), model)).toBe(false);
    expect(cacheWanted(request('ON '), key(), plain)).toBe(true);
    expect(cacheWanted(request(), key(true), plain)).toBe(true);
    expect(cacheWanted(request(), key(), model)).toBe(true);
    expect(cacheWanted(request(), key(), plain)).toBe(false);
    expect(() => cacheWanted(request('yes'), key(), model)).toThrow(/must be "on" or "off"/);
  });
});
