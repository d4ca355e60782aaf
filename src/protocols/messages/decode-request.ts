import { echo } from '../../http/echo.js';
import { createHash } from 'node:crypto';
import { invalidRequest } from '../../errors.js';
import { isRecord, type Json } from '../../json.js';
import {
  expectArray,
  expectRecord,
  expectString,
  isPresent,
  optArray,
  optBoolean,
  optCacheControl,
  optNumber,
  optRecord,
  optString,
  unsupported,
  withCache,
} from '../decode-helpers.js';
import type { CacheControl, IRAssistantPart, IRContentPart, IRMessage, IRReasoningPart, IRRequest, IRTextPart, ClientField } from '../ir.js';
import { decodeToolChange, decodeToolChoice, decodeTools, type ToolSet } from './decode-tools.js';
import { fromThinkingSignature } from './thinking-opaque.js';
import type { ReadFields } from '../ignored-fields.js';
import { pushSignedCall, unsignedId } from '../signed-call-id.js';

/** Where a Messages client writes the IR's request-level fields, for 400s and dropped-parameter notes. */
const CLIENT_FIELDS: Partial<Record<ClientField, string>> = {
  topK: 'top_k',
  stop: 'stop_sequences',
  maxOutputTokens: 'max_tokens',
  responseFormat: 'output_config.format',
  reasoning: 'thinking',
  parallelToolCalls: 'tool_choice.disable_parallel_tool_use',
  user: 'metadata.user_id',
};

/**
 * Every top-level field this decoder reads (or refuses), and `service_tier` (Anthropic's
 * capacity and billing tier: bookkeeping). Any other is named as ignored, among them
 * `context_management` (Anthropic's server-side trimming of old thinking and tool results: the
 * full history goes upstream instead) and `inference_geo` (where Anthropic runs the model).
 */
export const MESSAGES_READ_FIELDS: ReadFields = {
  top: new Set([
    'model',
    'messages',
    'system',
    'stream',
    'max_tokens',
    'temperature',
    'top_p',
    'top_k',
    'stop_sequences',
    'tools',
    'tool_choice',
    'thinking',
    'output_config',
    'metadata',
    'cache_control',
    'container',
    'mcp_servers',
    'service_tier',
  ]),
};

/**
 * Anthropic Messages request → IR, for an upstream that does not speak Messages (an Anthropic
 * upstream gets the body as sent). `tool_result` blocks become IR `tool` messages (one each),
 * `role: "system"` messages IR system messages in place, and thinking blocks reasoning parts that
 * keep their signature for replay.
 * Refused: `container` and `mcp_servers`, which need Anthropic's code-execution sandbox or its
 * MCP client to run.
 */
export function decodeMessagesRequest(body: Record<string, unknown>, upstreamModel: string): IRRequest {
  if (isPresent(body, 'container')) unsupported('container', `'container' (Anthropic's code-execution sandbox)`);
  if (isPresent(body, 'mcp_servers')) {
    throw invalidRequest(
      `'mcp_servers' cannot be served by this model: its upstream does not run MCP servers. Connect the MCP servers in the client instead.`,
      'mcp_servers',
      'unsupported_parameter',
    );
  }

  const rawMessages = expectArray(body.messages, 'messages');
  const context: MessagesContext = { referencedTools: new Set(), toolChanges: [], lastUserIndex: lastUserIndex(rawMessages) };
  const messages: IRMessage[] = [];
  rawMessages.forEach((raw, i) => {
    decodeMessage(raw, i, context, messages);
  });

  const request: IRRequest = {
    model: upstreamModel,
    system: decodeSystem(body.system),
    messages,
    stream: optBoolean(body, 'stream', 'stream') ?? false,
    passthrough: {},
    clientFields: isPresent(body, 'thinking') ? CLIENT_FIELDS : { ...CLIENT_FIELDS, reasoning: 'output_config.effort' },
  };
  const topK = optNumber(body, 'top_k', 'top_k');
  if (topK !== undefined) request.topK = topK;

  // Top-level automatic caching puts the breakpoint on the last cacheable block; do the same.
  const autoCache = optCacheControl(body, '');
  if (autoCache) applyAutomaticCache(messages, autoCache);

  const tools = decodeTools(optArray(body, 'tools', 'tools') ?? [], context);
  if (tools.length > 0) request.tools = tools;
  const choice = decodeToolChoice(body.tool_choice);
  if (choice) {
    request.toolChoice = choice.choice;
    if (choice.parallel !== undefined) request.parallelToolCalls = choice.parallel;
  }

  const maxTokens = optNumber(body, 'max_tokens', 'max_tokens');
  if (maxTokens !== undefined) request.maxOutputTokens = maxTokens;
  const temperature = optNumber(body, 'temperature', 'temperature');
  if (temperature !== undefined) request.temperature = temperature;
  const topP = optNumber(body, 'top_p', 'top_p');
  if (topP !== undefined) request.topP = topP;

  const stop = optArray(body, 'stop_sequences', 'stop_sequences');
  if (stop) {
    request.stop = stop.map((value, i) => {
      if (typeof value !== 'string') throw invalidRequest(`'stop_sequences[${i}]' must be a string.`, `stop_sequences[${i}]`);
      return value;
    });
  }

  const reasoning = decodeThinking(body);
  if (reasoning) request.reasoning = reasoning;

  const outputConfig = optRecord(body, 'output_config', 'output_config');
  if (outputConfig) {
    const format = optRecord(outputConfig, 'format', 'output_config.format');
    if (format) {
      if (format.type !== 'json_schema') unsupported('output_config.format.type', `'output_config.format' of type '${String(format.type)}'`);
      request.responseFormat = { type: 'json_schema', schema: format.schema, schemaField: 'output_config.format.schema' };
    }
  }

  const metadata = optRecord(body, 'metadata', 'metadata');
  if (metadata) {
    // Anthropic metadata has one field, the end user's id: the IR `user`, not IR metadata
    // (OpenAI metadata is stored with the response and means something else).
    const user = optString(metadata, 'user_id', 'metadata.user_id');
    if (user !== undefined) request.user = endUserId(user);
  }
  return request;
}

