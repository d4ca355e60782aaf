import {
  counter,
  isObject,
  Rejection,
  sseData,
  startFake,
  type FakeProtocol,
  type FakeUpstream,
  type NeutralUsage,
  type RecordedRequest,
  type Reply,
} from './fake-server.js';
import { fakeVector } from './fake-openai-embeddings.js';

type Json = Record<string, any>;

export interface FakeGeminiOptions {
  /** The key it accepts, in `x-goog-api-key` or `?key=`. Default `up-key`. */
  apiKey?: string;
  models?: readonly string[];
  /** The path before `/models/{model}:…`. Default `/v1beta`. */
  prefix?: string;
  /** Replaces the key check (Vertex AI's bearer token). */
  checkCaller?: (request: RecordedRequest) => void;
  /** Models served by `:batchEmbedContents` (and only by it). Default `GEMINI_EMBEDDING_MODELS`. */
  embeddingModels?: readonly string[];
  /** Whose words refuse a thought signature: the Gemini API's (default) or Vertex AI's. */
  service?: 'gemini' | 'vertex';
}

/** gemini-embedding-001 makes 3072 values, shortened by `outputDimensionality`. */
export const GEMINI_EMBEDDING_MODELS = ['gemini-embedding-001'];
const EMBEDDING_DIMENSIONS = 3072;
const TASK_TYPES = [
  'TASK_TYPE_UNSPECIFIED',
  'RETRIEVAL_QUERY',
  'RETRIEVAL_DOCUMENT',
  'SEMANTIC_SIMILARITY',
  'CLASSIFICATION',
  'CLUSTERING',
  'QUESTION_ANSWERING',
  'FACT_VERIFICATION',
  'CODE_RETRIEVAL_QUERY',
];

/** Gemini 3 models validate thought signatures on function calls; 2.5 models do not. */
export const GEMINI_MODELS = ['gemini-3-pro-preview', 'gemini-2.5-flash'];

/**
 * A fake Gemini API (`POST /v1beta/models/{model}:generateContent`,
 * `:streamGenerateContent?alt=sse` and `:batchEmbedContents` for embedding models, whose vectors
 * are `fakeVector` of each text), from Google's API reference, as strict as the real one:
 * the key, a known model, unknown fields at any level refused (protobuf's "Cannot find field"),
 * roles other than `user`/`model`, empty `contents` or `parts`, a part with no data or two,
 * Schema keywords outside Gemini's subset, an OBJECT parameter schema without properties, a
 * `functionResponse` that answers no call of the turn before, both `thinkingBudget` and
 * `thinkingLevel`. On Gemini 3 models it signs the first `functionCall` of each answer and,
 * with the real API's 400 and words, refuses a follow-up whose current turn replays a step's
 * first call without a signature, or any part with a signature it did not issue; Google's skip
 * value (`skip_thought_signature_validator`) passes.
 */
export async function startFakeGemini(options: FakeGeminiOptions = {}): Promise<FakeUpstream & { signatures: Set<string> }> {
  const protocol = geminiProtocol(options);
  const fake = await startFake(protocol);
  return Object.assign(fake, { signatures: protocol.signatures });
}

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

// `model` is a field of Google's GenerateContentRequest too (the path binds it; the body may repeat it).
const REQUEST_FIELDS = ['model', 'contents', 'tools', 'toolConfig', 'safetySettings', 'systemInstruction', 'generationConfig', 'cachedContent'];
const CONTENT_FIELDS = ['role', 'parts'];
const DATA_FIELDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'];
const PART_FIELDS = [...DATA_FIELDS, 'thought', 'thoughtSignature', 'videoMetadata', 'partMetadata'];
const GENERATION_FIELDS = [
  'stopSequences',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'responseModalities',
  'candidateCount',
  'maxOutputTokens',
  'temperature',
  'topP',
  'topK',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseLogprobs',
  'logprobs',
  'thinkingConfig',
  'mediaResolution',
  'speechConfig',
];
const SCHEMA_FIELDS = [
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
];
const SCHEMA_TYPES = ['TYPE_UNSPECIFIED', 'STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT', 'NULL'];

