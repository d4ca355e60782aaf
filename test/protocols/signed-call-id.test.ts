import { describe, expect, it } from 'vitest';
import { chatClient } from '../../src/protocols/chat/index.js';
import type { ClientCodec } from '../../src/protocols/codec.js';
import { encodeGeminiRequest } from '../../src/protocols/gemini/encode-request.js';
import { SKIP_SIGNATURE, validatesSignatures, withSkippedSignatures } from '../../src/protocols/gemini/skip-signature.js';
import type { IRRequest, IRResponse, IRStreamEvent } from '../../src/protocols/ir.js';
import { messagesClient } from '../../src/protocols/messages/index.js';
import { responsesClient } from '../../src/protocols/responses/index.js';
import { idWithSignature, splitSignedId, unsignedId } from '../../src/protocols/signed-call-id.js';
import { collect, irStream, makeCtx } from './helpers.js';
import { driveStreamEncoder } from '../../src/protocols/stream-driver.js';

type Json = Record<string, any>;

/** Gemini's signatures are standard base64 with `+`, `/` and padding. */
const SIG = 'Cu+/+/8wMDAwMDH+/g==';
const OTHER_SIG = 'Cu+/+/8wMDAwMDL+/g==';
/** Anthropic's rule for tool_use ids, the strictest of the id rules. */
const ANTHROPIC_ID = /^[a-zA-Z0-9_-]+$/;

describe('a signature in a tool call id', () => {
  it('rides in id characters every vendor takes, and comes back exactly, padding and all', () => {
    for (const signature of [SIG, 'QUJD', 'QUI=', 'QQ==', `${'+/'.repeat(700)}ab==`]) {
      const id = idWithSignature('call_gm0123', signature);
      expect(id).toMatch(ANTHROPIC_ID);
      expect(splitSignedId(id)).toEqual({ id: 'call_gm0123', signature });
      expect(unsignedId(id)).toBe('call_gm0123');
    }
  });

  it('leaves out a value that is not padded base64, and reads the earlier Chat form', () => {
    expect(idWithSignature('call_1', 'not base64!')).toBe('call_1');
    expect(idWithSignature('call_1', 'QUI')).toBe('call_1');
    expect(splitSignedId(`call_1__infergate-gemini:${SIG}`)).toEqual({ id: 'call_1', signature: SIG });
    expect(splitSignedId('toolu_01ABC')).toEqual({ id: 'toolu_01ABC' });
    expect(unsignedId('toolu_01ABC')).toBe('toolu_01ABC');
  });
});

