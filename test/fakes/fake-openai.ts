import {
  counter,
  isObject,
  Rejection,
  sseData,
  sseEvent,
  startFake,
  type FakeProtocol,
  type FakeUpstream,
  type NeutralUsage,
  type RecordedRequest,
  type Rendered,
  type Reply,
  type UpstreamErrorSpec,
} from './fake-server.js';
import { FAKE_COMPACTION, FakeResponsesResources } from './fake-openai-resources.js';

type Json = Record<string, any>;
type Endpoint = 'chat' | 'responses';

export interface FakeOpenAIOptions {
  /** Endpoints this upstream serves; the others answer 404 as on a server without them. Default both. */
  endpoints?: readonly Endpoint[];
  /** The Bearer key it accepts. Default `up-key`. */
  apiKey?: string;
  /** Models it knows; others get 404 `model_not_found`. */
  models?: readonly string[];
}

export const OPENAI_MODELS = ['gpt-4.1', 'gpt-5'];

/**
 * A fake OpenAI API: `/v1/chat/completions` and `/v1/responses`, JSON and SSE, as strict as the
 * real API about what it understands (auth, models, roles, tool call ids, fields of the other
 * protocol). Fields it does not know are accepted and recorded, as OpenAI-compatible servers do
 * with vendor extensions, so passthrough of unknown fields can be checked. A Responses server
 * also keeps what it answers and counts and compacts (`fake-openai-resources.ts`).
 */
export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeUpstream> {
  return startFake(openaiProtocol(options));
}

export function openaiProtocol(options: FakeOpenAIOptions): FakeProtocol {
  const endpoints = options.endpoints ?? ['chat', 'responses'];
  const apiKey = options.apiKey ?? 'up-key';
  const models = options.models ?? OPENAI_MODELS;
  const requestId = counter('req_fake_oai_');
  const chatId = counter('chatcmpl-Fake');
  const respId = counter('resp_fake');
  const itemId = counter('');
  const callId = counter('call_Fk');

  const headers = (extra?: Record<string, string>) => ({ 'x-request-id': requestId(), 'openai-processing-ms': '42', ...extra });

  const resources = new FakeResponsesResources(models);

  return {
    serve(request: RecordedRequest): Rendered | undefined {
      if (!endpoints.includes('responses')) return undefined;
      return resources.serve(request, () => checkAuth(request, apiKey));
    },

    validate(request: RecordedRequest): string {
      const endpoint: Endpoint | undefined = request.path === '/v1/chat/completions' ? 'chat' : request.path === '/v1/responses' ? 'responses' : undefined;
      if (request.method !== 'POST' || !endpoint || !endpoints.includes(endpoint)) {
        throw new Rejection(404, `Invalid URL (${request.method} ${request.path})`, { type: 'invalid_request_error', code: null });
      }
      checkAuth(request, apiKey);
      if (!(request.headers['content-type'] ?? '').startsWith('application/json')) throw invalid('Content-Type must be application/json.');
      const body = request.body;
      if (!isObject(body)) throw invalid('We could not parse the JSON body of your request.');
      if (typeof body.model !== 'string') throw missing('model');
      if (!models.includes(body.model)) {
        throw new Rejection(404, `The model \`${body.model}\` does not exist or you do not have access to it.`, {
          type: 'invalid_request_error',
          code: 'model_not_found',
        });
      }
      if (body.stream !== undefined && typeof body.stream !== 'boolean') throw invalidType('stream', 'a boolean');
      checkReasoningSupport(endpoint, body);
      if (endpoint === 'chat') validateChat(body);
      else validateResponses(body, (id) => resources.item(id));
      return endpoint;
    },

    render(endpoint, body, reply) {
      const calls = (reply.toolCalls ?? []).map((call) => ({ ...call, id: call.id ?? callId() }));
      const usage = reply.usage ?? { input: 12, output: 4 };
      const rendered = endpoint === 'chat' ? renderChat(body, reply, calls, usage, chatId()) : renderResponses(body, reply, calls, usage, respId(), itemId);
      if (endpoint === 'responses') resources.remember(body, rendered);
      return { ...rendered, headers: { ...rendered.headers, ...headers() } };
    },

    streamErrorFrames(endpoint, error) {
      const payload = { message: error.message, type: error.type ?? 'server_error', param: null, code: error.code ?? null };
      if (endpoint === 'chat') return [sseData({ error: payload })];
      // The live API nests the fields, then fails the response.
      return [
        sseEvent('error', { type: 'error', sequence_number: 90, error: payload }),
        sseEvent('response.failed', {
          type: 'response.failed',
          sequence_number: 91,
          response: {
            id: 'resp_failed',
            object: 'response',
            status: 'failed',
            output: [],
            usage: null,
            error: { code: error.code ?? 'server_error', message: error.message },
          },
        }),
      ];
    },

    errorResponse(status, message, fields, extra) {
      return {
        status,
        headers: { 'content-type': 'application/json', ...headers(extra) },
        json: openAIErrorBody(status, message, fields),
      };
    },
  };
}