/** The Gemini wire as a `FakeProtocol`, for fakes that host Gemini behind another front (Vertex AI). */
export function geminiProtocol(options: FakeGeminiOptions = {}): FakeProtocol & { signatures: Set<string> } {
  const apiKey = options.apiKey ?? 'up-key';
  const models = options.models ?? GEMINI_MODELS;
  const embeddingModels = options.embeddingModels ?? GEMINI_EMBEDDING_MODELS;
  const prefix = options.prefix ?? '/v1beta';
  const responseId = counter('fake-gemini-resp-');
  let signed = 0;
  const callId = counter('gem-call-');
  /**
   * Every signature it issued: bytes in standard padded base64, with `+`, `/` and `=` as real
   * ones have (`Cu+/+/8wMDAwMDH+/g==`; a count makes each one unique).
   */
  const signatures = new Set<string>();
  const sign = () => {
    signed += 1;
    const bytes = [Buffer.from([0x0a, 0xef, 0xbf, 0xfb, 0xff]), Buffer.from(String(signed).padStart(6, '0')), Buffer.from([0xfe, 0xfe])];
    const signature = Buffer.concat(bytes).toString('base64');
    signatures.add(signature);
    return signature;
  };
  const service = options.service ?? 'gemini';

  return {
    signatures,

    validate(request: RecordedRequest): string {
      const match = /^(.*)\/models\/([^/:]+):(generateContent|streamGenerateContent|batchEmbedContents|countTokens)$/.exec(request.path);
      if (request.method !== 'POST' || !match || match[1] !== prefix) throw new Rejection(404, `Not found: ${request.method} ${request.path}`);
      if (options.checkCaller) options.checkCaller(request);
      else checkKey(request, apiKey);
      const model = decodeURIComponent(match[2]!);
      const method = match[3]!;
      if (method === 'batchEmbedContents') {
        if (!embeddingModels.includes(model))
          throw new Rejection(404, `models/${model} is not found for API version v1beta, or is not supported for batchEmbedContents.`);
        if (!isObject(request.body)) throw invalid('Invalid JSON payload received.');
        checkBatchEmbed(request.body, model);
        return `${model}:${method}`;
      }
      if (!models.includes(model)) throw new Rejection(404, `models/${model} is not found for API version v1beta, or is not supported for generateContent.`);
      if (method === 'countTokens') {
        checkCountTokens(request.body, model, model.startsWith('gemini-3') ? { issued: signatures, service } : undefined);
        return `${model}:${method}`;
      }
      if (method === 'streamGenerateContent' && !new URL(request.url, 'http://x').searchParams.has('alt'))
        throw invalid('fake: streamGenerateContent without alt=sse answers a JSON array, which this fake does not serve');
      const body = request.body;
      if (!isObject(body)) throw invalid('Invalid JSON payload received.');
      checkRequest(body, model.startsWith('gemini-3') ? { issued: signatures, service } : undefined);
      return `${model}:${method}`;
    },

    streams: (endpoint) => endpoint.endsWith(':streamGenerateContent'),

    render(endpoint, body, reply) {
      const model = endpoint.split(':')[0]!;
      if (endpoint.endsWith(':countTokens')) {
        const totalTokens = fakeTokenCount(body.generateContentRequest ?? body);
        return {
          status: 200,
          headers: { 'content-type': 'application/json; charset=UTF-8' },
          json: { totalTokens, promptTokensDetails: [{ modality: 'TEXT', tokenCount: totalTokens }] },
        };
      }
      if (endpoint.endsWith(':batchEmbedContents')) {
        const embeddings = body.requests.map((item: Json) => ({
          values: fakeVector(item.content.parts.map((part: Json) => part.text).join(''), item.outputDimensionality ?? EMBEDDING_DIMENSIONS),
        }));
        return { status: 200, headers: { 'content-type': 'application/json; charset=UTF-8' }, json: { embeddings } };
      }
      const id = responseId();
      const signed = model.startsWith('gemini-3') || (reply.reasoning?.length ?? 0) > 0;
      const usage = usageMetadata(reply.usage ?? { input: 12, output: 4 });
      const finishReason = reply.finish === 'length' ? 'MAX_TOKENS' : 'STOP';
      const thoughts: Json[] = (reply.reasoning ?? []).map((text) => ({ text, thought: true }));
      const texts: Json[] = (reply.text ?? []).map((text) => ({ text }));
      const calls: Json[] = (reply.toolCalls ?? []).map((call) => ({
        functionCall: {
          ...(call.id ? { id: call.id } : model.startsWith('gemini-3') ? { id: callId() } : {}),
          name: call.name,
          args: JSON.parse(call.args.join('') || '{}'),
        },
      }));
      // The first call of the answer carries the signature; without calls, the last text part.
      if (signed && calls.length > 0) calls[0]!.thoughtSignature = sign();
      else if (signed && texts.length > 0) texts.at(-1)!.thoughtSignature = sign();
      const head = { responseId: id, modelVersion: model };
      const headers = { 'content-type': endpoint.endsWith(':streamGenerateContent') ? 'text/event-stream' : 'application/json' };

      if (!endpoint.endsWith(':streamGenerateContent')) {
        const parts = [...thoughts, ...mergedText(texts), ...calls];
        return {
          status: 200,
          headers,
          json: { candidates: [{ content: { role: 'model', parts }, finishReason, index: 0 }], usageMetadata: usage, ...head },
        };
      }
      const chunks: Json[] = [...thoughts, ...texts, ...calls].map((part) => ({
        candidates: [{ content: { role: 'model', parts: [part] }, index: 0 }],
        usageMetadata: { promptTokenCount: usage.promptTokenCount, totalTokenCount: usage.promptTokenCount },
        ...head,
      }));
      const last: Json = chunks.at(-1) ?? { candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, index: 0 }], ...head };
      last.candidates[0].finishReason = finishReason;
      last.usageMetadata = usage;
      if (chunks.length === 0) chunks.push(last);
      return { status: 200, headers, frames: chunks.map(sseData) };
    },

    streamErrorFrames(_endpoint, error) {
      const status = error.status ?? 500;
      return [sseData({ error: { code: status, message: error.message, status: STATUS_NAMES[status] ?? 'INTERNAL' } })];
    },

    errorResponse(status, message, _fields, extra) {
      const details = status === 429 ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' }] : undefined;
      return {
        status,
        headers: { 'content-type': 'application/json; charset=UTF-8', ...extra },
        json: { error: { code: status, message, status: STATUS_NAMES[status] ?? 'UNKNOWN', ...(details ? { details } : {}) } },
      };
    },
  };
}

