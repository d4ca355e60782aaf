import { echo } from '../../http/echo.js';
import { type GatewayError, invalidRequest } from '../../errors.js';
import { isRecord, type Json } from '../../json.js';
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
import type {
  IRAssistantPart,
  IRContentPart,
  IRFilePart,
  IRMessage,
  IRReasoningPart,
  IRRequest,
  IRTextPart,
  IRToolCall,
  IRToolChoice,
  ClientField,
} from '../ir.js';
import { ClientTools, CUSTOM_INPUT, isHostedTool } from './client-tools.js';
import { fromEncryptedContent } from './reasoning-opaque.js';
import { decodeCompactionItem } from './compaction-item.js';
import type { ReadFields } from '../ignored-fields.js';
import { pushSignedCall, unsignedId } from '../signed-call-id.js';

/** Same name and meaning on OpenAI-family upstreams (Chat and Responses): forwarded unchanged. */
const PASSTHROUGH = ['prompt_cache_key', 'prompt_cache_retention', 'prompt_cache_options', 'service_tier', 'store', 'safety_identifier', 'moderation'] as const;

/** Where a Responses client writes the IR's request-level fields that Chat names otherwise. */
const CLIENT_FIELDS: Partial<Record<ClientField, string>> = {
  messages: 'input',
  maxOutputTokens: 'max_output_tokens',
  responseFormat: 'text.format',
  reasoning: 'reasoning',
  verbosity: 'text.verbosity',
};

/** `include` values that only add data to built-in tool items (which we never emit) or echo inputs. */
const NEUTRAL_INCLUDES = new Set([
  'reasoning.encrypted_content',
  'message.input_image.image_url',
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
]);

/**
 * Every top-level field this decoder reads (or refuses); `stream_options` (obfuscation padding of
 * OpenAI's own stream events) is harmless bookkeeping, and `truncation` at its default changes
 * nothing. Any other field is named as ignored: `truncation: "auto"` among them.
 */
export const RESPONSES_READ_FIELDS: ReadFields = {
  top: new Set([
    'model',
    'input',
    'instructions',
    'stream',
    'stream_options',
    'tools',
    'tool_choice',
    'parallel_tool_calls',
    'max_output_tokens',
    'temperature',
    'top_p',
    'reasoning',
    'text',
    'metadata',
    'user',
    'include',
    'previous_response_id',
    'conversation',
    'prompt',
    'context_management',
    'background',
    'top_logprobs',
    ...PASSTHROUGH,
  ]),
  defaults: { truncation: 'disabled' },
};

/**
 * Responses request → IR. Stored state is resolved before this point (`previous_response_id` and
 * `item_reference` on models that keep conversations, `state/conversation.ts`); any that is left
 * (`conversation`, `prompt`, a reference on a model without a store) or asks for work the IR
 * cannot describe (a forced hosted tool, background runs) is a 400. Tool kinds
 * other than functions become functions (`client-tools.ts`); their calls in `input` follow.
 */
