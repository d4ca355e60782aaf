import { echo } from '../../http/echo.js';
import { invalidRequest } from '../../errors.js';
import type { Json } from '../../json.js';
import {
  expectArray,
  expectRecord,
  expectString,
  fileFromData,
  imageFromUrl,
  isPresent,
  optArray,
  optBoolean,
  optNumber,
  optRecord,
  optString,
  pickPassthrough,
  unsupported,
  withCache,
} from '../decode-helpers.js';
import type { IRAssistantPart, IRContentPart, IRFilePart, IRMessage, IRRequest, IRTextPart, IRTool, IRToolChoice } from '../ir.js';
import type { ReadFields } from '../ignored-fields.js';
import { pushSignedCall, unsignedId } from '../signed-call-id.js';

/**
 * Chat Completions request → IR. Everything the IR can carry is mapped; OpenAI fields with the
 * same meaning on other OpenAI endpoints ride in `passthrough`; anything whose meaning would be
 * lost (n > 1, logprobs, audio, legacy functions, custom tools…) is a 400 naming the field.
 */

/** Same name and meaning on OpenAI-family upstreams: forwarded unchanged, upstream encoders pick. */
const PASSTHROUGH = [
  'frequency_penalty',
  'presence_penalty',
  'logit_bias',
  'seed',
  'service_tier',
  'store',
  'prompt_cache_key',
  'prompt_cache_retention',
  'prompt_cache_options',
  'safety_identifier',
  'verbosity',
  'prediction',
  'moderation',
] as const;

/**
 * Every top-level field this decoder reads (or refuses), and the route's own (`model`, and
 * `stream_options`, which the stream encoder reads): any other is named as ignored.
 */
export const CHAT_READ_FIELDS: ReadFields = {
  top: new Set([
    'model',
    'messages',
    'stream',
    'stream_options',
    'tools',
    'tool_choice',
    'parallel_tool_calls',
    'max_completion_tokens',
    'max_tokens',
    'temperature',
    'top_p',
    'stop',
    'reasoning_effort',
    'response_format',
    'metadata',
    'user',
    'n',
    'logprobs',
    'top_logprobs',
    'audio',
    'modalities',
    'functions',
    'function_call',
    'web_search_options',
    ...PASSTHROUGH,
  ]),
};

export function decodeChatRequest(body: Record<string, unknown>, upstreamModel: string): IRRequest {
  rejectInexpressible(body);

  const system: IRTextPart[] = [];
  const messages: IRMessage[] = [];
  // Leading system/developer messages become `system`; later ones stay in place so order is kept.
  let leading = true;
  expectArray(body.messages, 'messages').forEach((raw, i) => {
    const param = `messages[${i}]`;
    const message = expectRecord(raw, param);
    const role = message.role;
    if (role === 'system' || role === 'developer') {
      const content = decodeTextContent(message.content, `${param}.content`);
      if (leading) system.push(...content);
      else messages.push({ role: 'system', content });
      return;
    }
    leading = false;
    switch (role) {
      case 'user':
        messages.push({ role: 'user', content: decodeUserContent(message.content, `${param}.content`) });
        return;
      case 'assistant':
        messages.push({ role: 'assistant', content: decodeAssistant(message, param) });
        return;
      case 'tool':
        messages.push({
          role: 'tool',
          toolCallId: unsignedId(expectString(message, 'tool_call_id', `${param}.tool_call_id`)),
          content: decodeTextContent(message.content, `${param}.content`),
          param: `${param}.tool_call_id`,
        });
        return;
      default:
        // Includes the legacy `function` role, which pairs with the unsupported `functions`.
        throw invalidRequest(`Unsupported role '${echo(String(role))}' in '${param}.role'.`, `${param}.role`);
    }
  });

  const request: IRRequest = {
    model: upstreamModel,
    system,
    messages,
    stream: optBoolean(body, 'stream', 'stream') ?? false,
    passthrough: pickPassthrough(body, PASSTHROUGH),
  };

  const tools = optArray(body, 'tools', 'tools');
  if (tools) request.tools = tools.map((tool, i) => decodeTool(tool, `tools[${i}]`));
  const toolChoice = decodeToolChoice(body.tool_choice);
  const parallel = optBoolean(body, 'parallel_tool_calls', 'parallel_tool_calls');
  if (parallel !== undefined) {
    request.parallelToolCalls = parallel;
    if (toolChoice && toolChoice.type !== 'none') toolChoice.parallel = parallel;
  }
  if (toolChoice) request.toolChoice = toolChoice;

  const maxTokens = optNumber(body, 'max_completion_tokens', 'max_completion_tokens') ?? optNumber(body, 'max_tokens', 'max_tokens');
  if (maxTokens !== undefined) request.maxOutputTokens = maxTokens;
  // Every other field keeps Chat's name, the IR's default (`upstream-params.ts`).
  if (!isPresent(body, 'max_completion_tokens') && isPresent(body, 'max_tokens')) request.clientFields = { maxOutputTokens: 'max_tokens' };
  const temperature = optNumber(body, 'temperature', 'temperature');
  if (temperature !== undefined) request.temperature = temperature;
  const topP = optNumber(body, 'top_p', 'top_p');
  if (topP !== undefined) request.topP = topP;
  const stop = decodeStop(body.stop);
  if (stop) request.stop = stop;
  const effort = optString(body, 'reasoning_effort', 'reasoning_effort');
  if (effort !== undefined) request.reasoning = { effort };
  const format = decodeResponseFormat(body.response_format);
  if (format) request.responseFormat = format;
  const metadata = optRecord(body, 'metadata', 'metadata');
  if (metadata) request.metadata = metadata;
  const user = optString(body, 'user', 'user');
  if (user !== undefined) request.user = user;
  return request;
}