/**
 * `CountTokensRequest`: `contents` or a `generateContentRequest` (naming its model), never both;
 * the inner request is checked as a generation would be.
 */
function checkCountTokens(body: unknown, model: string, signatures: SignatureRules | undefined): void {
  if (!isObject(body)) throw invalid('Invalid JSON payload received.');
  if (body.contents !== undefined && body.generateContentRequest !== undefined) throw invalid('Only one of contents or generateContentRequest may be set.');
  if (isObject(body.generateContentRequest)) {
    if (body.generateContentRequest.model !== `models/${model}`) throw invalid('generateContentRequest.model: must name the model of the URL.');
    const { model: _model, ...generation } = body.generateContentRequest;
    checkRequest(generation, signatures);
    return;
  }
  checkRequest({ contents: body.contents }, signatures);
}

/** A deterministic count the tests can recompute: a token per 4 characters of the request's JSON text parts and tools. */
export function fakeTokenCount(request: Json): number {
  const texts = [...(request.contents ?? []), ...(request.systemInstruction ? [request.systemInstruction] : [])].flatMap((content: Json) =>
    (content.parts ?? []).map((part: Json) => part.text ?? ''),
  );
  return Math.ceil(texts.join('').length / 4) + 10 * (request.tools?.length ?? 0);
}