/** OpenAI's error body: `{ error: { message, type, param, code } }`. */
export function openAIErrorBody(status: number, message: string, fields: { type?: string; param?: string | null; code?: string | null }): Json {
  return {
    error: {
      message,
      type: fields.type ?? (status >= 500 ? 'server_error' : 'invalid_request_error'),
      param: fields.param ?? null,
      code: fields.code ?? null,
    },
  };
}

// ---- validation ---------------------------------------------------------------------------

export function checkAuth(request: RecordedRequest, apiKey: string): void {
  const auth = request.headers.authorization;
  if (!auth) {
    throw new Rejection(
      401,
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
      {
        type: 'invalid_request_error',
      },
    );
  }
  if (auth !== `Bearer ${apiKey}`) {
    throw new Rejection(
      401,
      `Incorrect API key provided: ${auth.slice(7, 10)}***. You can find your API key at https://platform.openai.com/account/api-keys.`,
      {
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      },
    );
  }
}

/** GPT-4 and GPT-3.5 models do not reason; the live API refuses reasoning options for them. */
function checkReasoningSupport(endpoint: Endpoint, body: Json): void {
  if (!/^(gpt-4|gpt-3\.5)/.test(String(body.model))) return;
  const param =
    endpoint === 'chat'
      ? body.reasoning_effort !== undefined
        ? 'reasoning_effort'
        : undefined
      : isObject(body.reasoning) && body.reasoning.effort != null
        ? 'reasoning.effort'
        : undefined;
  if (param) throw invalid(`Unsupported parameter: '${param}' is not supported with this model.`, param, 'unsupported_parameter');
}

