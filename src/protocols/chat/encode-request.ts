import { invalidRequest } from '../../errors.js';
import { admitParams } from '../upstream-params.js';
import { reasoningEffort } from '../openai/reasoning-effort.js';
import type { IRContentPart, IRFilePart, IRImagePart, IRMessage, IRRequest, IRTextPart, IRToolChoice } from '../ir.js';
import { isRecord, type Json } from '../../json.js';
import { dataUrl, type JoinedText } from '../data-url.js';

/**
 * IR → Chat Completions request body, for an upstream that speaks Chat while the client does not.
 *
 * Dropped on purpose: reasoning parts (Chat has no standard way to replay them), `cacheControl`
 * (OpenAI caches prefixes by itself; the field would be rejected), `reasoning.summary`. Request
 * fields Chat lacks (`top_k`…) are dropped or refused by `admitParams`.
 */
export function encodeChatRequest(request: IRRequest): Json {
  const ir = admitParams(request, 'chat');
  const body: Json = { ...ir.passthrough, model: ir.model, messages: encodeMessages(ir) };

  if (ir.tools && ir.tools.length > 0) {
    body.tools = ir.tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
        strict: tool.strict,
      },
    }));
    // OpenAI rejects `tool_choice` and `parallel_tool_calls` without tools: only sent with them.
    if (ir.toolChoice) body.tool_choice = encodeToolChoice(ir.toolChoice);
    const parallel = ir.parallelToolCalls ?? (ir.toolChoice && 'parallel' in ir.toolChoice ? ir.toolChoice.parallel : undefined);
    if (parallel !== undefined) body.parallel_tool_calls = parallel;
  }

  if (ir.maxOutputTokens !== undefined) body.max_completion_tokens = ir.maxOutputTokens;
  if (ir.temperature !== undefined) body.temperature = ir.temperature;
  if (ir.topP !== undefined) body.top_p = ir.topP;
  if (ir.stop && ir.stop.length > 0) body.stop = ir.stop;
  const effort = reasoningEffort(ir.reasoning);
  if (effort !== undefined) body.reasoning_effort = effort;
  if (ir.responseFormat) body.response_format = encodeResponseFormat(ir.responseFormat);
  // OpenAI rejects Chat `metadata` unless the completion is stored; it never changes the answer.
  if (ir.metadata !== undefined && ir.passthrough.store === true) body.metadata = ir.metadata;
  if (ir.user !== undefined) body.user = ir.user;

  body.stream = ir.stream;
  if (ir.stream) {
    // Without `include_usage` a Chat stream carries no usage at all, and the gateway must report it.
    const options = isRecord(ir.passthrough.stream_options) ? ir.passthrough.stream_options : {};
    body.stream_options = { ...options, include_usage: true };
  } else {
    delete body.stream_options;
  }
  return body;
}

function encodeMessages(ir: IRRequest): Json[] {
  const out: Json[] = [];
  const system = joinText(ir.system);
  if (system !== '') out.push({ role: 'system', content: system });

  // Chat tool messages hold text only, and every tool message of a turn must directly follow the
  // assistant's tool calls: images (and files) from a run of tool results go into one user
  // message after the run.
  let moved: Json[] = [];
  const flushMoved = (): void => {
    if (moved.length > 0) out.push({ role: 'user', content: moved });
    moved = [];
  };

  for (const message of ir.messages) {
    if (message.role !== 'tool') flushMoved();
    switch (message.role) {
      case 'system': {
        const text = joinText(message.content);
        if (text !== '') out.push({ role: 'system', content: text });
        break;
      }
      case 'user':
        out.push({ role: 'user', content: encodeUserContent(message.content) });
        break;
      case 'assistant': {
        const assistant = encodeAssistant(message);
        if (assistant) out.push(assistant);
        break;
      }
      case 'tool': {
        const text = message.content
          .filter((part): part is IRTextPart => part.type === 'text')
          .map((part) => part.text)
          .join('');
        for (const part of message.content) if (part.type !== 'text') moved.push(encodePart(part));
        // Chat has no error flag on tool results: say it in the text so the model still knows.
        out.push({ role: 'tool', tool_call_id: message.toolCallId, content: message.isError ? `Error: ${text}` : text });
        break;
      }
    }
  }
  flushMoved();
  return out;
}

function encodeAssistant(message: Extract<IRMessage, { role: 'assistant' }>): Json | undefined {
  let text = '';
  let refusal: string | undefined;
  const toolCalls: Json[] = [];
  for (const part of message.content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'refusal') refusal = (refusal ?? '') + part.refusal;
    else if (part.type === 'tool_call') {
      // Empty arguments are `""` in some protocols; Chat upstreams expect a JSON object text.
      toolCalls.push({ id: part.id, type: 'function', function: { name: part.name, arguments: part.arguments || '{}' } });
    }
  }
  if (text === '' && refusal === undefined && toolCalls.length === 0) return undefined; // only reasoning
  const out: Json = { role: 'assistant', content: text === '' && (toolCalls.length > 0 || refusal !== undefined) ? null : text };
  if (refusal !== undefined) out.refusal = refusal;
  if (toolCalls.length > 0) out.tool_calls = toolCalls;
  return out;
}

function encodeUserContent(parts: IRContentPart[]): string | Json[] {
  const only = parts[0];
  if (parts.length === 0) return '';
  if (parts.length === 1 && only?.type === 'text') return only.text;
  return parts.map(encodePart);
}

function encodePart(part: IRContentPart): Json {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return { type: 'image_url', image_url: { url: imageUrl(part), detail: part.detail } };
    case 'file':
      return { type: 'file', file: encodeFile(part) };
  }
}

function imageUrl(part: IRImagePart): string | JoinedText {
  if (part.url) return part.url;
  if (part.data) return dataUrl(part.mediaType ?? 'image/png', part.data);
  throw invalidRequest('An image part has neither a URL nor data.');
}

function encodeFile(part: IRFilePart): Json {
  const file: Json = {};
  if (part.data !== undefined) file.file_data = dataUrl(part.mediaType ?? 'application/octet-stream', part.data);
  if (part.fileId !== undefined) file.file_id = part.fileId;
  if (part.filename !== undefined) file.filename = part.filename;
  if (file.file_data === undefined && file.file_id === undefined) {
    // Chat file parts take inline data or an uploaded file id, never a URL.
    throw invalidRequest('File URLs are not supported by this model; send the file data inline instead.', part.param ?? null);
  }
  return file;
}

function encodeToolChoice(choice: IRToolChoice): unknown {
  if (choice.type === 'tool') return { type: 'function', function: { name: choice.name } };
  return choice.type;
}

function encodeResponseFormat(format: NonNullable<IRRequest['responseFormat']>): Json {
  if (format.type !== 'json_schema') return { type: format.type };
  return {
    type: 'json_schema',
    json_schema: {
      // `name` is required by Chat; clients of other protocols may not have given one.
      name: format.name ?? 'response',
      description: format.description,
      schema: format.schema,
      strict: format.strict,
    },
  };
}

function joinText(parts: readonly IRTextPart[]): string {
  return parts
    .map((part) => part.text)
    .filter((text) => text !== '')
    .join('\n\n');
}