/** A JSON answer has one text part where a stream had a chunk per delta; a signature stays on it. */
function mergedText(texts: Json[]): Json[] {
  if (texts.length === 0) return [];
  const signature = texts.find((part) => part.thoughtSignature)?.thoughtSignature;
  return [{ text: texts.map((part) => part.text).join(''), ...(signature ? { thoughtSignature: signature } : {}) }];
}

export function usageMetadata(usage: NeutralUsage): Json {
  const thoughts = usage.reasoning ?? 0;
  return {
    promptTokenCount: usage.input,
    ...(usage.cachedRead !== undefined ? { cachedContentTokenCount: usage.cachedRead } : {}),
    candidatesTokenCount: usage.output - thoughts,
    ...(usage.reasoning !== undefined ? { thoughtsTokenCount: thoughts } : {}),
    totalTokenCount: usage.input + usage.output,
  };
}

// ---- validation ---------------------------------------------------------------------------

function invalid(message: string): Rejection {
  return new Rejection(400, message);
}

function checkKey(request: RecordedRequest, apiKey: string): void {
  const key = request.headers['x-goog-api-key'] ?? new URL(request.url, 'http://x').searchParams.get('key');
  if (!key)
    throw new Rejection(
      403,
      "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
    );
  if (key !== apiKey) throw invalid('API key not valid. Please pass a valid API key.');
}

/** Protobuf's JSON parser: a field the message does not have is a 400 naming it. */
function knownFields(value: Json, fields: readonly string[], at: string): void {
  for (const key of Object.keys(value)) {
    if (!fields.includes(key)) throw invalid(`Invalid JSON payload received. Unknown name "${key}" at '${at}': Cannot find field.`);
  }
}

function checkRequest(body: Json, signatures: SignatureRules | undefined): void {
  knownFields(body, REQUEST_FIELDS, 'request');
  if (!Array.isArray(body.contents) || body.contents.length === 0) throw invalid('* GenerateContentRequest.contents: contents is not specified');
  if (body.systemInstruction !== undefined) checkContent(body.systemInstruction, 'system_instruction', true);
  for (const [i, content] of body.contents.entries()) checkContent(content, `contents[${i}]`, false);
  checkTurns(body.contents);
  if (signatures) checkSignatures(body.contents, signatures);
  if (body.tools !== undefined) checkTools(body.tools);
  if (body.toolConfig !== undefined) {
    knownFields(body.toolConfig, ['functionCallingConfig'], 'tool_config');
    const config = body.toolConfig.functionCallingConfig ?? {};
    knownFields(config, ['mode', 'allowedFunctionNames'], 'tool_config.function_calling_config');
    if (config.mode !== undefined && !['MODE_UNSPECIFIED', 'AUTO', 'ANY', 'NONE', 'VALIDATED'].includes(config.mode))
      throw invalid(
        `Invalid value at 'tool_config.function_calling_config.mode' (type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode), "${config.mode}"`,
      );
    if (config.allowedFunctionNames !== undefined && config.mode !== 'ANY' && config.mode !== 'VALIDATED')
      throw invalid(
        '* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: allowed_function_names is only allowed when mode is ANY or VALIDATED.',
      );
  }
  if (body.generationConfig !== undefined) checkGenerationConfig(body.generationConfig);
}

/**
 * `BatchEmbedContentsRequest`: 1 to 100 `EmbedContentRequest`s, each naming the model of the URL,
 * with text parts only, a known `taskType` and an `outputDimensionality` the model can make.
 */