/**
 * OpenAI takes an end-user id of at most 64 characters; Anthropic's has no limit (Claude Code
 * sends a JSON object of ids). A longer id goes as its SHA-256 hex: still one stable, opaque
 * value per user, which is what OpenAI asks for, and never a 400.
 */
function endUserId(id: string): string {
  return id.length <= 64 ? id : createHash('sha256').update(id).digest('hex');
}

/** What decoding the messages learns about the tool set, and what it needs to know ahead. */
interface MessagesContext extends ToolSet {
  /** A system message with `clear_at: "next_user_message"` before this index is no longer shown. */
  lastUserIndex: number;
}

function lastUserIndex(messages: unknown[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (isRecord(message) && message.role === 'user') return i;
  }
  return -1;
}

function decodeSystem(raw: unknown): IRTextPart[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw === 'string') return raw === '' ? [] : [{ type: 'text', text: raw }];
  return expectArray(raw, 'system').map((block, i) => {
    const param = `system[${i}]`;
    const text = expectRecord(block, param);
    if (text.type !== 'text') throw invalidRequest(`System blocks must be of type 'text'.`, `${param}.type`);
    return decodeText(text, param);
  });
}

function decodeText(block: Json, param: string): IRTextPart {
  const citations = block.citations;
  // Citations on input text are source references the model is told about; no other protocol has them.
  if (Array.isArray(citations) && citations.length > 0) unsupported(`${param}.citations`, 'Text block citations');
  return withCache<IRTextPart>({ type: 'text', text: expectString(block, 'text', `${param}.text`) }, block, param);
}

/** Pushes the IR messages of one Anthropic turn (a user turn may split into tool + user messages). */
function decodeMessage(raw: unknown, index: number, context: MessagesContext, out: IRMessage[]): void {
  const param = `messages[${index}]`;
  const message = expectRecord(raw, param);
  const content = message.content;
  if (message.role === 'system') {
    decodeSystemMessage(message, param, index < context.lastUserIndex, context, out);
    return;
  }
  if (message.role === 'assistant') {
    const parts: IRAssistantPart[] =
      typeof content === 'string'
        ? content === ''
          ? []
          : [{ type: 'text', text: content }]
        : decodeAssistantBlocks(expectArray(content, `${param}.content`), `${param}.content`);
    out.push({ role: 'assistant', content: parts });
    return;
  }
  if (message.role !== 'user') {
    throw invalidRequest(`Unsupported role '${String(message.role)}'; use 'user', 'assistant' or 'system'.`, `${param}.role`);
  }
  if (typeof content === 'string') {
    out.push({ role: 'user', content: [{ type: 'text', text: content }] });
    return;
  }
  // Tool results become their own IR messages; other blocks around them stay user messages, in order.
  let pending: IRContentPart[] = [];
  const flush = () => {
    if (pending.length > 0) out.push({ role: 'user', content: pending });
    pending = [];
  };
  expectArray(content, `${param}.content`).forEach((rawBlock, j) => {
    const at = `${param}.content[${j}]`;
    const block = expectRecord(rawBlock, at);
    if (block.type === 'tool_result') {
      flush();
      out.push(decodeToolResult(block, at, context));
    } else {
      pending.push(...decodeUserBlock(block, at));
    }
  });
  flush();
}