export function decodeResponsesRequest(body: Record<string, unknown>, upstreamModel: string): IRRequest {
  rejectInexpressible(body);

  const system: IRTextPart[] = [];
  const instructions = optString(body, 'instructions', 'instructions');
  if (instructions !== undefined) system.push({ type: 'text', text: instructions });
  const clientTools = ClientTools.of(body);
  const messages = decodeInput(body.input, system, clientTools);

  const passthrough = pickPassthrough(body, PASSTHROUGH);
  const include = decodeInclude(body);
  if (include) passthrough.include = include;

  const request: IRRequest = {
    model: upstreamModel,
    system,
    messages,
    stream: optBoolean(body, 'stream', 'stream') ?? false,
    passthrough,
    clientFields: CLIENT_FIELDS,
  };

  // Copies: the catalogue is shared with the encoders of this request's answer.
  if (isPresent(body, 'tools') || clientTools.irTools.length > 0) request.tools = [...clientTools.irTools];
  if (clientTools.dropped.length > 0) request.droppedTools = [...clientTools.dropped];
  const toolChoice = decodeToolChoice(body.tool_choice, clientTools);
  const parallel = optBoolean(body, 'parallel_tool_calls', 'parallel_tool_calls');
  if (parallel !== undefined) {
    request.parallelToolCalls = parallel;
    if (toolChoice && toolChoice.type !== 'none') toolChoice.parallel = parallel;
  }
  if (toolChoice) request.toolChoice = toolChoice;

  const maxTokens = optNumber(body, 'max_output_tokens', 'max_output_tokens');
  if (maxTokens !== undefined) request.maxOutputTokens = maxTokens;
  const temperature = optNumber(body, 'temperature', 'temperature');
  if (temperature !== undefined) request.temperature = temperature;
  const topP = optNumber(body, 'top_p', 'top_p');
  if (topP !== undefined) request.topP = topP;

  const reasoning = optRecord(body, 'reasoning', 'reasoning');
  if (reasoning) {
    const effort = optString(reasoning, 'effort', 'reasoning.effort');
    // `generate_summary` is the deprecated name of `summary`.
    const summary = optString(reasoning, 'summary', 'reasoning.summary') ?? optString(reasoning, 'generate_summary', 'reasoning.generate_summary');
    if (effort !== undefined || summary !== undefined) request.reasoning = { effort, summary };
  }

  const text = optRecord(body, 'text', 'text');
  if (text) {
    const format = decodeTextFormat(text.format);
    if (format) request.responseFormat = format;
    const verbosity = optString(text, 'verbosity', 'text.verbosity');
    // Chat's flat name; upstream encoders for Responses put it back under `text`.
    if (verbosity !== undefined) passthrough.verbosity = verbosity;
  }

  const metadata = optRecord(body, 'metadata', 'metadata');
  if (metadata) request.metadata = metadata;
  const user = optString(body, 'user', 'user');
  if (user !== undefined) request.user = user;
  return request;
}

function rejectInexpressible(body: Json): void {
  if (isPresent(body, 'previous_response_id')) {
    unsupported('previous_response_id', `'previous_response_id' (send the whole conversation in 'input')`);
  }
  if (isPresent(body, 'conversation')) unsupported('conversation', `'conversation' (send the whole conversation in 'input')`);
  if (isPresent(body, 'prompt')) unsupported('prompt', `Stored prompts ('prompt')`);
  if (isPresent(body, 'context_management')) unsupported('context_management');
  if (optBoolean(body, 'background', 'background')) unsupported('background', `Background responses ('background: true')`);
  const topLogprobs = optNumber(body, 'top_logprobs', 'top_logprobs');
  if (topLogprobs !== undefined && topLogprobs > 0) unsupported('top_logprobs');
}

/** Keeps `include` for OpenAI upstreams (encrypted reasoning matters with `store: false`). */
function decodeInclude(body: Json): string[] | undefined {
  const include = optArray(body, 'include', 'include');
  if (!include || include.length === 0) return undefined;
  return include.map((value, i) => {
    if (typeof value !== 'string') throw invalidRequest(`'include[${i}]' must be a string.`, `include[${i}]`);
    if (!NEUTRAL_INCLUDES.has(value)) unsupported(`include[${i}]`, `'include' value '${value}'`);
    return value;
  });
}

/**
 * `input` as IR messages. Leading system/developer messages join `system` (after `instructions`);
 * later ones stay in place. Assistant-side items that follow each other (reasoning, messages,
 * function calls) are one assistant turn, as Chat and Messages need.
 */