function checkBatchEmbed(body: Json, model: string): void {
  knownFields(body, ['requests'], 'request');
  if (!Array.isArray(body.requests) || body.requests.length === 0) throw invalid('* BatchEmbedContentsRequest.requests: requests is not specified');
  if (body.requests.length > 100) throw invalid('* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch');
  for (const [i, item] of body.requests.entries()) {
    const at = `requests[${i}]`;
    if (!isObject(item)) throw invalid(`Invalid value at '${at}': expected an object`);
    knownFields(item, ['model', 'content', 'taskType', 'title', 'outputDimensionality'], at);
    if (item.model !== `models/${model}`)
      throw invalid(`* BatchEmbedContentsRequest.${at}.model: the model of each request must be the model of the batch (models/${model})`);
    if (!isObject(item.content)) throw invalid(`* BatchEmbedContentsRequest.${at}.content: content is not specified`);
    knownFields(item.content, CONTENT_FIELDS, `${at}.content`);
    if (!Array.isArray(item.content.parts) || item.content.parts.length === 0)
      throw invalid(`* BatchEmbedContentsRequest.${at}.content.parts: parts must not be empty`);
    for (const [j, part] of item.content.parts.entries()) {
      checkPart(part, `${at}.content.parts[${j}]`);
      if (typeof part.text !== 'string' || part.text === '')
        throw invalid(`* BatchEmbedContentsRequest.${at}.content.parts[${j}]: only non-empty text is embedded`);
    }
    if (item.taskType !== undefined && !TASK_TYPES.includes(item.taskType)) throw invalid(`Invalid value at '${at}.task_type', "${item.taskType}"`);
    const size = item.outputDimensionality;
    if (size !== undefined && (!Number.isInteger(size) || size < 1 || size > EMBEDDING_DIMENSIONS))
      throw invalid(`* BatchEmbedContentsRequest.${at}.output_dimensionality: must be between 1 and ${EMBEDDING_DIMENSIONS}`);
  }
}

function checkContent(content: unknown, at: string, system: boolean): void {
  if (!isObject(content)) throw invalid(`Invalid value at '${at}': expected an object`);
  knownFields(content, CONTENT_FIELDS, at);
  if (!system && content.role !== 'user' && content.role !== 'model') throw invalid('Please use a valid role: user, model.');
  if (!Array.isArray(content.parts) || content.parts.length === 0) throw invalid(`* GenerateContentRequest.${at}.parts: contents.parts must not be empty.`);
  for (const [j, part] of content.parts.entries()) checkPart(part, `${at}.parts[${j}]`);
}

