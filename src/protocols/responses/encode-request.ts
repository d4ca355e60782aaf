import { invalidRequest } from '../../errors.js';
import { admitParams } from '../upstream-params.js';
import { reasoningEffort } from '../openai/reasoning-effort.js';
import type { IRAssistantPart, IRContentPart, IRMessage, IRRequest, IRTextPart, IRToolChoice } from '../ir.js';
import type { Json } from '../../json.js';
import { dataUrl, type JoinedText } from '../data-url.js';

/**
 * IR → Responses request body, for an upstream that speaks Responses while the client does not.
 *
 * Dropped on purpose: `cacheControl` (OpenAI caches prefixes by itself), reasoning parts that
 * carry neither an item id nor opaque content (Responses cannot take plain reasoning text back),
 * and Anthropic thinking (a signature means the reasoning came from Claude). Request fields
 * Responses lacks (`top_k`, `seed`, penalties, stop sequences…) are dropped or refused by `admitParams`.
 */
export function encodeResponsesRequest(request: IRRequest): Json {
  const ir = admitParams(request, 'responses');
  const body: Json = { ...ir.passthrough, model: ir.model };
  // Chat's flat name of Responses' `text.verbosity`, which moves there below.
  delete body.verbosity;
  // Responses streams always carry usage: of Chat's `stream_options` only the shared
  // `include_obfuscation` means something here (`include_usage` would be rejected).
  const streamOptions = ir.passthrough.stream_options as Json | undefined;
  delete body.stream_options;
  if (ir.stream && typeof streamOptions?.include_obfuscation === 'boolean') {
    body.stream_options = { include_obfuscation: streamOptions.include_obfuscation };
  }
  const instructions = joinText(ir.system);
  if (instructions !== '') body.instructions = instructions;
  body.input = encodeInput(ir.messages, ir.passthrough.store === false);

  if (ir.tools && ir.tools.length > 0) {
    body.tools = ir.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters ?? { type: 'object', properties: {} },
      // Responses defaults `strict` to true, which rejects ordinary schemas; the other
      // protocols default to false, so say it explicitly.
      strict: tool.strict ?? false,
    }));
    if (ir.toolChoice) body.tool_choice = encodeToolChoice(ir.toolChoice);
    const parallel = ir.parallelToolCalls ?? (ir.toolChoice && 'parallel' in ir.toolChoice ? ir.toolChoice.parallel : undefined);
    if (parallel !== undefined) body.parallel_tool_calls = parallel;
  }

  if (ir.maxOutputTokens !== undefined) body.max_output_tokens = ir.maxOutputTokens;
  if (ir.temperature !== undefined) body.temperature = ir.temperature;
  if (ir.topP !== undefined) body.top_p = ir.topP;
  const effort = reasoningEffort(ir.reasoning);
  if (effort !== undefined || ir.reasoning?.summary !== undefined) {
    body.reasoning = { effort, summary: ir.reasoning?.summary };
  }
  const verbosity = ir.passthrough.verbosity;
  if (ir.responseFormat || verbosity !== undefined) {
    body.text = { format: ir.responseFormat && encodeFormat(ir.responseFormat), verbosity };
  }
  if (ir.metadata !== undefined) body.metadata = ir.metadata;
  if (ir.user !== undefined) body.user = ir.user;
  body.stream = ir.stream;
  return body;
}

function encodeInput(messages: IRMessage[], stateless: boolean): Json[] {
  const input: Json[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
      case 'user':
        input.push({ role: message.role, content: message.content.map(encodePart) });
        break;
      case 'assistant':
        encodeAssistant(message.content, input, stateless);
        break;
      case 'tool': {
        const onlyText = message.content.every((part) => part.type === 'text');
        const prefix = message.isError ? 'Error: ' : '';
        // Responses has no error flag on tool output: say it in the text so the model still knows.
        const output = onlyText
          ? prefix + message.content.map((part) => (part as IRTextPart).text).join('')
          : [...(prefix ? [{ type: 'input_text', text: prefix.trim() }] : []), ...message.content.map(encodePart)];
        input.push({ type: 'function_call_output', call_id: message.toolCallId, output });
        break;
      }
    }
  }
  return input;
}

/**
 * Assistant parts in order: text and refusals grouped into message items, between reasoning and
 * call items. With `store: false` nothing is kept upstream, so a reasoning item id would be looked
 * up and not found: only encrypted content is replayed, without its id.
 */
function encodeAssistant(parts: IRAssistantPart[], input: Json[], stateless: boolean): void {
  let content: Json[] = [];
  const flush = (): void => {
    if (content.length > 0) input.push({ role: 'assistant', content });
    content = [];
  };
  for (const part of parts) {
    switch (part.type) {
      case 'text':
        if (part.text !== '') content.push({ type: 'output_text', text: part.text, annotations: [] });
        break;
      case 'refusal':
        content.push({ type: 'refusal', refusal: part.refusal });
        break;
      case 'reasoning': {
        // Only OpenAI reasoning can be replayed: an item id (stored) or encrypted content.
        if (part.signature || part.redacted !== undefined || part.thoughtSignature !== undefined || (part.id === undefined && part.encrypted === undefined))
          break;
        if (stateless && part.encrypted === undefined) break;
        flush();
        input.push({
          type: 'reasoning',
          id: stateless ? undefined : part.id,
          summary: part.text !== '' ? [{ type: 'summary_text', text: part.text }] : [],
          encrypted_content: part.encrypted,
        });
        break;
      }
      case 'tool_call':
        flush();
        input.push({ type: 'function_call', call_id: part.id, name: part.name, arguments: part.arguments || '{}' });
        break;
    }
  }
  flush();
}

function encodePart(part: IRContentPart): Json {
  switch (part.type) {
    case 'text':
      return { type: 'input_text', text: part.text };
    case 'image': {
      let url: string | JoinedText | undefined = part.url;
      if (url === undefined && part.data !== undefined) url = dataUrl(part.mediaType ?? 'image/png', part.data);
      if (url === undefined) throw invalidRequest('An image part has neither a URL nor data.');
      return { type: 'input_image', image_url: url, detail: part.detail ?? 'auto' };
    }
    case 'file': {
      const file: Json = { type: 'input_file' };
      if (part.data !== undefined) file.file_data = dataUrl(part.mediaType ?? 'application/octet-stream', part.data);
      if (part.fileId !== undefined) file.file_id = part.fileId;
      if (part.url !== undefined && part.data === undefined && part.fileId === undefined) file.file_url = part.url;
      if (part.filename !== undefined) file.filename = part.filename;
      return file;
    }
  }
}

function encodeToolChoice(choice: IRToolChoice): unknown {
  if (choice.type === 'tool') return { type: 'function', name: choice.name };
  return choice.type;
}

/** Responses `text.format` is flat, unlike Chat's nested `json_schema`. */
function encodeFormat(format: NonNullable<IRRequest['responseFormat']>): Json {
  if (format.type !== 'json_schema') return { type: format.type };
  return {
    type: 'json_schema',
    name: format.name ?? 'response',
    description: format.description,
    schema: format.schema ?? { type: 'object' },
    strict: format.strict,
  };
}

function joinText(parts: readonly IRTextPart[]): string {
  return parts
    .map((part) => part.text)
    .filter((text) => text !== '')
    .join('\n\n');
}