function decodeInput(input: unknown, system: IRTextPart[], tools: ClientTools): IRMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: [{ type: 'text', text: input }] }];
  const messages: IRMessage[] = [];
  let leading = true;
  const assistantTurn = (): IRAssistantPart[] => {
    const last = messages.at(-1);
    if (last?.role === 'assistant') return last.content;
    const turn: IRMessage = { role: 'assistant', content: [] };
    messages.push(turn);
    return turn.content;
  };

  expectArray(input, 'input').forEach((raw, i) => {
    const param = `input[${i}]`;
    const item = expectRecord(raw, param);
    // Easy input messages may omit `type`.
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    if (type === 'message' && (item.role === 'system' || item.role === 'developer')) {
      const content = decodeSystemContent(item.content, `${param}.content`);
      if (leading) system.push(...content);
      else messages.push({ role: 'system', content });
      return;
    }
    leading = false;
    switch (type) {
      case 'message':
        if (item.role === 'user') {
          messages.push({ role: 'user', content: decodeInputContent(item.content, `${param}.content`) });
        } else if (item.role === 'assistant') {
          assistantTurn().push(...decodeAssistantContent(item.content, `${param}.content`));
        } else {
          throw invalidRequest(`Unsupported role '${String(item.role)}'.`, `${param}.role`);
        }
        return;
      case 'function_call': {
        const name = expectString(item, 'name', `${param}.name`);
        // A Gemini signature the gateway put in the call id goes back before the call it signs.
        pushSignedCall(assistantTurn(), {
          type: 'tool_call',
          // The client matches outputs by `call_id`; the `fc_` item id is ours to mint again.
          id: expectString(item, 'call_id', `${param}.call_id`),
          name: tools.flatName(name, optString(item, 'namespace', `${param}.namespace`)),
          arguments: optString(item, 'arguments', `${param}.arguments`) ?? '',
          param: `${param}.arguments`,
        });
        return;
      }
      case 'custom_tool_call': {
        const name = expectString(item, 'name', `${param}.name`);
        pushSignedCall(assistantTurn(), {
          type: 'tool_call',
          id: expectString(item, 'call_id', `${param}.call_id`),
          name: tools.flatName(name, optString(item, 'namespace', `${param}.namespace`)),
          arguments: JSON.stringify({ [CUSTOM_INPUT]: expectString(item, 'input', `${param}.input`) }),
        });
        return;
      }
      case 'tool_search_call': {
        // A search the provider ran (no call id) left nothing to answer; its output's tools count.
        const callId = optString(item, 'call_id', `${param}.call_id`);
        if (callId === undefined) return;
        const args = item.arguments;
        pushSignedCall(assistantTurn(), {
          type: 'tool_call',
          id: callId,
          name: tools.builtinName('tool_search'),
          arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
        });
        return;
      }
      case 'local_shell_call':
        pushSignedCall(assistantTurn(), decodeLocalShellCall(item, param, tools));
        return;
      case 'function_call_output':
      case 'custom_tool_call_output':
        messages.push({
          role: 'tool',
          toolCallId: unsignedId(expectString(item, 'call_id', `${param}.call_id`)),
          content: decodeInputContent(item.output, `${param}.output`),
          param: `${param}.call_id`,
        });
        return;
      case 'local_shell_call_output':
        messages.push({
          role: 'tool',
          // The API names the call by `call_id` in newer items and by the call item's `id` before.
          toolCallId: unsignedId(optString(item, 'call_id', `${param}.call_id`) ?? expectString(item, 'id', `${param}.id`)),
          content: decodeInputContent(item.output, `${param}.output`),
        });
        return;
      case 'tool_search_output': {
        const callId = optString(item, 'call_id', `${param}.call_id`);
        if (callId === undefined) return;
        // The tools themselves join the request's tools (`ClientTools`); the model reads their names.
        messages.push({ role: 'tool', toolCallId: unsignedId(callId), content: [{ type: 'text', text: toolSearchResult(item, param, tools) }] });
        return;
      }
      case 'web_search_call':
        // A search the provider ran on an earlier turn: its findings are in the answer that follows.
        return;
      case 'reasoning':
        assistantTurn().push(decodeReasoning(item, param));
        return;
      case 'compaction':
        messages.push(decodeCompactionItem(item, param));
        return;
      case 'item_reference':
        throw itemReferenceRefused(param);
      default:
        throw invalidRequest(`Input item type '${String(type)}' is not supported by this gateway.`, `${param}.type`);
    }
  });
  return messages;
}

/** The 400 for an `item_reference` (at `param`) on a model whose items neither the gateway nor its upstream keeps. */
export function itemReferenceRefused(param: string): GatewayError {
  return invalidRequest(
    `'item_reference' is not supported on this model: neither it nor its upstream keeps items. Send the item itself (clients that store by default, such as the Vercel AI SDK, do so with \`store: false\`), or use a model configured with \`previousResponseId\`, whose items the gateway keeps.`,
    `${param}.type`,
    'unsupported_parameter',
  );
}