function invalid(message: string, param: string | null = null, code: string | null = null): Rejection {
  return new Rejection(400, message, { type: 'invalid_request_error', param, code });
}
function missing(param: string): Rejection {
  return invalid(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
}
function invalidType(param: string, expected: string): Rejection {
  return invalid(`Invalid type for '${param}': expected ${expected}.`, param, 'invalid_type');
}
function unknownParameter(param: string): Rejection {
  return invalid(`Unrecognized request argument supplied: ${param}`, param, 'unknown_parameter');
}

/** Fields of the other protocols: a translation that leaks one is a bug the real API reports. */
const NOT_CHAT = [
  ...['input', 'instructions', 'max_output_tokens', 'text', 'reasoning', 'include', 'truncation', 'background', 'previous_response_id', 'conversation'],
  ...['system', 'stop_sequences', 'top_k', 'thinking'],
];
const NOT_RESPONSES = [
  ...['messages', 'max_tokens', 'max_completion_tokens', 'stop', 'response_format', 'n', 'reasoning_effort', 'logprobs', 'seed'],
  ...['logit_bias', 'frequency_penalty', 'presence_penalty', 'prediction', 'verbosity', 'modalities', 'audio', 'functions', 'web_search_options'],
  ...['system', 'stop_sequences', 'top_k', 'thinking'],
];
const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'];

function validateChat(body: Json): void {
  for (const field of NOT_CHAT) if (field in body) throw unknownParameter(field);
  if (!Array.isArray(body.messages)) throw missing('messages');
  if (body.messages.length === 0)
    throw invalid("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array');
  if (body.stream_options !== undefined && body.stream !== true) {
    throw invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options');
  }
  const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
  if (body.tool_choice !== undefined && !hasTools)
    throw invalid("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", 'tool_choice');
  if (body.parallel_tool_calls !== undefined && !hasTools) {
    throw invalid("Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.", 'parallel_tool_calls');
  }
  (body.tools ?? []).forEach((tool: Json, i: number) => {
    if (tool?.type !== 'function') throw invalid(`Invalid value for 'tools[${i}].type'.`, `tools[${i}].type`);
    if (!isObject(tool.function)) throw missing(`tools[${i}].function`);
    if (typeof tool.function.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(tool.function.name)) {
      throw invalid(`Invalid 'tools[${i}].function.name': string does not match pattern.`, `tools[${i}].function.name`);
    }
  });

  /** Tool call ids of the last assistant turn still waiting for their tool message. */
  let pending: string[] = [];
  let pendingAt = -1;
  body.messages.forEach((message: Json, i: number) => {
    const at = `messages[${i}]`;
    if (!isObject(message)) throw invalidType(at, 'an object');
    if (!CHAT_ROLES.includes(message.role)) {
      throw invalid(
        `Invalid value: '${String(message.role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
        `${at}.role`,
        'invalid_value',
      );
    }
    if (message.role !== 'tool' && pending.length > 0) {
      throw invalid(
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${pending.join(', ')}`,
        `messages.[${pendingAt}].role`,
      );
    }
    switch (message.role) {
      case 'system':
      case 'developer':
        checkTextContent(message.content, `${at}.content`);
        break;
      case 'user':
        checkUserContent(message.content, `${at}.content`);
        break;
      case 'assistant': {
        const calls = message.tool_calls;
        if (message.content === null || message.content === undefined) {
          if (!Array.isArray(calls) && typeof message.refusal !== 'string') throw missing(`${at}.content`);
        } else if (typeof message.content !== 'string') {
          if (!Array.isArray(message.content)) throw invalidType(`${at}.content`, 'a string or an array');
          message.content.forEach((part: Json, j: number) => {
            if (!(part?.type === 'text' && typeof part.text === 'string') && !(part?.type === 'refusal' && typeof part.refusal === 'string')) {
              throw invalid(`Invalid value: '${String(part?.type)}'. Supported values are: 'text' and 'refusal'.`, `${at}.content[${j}].type`);
            }
          });
        }
        if (calls !== undefined) {
          if (!Array.isArray(calls) || calls.length === 0) throw invalid(`Invalid 'messages[${i}].tool_calls': empty array.`, `${at}.tool_calls`);
          calls.forEach((call: Json, k: number) => {
            if (typeof call?.id !== 'string' || call.id === '') throw missing(`${at}.tool_calls[${k}].id`);
            if (call.type !== 'function') throw missing(`${at}.tool_calls[${k}].type`);
            if (typeof call.function?.name !== 'string') throw missing(`${at}.tool_calls[${k}].function.name`);
            if (typeof call.function.arguments !== 'string') throw missing(`${at}.tool_calls[${k}].function.arguments`);
          });
          pending = calls.map((call: Json) => call.id);
          pendingAt = i;
        }
        break;
      }
      case 'tool': {
        if (typeof message.tool_call_id !== 'string') throw missing(`${at}.tool_call_id`);
        checkTextContent(message.content, `${at}.content`);
        const index = pending.indexOf(message.tool_call_id);
        if (index < 0) {
          throw invalid("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `${at}.role`);
        }
        pending.splice(index, 1);
        break;
      }
    }
  });
  if (pending.length > 0) {
    throw invalid(
      `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${pending.join(', ')}`,
      `messages.[${pendingAt}].role`,
    );
  }
}

function checkTextContent(content: unknown, param: string): void {
  if (typeof content === 'string') return;
  if (!Array.isArray(content)) throw invalidType(param, 'a string or an array of text parts');
  content.forEach((part: Json, j) => {
    if (part?.type !== 'text' || typeof part.text !== 'string')
      throw invalid(`Invalid value: '${String(part?.type)}'. Supported values are: 'text'.`, `${param}[${j}].type`);
  });
}

function checkUserContent(content: unknown, param: string): void {
  if (typeof content === 'string') return;
  if (!Array.isArray(content) || content.length === 0) throw invalidType(param, 'a string or a non-empty array of parts');
  content.forEach((part: Json, j) => {
    const at = `${param}[${j}]`;
    switch (part?.type) {
      case 'text':
        if (typeof part.text !== 'string') throw missing(`${at}.text`);
        break;
      case 'image_url':
        if (typeof part.image_url?.url !== 'string') throw missing(`${at}.image_url.url`);
        break;
      case 'file':
      case 'input_audio':
        break;
      default:
        throw invalid(
          `Invalid value: '${String(part?.type)}'. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', 'audio', and 'file'.`,
          `${at}.type`,
        );
    }
  });
}

function validateResponses(body: Json, storedItem: (id: string) => Json | undefined): void {
  for (const field of NOT_RESPONSES) if (field in body) throw unknownParameter(field);
  if (isObject(body.stream_options) && 'include_usage' in body.stream_options) {
    throw invalid("Unknown parameter: 'stream_options.include_usage'.", 'stream_options.include_usage', 'unknown_parameter');
  }
  if (body.previous_response_id !== undefined) {
    throw invalid(`Previous response with id '${String(body.previous_response_id)}' not found.`, 'previous_response_id', 'previous_response_not_found');
  }
  if (body.instructions !== undefined && body.instructions !== null && typeof body.instructions !== 'string') throw invalidType('instructions', 'a string');
  (body.tools ?? []).forEach((tool: Json, i: number) => {
    if (tool?.type !== 'function') return;
    if (typeof tool.name !== 'string') throw missing(`tools[${i}].name`);
    if ('function' in tool) throw unknownParameter(`tools[${i}].function`);
  });
  if (typeof body.input === 'string') return;
  if (!Array.isArray(body.input)) throw missing('input');

  const calls = new Set<string>();
  const answered = new Set<string>();
  body.input.forEach((given: Json, i: number) => {
    const at = `input[${i}]`;
    if (!isObject(given)) throw invalidType(at, 'an object');
    // A reference (its `type` optional) stands for an item the account stored, whoever made it.
    const reference = given.type === 'item_reference' || (given.type === undefined && given.role === undefined && 'id' in given && !('content' in given));
    const item = reference ? storedItem(String(given.id)) : given;
    if (!item) throw new Rejection(404, `Item with id '${String(given.id)}' not found.`, { type: 'invalid_request_error', param: `${at}.id`, code: null });
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    switch (type) {
      case 'message': {
        if (!['user', 'assistant', 'system', 'developer'].includes(item.role)) {
          throw invalid(`Invalid value: '${String(item.role)}'. Supported values are: 'assistant', 'system', 'developer', and 'user'.`, `${at}.role`);
        }
        if (typeof item.content === 'string') break;
        if (!Array.isArray(item.content)) throw missing(`${at}.content`);
        const allowed = item.role === 'assistant' ? ['output_text', 'refusal'] : ['input_text', 'input_image', 'input_file'];
        item.content.forEach((part: Json, j: number) => {
          if (!allowed.includes(part?.type)) {
            throw invalid(
              `Invalid value: '${String(part?.type)}'. Supported values are: ${allowed.map((value) => `'${value}'`).join(', ')}.`,
              `${at}.content[${j}].type`,
            );
          }
          if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text !== 'string') throw missing(`${at}.content[${j}].text`);
        });
        break;
      }
      case 'function_call':
        if (typeof item.call_id !== 'string' || item.call_id === '') throw missing(`${at}.call_id`);
        if (typeof item.name !== 'string') throw missing(`${at}.name`);
        if (typeof item.arguments !== 'string') throw missing(`${at}.arguments`);
        calls.add(item.call_id);
        break;
      // Items of the other tool kinds Codex replays (custom tools, client tool search, local shell).
      case 'custom_tool_call':
        if (typeof item.call_id !== 'string' || item.call_id === '') throw missing(`${at}.call_id`);
        if (typeof item.input !== 'string') throw missing(`${at}.input`);
        calls.add(item.call_id);
        break;
      case 'tool_search_call':
      case 'local_shell_call':
        if (typeof item.call_id === 'string') calls.add(item.call_id);
        break;
      case 'tool_search_output':
        if (!Array.isArray(item.tools)) throw missing(`${at}.tools`);
        if (typeof item.call_id === 'string') answered.add(item.call_id);
        break;
      case 'custom_tool_call_output':
      case 'function_call_output':
        if (typeof item.call_id !== 'string') throw missing(`${at}.call_id`);
        if (!calls.has(item.call_id)) throw invalid(`No tool call found for function call output with call_id ${item.call_id}.`, 'input');
        if (typeof item.output !== 'string' && !Array.isArray(item.output)) throw missing(`${at}.output`);
        answered.add(item.call_id);
        break;
      case 'compaction':
        // Only OpenAI's own compaction items can be decrypted.
        if (typeof item.encrypted_content !== 'string' || !item.encrypted_content.startsWith(FAKE_COMPACTION)) {
          throw invalid('The encrypted content could not be decrypted or parsed.', `${at}.encrypted_content`, 'invalid_encrypted_content');
        }
        break;
      case 'reasoning':
        if (!Array.isArray(item.summary)) throw missing(`${at}.summary`);
        if (item.id === undefined && item.encrypted_content === undefined) throw missing(`${at}.encrypted_content`);
        break;
      default:
        throw invalid(`Invalid value: '${String(type)}'.`, `${at}.type`);
    }
  });
  for (const call of calls) if (!answered.has(call)) throw invalid(`No tool output found for function call ${call}.`, 'input');
}

// ---- rendering ----------------------------------------------------------------------------

type Call = { id: string; name: string; args: string[] };

function chatUsage(usage: NeutralUsage): Json {
  return {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cachedRead ?? 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function responsesUsage(usage: NeutralUsage): Json {
  return {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: usage.cachedRead ?? 0 },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
    total_tokens: usage.input + usage.output,
  };
}

const CREATED = 1753120000;

function renderChat(body: Json, reply: Reply, calls: Call[], usage: NeutralUsage, id: string): Rendered {
  const model = `${body.model}-2025-04-14`;
  const text = (reply.text ?? []).join('');
  const finish = reply.finish ?? (calls.length > 0 ? 'tool_calls' : 'stop');
  if (body.stream !== true) {
    const message: Json = { role: 'assistant', content: text === '' ? null : text, refusal: null, annotations: [] };
    if (calls.length > 0)
      message.tool_calls = calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.args.join('') } }));
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      json: {
        id,
        object: 'chat.completion',
        created: CREATED,
        model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
        usage: chatUsage(usage),
        service_tier: 'default',
        system_fingerprint: 'fp_fake',
      },
    };
  }
  const includeUsage = body.stream_options?.include_usage === true;
  const chunk = (delta: Json, finishReason: string | null = null) =>
    sseData({
      id,
      object: 'chat.completion.chunk',
      created: CREATED,
      model,
      service_tier: 'default',
      system_fingerprint: 'fp_fake',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(includeUsage ? { usage: null } : {}),
      obfuscation: 'pad',
    });
  const frames = [chunk({ role: 'assistant', content: '', refusal: null })];
  for (const piece of reply.text ?? []) frames.push(chunk({ content: piece }));
  calls.forEach((call, index) => {
    frames.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const fragment of call.args) frames.push(chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }));
  });
  frames.push(chunk({}, finish));
  if (includeUsage) frames.push(sseData({ id, object: 'chat.completion.chunk', created: CREATED, model, choices: [], usage: chatUsage(usage) }));
  frames.push('data: [DONE]\n\n');
  return { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8' }, frames };
}

