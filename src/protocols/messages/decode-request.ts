import { invalidRequest } from '../../errors.js';
import {
  expectArray,
  expectRecord,
  expectString,
  isPresent,
  isRecord,
  optArray,
  optBoolean,
  optCacheControl,
  optNumber,
  optRecord,
  optString,
  unsupported,
  withCache,
  type Json,
} from '../decode-helpers.js';
import type {
  CacheControl,
  IRAssistantPart,
  IRContentPart,
  IRMessage,
  IRReasoningPart,
  IRRequest,
  IRTextPart,
  IRTool,
  IRToolChoice,
} from '../ir.js';

/**
 * Anthropic Messages request → IR. `tool_result` blocks become IR `tool` messages (one each),
 * and thinking blocks become reasoning parts that keep their signature for replay.
 */
export function decodeMessagesRequest(body: Record<string, unknown>, upstreamModel: string): IRRequest {
  for (const field of ['container', 'mcp_servers', 'context_management', 'inference_geo']) {
    if (isPresent(body, field)) unsupported(field);
  }

  const messages: IRMessage[] = [];
  expectArray(body.messages, 'messages').forEach((raw, i) => decodeMessage(raw, `messages[${i}]`, messages));

  const request: IRRequest = {
    model: upstreamModel,
    system: decodeSystem(body.system),
    messages,
    stream: optBoolean(body, 'stream', 'stream') ?? false,
    passthrough: {},
  };
  const topK = optNumber(body, 'top_k', 'top_k');
  if (topK !== undefined) request.topK = topK;

  // Top-level automatic caching puts the breakpoint on the last cacheable block; do the same.
  const autoCache = optCacheControl(body, '');
  if (autoCache) applyAutomaticCache(messages, autoCache);

  const tools = optArray(body, 'tools', 'tools');
  if (tools) request.tools = tools.map((tool, i) => decodeTool(tool, `tools[${i}]`));
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
      request.responseFormat = { type: 'json_schema', schema: format.schema };
    }
  }

  const metadata = optRecord(body, 'metadata', 'metadata');
  if (metadata) {
    // Anthropic metadata has one field, the end user's id: the IR `user`, not IR metadata
    // (OpenAI metadata is stored with the response and means something else).
    const user = optString(metadata, 'user_id', 'metadata.user_id');
    if (user !== undefined) request.user = user;
  }
  return request;
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
function decodeMessage(raw: unknown, param: string, out: IRMessage[]): void {
  const message = expectRecord(raw, param);
  const content = message.content;
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
    throw invalidRequest(
      message.role === 'system'
        ? `A system prompt goes in the top-level 'system' parameter, not in 'messages'.`
        : `Unsupported role '${String(message.role)}'; use 'user' or 'assistant'.`,
      `${param}.role`,
    );
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
      out.push(decodeToolResult(block, at));
    } else {
      pending.push(...decodeUserBlock(block, at));
    }
  });
  flush();
}

function decodeToolResult(block: Json, param: string): IRMessage {
  const raw = block.content;
  let content: IRContentPart[] = [];
  if (typeof raw === 'string') content = [{ type: 'text', text: raw }];
  else if (raw !== undefined && raw !== null) {
    content = expectArray(raw, `${param}.content`).flatMap((inner, k) =>
      decodeUserBlock(expectRecord(inner, `${param}.content[${k}]`), `${param}.content[${k}]`),
    );
  }
  // The IR has no cache mark on a whole message; the last part carries the breakpoint instead.
  const cacheControl = optCacheControl(block, param);
  const last = content.at(-1);
  if (cacheControl && last) last.cacheControl = cacheControl;
  const message: IRMessage = { role: 'tool', toolCallId: expectString(block, 'tool_use_id', `${param}.tool_use_id`), content };
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
      throw invalidRequest(`Content block type '${String(block.type)}' is not supported here by this gateway.`, `${param}.type`);
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
  if (source.type === 'url') return withCache<IRContentPart>({ type: 'image', url: expectString(source, 'url', `${param}.source.url`) }, block, param);
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
      part = { type: 'file', url: expectString(source, 'url', `${param}.source.url`), mediaType: 'application/pdf', ...named };
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
        parts.push(
          withCache<IRAssistantPart & { type: 'tool_call' }>(
            { type: 'tool_call', id: expectString(block, 'id', `${at}.id`), name: expectString(block, 'name', `${at}.name`), arguments: JSON.stringify(input) },
            block,
            at,
          ),
        );
        return;
      }
      case 'thinking': {
        const part: IRReasoningPart = { type: 'reasoning', text: expectString(block, 'thinking', `${at}.thinking`) };
        const signature = optString(block, 'signature', `${at}.signature`);
        if (signature) part.signature = signature;
        parts.push(part);
        return;
      }
      case 'redacted_thinking': {
        const data = expectString(block, 'data', `${at}.data`);
        // The Messages encoder writes foreign (OpenAI) reasoning as thinking text + redacted data;
        // read that pair back as the one reasoning part it came from.
        const previous = parts.at(-1);
        if (previous?.type === 'reasoning' && !previous.signature && previous.encrypted === undefined) previous.encrypted = data;
        else parts.push({ type: 'reasoning', text: '', encrypted: data });
        return;
      }
      default:
        throw invalidRequest(`Content block type '${String(block.type)}' is not supported here by this gateway.`, `${at}.type`);
    }
  });
  return parts;
}

function decodeTool(raw: unknown, param: string): IRTool {
  const tool = expectRecord(raw, param);
  if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') {
    throw invalidRequest(`Tool type '${String(tool.type)}' is not supported by this gateway; only custom tools are.`, `${param}.type`);
  }
  const out: IRTool = { name: expectString(tool, 'name', `${param}.name`) };
  const description = optString(tool, 'description', `${param}.description`);
  if (description !== undefined) out.description = description;
  const schema = optRecord(tool, 'input_schema', `${param}.input_schema`);
  if (schema) out.parameters = schema;
  const strict = optBoolean(tool, 'strict', `${param}.strict`);
  if (strict !== undefined) out.strict = strict;
  return withCache(out, tool, param);
}

function decodeToolChoice(raw: unknown): { choice: IRToolChoice; parallel?: boolean } | undefined {
  if (raw === undefined || raw === null) return undefined;
  const choice = expectRecord(raw, 'tool_choice');
  const disable = optBoolean(choice, 'disable_parallel_tool_use', 'tool_choice.disable_parallel_tool_use');
  const parallel = disable === undefined ? {} : { parallel: !disable };
  switch (choice.type) {
    case 'auto':
      return { choice: { type: 'auto', ...parallel }, ...parallel };
    case 'any':
      return { choice: { type: 'required', ...parallel }, ...parallel };
    case 'tool':
      return { choice: { type: 'tool', name: expectString(choice, 'name', 'tool_choice.name'), ...parallel }, ...parallel };
    case 'none':
      return { choice: { type: 'none' } };
    default:
      throw invalidRequest(`Invalid 'tool_choice.type' '${String(choice.type)}'.`, 'tool_choice.type');
  }
}

/** `thinking` and `output_config.effort` → IR reasoning. */
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
