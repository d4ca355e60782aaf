// Pre-serialized upstream answers for the mock: OpenAI Chat Completions, OpenAI Responses and
// Anthropic Messages, as JSON and as SSE. Ids carry a sentinel so the runner can tell a translated
// answer (the client's protocol, the gateway's own id prefix) from one passed through by mistake.

export const SENTINEL = 'BENCHSENTINEL';
export const ids = {
  chat: `chatcmpl-${SENTINEL}`,
  messages: `msg_${SENTINEL}`,
  responses: `resp_${SENTINEL}`,
};

/** The id prefix each protocol's clients see. */
export const idPrefix = { chat: 'chatcmpl-', messages: 'msg_', responses: 'resp_' };

/** What ends a complete stream in each protocol. */
export const terminalMarker = {
  chat: 'data: [DONE]',
  messages: 'event: message_stop',
  responses: 'event: response.completed',
};

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
/** @param {number} i */
const token = (i) => ` ${WORDS[i % WORDS.length]}`;
/** @param {number} n */
const fullText = (n) => Array.from({ length: n }, (_, i) => token(i)).join('');

const created = 1_700_000_000;
const model = 'mock-model';

/** @param {unknown} data */
const data = (data) => `data: ${JSON.stringify(data)}\n\n`;
/** @param {string} name @param {unknown} payload */
const event = (name, payload) => `event: ${name}\n${data(payload)}`;

// ---------------------------------------------------------------------------------------------
// Chat Completions

const chatUsage = {
  prompt_tokens: 20,
  completion_tokens: 10,
  total_tokens: 30,
  prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
};

/** @param {number} words */
function chatJson(words) {
  return JSON.stringify({
    id: ids.chat,
    object: 'chat.completion',
    created,
    model,
    system_fingerprint: 'fp_bench',
    choices: [
      { index: 0, message: { role: 'assistant', content: fullText(words).trim(), refusal: null, annotations: [] }, logprobs: null, finish_reason: 'stop' },
    ],
    usage: chatUsage,
  });
}

/** @param {number} chunks @returns {{ prologue: string[], deltas: string[], epilogue: string[] }} */
function chatStream(chunks) {
  const base = { id: ids.chat, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_bench' };
  return {
    prologue: [
      data({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }], usage: null }),
    ],
    deltas: Array.from({ length: chunks }, (_, i) =>
      data({ ...base, choices: [{ index: 0, delta: { content: token(i) }, logprobs: null, finish_reason: null }], usage: null }),
    ),
    epilogue: [
      data({ ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }], usage: null }),
      data({ ...base, choices: [], usage: chatUsage }),
      'data: [DONE]\n\n',
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages

/** @param {number} words */
function messagesJson(words) {
  return JSON.stringify({
    id: ids.messages,
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text: fullText(words).trim() }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  });
}

/** @param {number} chunks */
function messagesStream(chunks) {
  return {
    prologue: [
      event('message_start', {
        type: 'message_start',
        message: {
          id: ids.messages,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 20, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        },
      }),
      event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      event('ping', { type: 'ping' }),
    ],
    deltas: Array.from({ length: chunks }, (_, i) =>
      event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: token(i) } }),
    ),
    epilogue: [
      event('content_block_stop', { type: 'content_block_stop', index: 0 }),
      event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 10 } }),
      event('message_stop', { type: 'message_stop' }),
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// Responses

const responsesUsage = {
  input_tokens: 20,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 10,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 30,
};

/** @param {string} status @param {unknown[]} output @param {unknown} usage */
function responseObject(status, output, usage) {
  return {
    id: ids.responses,
    object: 'response',
    created_at: created,
    status,
    model,
    output,
    usage,
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: {},
    parallel_tool_calls: true,
    temperature: 1,
    top_p: 1,
    tool_choice: 'auto',
    tools: [],
  };
}

/** @param {string} text */
const messageItem = (text) => ({
  id: `msg_item_${SENTINEL}`,
  type: 'message',
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
});

/** @param {number} words */
function responsesJson(words) {
  return JSON.stringify(responseObject('completed', [messageItem(fullText(words).trim())], responsesUsage));
}

/** @param {number} chunks */
function responsesStream(chunks) {
  let seq = 0;
  /** @param {string} type @param {Record<string, unknown>} payload */
  const ev = (type, payload) => event(type, { type, ...payload, sequence_number: seq++ });
  const itemId = `msg_item_${SENTINEL}`;
  const text = fullText(chunks);
  const prologue = [
    ev('response.created', { response: responseObject('in_progress', [], null) }),
    ev('response.in_progress', { response: responseObject('in_progress', [], null) }),
    ev('response.output_item.added', { output_index: 0, item: { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] } }),
    ev('response.content_part.added', {
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
    }),
  ];
  const deltas = Array.from({ length: chunks }, (_, i) =>
    ev('response.output_text.delta', { item_id: itemId, output_index: 0, content_index: 0, delta: token(i), logprobs: [] }),
  );
  const epilogue = [
    ev('response.output_text.done', { item_id: itemId, output_index: 0, content_index: 0, text, logprobs: [] }),
    ev('response.content_part.done', {
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text, annotations: [], logprobs: [] },
    }),
    ev('response.output_item.done', { output_index: 0, item: messageItem(text) }),
    ev('response.completed', { response: responseObject('completed', [messageItem(text)], responsesUsage) }),
  ];
  return { prologue, deltas, epilogue };
}

// ---------------------------------------------------------------------------------------------

/** @type {Record<'chat' | 'messages' | 'responses', (words: number) => string>} */
const jsonBuilders = { chat: chatJson, messages: messagesJson, responses: responsesJson };
/** @type {Record<'chat' | 'messages' | 'responses', (chunks: number) => { prologue: string[], deltas: string[], epilogue: string[] }>} */
const streamBuilders = { chat: chatStream, messages: messagesStream, responses: responsesStream };

/**
 * A JSON answer, as bytes.
 * @param {'chat' | 'messages' | 'responses'} protocol
 * @param {number} words
 */
export function jsonBody(protocol, words) {
  return Buffer.from(jsonBuilders[protocol](words));
}

/**
 * An SSE answer as the groups of bytes written at each tick: the prologue goes with the first
 * delta, the epilogue with the last, one delta per tick in between.
 * @param {'chat' | 'messages' | 'responses'} protocol
 * @param {number} chunks at least 1
 * @returns {{ groups: Buffer[], length: number, frames: number }}
 */
export function streamBody(protocol, chunks) {
  const n = Math.max(1, chunks);
  const { prologue, deltas, epilogue } = streamBuilders[protocol](n);
  const groups = deltas.map((delta, i) => {
    let text = delta;
    if (i === 0) text = prologue.join('') + text;
    if (i === n - 1) text += epilogue.join('');
    return Buffer.from(text);
  });
  return { groups, length: groups.reduce((sum, g) => sum + g.length, 0), frames: prologue.length + deltas.length + epilogue.length };
}