/** Fields that ask for something the IR (and so the other protocols) cannot answer with. */
function rejectInexpressible(body: Json): void {
  const n = optNumber(body, 'n', 'n');
  if (n !== undefined && n !== 1) unsupported('n', `'n' other than 1`);
  if (optBoolean(body, 'logprobs', 'logprobs')) unsupported('logprobs');
  const topLogprobs = optNumber(body, 'top_logprobs', 'top_logprobs');
  if (topLogprobs !== undefined && topLogprobs > 0) unsupported('top_logprobs');
  if (isPresent(body, 'audio')) unsupported('audio', `Audio output ('audio')`);
  const modalities = optArray(body, 'modalities', 'modalities');
  if (modalities?.some((m) => m !== 'text')) unsupported('modalities', `Output modalities other than text ('modalities')`);
  if (isPresent(body, 'functions')) unsupported('functions', `Legacy 'functions' (use 'tools')`);
  if (isPresent(body, 'function_call')) unsupported('function_call', `Legacy 'function_call' (use 'tool_choice')`);
  if (isPresent(body, 'web_search_options')) unsupported('web_search_options');
}

/** system / developer / tool content: a string or text parts only. */
function decodeTextContent(content: unknown, param: string): IRTextPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return expectArray(content, param).map((raw, j) => {
    const part = expectRecord(raw, `${param}[${j}]`);
    if (part.type !== 'text') {
      throw invalidRequest(`Content part type '${echo(String(part.type))}' is not allowed here.`, `${param}[${j}].type`);
    }
    return withCache<IRTextPart>({ type: 'text', text: expectString(part, 'text', `${param}[${j}].text`) }, part, `${param}[${j}]`);
  });
}

/**
 * `cache_control` on a part is not OpenAI's, but clients of OpenAI-compatible gateways put it there
 * for Anthropic models (LiteLLM, OpenRouter); the IR carries it instead of dropping it.
 */
function decodeUserContent(content: unknown, param: string): IRContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return expectArray(content, param).map((raw, j): IRContentPart => {
    const at = `${param}[${j}]`;
    const part = expectRecord(raw, at);
    switch (part.type) {
      case 'text':
        return withCache<IRContentPart>({ type: 'text', text: expectString(part, 'text', `${at}.text`) }, part, at);
      case 'image_url': {
        const image = expectRecord(part.image_url, `${at}.image_url`);
        return withCache(imageFromUrl(expectString(image, 'url', `${at}.image_url.url`), image.detail, `${at}.image_url.url`), part, at);
      }
      case 'file':
        return withCache(decodeFile(expectRecord(part.file, `${at}.file`), `${at}.file`), part, at);
      case 'input_audio':
        return unsupported(`${at}.type`, `Audio input ('input_audio')`);
      default:
        throw invalidRequest(`Unsupported content part type '${echo(String(part.type))}'.`, `${at}.type`);
    }
  });
}

function decodeFile(file: Json, param: string): IRFilePart {
  const filename = optString(file, 'filename', `${param}.filename`);
  const data = optString(file, 'file_data', `${param}.file_data`);
  if (data !== undefined) return fileFromData(data, filename);
  const fileId = optString(file, 'file_id', `${param}.file_id`);
  if (fileId === undefined) throw invalidRequest(`'${param}' needs 'file_data' or 'file_id'.`, param);
  return { type: 'file', fileId, filename, param: `${param}.file_id` };
}