function checkPart(part: unknown, at: string): void {
  if (!isObject(part)) throw invalid(`Invalid value at '${at}': expected an object`);
  knownFields(part, PART_FIELDS, at);
  const data = DATA_FIELDS.filter((field) => part[field] !== undefined);
  if (data.length === 0) throw invalid(`* GenerateContentRequest.${at}.data: required oneof field 'data' must have one initialized field`);
  if (data.length > 1) throw invalid(`Invalid value at '${at}': oneof field 'data' is already set. Cannot set '${data[1]}'`);
  if (part.text !== undefined && typeof part.text !== 'string') throw invalid(`Invalid value at '${at}.text': expected a string`);
  if (part.inlineData !== undefined) {
    knownFields(part.inlineData, ['mimeType', 'data'], `${at}.inline_data`);
    if (typeof part.inlineData.mimeType !== 'string' || typeof part.inlineData.data !== 'string' || !/^[A-Za-z0-9+/=]*$/.test(part.inlineData.data))
      throw invalid(`Invalid value at '${at}.inline_data': mimeType and base64 data are required`);
  }
  if (part.fileData !== undefined) {
    knownFields(part.fileData, ['mimeType', 'fileUri', 'displayName'], `${at}.file_data`);
    if (typeof part.fileData.fileUri !== 'string' || part.fileData.fileUri === '')
      throw invalid(`* GenerateContentRequest.${at}.file_data.file_uri: file_uri is required`);
  }
  if (part.functionCall !== undefined) {
    knownFields(part.functionCall, ['id', 'name', 'args'], `${at}.function_call`);
    if (typeof part.functionCall.name !== 'string' || part.functionCall.name === '')
      throw invalid(`* GenerateContentRequest.${at}.function_call.name: name is required`);
    if (part.functionCall.args !== undefined && !isObject(part.functionCall.args))
      throw invalid(`Invalid value at '${at}.function_call.args': expected an object`);
  }
  if (part.functionResponse !== undefined) {
    knownFields(part.functionResponse, ['id', 'name', 'response', 'parts', 'willContinue', 'scheduling'], `${at}.function_response`);
    if (typeof part.functionResponse.name !== 'string' || part.functionResponse.name === '')
      throw invalid(`* GenerateContentRequest.${at}.function_response.name: name is required`);
    if (!isObject(part.functionResponse.response)) throw invalid(`Invalid value at '${at}.function_response.response': expected an object`);
  }
  // A bytes field: protobuf's JSON parser takes standard and URL-safe base64 alike.
  if (part.thoughtSignature !== undefined && (typeof part.thoughtSignature !== 'string' || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(part.thoughtSignature)))
    throw invalid(`Invalid value at '${at}.thought_signature' (TYPE_BYTES), Base64 decoding failed`);
}

/** Function responses come right after the model turn that called, one per call, names matching. */
function checkTurns(contents: Json[]): void {
  contents.forEach((content, i) => {
    const responses = content.parts.filter((part: Json) => part.functionResponse !== undefined);
    if (responses.length === 0) return;
    const previous = contents[i - 1];
    const calls: Json[] = previous?.role === 'model' ? previous.parts.filter((part: Json) => part.functionCall !== undefined) : [];
    if (content.role !== 'user' || calls.length === 0) throw invalid('Please ensure that function response turn comes immediately after a function call turn.');
    if (responses.length !== calls.length)
      throw invalid('Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.');
    const names = calls.map((part) => part.functionCall.name);
    for (const part of responses) {
      if (!names.includes(part.functionResponse.name))
        throw invalid(`Function response name '${part.functionResponse.name}' does not match any function call of the previous turn.`);
    }
  });
}

/** What a Gemini 3 model checks of thought signatures, and in whose words it refuses. */
interface SignatureRules {
  issued: Set<string>;
  service: 'gemini' | 'vertex';
}

/** Google's documented value for a call the model did not sign: the validator skips that call. */
const SKIP_SIGNATURE = 'skip_thought_signature_validator';

/**
 * Gemini 3: every signature must be one the API issued (or the skip value), and in the current
 * turn (after the last user content that is not only function responses) the first function
 * call of each model step must carry one, as the real API refuses in its own words.
 */
