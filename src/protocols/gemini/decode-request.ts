import { echo } from '../../http/echo.js';
import { invalidRequest } from '../../errors.js';
import { isRecord, type Json } from '../../json.js';
import { expectArray, expectRecord, isPresent, optArray, optBoolean, optNumber, optRecord, optString, unsupported } from '../decode-helpers.js';
import type { IRAssistantPart, IRContentPart, IRMessage, IRReasoningPart, IRRequest, IRTextPart, IRTool, IRToolChoice, ClientField } from '../ir.js';
import { fromThoughtSignature } from './carried-signature.js';
import { jsonSchemaOf } from './json-schema.js';
import type { ReadFields } from '../ignored-fields.js';

/** Where a Gemini client writes the IR's request-level fields, for 400s and dropped-parameter notes. */
const CLIENT_FIELDS: Partial<Record<ClientField, string>> = {
  messages: 'contents',
  temperature: 'generationConfig.temperature',
  topP: 'generationConfig.topP',
  topK: 'generationConfig.topK',
  stop: 'generationConfig.stopSequences',
  maxOutputTokens: 'generationConfig.maxOutputTokens',
  responseFormat: 'generationConfig.responseMimeType',
  reasoning: 'generationConfig.thinkingConfig',
  toolChoice: 'toolConfig.functionCallingConfig',
  seed: 'generationConfig.seed',
  presence_penalty: 'generationConfig.presencePenalty',
  frequency_penalty: 'generationConfig.frequencyPenalty',
};

/**
 * Every top-level and `generationConfig` field this decoder reads (or refuses), the route's own
 * (`model`, `stream`), and `labels` (Vertex AI's billing labels: bookkeeping). Any other is named
 * as ignored, in camelCase: `safetySettings` (thresholds of Google's own filters; another vendor
 * enforces its own policy its own way), `generationConfig.mediaResolution`.
 */
