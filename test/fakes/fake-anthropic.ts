import {
  counter,
  isObject,
  Rejection,
  sseEvent,
  startFake,
  type FakeProtocol,
  type FakeUpstream,
  type NeutralUsage,
  type RecordedRequest,
  type Rendered,
  type Reply,
} from './fake-server.js';

type Json = Record<string, any>;

export interface FakeAnthropicOptions {
  /** The `x-api-key` it accepts. Default `up-key`. */
  apiKey?: string;
  models?: readonly string[];
}

export const ANTHROPIC_MODELS = ['claude-sonnet-4-5'];

/**
 * A fake Anthropic Messages API (`POST /v1/messages`), JSON and SSE, as strict as the real one
 * about what it understands: the key (`x-api-key` or Bearer) and `anthropic-version` headers, `max_tokens`, strictly
 * alternating user/assistant turns (system messages may sit between them), no empty text, tool results right after their tool uses (all
 * of them, ids matching), tool id syntax, signed thinking. Fields it does not know are accepted
 * and recorded, so passthrough of unknown fields can be checked; fields of the OpenAI protocols
 * are rejected, as a translation that leaks them would be by the real API. It also counts
 * tokens (`POST /v1/messages/count_tokens`, see `fakeTokenCount`), as strict about the body.
 */
export async function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeUpstream> {
  return startFake(anthropicProtocol(options));
}

const TOOL_ID = /^[a-zA-Z0-9_-]+$/;
const OPENAI_ONLY = [
  'stream_options',
  'max_completion_tokens',
  'response_format',
  'n',
  'input',
  'instructions',
  'max_output_tokens',
  'stop',
  'user',
  'seed',
  'prompt_cache_key',
  'store',
  'parallel_tool_calls',
  'reasoning_effort',
  'reasoning',
  'text',
  'frequency_penalty',
  'presence_penalty',
];

const ONE_SAMPLER = /claude-(?:opus-4-[1-9]|sonnet-4-[5-9]|haiku-4-[5-9]|(?:opus|sonnet|haiku)-[5-9])/;

/** The Messages API as a `FakeProtocol`, for fakes that host Claude behind another front (Vertex AI). */
export function anthropicProtocol(options: FakeAnthropicOptions): FakeProtocol {
  const apiKey = options.apiKey ?? 'up-key';
  const models = options.models ?? ANTHROPIC_MODELS;
  const requestId = counter('req_fake_ant_');
  const messageId = counter('msg_01Fake');
  const toolId = counter('toolu_01Fake');

  const headers = (extra?: Record<string, string>) => ({ 'request-id': requestId(), 'anthropic-organization-id': 'org-fake', ...extra });

  return {
    serve(request: RecordedRequest): Rendered | undefined {
      if (request.method !== 'POST' || request.path !== '/v1/messages/count_tokens') return undefined;
      checkCaller(request, apiKey);
      const body = request.body;
      if (!isObject(body)) throw invalid('The request body is not valid JSON.');
      for (const field of [...OPENAI_ONLY, 'max_tokens', 'stream']) if (field in body) throw invalid(`${field}: Extra inputs are not permitted`);
      if (!models.includes(body.model)) throw new Rejection(404, `model: ${body.model}`);
      if (body.system !== undefined) checkSystem(body.system);
      checkTools(body);
      checkMessages(body.messages);
      return { status: 200, headers: { 'content-type': 'application/json', ...headers() }, json: { input_tokens: fakeTokenCount(body) } };
    },

    validate(request: RecordedRequest): string {
      if (request.method !== 'POST' || request.path !== '/v1/messages') throw new Rejection(404, `Not found: ${request.method} ${request.path}`);
      checkCaller(request, apiKey);
      const body = request.body;
      if (!isObject(body)) throw invalid('The request body is not valid JSON.');
      for (const field of OPENAI_ONLY) if (field in body) throw invalid(`${field}: Extra inputs are not permitted`);
      if (typeof body.model !== 'string') throw invalid('model: Field required');
      if (!models.includes(body.model)) throw new Rejection(404, `model: ${body.model}`);
      if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) throw invalid('max_tokens: Field required');
      if (body.temperature !== undefined && (body.temperature < 0 || body.temperature > 1))
        throw invalid('temperature: Input should be less than or equal to 1');
      // From Opus 4.1 on, Claude takes one of the two.
      if (body.temperature !== undefined && body.top_p !== undefined && ONE_SAMPLER.test(body.model))
        throw invalid('`temperature` and `top_p` cannot both be specified for this model. Please use only one.');
      if (body.system !== undefined) checkSystem(body.system);
      if (body.thinking !== undefined) checkThinking(body);
      checkTools(body);
      checkMessages(body.messages);
      checkCacheBreakpoints(body);
      return 'messages';
    },

    render(_endpoint, body, reply) {
      const calls = (reply.toolCalls ?? []).map((call) => ({ ...call, id: call.id ?? toolId() }));
      const rendered = renderMessages(body, reply, calls, reply.usage ?? { input: 12, output: 4 }, messageId());
      return { ...rendered, headers: { ...rendered.headers, ...headers() } };
    },

    streamErrorFrames(_endpoint, error) {
      return [sseEvent('error', { type: 'error', error: { type: error.type ?? 'overloaded_error', message: error.message }, request_id: requestId() })];
    },

    errorResponse(status, message, fields, extra) {
      const id = requestId();
      return {
        status,
        headers: { 'content-type': 'application/json', 'request-id': id, ...extra },
        json: { type: 'error', error: { type: fields.type ?? errorType(status), message }, request_id: id },
      };
    },
  };
}