function decodeSystemContent(content: unknown, param: string): IRTextPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return expectArray(content, param).map((raw, j) => {
    const part = expectRecord(raw, `${param}[${j}]`);
    if (part.type !== 'input_text') {
      throw invalidRequest(`Only 'input_text' parts are allowed in system messages.`, `${param}[${j}].type`);
    }
    return withCache<IRTextPart>({ type: 'text', text: expectString(part, 'text', `${param}[${j}].text`) }, part, `${param}[${j}]`);
  });
}

/** User message content and `function_call_output.output`: a string or input parts. */
function decodeInputContent(content: unknown, param: string): IRContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return expectArray(content, param).map((raw, j): IRContentPart => {
    const at = `${param}[${j}]`;
    const part = expectRecord(raw, at);
    switch (part.type) {
      // `cache_control` is kept as in Chat (a convention of OpenAI-compatible gateways).
      case 'input_text':
        return withCache<IRContentPart>({ type: 'text', text: expectString(part, 'text', `${at}.text`) }, part, at);
      case 'input_image': {
        if (isPresent(part, 'file_id')) unsupported(`${at}.file_id`, `Images by 'file_id'`);
        return withCache(imageFromUrl(expectString(part, 'image_url', `${at}.image_url`), part.detail, `${at}.image_url`), part, at);
      }
      case 'input_file':
        return withCache(decodeInputFile(part, at), part, at);
      case 'input_audio':
        return unsupported(`${at}.type`, `Audio input ('input_audio')`);
      default:
        throw invalidRequest(`Unsupported content part type '${echo(String(part.type))}'.`, `${at}.type`);
    }
  });
}

function decodeInputFile(part: Json, param: string): IRFilePart {
  const filename = optString(part, 'filename', `${param}.filename`);
  const data = optString(part, 'file_data', `${param}.file_data`);
  if (data !== undefined) return fileFromData(data, filename);
  const named = filename !== undefined ? { filename } : {};
  const fileId = optString(part, 'file_id', `${param}.file_id`);
  if (fileId !== undefined) return { type: 'file', fileId, ...named, param: `${param}.file_id` };
  const url = optString(part, 'file_url', `${param}.file_url`);
  if (url !== undefined) return { type: 'file', url, ...named, param: `${param}.file_url` };
  throw invalidRequest(`'${param}' needs 'file_data', 'file_id' or 'file_url'.`, param);
}

/** A replayed assistant message: a string, or output_text / refusal parts (input_text tolerated). */
function decodeAssistantContent(content: unknown, param: string): IRAssistantPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return expectArray(content, param).map((raw, j): IRAssistantPart => {
    const at = `${param}[${j}]`;
    const part = expectRecord(raw, at);
    if (part.type === 'output_text' || part.type === 'input_text') {
      return { type: 'text', text: expectString(part, 'text', `${at}.text`) };
    }
    if (part.type === 'refusal') return { type: 'refusal', refusal: expectString(part, 'refusal', `${at}.refusal`) };
    throw invalidRequest(`Unsupported assistant content part type '${echo(String(part.type))}'.`, `${at}.type`);
  });
}

/** Summary text (or raw reasoning text when there is no summary), id and opaque content kept. */
function decodeReasoning(item: Json, param: string): IRReasoningPart {
  const texts = (key: 'summary' | 'content'): string[] =>
    (optArray(item, key, `${param}.${key}`) ?? []).map((raw, j) =>
      expectString(expectRecord(raw, `${param}.${key}[${j}]`), 'text', `${param}.${key}[${j}].text`),
    );
  const summary = texts('summary');
  const part: IRReasoningPart = { type: 'reasoning', text: (summary.length > 0 ? summary : texts('content')).join('\n\n') };
  const id = optString(item, 'id', `${param}.id`);
  if (id !== undefined) part.id = id;
  const opaque = optString(item, 'encrypted_content', `${param}.encrypted_content`);
  if (opaque !== undefined) Object.assign(part, fromEncryptedContent(opaque));
  return part;
}