/** Assistant turn in IR order: reasoning, text, refusal, tool calls. */
function decodeAssistant(message: Json, param: string): IRAssistantPart[] {
  if (isPresent(message, 'audio')) unsupported(`${param}.audio`, `Assistant audio ('${param}.audio')`);
  if (isPresent(message, 'function_call')) unsupported(`${param}.function_call`, `Legacy '${param}.function_call'`);
  const parts: IRAssistantPart[] = [];
  // Non-standard, but the field this gateway (and several vendors) use for reasoning in Chat.
  const reasoning = optString(message, 'reasoning_content', `${param}.reasoning_content`);
  if (reasoning) parts.push({ type: 'reasoning', text: reasoning });

  const content = message.content;
  if (typeof content === 'string') {
    if (content !== '') parts.push({ type: 'text', text: content });
  } else if (content !== undefined && content !== null) {
    expectArray(content, `${param}.content`).forEach((raw, j) => {
      const at = `${param}.content[${j}]`;
      const part = expectRecord(raw, at);
      if (part.type === 'text') parts.push({ type: 'text', text: expectString(part, 'text', `${at}.text`) });
      else if (part.type === 'refusal') parts.push({ type: 'refusal', refusal: expectString(part, 'refusal', `${at}.refusal`) });
      else throw invalidRequest(`Unsupported assistant content part type '${echo(String(part.type))}'.`, `${at}.type`);
    });
  }
  const refusal = optString(message, 'refusal', `${param}.refusal`);
  if (refusal) parts.push({ type: 'refusal', refusal });

  optArray(message, 'tool_calls', `${param}.tool_calls`)?.forEach((raw, k) => {
    const at = `${param}.tool_calls[${k}]`;
    const call = expectRecord(raw, at);
    if (call.type !== 'function') {
      throw invalidRequest(`Unsupported tool call type '${echo(String(call.type))}'.`, `${at}.type`);
    }
    const fn = expectRecord(call.function, `${at}.function`);
    // A Gemini thought signature the gateway put in the id goes back before the call it signs.
    pushSignedCall(parts, {
      type: 'tool_call',
      id: expectString(call, 'id', `${at}.id`),
      name: expectString(fn, 'name', `${at}.function.name`),
      arguments: optString(fn, 'arguments', `${at}.function.arguments`) ?? '',
      param: `${at}.function.arguments`,
    });
  });
  return parts;
}

function decodeTool(raw: unknown, param: string): IRTool {
  const tool = expectRecord(raw, param);
  if (tool.type !== 'function') {
    throw invalidRequest(`Tool type '${echo(String(tool.type))}' is not supported; only 'function' tools are.`, `${param}.type`);
  }
  const fn = expectRecord(tool.function, `${param}.function`);
  const out: IRTool = { name: expectString(fn, 'name', `${param}.function.name`) };
  const description = optString(fn, 'description', `${param}.function.description`);
  if (description !== undefined) out.description = description;
  const parameters = optRecord(fn, 'parameters', `${param}.function.parameters`);
  if (parameters) {
    out.parameters = parameters;
    out.schemaField = `${param}.function.parameters`;
  }
  const strict = optBoolean(fn, 'strict', `${param}.function.strict`);
  if (strict !== undefined) out.strict = strict;
  return out;
}

function decodeToolChoice(raw: unknown): IRToolChoice | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (raw === 'auto' || raw === 'none' || raw === 'required') return { type: raw };
  if (typeof raw === 'string') throw invalidRequest(`Invalid 'tool_choice' value '${echo(raw)}'.`, 'tool_choice');
  const choice = expectRecord(raw, 'tool_choice');
  if (choice.type !== 'function') {
    return unsupported('tool_choice.type', `'tool_choice' of type '${String(choice.type)}'`);
  }
  const fn = expectRecord(choice.function, 'tool_choice.function');
  return { type: 'tool', name: expectString(fn, 'name', 'tool_choice.function.name') };
}

function decodeStop(raw: unknown): string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === 'string') return [raw];
  return expectArray(raw, 'stop').map((value, i) => {
    if (typeof value !== 'string') throw invalidRequest(`'stop[${i}]' must be a string.`, `stop[${i}]`);
    return value;
  });
}

type JsonSchemaFormat = Extract<NonNullable<IRRequest['responseFormat']>, { type: 'json_schema' }>;

function decodeResponseFormat(raw: unknown): IRRequest['responseFormat'] {
  if (raw === undefined || raw === null) return undefined;
  const format = expectRecord(raw, 'response_format');
  switch (format.type) {
    case 'text':
      return { type: 'text' };
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      const spec = expectRecord(format.json_schema, 'response_format.json_schema');
      const out: JsonSchemaFormat = { type: 'json_schema' };
      const name = optString(spec, 'name', 'response_format.json_schema.name');
      if (name !== undefined) out.name = name;
      if (isPresent(spec, 'schema')) {
        out.schema = spec.schema;
        out.schemaField = 'response_format.json_schema.schema';
      }
      const strict = optBoolean(spec, 'strict', 'response_format.json_schema.strict');
      if (strict !== undefined) out.strict = strict;
      const description = optString(spec, 'description', 'response_format.json_schema.description');
      if (description !== undefined) out.description = description;
      return out;
    }
    default:
      return unsupported('response_format.type', `'response_format' of type '${String(format.type)}'`);
  }
}