/**
 * A system message in the conversation (Claude Code sends its environment this way): its text
 * becomes an IR system message in place, which OpenAI upstreams take as a system message too.
 * Text with `clear_at: "next_user_message"` is shown only until a later user turn, so it is
 * dropped once one exists. `tool_addition` / `tool_removal` blocks change the tool set from that
 * point on; upstreams without mid-conversation tool changes get the set as it stands at the end.
 * The per-turn `output_config` has no equivalent and is dropped.
 */
function decodeSystemMessage(message: Json, param: string, hasLaterUserTurn: boolean, context: MessagesContext, out: IRMessage[]): void {
  const cleared = message.clear_at === 'next_user_message' && hasLaterUserTurn;
  const raw = message.content;
  if (raw === undefined || raw === null) return;
  if (typeof raw === 'string') {
    if (raw !== '' && !cleared) out.push({ role: 'system', content: [{ type: 'text', text: raw }] });
    return;
  }
  const text: IRTextPart[] = [];
  expectArray(raw, `${param}.content`).forEach((rawBlock, j) => {
    const at = `${param}.content[${j}]`;
    const block = expectRecord(rawBlock, at);
    switch (block.type) {
      case 'text':
        text.push(decodeText(block, at));
        return;
      case 'tool_addition':
      case 'tool_removal':
        context.toolChanges.push(decodeToolChange(block, at));
        return;
      default:
        throw invalidRequest(`Content block type '${echo(String(block.type))}' is not supported in a system message by this gateway.`, `${at}.type`);
    }
  });
  if (text.length > 0 && !cleared) out.push({ role: 'system', content: text });
}

function decodeToolResult(block: Json, param: string, context: MessagesContext): IRMessage {
  const raw = block.content;
  let content: IRContentPart[] = [];
  if (typeof raw === 'string') content = [{ type: 'text', text: raw }];
  else if (raw !== undefined && raw !== null) {
    content = expectArray(raw, `${param}.content`).flatMap((inner, k) => {
      const at = `${param}.content[${k}]`;
      const part = expectRecord(inner, at);
      if (part.type !== 'tool_reference') return decodeUserBlock(part, at);
      // A tool search result: the named (deferred) tool is now loaded, so it goes upstream as an
      // ordinary tool, and the model reads which one in the result's text.
      const name = expectString(part, 'tool_name', `${at}.tool_name`);
      context.referencedTools.add(name);
      return [withCache<IRTextPart>({ type: 'text', text: `Tool loaded: ${name}` }, part, at)];
    });
  }
  // The IR has no cache mark on a whole message; the last part carries the breakpoint instead.
  const cacheControl = optCacheControl(block, param);
  const last = content.at(-1);
  if (cacheControl && last) last.cacheControl = cacheControl;
  const message: IRMessage = {
    role: 'tool',
    toolCallId: unsignedId(expectString(block, 'tool_use_id', `${param}.tool_use_id`)),
    content,
    param: `${param}.tool_use_id`,
  };
  const isError = optBoolean(block, 'is_error', `${param}.is_error`);
  if (isError !== undefined) message.isError = isError;
  return message;
}

/** User-side content blocks (also the content of a tool result). */
function decodeUserBlock(block: Json, param: string): IRContentPart[] {
  switch (block.type) {
    case 'text':
      return [decodeText(block, param)];
    case 'image':
      return [decodeImage(block, param)];
    case 'document':
      return decodeDocument(block, param);
    default:
      throw invalidRequest(`Content block type '${echo(String(block.type))}' is not supported here by this gateway.`, `${param}.type`);
  }
}

function decodeImage(block: Json, param: string): IRContentPart {
  const source = expectRecord(block.source, `${param}.source`);
  if (source.type === 'base64') {
    return withCache<IRContentPart>(
      {
        type: 'image',
        data: expectString(source, 'data', `${param}.source.data`),
        mediaType: expectString(source, 'media_type', `${param}.source.media_type`),
      },
      block,
      param,
    );
  }
  if (source.type === 'url') {
    return withCache<IRContentPart>({ type: 'image', url: expectString(source, 'url', `${param}.source.url`), param: `${param}.source.url` }, block, param);
  }
  return unsupported(`${param}.source.type`, `Image source type '${String(source.type)}'`);
}