export const GEMINI_READ_FIELDS: ReadFields = {
  top: new Set(['model', 'stream', 'contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'cachedContent', 'labels']),
  within: {
    generationConfig: new Set([
      'candidateCount',
      'responseLogprobs',
      'logprobs',
      'speechConfig',
      'enableAffectiveDialog',
      'responseModalities',
      'maxOutputTokens',
      'temperature',
      'topP',
      'topK',
      'stopSequences',
      'seed',
      'presencePenalty',
      'frequencyPenalty',
      'thinkingConfig',
      'responseMimeType',
      'responseSchema',
      'responseJsonSchema',
      // What @google/genai names it on the wire.
      '_responseJsonSchema',
    ]),
  },
};

/**
 * Gemini `GenerateContentRequest` (camelCase, see field-names.ts) → IR. `contents` turns become
 * IR messages (`functionResponse` parts IR tool messages), `systemInstruction` the system
 * prompt, `functionDeclarations` tools, `generationConfig` the sampling, output and thinking
 * settings. Calls without an `id` (older models, hand-written clients) get one derived from
 * their place, and their responses are matched by name in order, as Gemini does.
 *
 * Fields it does not read are named as ignored (`GEMINI_READ_FIELDS`). Refused with a 400 naming
 * the field: `candidateCount` above 1, `cachedContent` (a Google cache object), output modalities
 * other than text, logprobs, speech output, and code execution parts.
 */
export function decodeGeminiRequest(body: Record<string, unknown>, upstreamModel: string): IRRequest {
  refuseCachedContent(body);
  const calls = new CallIds();
  const messages: IRMessage[] = [];
  expectArray(body.contents, 'contents').forEach((raw, i) => {
    decodeContent(expectRecord(raw, `contents[${i}]`), `contents[${i}]`, calls, messages);
  });
  const request: IRRequest = {
    model: upstreamModel,
    system: decodeSystem(body.systemInstruction),
    messages,
    stream: body.stream === true,
    passthrough: {},
    clientFields: CLIENT_FIELDS,
  };
  decodeTools(body, request);
  const config = optRecord(body, 'generationConfig', 'generationConfig');
  if (config) decodeGenerationConfig(config, request);
  return request;
}

/**
 * `cachedContent` names a context cached with Google's caching API, in the project of whoever
 * created it: another upstream has no such thing, and a Google one would read the operator's
 * cache for any key that knows its name. Refused on passthrough too.
 */
export function refuseCachedContent(body: Record<string, unknown>): void {
  if (isPresent(body, 'cachedContent')) unsupported('cachedContent', `'cachedContent' (a context cached with Google's caching API)`);
}

function decodeSystem(raw: unknown): IRTextPart[] {
  if (raw === undefined || raw === null) return [];
  const content = expectRecord(raw, 'systemInstruction');
  return expectArray(content.parts, 'systemInstruction.parts').map((rawPart, i) => {
    const param = `systemInstruction.parts[${i}]`;
    const part = expectRecord(rawPart, param);
    if (typeof part.text !== 'string') throw invalidRequest(`'${param}' must be a text part: a system instruction holds text only.`, param);
    return { type: 'text', text: part.text };
  });
}

/**
 * Ids of the model's function calls, so each `functionResponse` finds its call: by `id` when the
 * client kept it, else by name, in order, among the calls of the model turn before it.
 */
class CallIds {
  private pending: { id: string; name: string }[] = [];

  called(id: string | undefined, name: string, param: string): string {
    // Made-up ids carry the prefix the Gemini upstream encoder knows to leave out (call-id.ts).
    const callId = id || `call_gm_${param.replace(/\W+/g, '_')}`;
    this.pending.push({ id: callId, name });
    return callId;
  }

  /** A new model turn: calls of earlier turns were answered (or never will be). */
  newTurn(): void {
    this.pending = [];
  }

  answered(id: string | undefined, name: string, param: string): string {
    const at = id ? this.pending.findIndex((call) => call.id === id) : this.pending.findIndex((call) => call.name === name);
    if (at < 0) {
      if (id) return id;
      throw invalidRequest(`'${param}.name' names '${echo(name)}', but the model turn before it has no unanswered functionCall of that name.`, `${param}.name`);
    }
    const [call] = this.pending.splice(at, 1);
    return call!.id;
  }
}

function decodeContent(content: Json, param: string, calls: CallIds, out: IRMessage[]): void {
  const role = content.role ?? 'user';
  const parts = expectArray(content.parts, `${param}.parts`);
  if (role === 'model') {
    calls.newTurn();
    out.push({ role: 'assistant', content: decodeModelParts(parts, `${param}.parts`, calls) });
    return;
  }
  // `function` is the older role of a turn of function responses; they read as user turns.
  if (role !== 'user' && role !== 'function') {
    throw invalidRequest(`Please use a valid role: user, model. '${param}.role' is '${echo(String(role))}'.`, `${param}.role`);
  }
  let pending: IRContentPart[] = [];
  const flush = () => {
    if (pending.length > 0) out.push({ role: 'user', content: pending });
    pending = [];
  };
  parts.forEach((rawPart, j) => {
    const at = `${param}.parts[${j}]`;
    const part = expectRecord(rawPart, at);
    if (isPresent(part, 'functionResponse')) {
      flush();
      out.push(decodeFunctionResponse(expectRecord(part.functionResponse, `${at}.functionResponse`), `${at}.functionResponse`, calls));
      return;
    }
    pending.push(decodeUserPart(part, at));
  });
  flush();
}

function decodeUserPart(part: Json, param: string): IRContentPart {
  if (typeof part.text === 'string') return { type: 'text', text: part.text };
  if (isPresent(part, 'inlineData')) {
    const blob = expectRecord(part.inlineData, `${param}.inlineData`);
    const mediaType = requiredString(blob, 'mimeType', `${param}.inlineData.mimeType`);
    const data = requiredString(blob, 'data', `${param}.inlineData.data`);
    return mediaType.startsWith('image/') ? { type: 'image', data, mediaType } : { type: 'file', data, mediaType };
  }
  if (isPresent(part, 'fileData')) {
    const file = expectRecord(part.fileData, `${param}.fileData`);
    const at = `${param}.fileData.fileUri`;
    const url = requiredString(file, 'fileUri', at);
    const mediaType = optString(file, 'mimeType', `${param}.fileData.mimeType`);
    if (mediaType?.startsWith('image/')) return { type: 'image', url, mediaType, param: at };
    return { type: 'file', url, ...(mediaType ? { mediaType } : {}), param: at };
  }
  return refusedPart(part, param);
}

/** Parts no upstream but Gemini could take, or none at all. */
function refusedPart(part: Json, param: string): never {
  for (const field of ['executableCode', 'codeExecutionResult', 'functionCall']) {
    if (isPresent(part, field)) {
      const why = field === 'functionCall' ? 'only a model turn holds function calls' : 'code execution is not supported by this gateway';
      throw invalidRequest(`'${param}.${field}' cannot be served: ${why}.`, `${param}.${field}`, 'unsupported_parameter');
    }
  }
  throw invalidRequest(`'${param}' must hold one of text, inlineData, fileData, functionCall or functionResponse.`, param);
}

function decodeModelParts(parts: unknown[], param: string, calls: CallIds): IRAssistantPart[] {
  const out: IRAssistantPart[] = [];
  parts.forEach((rawPart, j) => {
    const at = `${param}[${j}]`;
    const part = expectRecord(rawPart, at);
    const signature = optString(part, 'thoughtSignature', `${at}.thoughtSignature`);
    const opaque = signature ? fromThoughtSignature(signature) : {};
    if (part.thought === true) {
      const text = typeof part.text === 'string' ? part.text : '';
      // A stream's thought parts come one per chunk, the signature on the last: one reasoning part.
      const previous = out.at(-1);
      if (previous?.type === 'reasoning' && !isSigned(previous)) Object.assign(previous, { text: previous.text + text, ...opaque });
      else out.push({ type: 'reasoning', text, ...opaque });
      return;
    }
    // A signature on an answer part signs it: the IR carries it on a reasoning part just before.
    if (signature) out.push({ type: 'reasoning', text: '', ...opaque } satisfies IRReasoningPart);
    if (typeof part.text === 'string') {
      // Gemini ends a turn with an empty text part only to carry a signature.
      if (part.text !== '') out.push({ type: 'text', text: part.text });
      return;
    }
    if (isPresent(part, 'functionCall')) {
      const call = expectRecord(part.functionCall, `${at}.functionCall`);
      const name = requiredString(call, 'name', `${at}.functionCall.name`);
      const args = call.args ?? {};
      if (!isRecord(args)) throw invalidRequest(`'${at}.functionCall.args' must be an object.`, `${at}.functionCall.args`);
      const id = calls.called(optString(call, 'id', `${at}.functionCall.id`), name, at);
      out.push({ type: 'tool_call', id, name, arguments: JSON.stringify(args) });
      return;
    }
    if (isPresent(part, 'inlineData') || isPresent(part, 'fileData')) {
      const field = isPresent(part, 'inlineData') ? 'inlineData' : 'fileData';
      throw invalidRequest(
        `'${at}.${field}' cannot be served: a model turn here holds text and function calls only.`,
        `${at}.${field}`,
        'unsupported_parameter',
      );
    }
    refusedPart(part, at);
  });
  return out;
}

function isSigned(part: IRReasoningPart): boolean {
  return part.signature !== undefined || part.redacted !== undefined || part.encrypted !== undefined || part.thoughtSignature !== undefined;
}

/**
 * A function's result: `{ output: "…" }` reads as that text, `{ error: … }` alone as a failed
 * call, anything else as its JSON; media `parts` of the response follow the text.
 */
function decodeFunctionResponse(response: Json, param: string, calls: CallIds): IRMessage {
  const name = requiredString(response, 'name', `${param}.name`);
  const id = calls.answered(optString(response, 'id', `${param}.id`), name, param);
  const result = response.response ?? {};
  if (!isRecord(result)) throw invalidRequest(`'${param}.response' must be an object.`, `${param}.response`);
  const keys = Object.keys(result);
  const only = keys.length === 1 ? result[keys[0]!] : undefined;
  const text = keys.length === 1 && (keys[0] === 'output' || keys[0] === 'error') && typeof only === 'string' ? only : JSON.stringify(result);
  const content: IRContentPart[] = [{ type: 'text', text }];
  optArray(response, 'parts', `${param}.parts`)?.forEach((raw, i) => {
    content.push(decodeUserPart(expectRecord(raw, `${param}.parts[${i}]`), `${param}.parts[${i}]`));
  });
  const isError = isPresent(result, 'error') && !isPresent(result, 'output');
  return { role: 'tool', toolCallId: id, name, content, ...(isError ? { isError: true } : {}) };
}

/** Tools Google runs itself (search, code execution, URL context…): other upstreams cannot run them. */
const HOSTED_TOOLS = new Set([
  'googleSearch',
  'googleSearchRetrieval',
  'codeExecution',
  'urlContext',
  'fileSearch',
  'computerUse',
  'googleMaps',
  'enterpriseWebSearch',
  'retrieval',
]);

/** Function declarations become IR tools; hosted tools are dropped and named (`droppedTools`). */
function decodeTools(body: Json, request: IRRequest): void {
  const tools: IRTool[] = [];
  const dropped: string[] = [];
  optArray(body, 'tools', 'tools')?.forEach((raw, i) => {
    const tool = expectRecord(raw, `tools[${i}]`);
    for (const [key, value] of Object.entries(tool)) {
      if (value === undefined || value === null) continue;
      if (key !== 'functionDeclarations') {
        // As Google answers a field its Tool message lacks; the name also goes into a header.
        if (!HOSTED_TOOLS.has(key)) throw invalidRequest(`Unknown name '${echo(key)}' at 'tools[${i}]': Cannot find field.`, `tools[${i}]`);
        dropped.push(key);
        continue;
      }
      expectArray(value, `tools[${i}].functionDeclarations`).forEach((rawDeclaration, j) => {
        tools.push(decodeDeclaration(expectRecord(rawDeclaration, `tools[${i}].functionDeclarations[${j}]`), `tools[${i}].functionDeclarations[${j}]`));
      });
    }
  });
  const config = optRecord(body, 'toolConfig', 'toolConfig');
  const calling = config ? optRecord(config, 'functionCallingConfig', 'toolConfig.functionCallingConfig') : undefined;
  const choice = calling ? decodeCallingConfig(calling, tools) : undefined;
  if (choice) {
    request.toolChoice = choice.choice;
    if (choice.allowed) {
      const allowed = new Set(choice.allowed);
      const kept = tools.filter((tool) => allowed.has(tool.name));
      tools.splice(0, tools.length, ...kept);
    }
  }
  if (tools.length > 0) request.tools = tools;
  if (dropped.length > 0) request.droppedTools = dropped;
}

function decodeDeclaration(declaration: Json, param: string): IRTool {
  const tool: IRTool = { name: requiredString(declaration, 'name', `${param}.name`) };
  const description = optString(declaration, 'description', `${param}.description`);
  if (description !== undefined) tool.description = description;
  if (isPresent(declaration, 'parametersJsonSchema')) {
    tool.parameters = expectRecord(declaration.parametersJsonSchema, `${param}.parametersJsonSchema`);
    tool.schemaField = `${param}.parametersJsonSchema`;
  } else if (isPresent(declaration, 'parameters')) {
    tool.parameters = jsonSchemaOf(expectRecord(declaration.parameters, `${param}.parameters`)) as Json;
    tool.schemaField = `${param}.parameters`;
  }
  return tool;
}

/**
 * `AUTO` (and `VALIDATED`, auto with schema-checked arguments) → auto; `NONE` → none; `ANY` →
 * required, or that one tool when `allowedFunctionNames` names one. With several names the
 * other tools are left out of the request, so the model can call only those.
 */
function decodeCallingConfig(config: Json, tools: IRTool[]): { choice: IRToolChoice; allowed?: string[] } | undefined {
  const param = 'toolConfig.functionCallingConfig';
  const mode = optString(config, 'mode', `${param}.mode`) ?? 'MODE_UNSPECIFIED';
  const names = optArray(config, 'allowedFunctionNames', `${param}.allowedFunctionNames`)?.map((name, i) => {
    if (typeof name !== 'string') throw invalidRequest(`'${param}.allowedFunctionNames[${i}]' must be a string.`, `${param}.allowedFunctionNames[${i}]`);
    if (!tools.some((tool) => tool.name === name)) {
      throw invalidRequest(
        `'${param}.allowedFunctionNames[${i}]' names '${echo(name)}', which no functionDeclaration declares.`,
        `${param}.allowedFunctionNames[${i}]`,
      );
    }
    return name;
  });
  switch (mode) {
    case 'MODE_UNSPECIFIED':
    case 'AUTO':
    case 'VALIDATED':
      return mode === 'MODE_UNSPECIFIED' ? undefined : { choice: { type: 'auto' }, ...(names ? { allowed: names } : {}) };
    case 'NONE':
      return { choice: { type: 'none' } };
    case 'ANY':
      if (names?.length === 1) return { choice: { type: 'tool', name: names[0]! } };
      return { choice: { type: 'required' }, ...(names ? { allowed: names } : {}) };
    default:
      throw invalidRequest(`Invalid '${param}.mode' '${echo(String(mode))}': expected one of AUTO, ANY, NONE, VALIDATED.`, `${param}.mode`);
  }
}

const THINKING_LEVELS: Record<string, string> = { MINIMAL: 'minimal', LOW: 'low', MEDIUM: 'medium', HIGH: 'high' };

function decodeGenerationConfig(config: Json, request: IRRequest): void {
  const at = (field: string) => `generationConfig.${field}`;
  const count = optNumber(config, 'candidateCount', at('candidateCount'));
  if (count !== undefined && count > 1) {
    throw invalidRequest(`'generationConfig.candidateCount' must be 1 here: this gateway returns one candidate.`, at('candidateCount'), 'unsupported_value');
  }
  for (const field of ['responseLogprobs', 'logprobs', 'speechConfig', 'enableAffectiveDialog']) {
    if (isPresent(config, field) && config[field] !== false) unsupported(at(field));
  }
  const modalities = optArray(config, 'responseModalities', at('responseModalities'));
  if (modalities?.some((modality) => modality !== 'TEXT')) {
    throw invalidRequest(`'generationConfig.responseModalities' may hold only TEXT here.`, at('responseModalities'), 'unsupported_value');
  }

  const max = optNumber(config, 'maxOutputTokens', at('maxOutputTokens'));
  if (max !== undefined) request.maxOutputTokens = max;
  const temperature = optNumber(config, 'temperature', at('temperature'));
  if (temperature !== undefined) request.temperature = temperature;
  const topP = optNumber(config, 'topP', at('topP'));
  if (topP !== undefined) request.topP = topP;
  const topK = optNumber(config, 'topK', at('topK'));
  if (topK !== undefined) request.topK = topK;
  const stop = optArray(config, 'stopSequences', at('stopSequences'));
  if (stop && stop.length > 0) request.stop = stop as string[];
  // Same meaning on OpenAI-family upstreams, under OpenAI's names.
  const seed = optNumber(config, 'seed', at('seed'));
  if (seed !== undefined) request.passthrough.seed = seed;
  const presence = optNumber(config, 'presencePenalty', at('presencePenalty'));
  if (presence !== undefined) request.passthrough.presence_penalty = presence;
  const frequency = optNumber(config, 'frequencyPenalty', at('frequencyPenalty'));
  if (frequency !== undefined) request.passthrough.frequency_penalty = frequency;

  const format = decodeResponseFormat(config);
  if (format) request.responseFormat = format;
  const thinking = optRecord(config, 'thinkingConfig', at('thinkingConfig'));
  if (thinking) {
    const reasoning = decodeThinking(thinking);
    if (reasoning) request.reasoning = reasoning;
  }
}

/**
 * `responseMimeType: application/json` with a schema (Gemini's or JSON Schema) → json_schema; without → json_object.
 * Google reads its own upper-case type names in a JSON Schema too (Gemini CLI's classifier sends
 * `responseJsonSchema: {type: "OBJECT", …}`), which other vendors refuse: both become lower case.
 */
function decodeResponseFormat(config: Json): IRRequest['responseFormat'] {
  const mime = optString(config, 'responseMimeType', 'generationConfig.responseMimeType');
  const jsonSchemaField = isPresent(config, 'responseJsonSchema') ? 'responseJsonSchema' : '_responseJsonSchema';
  const field = isPresent(config, 'responseSchema') ? 'responseSchema' : jsonSchemaField;
  const schema = jsonSchemaOf(field === 'responseSchema' ? expectRecord(config.responseSchema, 'generationConfig.responseSchema') : config[field]);
  if (mime === undefined || mime === 'text/plain') {
    if (schema !== undefined && schema !== null) {
      throw invalidRequest(`'generationConfig.responseMimeType' must be application/json when a response schema is set.`, 'generationConfig.responseMimeType');
    }
    return mime === 'text/plain' ? { type: 'text' } : undefined;
  }
  if (mime !== 'application/json') {
    throw invalidRequest(
      `'generationConfig.responseMimeType' '${mime}' is not supported here; use text/plain or application/json.`,
      'generationConfig.responseMimeType',
      'unsupported_value',
    );
  }
  if (schema === undefined || schema === null) return { type: 'json_object' };
  return { type: 'json_schema', name: 'response', schema, schemaField: `generationConfig.${field}` };
}

/**
 * `thinkingBudget` → a budget (0 turns thinking off, -1 is the model's own choice: medium);
 * `thinkingLevel` → the effort of that name; `includeThoughts` asks for summaries.
 */
function decodeThinking(thinking: Json): IRRequest['reasoning'] {
  const param = 'generationConfig.thinkingConfig';
  const budget = optNumber(thinking, 'thinkingBudget', `${param}.thinkingBudget`);
  const level = optString(thinking, 'thinkingLevel', `${param}.thinkingLevel`);
  const include = optBoolean(thinking, 'includeThoughts', `${param}.includeThoughts`);
  let reasoning: NonNullable<IRRequest['reasoning']> | undefined;
  if (level !== undefined && level !== 'THINKING_LEVEL_UNSPECIFIED') {
    const effort = THINKING_LEVELS[level];
    if (!effort)
      throw invalidRequest(`Invalid '${param}.thinkingLevel' '${echo(String(level))}': expected one of MINIMAL, LOW, MEDIUM, HIGH.`, `${param}.thinkingLevel`);
    reasoning = { effort };
  } else if (budget !== undefined && budget !== 0) {
    reasoning = budget < 0 ? { effort: 'medium' } : { budgetTokens: budget };
  }
  if (include === true) reasoning = { ...reasoning, summary: 'auto' };
  return reasoning;
}

function requiredString(obj: Json, key: string, param: string): string {
  const value = obj[key];
  if (typeof value !== 'string' || value === '') throw invalidRequest(`'${param}' must be a non-empty string.`, param);
  return value;
}