/** `local_shell_call.action` (an exec) as the arguments of the `local_shell` function. */
function decodeLocalShellCall(item: Json, param: string, tools: ClientTools): IRToolCall {
  const callId = optString(item, 'call_id', `${param}.call_id`) ?? expectString(item, 'id', `${param}.id`);
  const action = expectRecord(item.action, `${param}.action`);
  const args: Json = { command: expectArray(action.command, `${param}.action.command`) };
  const workdir = optString(action, 'working_directory', `${param}.action.working_directory`);
  if (workdir !== undefined) args.workdir = workdir;
  const timeout = optNumber(action, 'timeout_ms', `${param}.action.timeout_ms`);
  if (timeout !== undefined) args.timeout_ms = timeout;
  return { type: 'tool_call', id: callId, name: tools.builtinName('local_shell'), arguments: JSON.stringify(args) };
}

/** What a search loaded, as the tool result the model reads: the names it can now call. */
function toolSearchResult(item: Json, param: string, tools: ClientTools): string {
  const names: string[] = [];
  expectArray(item.tools, `${param}.tools`).forEach((raw, j) => {
    const tool = expectRecord(raw, `${param}.tools[${j}]`);
    if (tool.type === 'namespace' && Array.isArray(tool.tools)) {
      const namespace = expectString(tool, 'name', `${param}.tools[${j}].name`);
      for (const inner of tool.tools) if (isRecord(inner) && typeof inner.name === 'string') names.push(tools.flatName(inner.name, namespace));
    } else if (typeof tool.name === 'string') {
      names.push(tools.flatName(tool.name));
    }
  });
  return names.length === 0 ? 'No tools matched.' : `Tools now available: ${names.join(', ')}.`;
}

/** A hosted tool cannot be forced where it was dropped: the upstream cannot run it. */
function decodeToolChoice(raw: unknown, tools: ClientTools): IRToolChoice | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (raw === 'required' && tools.irTools.length === 0 && tools.dropped.length > 0) {
    throw invalidRequest(
      `'tool_choice: required' cannot be served: every offered tool is one the upstream cannot run (${tools.dropped.join(', ')}).`,
      'tool_choice',
    );
  }
  if (raw === 'auto' || raw === 'none' || raw === 'required') return { type: raw };
  if (typeof raw === 'string') throw invalidRequest(`Invalid 'tool_choice' value '${raw}'.`, 'tool_choice');
  const choice = expectRecord(raw, 'tool_choice');
  if (isHostedTool(choice.type)) {
    throw invalidRequest(
      `'tool_choice' forces the hosted tool '${String(choice.type)}', which this model's upstream cannot run.`,
      'tool_choice.type',
      'unsupported_parameter',
    );
  }
  switch (choice.type) {
    case 'function':
    case 'custom':
      return { type: 'tool', name: tools.flatName(expectString(choice, 'name', 'tool_choice.name'), optString(choice, 'namespace', 'tool_choice.namespace')) };
    default:
      return unsupported('tool_choice.type', `'tool_choice' of type '${String(choice.type)}'`);
  }
}

type JsonSchemaFormat = Extract<NonNullable<IRRequest['responseFormat']>, { type: 'json_schema' }>;

/** `text.format`: flat here, unlike Chat's nested `json_schema`. */
function decodeTextFormat(raw: unknown): IRRequest['responseFormat'] {
  if (raw === undefined || raw === null) return undefined;
  const format = expectRecord(raw, 'text.format');
  switch (format.type) {
    case 'text':
      return { type: 'text' };
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      const out: JsonSchemaFormat = { type: 'json_schema' };
      const name = optString(format, 'name', 'text.format.name');
      if (name !== undefined) out.name = name;
      if (isPresent(format, 'schema')) {
        out.schema = format.schema;
        out.schemaField = 'text.format.schema';
      }
      const strict = optBoolean(format, 'strict', 'text.format.strict');
      if (strict !== undefined) out.strict = strict;
      const description = optString(format, 'description', 'text.format.description');
      if (description !== undefined) out.description = description;
      return out;
    }
    default:
      return unsupported('text.format.type', `'text.format' of type '${String(format.type)}'`);
  }
}
