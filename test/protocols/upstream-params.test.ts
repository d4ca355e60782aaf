import { describe, expect, it } from 'vitest';
import { encodeChatRequest } from '../../src/protocols/chat/encode-request.js';
import { encodeConverseRequest } from '../../src/protocols/converse/encode-request.js';
import { encodeGeminiRequest } from '../../src/protocols/gemini/encode-request.js';
import type { IRRequest } from '../../src/protocols/ir.js';
import { encodeMessagesRequest } from '../../src/protocols/messages/encode-request.js';
import { encodeResponsesRequest } from '../../src/protocols/responses/encode-request.js';
import { admitParams } from '../../src/protocols/upstream-params.js';

type Json = Record<string, any>;

/** The rule of `upstream-params.ts`, wire by wire, on IRs as the pipeline hands them (with a `droppedParams` array). */
function ir(overrides: Partial<IRRequest> = {}): IRRequest {
  return {
    model: 'm',
    system: [],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    stream: false,
    passthrough: {},
    droppedParams: [],
    ...overrides,
  };
}

const TOOLS = [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];

describe('admitParams', () => {
  it('drops and notes each hint once, refuses a field of meaning, drops bookkeeping silently', () => {
    const request = ir({ topK: 5, passthrough: { seed: 1, store: true, frequency_penalty: 0.1 } });
    const admitted = admitParams(request, 'responses');
    expect(admitted.topK).toBeUndefined();
    expect(admitted.passthrough).toEqual({ store: true });
    admitParams(request, 'messages');
    // Messages keeps top_k; seed and the penalty are noted once however many encoders ran; store goes unnoted.
    expect(request.droppedParams).toEqual(['top_k', 'seed', 'frequency_penalty']);
    // The IR given is left as it was.
    expect(request.passthrough).toEqual({ seed: 1, store: true, frequency_penalty: 0.1 });
    expect(() => admitParams(ir({ stop: ['END'], clientFields: { stop: 'stop_sequences' } }), 'responses')).toThrow(
      expect.objectContaining({ status: 400, param: 'stop_sequences', code: 'unsupported_parameter', message: expect.stringContaining("'stop_sequences'") }),
    );
  });

  it('parallel_tool_calls is noted only when it asks for one call at a time', () => {
    const single = ir({ tools: TOOLS, parallelToolCalls: false, toolChoice: { type: 'auto', parallel: false } });
    const body = encodeGeminiRequest(single) as Json;
    expect(single.droppedParams).toEqual(['parallel_tool_calls']);
    expect(JSON.stringify(body)).not.toMatch(/parallel/i);
    const parallel = ir({ tools: TOOLS, parallelToolCalls: true });
    encodeGeminiRequest(parallel);
    expect(parallel.droppedParams).toEqual([]);
  });
});

describe('OpenAI’s reasoning models', () => {
  it.each(['gpt-5', 'o3-mini', 'openai/o4-mini', 'gpt-5.1-codex'])('%s: temperature and top_p are dropped and named', (model) => {
    const request = ir({ model, temperature: 0, topP: 1, clientFields: { temperature: 'generationConfig.temperature', topP: 'generationConfig.topP' } });
    const body = encodeResponsesRequest(request) as Json;
    expect(body).not.toHaveProperty('temperature');
    expect(body).not.toHaveProperty('top_p');
    expect(request.droppedParams).toEqual(['generationConfig.temperature', 'generationConfig.topP']);
  });

  it('on Chat, their penalties and logit_bias are dropped too, and stop sequences refused in the client’s words', () => {
    const request = ir({ model: 'o3', passthrough: { frequency_penalty: 0.5, logit_bias: { 1: 1 }, seed: 3 } });
    const body = encodeChatRequest(request) as Json;
    expect(body).toMatchObject({ seed: 3 });
    expect(body).not.toHaveProperty('frequency_penalty');
    expect(request.droppedParams).toEqual(['frequency_penalty', 'logit_bias']);
    const stop = ir({ model: 'gpt-5-mini', stop: ['END'], clientFields: { stop: 'generationConfig.stopSequences' } });
    expect(() => encodeChatRequest(stop)).toThrow(expect.objectContaining({ status: 400, param: 'generationConfig.stopSequences' }));
  });

  it.each(['gpt-4.1', 'gpt-5-chat-latest', 'gpt-4o'])('%s: temperature and top_p go on', (model) => {
    const request = ir({ model, temperature: 0, topP: 1 });
    expect(encodeChatRequest(request)).toMatchObject({ temperature: 0, top_p: 1 });
    expect(request.droppedParams).toEqual([]);
  });
});

