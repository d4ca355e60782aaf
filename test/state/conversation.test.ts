import { describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { jsonResponse } from '../../src/http/json-response.js';
import { continueConversation, recordResponses, storedItemsOf, type CompletedResponse } from '../../src/state/conversation.js';
import { MemoryResponseStore } from '../../src/state/memory-response-store.js';
import type { ResponseStore } from '../../src/state/response-store.js';

type Json = Record<string, any>;

const assistant = (text: string, id = 'msg_1'): Json => ({
  type: 'message',
  id,
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
});
const call: Json = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' };
const reasoning: Json = { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Look it up.' }], encrypted_content: 'opaque' };

async function storeWith(id: string, keyId: string, items: unknown[]): Promise<ResponseStore> {
  const store = new MemoryResponseStore();
  await store.put({ id, keyId, model: 'gpt-chat', items, createdAt: Date.now() });
  return store;
}

async function notFound(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

describe('continueConversation', () => {
  it('leaves a body without previous_response_id as it is; its history is its input as items', async () => {
    const store = new MemoryResponseStore();
    const body = { model: 'm', instructions: 'Be brief.', input: 'Hi' };
    const continued = await continueConversation(store, 'key_a', body);
    expect(continued.body).toBe(body);
    expect(continued.history).toEqual([{ type: 'message', role: 'user', content: 'Hi' }]);

    const items = [{ role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }];
    expect((await continueConversation(store, 'key_a', { model: 'm', input: items })).history).toEqual(items);
    expect((await continueConversation(store, 'key_a', { model: 'm' })).history).toEqual([]);
    const withNull = { model: 'm', input: 'Hi', previous_response_id: null };
    expect((await continueConversation(store, 'key_a', withNull)).body).toBe(withNull);
  });

  it('puts the stored items before this input and drops previous_response_id; the rest of the body stays', async () => {
    const earlier = [{ type: 'message', role: 'user', content: 'Weather in Paris?' }, reasoning, call];
    const store = await storeWith('resp_1', 'key_a', earlier);
    const output = { type: 'function_call_output', call_id: 'call_1', output: '18°C' };
    const body = { model: 'm', previous_response_id: 'resp_1', input: [output], stream: true, instructions: 'Answer in French.', temperature: 0.2 };
    const continued = await continueConversation(store, 'key_a', body);
    expect(continued.body).toEqual({ model: 'm', input: [...earlier, output], stream: true, instructions: 'Answer in French.', temperature: 0.2 });
    expect(continued.body).not.toHaveProperty('previous_response_id');
    expect(continued.history).toEqual([...earlier, output]);
    // The client's body is not changed.
    expect(body.previous_response_id).toBe('resp_1');
    expect(body.input).toEqual([output]);
  });

  it('makes a string input one user message after the stored items', async () => {
    const store = await storeWith('resp_1', 'key_a', [{ type: 'message', role: 'user', content: 'Hi' }, assistant('Hello!')]);
    const continued = await continueConversation(store, 'key_a', { model: 'm', previous_response_id: 'resp_1', input: 'And you?' });
    expect(continued.body.input).toEqual([
      { type: 'message', role: 'user', content: 'Hi' },
      assistant('Hello!'),
      { type: 'message', role: 'user', content: 'And you?' },
    ]);
    expect(continued.history).toEqual(continued.body.input);
  });

  it('answers 404 for an unknown id, and the very same 404 for another key’s response', async () => {
    const store = await storeWith('resp_theirs', 'key_b', [{ type: 'message', role: 'user', content: 'secret' }]);
    const unknown = await notFound(continueConversation(store, 'key_a', { model: 'm', previous_response_id: 'resp_unknown', input: 'Hi' }));
    expect(unknown).toMatchObject({
      status: 404,
      type: 'invalid_request_error',
      param: 'previous_response_id',
      code: 'previous_response_not_found',
      message: "Previous response with id 'resp_unknown' not found.",
    });
    const theirs = await notFound(continueConversation(store, 'key_a', { model: 'm', previous_response_id: 'resp_theirs', input: 'Hi' }));
    expect(theirs).toMatchObject({ status: 404, type: unknown.type, param: unknown.param, code: unknown.code });
    expect(theirs.message).toBe(unknown.message.replace('resp_unknown', 'resp_theirs'));
    // The owner continues it.
    await expect(continueConversation(store, 'key_b', { model: 'm', previous_response_id: 'resp_theirs', input: 'Hi' })).resolves.toBeDefined();
  });

  it('does not inherit instructions through the chain (spec 2.2)', async () => {
    const store = new MemoryResponseStore();
    // Turn 1, with instructions: what gets stored is its input and output only.
    const turn1 = await continueConversation(store, 'key_a', { model: 'm', instructions: 'Talk like a pirate.', input: 'Hi' });
    await store.put({ id: 'resp_1', keyId: 'key_a', model: 'm', items: storedItemsOf(turn1.history, [assistant('Ahoy!')]), createdAt: Date.now() });
    // Turn 2 without instructions: none come back.
    const turn2 = await continueConversation(store, 'key_a', { model: 'm', previous_response_id: 'resp_1', input: 'Bye' });
    expect(turn2.body).not.toHaveProperty('instructions');
    expect(JSON.stringify(turn2.body)).not.toContain('pirate');
    // Turn 3 with its own instructions: only those.
    await store.put({
      id: 'resp_2',
      keyId: 'key_a',
      model: 'm',
      items: storedItemsOf(turn2.history, [assistant('Farewell.', 'msg_2')]),
      createdAt: Date.now(),
    });
    const turn3 = await continueConversation(store, 'key_a', { model: 'm', previous_response_id: 'resp_2', input: 'Again', instructions: 'Be formal.' });
    expect(turn3.body.instructions).toBe('Be formal.');
    expect(JSON.stringify(turn3.body)).not.toContain('pirate');
    expect(turn3.body.input).toEqual([
      { type: 'message', role: 'user', content: 'Hi' },
      assistant('Ahoy!'),
      { type: 'message', role: 'user', content: 'Bye' },
      assistant('Farewell.', 'msg_2'),
      { type: 'message', role: 'user', content: 'Again' },
    ]);
  });

  it('lets a failing store reject (the pipeline reports it)', async () => {
    const store: ResponseStore = { get: () => Promise.reject(new Error('redis down')), put: () => Promise.resolve() };
    await expect(continueConversation(store, 'key_a', { model: 'm', previous_response_id: 'resp_1', input: 'Hi' })).rejects.toThrow('redis down');
  });
});

describe('continueConversation: item_reference', () => {
  const user = (text: string): Json => ({ type: 'message', role: 'user', content: text });
  const ref = (id: string): Json => ({ type: 'item_reference', id });

  it('replaces each reference with the stored item of that id, in place; the rest of the body stays', async () => {
    const store = await storeWith('resp_1', 'key_a', [user('Weather in Paris?'), reasoning, assistant('Checking.'), call]);
    const result = { type: 'function_call_output', call_id: 'call_1', output: '18°C' };
    const body = { model: 'm', stream: true, input: [user('Weather in Paris?'), ref('rs_1'), ref('msg_1'), { id: 'fc_1' }, result] };
    const continued = await continueConversation(store, 'key_a', body);
    const expanded = [user('Weather in Paris?'), reasoning, assistant('Checking.'), call, result];
    expect(continued.body).toEqual({ model: 'm', stream: true, input: expanded });
    // A new body, so the pipeline sends it instead of the client's text; the client's is unchanged.
    expect(continued.body).not.toBe(body);
    expect(body.input[1]).toEqual(ref('rs_1'));
    // What is stored next holds the items themselves, so later references still resolve.
    expect(continued.history).toEqual(expanded);
  });

  it('expands references after a previous_response_id too', async () => {
    const store = await storeWith('resp_1', 'key_a', [user('Hi'), assistant('Hello!')]);
    const continued = await continueConversation(store, 'key_a', { model: 'm', previous_response_id: 'resp_1', input: [ref('msg_1'), user('Again?')] });
    expect(continued.body.input).toEqual([user('Hi'), assistant('Hello!'), assistant('Hello!'), user('Again?')]);
  });

  it('answers 404 naming the reference for an unknown item, and the very same for another key’s', async () => {
    const store = await storeWith('resp_theirs', 'key_b', [assistant('secret', 'msg_theirs')]);
    const unknown = await notFound(continueConversation(store, 'key_a', { model: 'm', input: [user('Hi'), ref('msg_unknown')] }));
    expect(unknown).toMatchObject({
      status: 404,
      type: 'invalid_request_error',
      param: 'input[1].id',
      code: 'item_not_found',
      message: "Item with id 'msg_unknown' not found.",
    });
    const theirs = await notFound(continueConversation(store, 'key_a', { model: 'm', input: [user('Hi'), ref('msg_theirs')] }));
    expect(theirs).toMatchObject({ status: 404, param: unknown.param, code: unknown.code, message: "Item with id 'msg_theirs' not found." });
    expect(JSON.stringify(theirs)).not.toContain('secret');
    // The owner gets it.
    expect((await continueConversation(store, 'key_b', { model: 'm', input: [ref('msg_theirs')] })).body.input).toEqual([assistant('secret', 'msg_theirs')]);
  });

  it('answers 400 for a reference without a string id', async () => {
    const store = new MemoryResponseStore();
    const error = await notFound(continueConversation(store, 'key_a', { model: 'm', input: [{ type: 'item_reference', id: 7 }] }));
    expect(error).toMatchObject({ status: 400, param: 'input[0].id' });
  });

  it('looks all references up in one store call', async () => {
    const store = await storeWith('resp_1', 'key_a', [assistant('One', 'msg_1'), assistant('Two', 'msg_2')]);
    const getItems = vi.spyOn(store as MemoryResponseStore, 'getItems');
    await continueConversation(store, 'key_a', { model: 'm', input: [ref('msg_1'), user('and'), ref('msg_2')] });
    expect(getItems).toHaveBeenCalledTimes(1);
    expect(getItems).toHaveBeenCalledWith('key_a', ['msg_1', 'msg_2']);
  });

  it('refuses references with a store that cannot look items up (a custom store of before): no upstream may resolve them', async () => {
    const store: ResponseStore = { get: () => Promise.resolve(undefined), put: () => Promise.resolve() };
    const error = await continueConversation(store, 'key_a', { model: 'm', input: [user('Hi'), ref('msg_1')] }).then(
      () => undefined,
      (caught: unknown) => caught as GatewayError,
    );
    expect(error).toMatchObject({ status: 400, param: 'input[1].type', code: 'unsupported_parameter' });
    const body = { model: 'm', input: [user('Hi')] };
    expect((await continueConversation(store, 'key_a', body)).body).toBe(body);
  });
});

describe('storedItemsOf', () => {
  it('is the history then the output items whole, ids and call ids kept; non-items dropped', () => {
    const history = [{ type: 'message', role: 'user', content: 'Weather in Paris?' }];
    const message = { ...assistant('Checking.'), phase: 'commentary' };
    expect(storedItemsOf(history, [reasoning, message, call, null, 'x', { id: 'no type' }])).toEqual([...history, reasoning, message, call]);
    expect(history).toHaveLength(1);
  });
});

// ---- recordResponses ------------------------------------------------------------------------

const completedResponse = (fields: Json = {}): Json => ({
  id: 'resp_42',
  object: 'response',
  status: 'completed',
  model: 'gpt-chat',
  output: [reasoning, assistant('Hello wörld! 👋')],
  usage: { input_tokens: 3, output_tokens: 4, total_tokens: 7 },
  ...fields,
});

function sseText(events: Json[], { eventLines = true, eol = '\n' } = {}): string {
  return events
    .map((event, i) => {
      const data = JSON.stringify({ ...event, sequence_number: i });
      return (eventLines ? `event: ${event.type}${eol}` : '') + `data: ${data}${eol}${eol}`;
    })
    .join('');
}

function streamEvents(terminal: Json): Json[] {
  const created = { ...completedResponse(), status: 'in_progress', output: [], usage: null };
  const message = assistant('Hello wörld! 👋');
  return [
    { type: 'response.created', response: created },
    { type: 'response.in_progress', response: created },
    { type: 'response.output_item.added', output_index: 0, item: { ...message, status: 'in_progress', content: [] } },
    { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hello wörld! 👋', logprobs: [] },
    { type: 'response.output_item.done', output_index: 0, item: message },
    terminal,
  ];
}

/** A pull-based byte source in the given chunks, recording pulls and its cancellation. */
function source(chunks: Uint8Array[]) {
  const state = { pulls: 0, cancelled: undefined as unknown, index: 0 };
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        state.pulls++;
        if (state.index >= chunks.length) controller.close();
        else controller.enqueue(chunks[state.index++]!);
      },
      cancel(reason) {
        state.cancelled = reason ?? 'cancelled';
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, state };
}

function chunked(bytes: Uint8Array, size: number): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return chunks;
}

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': 'req_1' };

async function bytesOf(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await response.arrayBuffer());
}

describe('recordResponses on JSON', () => {
  it('reports a completed response from the host Response at once, and returns it as it is', async () => {
    const body = completedResponse();
    const original = jsonResponse(body, 200, { 'x-request-id': 'req_1' });
    const seen: CompletedResponse[] = [];
    const recorded = await recordResponses(original, (completed) => {
      seen.push(completed);
    });
    // Reported before the answer is handed back: stored before the client can ask for the next turn.
    expect(seen).toEqual([{ id: 'resp_42', output: body.output, status: 'completed', response: body }]);
    expect(recorded).toBe(original);
    expect(recorded.headers.get('x-request-id')).toBe('req_1');
    expect(await recorded.json()).toEqual(body);
  });

  it('reads any other JSON Response as it passes, unchanged', async () => {
    const text = JSON.stringify(completedResponse({ status: undefined }));
    const bytes = new TextEncoder().encode(text);
    const { stream } = source(chunked(bytes, 5));
    const onCompleted = vi.fn();
    const recorded = await recordResponses(
      new Response(stream, { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', 'x-a': 'b' } }),
      onCompleted,
    );
    expect(recorded.status).toBe(200);
    expect(recorded.headers.get('x-a')).toBe('b');
    expect(await bytesOf(recorded)).toEqual(bytes);
    expect(onCompleted).toHaveBeenCalledTimes(1);
    expect(onCompleted).toHaveBeenCalledWith({ id: 'resp_42', output: completedResponse().output, response: JSON.parse(text) });
  });

  it.each(['failed', 'incomplete', 'in_progress', 'queued', 'cancelled'])('does not report a %s response', async (status) => {
    const onCompleted = vi.fn();
    await (await recordResponses(jsonResponse(completedResponse({ status })), onCompleted)).text();
    await (
      await recordResponses(new Response(JSON.stringify(completedResponse({ status })), { headers: { 'content-type': 'application/json' } }), onCompleted)
    ).text();
    expect(onCompleted).not.toHaveBeenCalled();
  });

  it('leaves error statuses, other content types and bodies that are not a response alone', async () => {
    const onCompleted = vi.fn();
    const error = jsonResponse({ error: { message: 'bad', type: 'invalid_request_error' } }, 400);
    expect(await recordResponses(error, onCompleted)).toBe(error);
    const upstreamError = new Response(JSON.stringify(completedResponse()), { status: 502, headers: { 'content-type': 'application/json' } });
    expect(await recordResponses(upstreamError, onCompleted)).toBe(upstreamError);
    const text = new Response(JSON.stringify(completedResponse()), { headers: { 'content-type': 'text/plain' } });
    expect(await recordResponses(text, onCompleted)).toBe(text);
    await (await recordResponses(jsonResponse({ id: 'chatcmpl-1', choices: [] }), onCompleted)).text();
    await (await recordResponses(new Response('{"id": "resp_1", "output": [', { headers: { 'content-type': 'application/json' } }), onCompleted)).text();
    expect(onCompleted).not.toHaveBeenCalled();
  });

  it('never lets a throwing callback break the answer', async () => {
    const body = completedResponse();
    const recorded = await recordResponses(new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } }), () => {
      throw new Error('boom');
    });
    expect(await recorded.json()).toEqual(body);
  });
});