function errorType(status: number): string {
  const types: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    402: 'billing_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    500: 'api_error',
    504: 'timeout_error',
    529: 'overloaded_error',
  };
  return types[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

/** What the fake's count_tokens answers: a stand-in for Anthropic's tokenizer, a pure function of the body. */
export function fakeTokenCount(body: Json): number {
  return 7 + Math.ceil(JSON.stringify([body.system ?? null, body.messages, body.tools ?? null]).length / 4);
}

// ---- validation ---------------------------------------------------------------------------

/** The key (`x-api-key`, or a Bearer token as the SDK sends since 1.x) and the version header. */
function checkCaller(request: RecordedRequest, apiKey: string): void {
  const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
  const key = request.headers['x-api-key'] ?? bearer;
  if (!key) throw new Rejection(401, 'x-api-key header is required');
  if (key !== apiKey) throw new Rejection(401, 'invalid x-api-key');
  if (!request.headers['anthropic-version']) throw invalid('anthropic-version: header is required');
}

function invalid(message: string): Rejection {
  return new Rejection(400, message, { type: 'invalid_request_error' });
}

/** At most 4 blocks (tools, system, message content, tool result content) may carry `cache_control`. */
function checkCacheBreakpoints(body: Json): void {
  let found = 0;
  const visit = (blocks: unknown): void => {
    if (!Array.isArray(blocks)) return;
    for (const block of blocks) {
      if (isObject(block) && block.cache_control !== undefined) found += 1;
      if (isObject(block) && Array.isArray(block.content)) visit(block.content);
    }
  };
  visit(body.tools);
  visit(body.system);
  if (Array.isArray(body.messages)) for (const message of body.messages) if (isObject(message)) visit(message.content);
  if (found > 4) throw invalid(`A maximum of 4 blocks with cache_control may be provided. Found ${found}.`);
}

function checkSystem(system: unknown): void {
  if (typeof system === 'string') return;
  if (!Array.isArray(system)) throw invalid('system: Input should be a valid string or list');
  system.forEach((block: Json, i) => {
    if (block?.type !== 'text') throw invalid(`system.${i}.type: Input should be 'text'`);
    if (typeof block.text !== 'string' || block.text.trim() === '') throw invalid(`system.${i}.text: text content blocks must be non-empty`);
  });
}

function checkThinking(body: Json): void {
  const thinking = body.thinking;
  if (thinking.type !== 'enabled') return;
  if (!Number.isInteger(thinking.budget_tokens) || thinking.budget_tokens < 1024)
    throw invalid('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
  if (thinking.budget_tokens >= body.max_tokens) throw invalid('`max_tokens` must be greater than `thinking.budget_tokens`.');
  if (body.temperature !== undefined && body.temperature !== 1) throw invalid('`temperature` may only be set to 1 when thinking is enabled.');
  if (body.top_k !== undefined) throw invalid('`top_k` is not supported when thinking is enabled.');
  if (body.tool_choice?.type === 'any' || body.tool_choice?.type === 'tool') throw invalid('Thinking may not be enabled when tool_choice forces tool use.');
  // A tool loop continued with thinking on must replay the assistant turn's own thinking first.
  const messages: Json[] = Array.isArray(body.messages) ? body.messages : [];
  const [assistant, results] = messages.slice(-2);
  const continuesTools = Array.isArray(results?.content) && results.content.some((block: Json) => block?.type === 'tool_result');
  const opensWith = Array.isArray(assistant?.content) ? assistant.content[0]?.type : undefined;
  if (assistant?.role === 'assistant' && continuesTools && opensWith !== 'thinking' && opensWith !== 'redacted_thinking') {
    throw invalid(
      `messages.${messages.length - 2}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(opensWith)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`,
    );
  }
}

function checkTools(body: Json): void {
  if (body.tools === undefined) {
    if (body.tool_choice !== undefined && body.tool_choice.type !== 'none')
      throw invalid('tool_choice: tool_choice may only be specified while providing tools.');
    return;
  }
  if (!Array.isArray(body.tools)) throw invalid('tools: Input should be a valid list');
  body.tools.forEach((tool: Json, i: number) => {
    if (tool?.type !== undefined && tool.type !== 'custom') return; // versioned server/client tools
    if (typeof tool?.name !== 'string' || !/^[a-zA-Z0-9_-]{1,128}$/.test(tool.name))
      throw invalid(`tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`);
    if (!isObject(tool.input_schema)) throw invalid(`tools.${i}.custom.input_schema: Field required`);
    if (tool.input_schema.type !== 'object') throw invalid(`tools.${i}.custom.input_schema.type: Input should be 'object'`);
    if ('function' in tool || 'parameters' in tool) throw invalid(`tools.${i}.custom.function: Extra inputs are not permitted`);
  });
  const choice = body.tool_choice;
  if (choice !== undefined && (!isObject(choice) || !['auto', 'any', 'tool', 'none'].includes(choice.type)))
    throw invalid("tool_choice: Input tag not found; expected 'auto', 'any', 'tool' or 'none'");
}

/**
 * `role: "system"` messages (instructions in the conversation, tool changes) stand outside the
 * user/assistant alternation: checked on their own, then left out of the turn checks.
 */
function checkSystemMessage(message: Json, at: string): void {
  if (message.content === undefined || typeof message.content === 'string') return;
  if (!Array.isArray(message.content)) throw invalid(`${at}.content: Input should be a valid string or list`);
  message.content.forEach((block: Json, j: number) => {
    if (!['text', 'tool_addition', 'tool_removal'].includes(block?.type)) {
      throw invalid(
        `${at}.content.${j}.type: Input tag '${String(block?.type)}' found using 'type' does not match any of the expected tags: 'text', 'tool_addition', 'tool_removal'`,
      );
    }
    if (block.type === 'text' && (typeof block.text !== 'string' || block.text === ''))
      throw invalid(`${at}.content.${j}.text: text content blocks must be non-empty`);
  });
}

function checkMessages(all: unknown): void {
  if (!Array.isArray(all)) throw invalid('messages: Field required');
  all.forEach((message: Json, i: number) => {
    if (isObject(message) && message.role === 'system') checkSystemMessage(message, `messages.${i}`);
  });
  const messages = all.filter((message: Json) => !(isObject(message) && message.role === 'system'));
  if (messages.length === 0) throw invalid('messages: at least one message is required');
  /** Ids of the previous assistant turn's tool_use blocks, which the next user turn must answer. */
  let toolUses: string[] = [];
  messages.forEach((message: Json, i: number) => {
    const at = `messages.${i}`;
    if (!isObject(message)) throw invalid(`${at}: Input should be a valid dictionary`);
    if (message.role !== 'user' && message.role !== 'assistant') throw invalid(`${at}.role: Input should be 'user' or 'assistant'`);
    if (i === 0 && message.role !== 'user') throw invalid('messages: first message must use the "user" role');
    if (i > 0 && messages[i - 1].role === message.role)
      throw invalid(`messages: roles must alternate between "user" and "assistant", but found multiple "${message.role}" roles in a row`);

    const blocks: Json[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    if (!Array.isArray(blocks)) throw invalid(`${at}.content: Input should be a valid string or list`);
    if (blocks.length === 0 && !(message.role === 'assistant' && i === messages.length - 1))
      throw invalid(`${at}: all messages must have non-empty content except for the optional final assistant message`);

    const results: string[] = [];
    blocks.forEach((block, j) => {
      const bat = `${at}.content.${j}`;
      switch (block?.type) {
        case 'text':
          if (typeof block.text !== 'string' || block.text === '') throw invalid(`${bat}.text: text content blocks must be non-empty`);
          if (block.text.trim() === '') throw invalid(`${bat}.text: text content blocks must contain non-whitespace text`);
          break;
        case 'image':
          if (message.role !== 'user') throw invalid(`${bat}: image blocks are only allowed in user messages`);
          if (!isObject(block.source)) throw invalid(`${bat}.source: Field required`);
          break;
        case 'document':
          break;
        case 'tool_use':
          if (message.role !== 'assistant') throw invalid(`${bat}: tool_use blocks are only allowed in assistant messages`);
          if (typeof block.id !== 'string' || !TOOL_ID.test(block.id)) throw invalid(`${bat}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
          if (typeof block.name !== 'string') throw invalid(`${bat}.tool_use.name: Field required`);
          if (!isObject(block.input)) throw invalid(`${bat}.tool_use.input: Input should be a valid dictionary`);
          break;
        case 'tool_result':
          if (message.role !== 'user') throw invalid(`${bat}: tool_result blocks are only allowed in user messages`);
          if (typeof block.tool_use_id !== 'string' || !TOOL_ID.test(block.tool_use_id))
            throw invalid(`${bat}.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'`);
          if (j !== results.length) throw invalid(`${at}: tool_result blocks must come first in the user message, before any other content`);
          if (!toolUses.includes(block.tool_use_id)) {
            throw invalid(
              `${bat}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
            );
          }
          if (Array.isArray(block.content)) {
            block.content.forEach((inner: Json, k: number) => {
              if (inner?.type === 'text' && (typeof inner.text !== 'string' || inner.text === ''))
                throw invalid(`${bat}.content.${k}.text: text content blocks must be non-empty`);
            });
          }
          results.push(block.tool_use_id);
          break;
        case 'thinking':
          if (message.role !== 'assistant') throw invalid(`${bat}: thinking blocks are only allowed in assistant messages`);
          if (typeof block.signature !== 'string' || block.signature === '') throw invalid(`${bat}.thinking.signature: Field required`);
          break;
        case 'redacted_thinking':
          if (typeof block.data !== 'string') throw invalid(`${bat}.redacted_thinking.data: Field required`);
          break;
        default:
          throw invalid(`${bat}.type: Input tag '${String(block?.type)}' found using 'type' does not match any of the expected tags`);
      }
    });

    if (toolUses.length > 0) {
      const unanswered = toolUses.filter((id) => !results.includes(id));
      if (message.role !== 'user' || unanswered.length > 0) {
        throw invalid(
          `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
        );
      }
    }
    toolUses = message.role === 'assistant' ? blocks.filter((block) => block.type === 'tool_use').map((block) => block.id) : [];
  });
  const last = messages.at(-1) as Json;
  if (last.role === 'assistant') {
    const blocks = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
    const final = blocks.at(-1);
    if (final?.type === 'text' && /\s$/.test(final.text)) throw invalid('final assistant content cannot end with trailing whitespace');
    if (toolUses.length > 0) throw invalid(`messages.${messages.length - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after`);
  }
}

// ---- rendering ----------------------------------------------------------------------------

type Call = { id: string; name: string; args: string[] };

function renderMessages(body: Json, reply: Reply, calls: Call[], usage: NeutralUsage, id: string): Rendered {
  const cachedRead = usage.cachedRead ?? 0;
  const cacheWrite = usage.cacheWrite ?? 0;
  // Anthropic's input_tokens excludes cache reads and writes.
  const inputUsage = {
    input_tokens: usage.input - cachedRead - cacheWrite,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cachedRead,
    cache_creation: { ephemeral_5m_input_tokens: cacheWrite, ephemeral_1h_input_tokens: 0 },
  };
  const stopReason = reply.finish === 'length' ? 'max_tokens' : calls.length > 0 ? 'tool_use' : 'end_turn';
  const signature = `EqQBCgIYAhIM${id}sig`;
  const text = (reply.text ?? []).join('');

  const content: Json[] = [];
  if (reply.reasoning) content.push({ type: 'thinking', thinking: reply.reasoning.join(''), signature });
  if (text !== '') content.push({ type: 'text', text });
  for (const call of calls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: JSON.parse(call.args.join('') || '{}') });

  if (body.stream !== true) {
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      json: {
        id,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content,
        stop_reason: stopReason,
        stop_sequence: null,
        usage: { ...inputUsage, output_tokens: usage.output, service_tier: 'standard' },
      },
    };
  }

  const frame = (data: Json) => sseEvent(data.type, data);
  const frames = [
    frame({
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...inputUsage, output_tokens: 1, service_tier: 'standard' },
      },
    }),
  ];
  let index = 0;
  const block = (start: Json, deltas: Json[]) => {
    frames.push(frame({ type: 'content_block_start', index, content_block: start }));
    if (index === 0) frames.push(frame({ type: 'ping' }));
    for (const delta of deltas) frames.push(frame({ type: 'content_block_delta', index, delta }));
    frames.push(frame({ type: 'content_block_stop', index }));
    index += 1;
  };
  if (reply.reasoning) {
    block({ type: 'thinking', thinking: '', signature: '' }, [
      ...reply.reasoning.map((thinking) => ({ type: 'thinking_delta', thinking })),
      { type: 'signature_delta', signature },
    ]);
  }
  if (reply.text && reply.text.length > 0)
    block(
      { type: 'text', text: '' },
      reply.text.map((piece) => ({ type: 'text_delta', text: piece })),
    );
  for (const call of calls) {
    block({ type: 'tool_use', id: call.id, name: call.name, input: {} }, [
      { type: 'input_json_delta', partial_json: '' },
      ...call.args.map((partial_json) => ({ type: 'input_json_delta', partial_json })),
    ]);
  }
  // The classic form: input counters only in message_start (the recorded fixture has the newer
  // form, which repeats them here).
  frames.push(frame({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output } }));
  frames.push(frame({ type: 'message_stop' }));
  return { status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8' }, frames };
}