/** A Gemini 3 answer: the first of two parallel calls signed. */
const ANSWER: IRResponse = {
  id: 'resp_1',
  model: 'gemini-3-pro-preview',
  created: 1,
  content: [
    { type: 'reasoning', text: '', thoughtSignature: SIG },
    { type: 'tool_call', id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { type: 'tool_call', id: 'call_b', name: 'get_time', arguments: '{}' },
  ],
  finishReason: 'tool_calls',
  usage: { input: 1, output: 1 },
};
const EVENTS: IRStreamEvent[] = [
  { type: 'start', id: 'resp_1', model: 'gemini-3-pro-preview', created: 1 },
  { type: 'reasoning_end', thoughtSignature: SIG },
  { type: 'usage', usage: { input: 1 } },
  { type: 'tool_call_start', id: 'call_a', name: 'get_weather' },
  { type: 'tool_call_delta', arguments: '{"city":"Paris"}' },
  { type: 'tool_call_start', id: 'call_b', name: 'get_time' },
  { type: 'tool_call_delta', arguments: '{}' },
  { type: 'finish', reason: 'tool_calls', usage: { input: 1, output: 1 } },
];

interface Case {
  codec: ClientCodec;
  request: Json;
  /** The call ids of an answer as the client reads them. */
  ids(answer: Json): string[];
  /** The same ids in a stream's frames. */
  streamedIds(text: string): string[];
  /** The client's next turn replaying the calls with these ids, without thinking or reasoning. */
  replay(ids: string[]): Json;
  /** The same with a thinking block or reasoning item that carries `signature` before the calls (not Chat: it has none). */
  replayWithThinking?(ids: string[], signature: string): Json;
}

const dataOf = (text: string): Json[] =>
  text
    .split('\n\n')
    .map((frame) =>
      frame
        .split('\n')
        .find((line) => line.startsWith('data: '))
        ?.slice(6),
    )
    .filter((data): data is string => data !== undefined && data !== '[DONE]')
    .map((data) => JSON.parse(data));

const CASES: Record<string, Case> = {
  chat: {
    codec: chatClient,
    request: { model: 'm', messages: [] },
    ids: (answer) => answer.choices[0].message.tool_calls.map((call: Json) => call.id),
    streamedIds: (text) => dataOf(text).flatMap((chunk) => (chunk.choices?.[0]?.delta?.tool_calls ?? []).flatMap((call: Json) => call.id ?? [])),
    replay: (ids) => ({
      model: 'm',
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: ids.map((id, i) => ({ id, type: 'function', function: { name: `f${i}`, arguments: '{}' } })) },
        ...ids.map((id) => ({ role: 'tool', tool_call_id: id, content: 'ok' })),
      ],
    }),
  },
  messages: {
    codec: messagesClient,
    request: { model: 'm', max_tokens: 10, messages: [] },
    ids: (answer) => answer.content.filter((block: Json) => block.type === 'tool_use').map((block: Json) => block.id),
    streamedIds: (text) =>
      dataOf(text)
        .filter((event) => event.type === 'content_block_start' && event.content_block.type === 'tool_use')
        .map((event) => event.content_block.id),
    replay: (ids) => ({
      model: 'm',
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: ids.map((id, i) => ({ type: 'tool_use', id, name: `f${i}`, input: {} })) },
        { role: 'user', content: ids.map((id) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' })) },
      ],
    }),
    replayWithThinking: (ids, signature) => {
      const body = CASES.messages!.replay(ids);
      body.messages[1].content.unshift({ type: 'thinking', thinking: '', signature: `infergate-gemini:${signature}` });
      return body;
    },
  },
  responses: {
    codec: responsesClient,
    request: { model: 'm', input: 'Weather?' },
    ids: (answer) => answer.output.filter((item: Json) => item.type === 'function_call').map((item: Json) => item.call_id),
    streamedIds: (text) =>
      dataOf(text)
        .filter((event) => event.type === 'response.output_item.added' && event.item.type === 'function_call')
        .map((event) => event.item.call_id),
    replay: (ids) => ({
      model: 'm',
      input: [
        { role: 'user', content: 'Weather?' },
        ...ids.map((id, i) => ({ type: 'function_call', call_id: id, name: `f${i}`, arguments: '{}' })),
        ...ids.map((id) => ({ type: 'function_call_output', call_id: id, output: 'ok' })),
      ],
    }),
    replayWithThinking: (ids, signature) => {
      const body = CASES.responses!.replay(ids);
      body.input.splice(1, 0, { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: `infergate-gemini:${signature}` });
      return body;
    },
  },
};

/** The IR assistant turn and tool results a replay decodes to. */
function decoded(codec: ClientCodec, body: Json): { assistant: Json[]; results: string[] } {
  const ir: IRRequest = codec.decodeRequest(body, 'gemini-3-pro-preview');
  const assistant = ir.messages.find((message) => message.role === 'assistant')!.content as Json[];
  const results = ir.messages.flatMap((message) => (message.role === 'tool' ? [message.toolCallId] : []));
  return { assistant, results };
}

describe.each(Object.keys(CASES))('%s client', (name) => {
  const { codec, request, ids, streamedIds, replay } = CASES[name]!;

  it('gets the signature in the id of the call it signs, JSON and streamed, and it comes back before that call without thinking', async () => {
    const sent = ids(codec.encodeResponse(ANSWER, makeCtx(request)));
    expect(sent[0]).toBe(idWithSignature('call_a', SIG));
    expect(sent[1]).toBe('call_b');
    const streamed = streamedIds(await collect(driveStreamEncoder(irStream(EVENTS), codec.streamEncoder(makeCtx(request)), makeCtx(request))));
    expect(streamed).toEqual(sent);

    const { assistant, results } = decoded(codec, replay(sent));
    expect(assistant).toEqual([
      { type: 'reasoning', text: '', thoughtSignature: SIG },
      expect.objectContaining({ type: 'tool_call', id: 'call_a' }),
      expect.objectContaining({ type: 'tool_call', id: 'call_b' }),
    ]);
    expect(results).toEqual(['call_a', 'call_b']);
  });

  it('sends every upstream of its own protocol the calls’ own ids (passthrough)', () => {
    const body = replay([idWithSignature('call_a', SIG), 'call_b']);
    const sent = codec.forPassthrough!({ parsed: body, text: JSON.stringify(body) });
    expect(sent.text).toBeUndefined();
    expect(JSON.stringify(sent.parsed)).not.toContain('infergate');
    expect(sent.parsed).toEqual(replay(['call_a', 'call_b']));
    // Nothing to strip: the body and the client's text go on as they were.
    const plain = replay(['call_a', 'call_b']);
    expect(codec.forPassthrough!({ parsed: plain, text: 'as sent' })).toEqual({ parsed: plain, text: 'as sent' });
  });
});