describe('recordResponses on SSE', () => {
  const terminal = { type: 'response.completed', response: completedResponse() };
  const bytes = new TextEncoder().encode(sseText(streamEvents(terminal)));

  it.each([1, 2, 3, 7, 64, 1000, bytes.length])('reports response.completed once, bytes unchanged, in chunks of %i bytes', async (size) => {
    const { stream } = source(chunked(bytes, size));
    const seen: CompletedResponse[] = [];
    const recorded = await recordResponses(new Response(stream, { headers: SSE_HEADERS }), (completed) => {
      seen.push(completed);
    });
    expect(recorded.status).toBe(200);
    expect(Object.fromEntries(recorded.headers)).toMatchObject(SSE_HEADERS);
    expect(await bytesOf(recorded)).toEqual(bytes);
    expect(seen).toEqual([{ id: 'resp_42', output: completedResponse().output, status: 'completed', response: completedResponse() }]);
  });

  it('holds the completed event until its record is written, so the next turn on any instance finds it', async () => {
    const { stream } = source([bytes]);
    let written!: () => void;
    const write = new Promise<void>((resolve) => {
      written = resolve;
    });
    const recorded = await recordResponses(new Response(stream, { headers: SSE_HEADERS }), () => write);
    const reader = recorded.body!.getReader();
    const read = reader.read();
    const early = await Promise.race([read.then(() => 'read'), new Promise((resolve) => setImmediate(resolve, 'waiting'))]);
    expect(early).toBe('waiting');
    written();
    expect((await read).done).toBe(false);
  });

  it('answers a JSON response only once its record is written', async () => {
    let written!: () => void;
    const write = new Promise<void>((resolve) => {
      written = resolve;
    });
    const recording = recordResponses(jsonResponse(completedResponse()), () => write);
    const early = await Promise.race([recording.then(() => 'answered'), new Promise((resolve) => setImmediate(resolve, 'waiting'))]);
    expect(early).toBe('waiting');
    written();
    expect((await recording).status).toBe(200);
  });

  it('splits the completed event at every byte and still reports it before the client reads its end', async () => {
    const start = bytes.length - new TextEncoder().encode(sseText([terminal])).length;
    for (let cut = start; cut < bytes.length; cut += 13) {
      const { stream } = source([bytes.subarray(0, cut), bytes.subarray(cut)]);
      const onCompleted = vi.fn();
      const reader = (await recordResponses(new Response(stream, { headers: SSE_HEADERS }), onCompleted)).body!.getReader();
      const first = await reader.read();
      expect(first.value!.length).toBe(cut);
      expect(onCompleted).not.toHaveBeenCalled();
      await reader.read();
      expect(onCompleted).toHaveBeenCalledTimes(1);
      expect((await reader.read()).done).toBe(true);
    }
  });

  it('finds the event without `event:` lines and with CRLF line ends', async () => {
    for (const options of [{ eventLines: false }, { eol: '\r\n' }]) {
      const onCompleted = vi.fn();
      const text = sseText(streamEvents(terminal), options);
      await (await recordResponses(new Response(text, { headers: SSE_HEADERS }), onCompleted)).text();
      expect(onCompleted).toHaveBeenCalledWith({ id: 'resp_42', output: completedResponse().output, status: 'completed', response: completedResponse() });
    }
  });

  it.each([
    ['response.failed', { type: 'response.failed', response: completedResponse({ status: 'failed', error: { code: 'server_error', message: 'x' } }) }],
    [
      'response.incomplete',
      { type: 'response.incomplete', response: completedResponse({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }) },
    ],
    ['an error event', { type: 'error', error: { type: 'server_error', message: 'x' } }],
  ])('does not report a stream ending with %s', async (_, last) => {
    const onCompleted = vi.fn();
    await (await recordResponses(new Response(sseText(streamEvents(last)), { headers: SSE_HEADERS }), onCompleted)).text();
    expect(onCompleted).not.toHaveBeenCalled();
  });

  it('does not report a stream cut before its completed event', async () => {
    const onCompleted = vi.fn();
    const text = sseText(streamEvents(terminal));
    await (await recordResponses(new Response(text.slice(0, text.length - 20), { headers: SSE_HEADERS }), onCompleted)).text();
    expect(onCompleted).not.toHaveBeenCalled();
  });

  it('keeps backpressure: the source is read only as the client reads', async () => {
    const { stream, state } = source(chunked(bytes, 16));
    const reader = (await recordResponses(new Response(stream, { headers: SSE_HEADERS }), () => {})).body!.getReader();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const before = state.pulls;
    expect(before).toBeLessThanOrEqual(2);
    await reader.read();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(state.pulls).toBeLessThanOrEqual(before + 2);
    await reader.cancel();
  });

  it('passes a client’s cancel on to the source', async () => {
    const { stream, state } = source(chunked(bytes, 16));
    const reader = (await recordResponses(new Response(stream, { headers: SSE_HEADERS }), () => {})).body!.getReader();
    await reader.read();
    const reason = new Error('client left');
    await reader.cancel(reason);
    await vi.waitFor(() => expect(state.cancelled).toBe(reason));
  });

  it('passes a source error on to the client', async () => {
    const failing = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.subarray(0, 50));
        controller.error(new Error('upstream reset'));
      },
    });
    const recorded = await recordResponses(new Response(failing, { headers: SSE_HEADERS }), () => {});
    await expect(recorded.text()).rejects.toThrow('upstream reset');
  });

  it('never lets a throwing callback break the stream', async () => {
    const recorded = await recordResponses(new Response(bytes, { headers: SSE_HEADERS }), () => {
      throw new Error('boom');
    });
    expect(await bytesOf(recorded)).toEqual(bytes);
  });
});