/** PDF (base64 or URL) → file part; plain-text documents → text. `context` is prompt text too. */
function decodeDocument(block: Json, param: string): IRContentPart[] {
  const citations = optRecord(block, 'citations', `${param}.citations`);
  if (citations?.enabled === true) unsupported(`${param}.citations`, 'Document citations');
  const source = expectRecord(block.source, `${param}.source`);
  const title = optString(block, 'title', `${param}.title`);
  const context = optString(block, 'context', `${param}.context`);
  const parts: IRContentPart[] = context ? [{ type: 'text', text: context }] : [];
  const named = title !== undefined ? { filename: title } : {};
  let part: IRContentPart;
  switch (source.type) {
    case 'base64':
      part = {
        type: 'file',
        data: expectString(source, 'data', `${param}.source.data`),
        mediaType: optString(source, 'media_type', `${param}.source.media_type`) ?? 'application/pdf',
        ...named,
      };
      break;
    case 'url':
      part = { type: 'file', url: expectString(source, 'url', `${param}.source.url`), mediaType: 'application/pdf', ...named, param: `${param}.source.url` };
      break;
    case 'text':
      part = { type: 'text', text: expectString(source, 'data', `${param}.source.data`) };
      break;
    default:
      return unsupported(`${param}.source.type`, `Document source type '${String(source.type)}'`);
  }
  parts.push(withCache(part, block, param));
  return parts;
}

function decodeAssistantBlocks(blocks: unknown[], param: string): IRAssistantPart[] {
  const parts: IRAssistantPart[] = [];
  blocks.forEach((raw, j) => {
    const at = `${param}[${j}]`;
    const block = expectRecord(raw, at);
    switch (block.type) {
      case 'text':
        parts.push(decodeText(block, at));
        return;
      case 'tool_use': {
        const input = block.input ?? {};
        if (!isRecord(input)) throw invalidRequest(`'${at}.input' must be an object.`, `${at}.input`);
        // A Gemini signature the gateway put in the id goes back before the call it signs.
        pushSignedCall(
          parts,
          withCache<IRAssistantPart & { type: 'tool_call' }>(
            { type: 'tool_call', id: expectString(block, 'id', `${at}.id`), name: expectString(block, 'name', `${at}.name`), arguments: JSON.stringify(input) },
            block,
            at,
          ),
        );
        return;
      }
      case 'thinking': {
        // The signature is Anthropic's, or OpenAI's encrypted reasoning the gateway carried in it.
        const signature = optString(block, 'signature', `${at}.signature`) ?? '';
        const part: IRReasoningPart = { type: 'reasoning', text: expectString(block, 'thinking', `${at}.thinking`), ...fromThinkingSignature(signature) };
        parts.push(part);
        return;
      }
      case 'redacted_thinking':
        parts.push({ type: 'reasoning', text: '', redacted: expectString(block, 'data', `${at}.data`) });
        return;
      default:
        throw invalidRequest(`Content block type '${echo(String(block.type))}' is not supported here by this gateway.`, `${at}.type`);
    }
  });
  return parts;
}

/**
 * `thinking` and `output_config.effort` → IR reasoning. The effort (`low` … `xhigh`, `max`) is
 * kept as sent: OpenAI's reasoning effort takes the same values. `thinking.display` shapes the
 * answer, not the request: the Messages encoders read it from the client's body.
 */
function decodeThinking(body: Json): IRRequest['reasoning'] {
  const thinking = optRecord(body, 'thinking', 'thinking');
  const outputConfig = optRecord(body, 'output_config', 'output_config');
  const effort = outputConfig ? optString(outputConfig, 'effort', 'output_config.effort') : undefined;
  let reasoning: NonNullable<IRRequest['reasoning']> | undefined;
  switch (thinking ? thinking.type : 'disabled') {
    case 'disabled':
      break;
    case 'enabled': {
      const budget = optNumber(thinking!, 'budget_tokens', 'thinking.budget_tokens');
      if (budget === undefined) throw invalidRequest(`'thinking.budget_tokens' is required when thinking is enabled.`, 'thinking.budget_tokens');
      reasoning = { budgetTokens: budget };
      break;
    }
    case 'adaptive':
    case 'between_tools':
      // The model picks its own budget; medium is the neutral effort for upstreams that need one.
      reasoning = { effort: 'medium' };
      break;
    default:
      throw invalidRequest(`Invalid 'thinking.type' '${String(thinking?.type)}'.`, 'thinking.type');
  }
  if (effort !== undefined) reasoning = { ...reasoning, effort };
  return reasoning;
}

/** The last content part of the last message gets the top-level `cache_control`, unless it has one. */
function applyAutomaticCache(messages: IRMessage[], cacheControl: CacheControl): void {
  const last = messages.at(-1);
  const part = last?.content.at(-1);
  if (part && part.type !== 'reasoning' && part.type !== 'refusal' && !part.cacheControl) part.cacheControl = cacheControl;
}