// Chat has no reasoning slot to compare with.
describe.each(['messages', 'responses'])('%s client with its thinking kept', (name) => {
  const { codec, replayWithThinking } = CASES[name]!;

  it('prefers the signature of the thinking block or reasoning item before the call to the one in its id', () => {
    const { assistant } = decoded(codec, replayWithThinking!([idWithSignature('call_a', OTHER_SIG), 'call_b'], SIG));
    expect(assistant.filter((part) => part.type === 'reasoning')).toEqual([expect.objectContaining({ thoughtSignature: SIG })]);
    expect(assistant.filter((part) => part.type === 'tool_call').map((part) => part.id)).toEqual(['call_a', 'call_b']);
  });
});

describe('Google’s skip value for calls Gemini did not sign', () => {
  const call = (name: string, signature?: string): Json => ({ functionCall: { name, args: {} }, ...(signature ? { thoughtSignature: signature } : {}) });
  const result = (name: string): Json => ({ functionResponse: { name, response: { output: 'ok' } } });

  it('goes on the first call of each model step of the current turn that has none, nowhere else', () => {
    const contents: Json[] = [
      { role: 'user', parts: [{ text: 'Earlier question' }] },
      { role: 'model', parts: [call('old')] },
      { role: 'user', parts: [result('old')] },
      { role: 'user', parts: [{ text: 'Weather?' }] },
      { role: 'model', parts: [{ text: 'Let me look.' }, call('a'), call('b')] },
      { role: 'user', parts: [result('a'), result('b')] },
      { role: 'model', parts: [call('c', SIG)] },
      { role: 'user', parts: [result('c')] },
    ];
    const skipped = withSkippedSignatures(contents);
    expect(skipped[1]).toBe(contents[1]);
    expect(skipped[4]!.parts).toEqual([{ text: 'Let me look.' }, call('a', SKIP_SIGNATURE), call('b')]);
    expect(skipped[6]).toBe(contents[6]);
    // The client's body is left as it was.
    expect(contents[4]!.parts[1]).toEqual(call('a'));
    expect(withSkippedSignatures(skipped)).toBe(skipped);
  });

  it('is for Gemini 3 and later, aliases included; Gemini 2.5 gets nothing it did not issue', () => {
    expect(['gemini-3-pro-preview', 'gemini-3.5-flash', 'gemini-flash-latest', 'publishers/google/models/gemini-3-flash'].map(validatesSignatures)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(['gemini-2.5-flash', 'gemini-2.0-flash', 'gemini-1.5-pro', 'gpt-5'].map(validatesSignatures)).toEqual([false, false, false, false]);

    const ir = CASES.chat!.codec.decodeRequest(CASES.chat!.replay(['toolu_01', 'toolu_02']), 'gemini-3-pro-preview');
    const model = (upstream: string) => encodeGeminiRequest({ ...ir, model: upstream }).contents.find((content) => content.role === 'model')!;
    expect(model('gemini-3-pro-preview').parts.map((part) => part.thoughtSignature)).toEqual([SKIP_SIGNATURE, undefined]);
    expect(model('gemini-2.5-flash').parts.map((part) => part.thoughtSignature)).toEqual([undefined, undefined]);
  });
});

describe('a Gemini text answer’s signature, streamed after its text, to a Messages client', () => {
  /** The content blocks a Messages client gets for these events, as they start. */
  const blocks = async (events: IRStreamEvent[]): Promise<Json[]> => {
    const ctx = makeCtx({ model: 'm', max_tokens: 10, messages: [] });
    const frames = dataOf(await collect(driveStreamEncoder(irStream(events), messagesClient.streamEncoder(ctx), ctx)));
    return frames.filter((event) => event.type === 'content_block_start').map((event) => event.content_block);
  };
  const start: IRStreamEvent = { type: 'start', id: 'r', model: 'gemini-3-pro-preview', created: 1 };

  it('is left out at the end of the answer, so the text stays the last block (what Claude Code shows)', async () => {
    expect(
      await blocks([
        start,
        { type: 'text_delta', text: 'The token is tok_1.' },
        { type: 'reasoning_end', thoughtSignature: SIG },
        { type: 'finish', reason: 'stop' },
      ]).then((started) => started.map((block) => block.type)),
    ).toEqual(['text']);
  });

  it('goes out before a call that follows, in a thinking block and the call’s id', async () => {
    const started = await blocks([
      start,
      { type: 'text_delta', text: 'Let me look.' },
      { type: 'reasoning_end', thoughtSignature: SIG },
      { type: 'tool_call_start', id: 'call_a', name: 'f' },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    expect(started.map((block) => block.type)).toEqual(['text', 'thinking', 'tool_use']);
    expect(started[2]!.id).toBe(idWithSignature('call_a', SIG));
  });
});