function checkSignatures(contents: Json[], { issued, service }: SignatureRules): void {
  let turnStart = 0;
  contents.forEach((content, i) => {
    if (content.role === 'user' && content.parts.some((part: Json) => part.functionResponse === undefined)) turnStart = i;
  });
  contents.forEach((content, i) => {
    for (const part of content.parts) {
      if (part.thoughtSignature === undefined || part.thoughtSignature === SKIP_SIGNATURE || issued.has(part.thoughtSignature)) continue;
      throw invalid(
        service === 'vertex'
          ? 'Unable to submit request because Thought signature is not valid.. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini'
          : 'Corrupted thought signature.',
      );
    }
    if (i < turnStart || content.role !== 'model') return;
    const first = content.parts.find((part: Json) => part.functionCall !== undefined);
    if (first && first.thoughtSignature === undefined) {
      const name = first.functionCall.name;
      throw invalid(
        service === 'vertex'
          ? `Unable to submit request because function call \`${name}\` in the ${i + 1}. content block is missing a \`thought_signature\`. Learn more: https://docs.cloud.google.com/vertex-ai/generative-ai/docs/thought-signatures`
          : `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position ${i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
      );
    }
  });
}

function checkTools(tools: unknown): void {
  if (!Array.isArray(tools)) throw invalid("Invalid value at 'tools': expected a list");
  tools.forEach((tool: Json, i: number) => {
    knownFields(tool, ['functionDeclarations', 'googleSearch', 'codeExecution', 'urlContext', 'googleSearchRetrieval'], `tools[${i}]`);
    (tool.functionDeclarations ?? []).forEach((declaration: Json, j: number) => {
      const at = `tools[${i}].function_declarations[${j}]`;
      knownFields(declaration, ['name', 'description', 'parameters', 'parametersJsonSchema', 'response', 'responseJsonSchema', 'behavior'], at);
      if (typeof declaration.name !== 'string' || !/^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$/.test(declaration.name))
        throw invalid(`* GenerateContentRequest.${at}.name: Invalid function name.`);
      if (declaration.parameters !== undefined) {
        checkSchema(declaration.parameters, `${at}.parameters`);
        if (String(declaration.parameters.type).toUpperCase() === 'OBJECT' && !isObject(declaration.parameters.properties))
          throw invalid(`* GenerateContentRequest.${at}.parameters.properties: should be non-empty for OBJECT type`);
      }
    });
  });
}

function checkSchema(schema: unknown, at: string): void {
  if (!isObject(schema)) throw invalid(`Invalid value at '${at}': expected an object`);
  knownFields(schema, SCHEMA_FIELDS, at);
  // The API takes the Type enum in any case: its docs (and @ai-sdk/google) write `"object"`.
  if (schema.type !== undefined && !(typeof schema.type === 'string' && SCHEMA_TYPES.includes(schema.type.toUpperCase())))
    throw invalid(`Invalid value at '${at}.type' (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), "${schema.type}"`);
  if (schema.enum !== undefined && (!Array.isArray(schema.enum) || schema.enum.some((value: unknown) => typeof value !== 'string')))
    throw invalid(`Invalid value at '${at}.enum': expected a list of strings`);
  for (const [name, sub] of Object.entries(schema.properties ?? {})) checkSchema(sub, `${at}.properties[${name}].value`);
  if (schema.items !== undefined) checkSchema(schema.items, `${at}.items`);
  for (const [k, sub] of (schema.anyOf ?? []).entries()) checkSchema(sub, `${at}.any_of[${k}]`);
}

function checkGenerationConfig(config: Json): void {
  knownFields(config, GENERATION_FIELDS, 'generation_config');
  if (config.stopSequences !== undefined && (!Array.isArray(config.stopSequences) || config.stopSequences.length > 5))
    throw invalid('* GenerateContentRequest.generation_config.stop_sequences: at most 5 stop sequences are allowed');
  if (config.candidateCount !== undefined && config.candidateCount !== 1) throw invalid('fake: this fake answers one candidate only');
  if (config.responseSchema !== undefined) {
    checkSchema(config.responseSchema, 'generation_config.response_schema');
    if (config.responseMimeType !== 'application/json')
      throw invalid('* GenerateContentRequest.generation_config.response_mime_type: response_schema requires application/json');
  }
  if (config.thinkingConfig !== undefined) {
    knownFields(config.thinkingConfig, ['includeThoughts', 'thinkingBudget', 'thinkingLevel'], 'generation_config.thinking_config');
    if (config.thinkingConfig.thinkingBudget !== undefined && config.thinkingConfig.thinkingLevel !== undefined)
      throw invalid('You can only set only one of thinking budget and thinking level.');
    const level = config.thinkingConfig.thinkingLevel;
    if (level !== undefined && !['MINIMAL', 'LOW', 'MEDIUM', 'HIGH'].includes(level))
      throw invalid(`Invalid value at 'generation_config.thinking_config.thinking_level', "${level}"`);
  }
}

export type { Reply };