function renderResponses(body: Json, reply: Reply, calls: Call[], usage: NeutralUsage, id: string, itemId: () => string): Rendered {
  const model = `${body.model}-2025-08-07`;
  const items: { added: Json; events: Json[]; done: Json }[] = [];
  const text = (reply.text ?? []).join('');

  if (reply.reasoning) {
    const rsId = `rs_${itemId()}`;
    const summary = reply.reasoning.join('');
    const done = { id: rsId, type: 'reasoning', summary: [{ type: 'summary_text', text: summary }], encrypted_content: `gAAAAAB${rsId}` };
    items.push({
      added: { id: rsId, type: 'reasoning', summary: [] },
      events: [
        { type: 'response.reasoning_summary_part.added', item_id: rsId, summary_index: 0, part: { type: 'summary_text', text: '' } },
        ...reply.reasoning.map((delta) => ({ type: 'response.reasoning_summary_text.delta', item_id: rsId, summary_index: 0, delta, obfuscation: 'x' })),
        { type: 'response.reasoning_summary_text.done', item_id: rsId, summary_index: 0, text: summary },
        { type: 'response.reasoning_summary_part.done', item_id: rsId, summary_index: 0, part: { type: 'summary_text', text: summary } },
      ],
      done,
    });
  }
  if (reply.text && reply.text.length > 0) {
    const msgId = `msg_${itemId()}`;
    const part = { type: 'output_text', text, annotations: [], logprobs: [] };
    const ref = { item_id: msgId, content_index: 0 };
    items.push({
      added: { id: msgId, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
      events: [
        { type: 'response.content_part.added', ...ref, part: { ...part, text: '' } },
        ...reply.text.map((delta) => ({ type: 'response.output_text.delta', ...ref, delta, logprobs: [], obfuscation: 'x' })),
        { type: 'response.output_text.done', ...ref, text, logprobs: [] },
        { type: 'response.content_part.done', ...ref, part },
      ],
      done: { id: msgId, type: 'message', status: reply.finish === 'length' ? 'incomplete' : 'completed', role: 'assistant', content: [part] },
    });
  }
  for (const call of calls) {
    const fcId = `fc_${itemId()}`;
    const args = call.args.join('');
    items.push({
      added: { id: fcId, type: 'function_call', status: 'in_progress', arguments: '', call_id: call.id, name: call.name },
      events: [
        ...call.args.map((delta) => ({ type: 'response.function_call_arguments.delta', item_id: fcId, delta, obfuscation: 'x' })),
        { type: 'response.function_call_arguments.done', item_id: fcId, arguments: args, name: call.name },
      ],
      done: { id: fcId, type: 'function_call', status: 'completed', arguments: args, call_id: call.id, name: call.name },
    });
  }

  const incomplete = reply.finish === 'length';
  const response = (status: string, output: Json[], withUsage: boolean): Json => ({
    id,
    object: 'response',
    created_at: CREATED,
    status,
    background: false,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage: withUsage ? responsesUsage(usage) : null,
    user: null,
    metadata: body.metadata ?? {},
  });
  const final = response(
    incomplete ? 'incomplete' : 'completed',
    items.map((item) => item.done),
    true,
  );

  if (body.stream !== true) return { status: 200, headers: { 'content-type': 'application/json' }, json: final };

  let sequence = 0;
  const frame = (event: Json) => sseEvent(event.type, { ...event, sequence_number: sequence++ });
  const frames = [
    frame({ type: 'response.created', response: response('in_progress', [], false) }),
    frame({ type: 'response.in_progress', response: response('in_progress', [], false) }),
  ];
  items.forEach((item, output_index) => {
    frames.push(frame({ type: 'response.output_item.added', output_index, item: item.added }));
    for (const event of item.events) frames.push(frame({ ...event, output_index }));
    frames.push(frame({ type: 'response.output_item.done', output_index, item: item.done }));
  });
  frames.push(frame({ type: incomplete ? 'response.incomplete' : 'response.completed', response: final }));
  return { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8' }, frames };
}

export type { UpstreamErrorSpec };