describe('Claude’s sampling rules (Messages and Converse)', () => {
  it('with thinking on, temperature and top_k are dropped and named, top_p from 0.95 kept', () => {
    const request = ir({ model: 'claude-sonnet-4-5', reasoning: { budgetTokens: 2048 }, temperature: 0.2, topK: 5, topP: 0.96 });
    const body = encodeMessagesRequest(request);
    expect(body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 }, top_p: 0.96 });
    expect(body).not.toHaveProperty('temperature');
    expect(body).not.toHaveProperty('top_k');
    expect(request.droppedParams).toEqual(['temperature', 'top_k']);
    const low = ir({ model: 'claude-sonnet-4-5', reasoning: { budgetTokens: 2048 }, topP: 0.5 });
    expect(encodeMessagesRequest(low)).not.toHaveProperty('top_p');
    expect(low.droppedParams).toEqual(['top_p']);
  });

  it('from Opus 4.1 on, top_p goes when temperature is set; older models keep both', () => {
    const newer = ir({ model: 'claude-opus-4-1', temperature: 0, topP: 1, clientFields: { topP: 'generationConfig.topP' } });
    expect(encodeMessagesRequest(newer)).toMatchObject({ temperature: 0 });
    expect(encodeMessagesRequest(newer)).not.toHaveProperty('top_p');
    expect(newer.droppedParams).toEqual(['generationConfig.topP']);
    const bedrock = ir({ model: 'us.anthropic.claude-haiku-4-5-20251001-v1:0', temperature: 0, topP: 1 });
    expect(encodeConverseRequest(bedrock).inferenceConfig).toEqual({ temperature: 0 });
    expect(bedrock.droppedParams).toEqual(['top_p']);
    const older = ir({ model: 'claude-3-7-sonnet-20250219', temperature: 0, topP: 1 });
    expect(encodeMessagesRequest(older)).toMatchObject({ temperature: 0, top_p: 1 });
    expect(older.droppedParams).toEqual([]);
  });

  it('a forced tool wins over thinking: thinking is dropped and named (a 400 under strictParams)', () => {
    const forced = (extra: Partial<IRRequest> = {}) =>
      ir({
        model: 'claude-sonnet-4-5',
        tools: TOOLS,
        toolChoice: { type: 'tool', name: 'get_weather' },
        reasoning: { effort: 'high' },
        clientFields: { reasoning: 'thinking' },
        ...extra,
      });
    const request = forced();
    const body = encodeMessagesRequest(request);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'get_weather' });
    expect(body).not.toHaveProperty('thinking');
    expect(request.droppedParams).toEqual(['thinking']);
    const converse = forced({ model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' });
    expect(encodeConverseRequest(converse).additionalModelRequestFields).toBeUndefined();
    expect(converse.droppedParams).toEqual(['thinking']);
    expect(() => encodeMessagesRequest(forced({ strictParams: true }))).toThrow(expect.objectContaining({ status: 400, param: 'thinking' }));
  });
});

describe('every OpenAI passthrough field on each wire', () => {
  const passthrough = {
    seed: 1,
    frequency_penalty: 0.1,
    presence_penalty: 0.1,
    logit_bias: { 1: 1 },
    verbosity: 'low',
    prediction: { type: 'content', content: 'x' },
    service_tier: 'default',
    store: true,
    prompt_cache_key: 'k',
    safety_identifier: 's',
    include: ['reasoning.encrypted_content'],
  };
  it.each([
    [
      'chat',
      () => encodeChatRequest,
      [
        'seed',
        'frequency_penalty',
        'presence_penalty',
        'logit_bias',
        'verbosity',
        'prediction',
        'service_tier',
        'store',
        'prompt_cache_key',
        'safety_identifier',
      ],
      [],
    ],
    [
      'responses',
      () => encodeResponsesRequest,
      ['service_tier', 'store', 'prompt_cache_key', 'safety_identifier', 'include', 'text'],
      ['seed', 'frequency_penalty', 'presence_penalty', 'logit_bias', 'prediction'],
    ],
    ['gemini', () => encodeGeminiRequest, ['generationConfig'], ['logit_bias', 'verbosity', 'prediction']],
    ['messages', () => encodeMessagesRequest, [], ['seed', 'frequency_penalty', 'presence_penalty', 'logit_bias', 'verbosity', 'prediction']],
  ] as const)('%s: what goes on, and which hints are named', (_wire, encoder, sent, dropped) => {
    const request = ir({ passthrough });
    const body = (encoder() as (ir: IRRequest) => unknown)(request) as Json;
    for (const field of sent) expect(body).toHaveProperty(field);
    expect(request.droppedParams).toEqual(dropped);
  });
});
