import { Sha256 } from '@aws-crypto/sha256-js';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { SignatureV4 } from '@smithy/signature-v4';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicProtocol, fakeTokenCount } from './fake-anthropic.js';
import { applyGuardrailAnswer, checkApplyGuardrail } from './fake-bedrock-guardrail.js';
import {
  concurrencyProbe,
  counter,
  isObject,
  recordRequest,
  Rejection,
  type NeutralUsage,
  type RecordedRequest,
  type Reply,
  type FakeUpstream,
  type UpstreamErrorSpec,
} from './fake-server.js';

type Json = Record<string, any>;

export const BEDROCK_REGION = 'us-east-1';
export const BEDROCK_CREDENTIALS = { accessKeyId: 'AKIAFAKEBEDROCK00001', secretAccessKey: 'fake/secret/KEY/for+bedrock+tests+000001' };

export const NOVA = 'amazon.nova-pro-v1:0';
export const LLAMA = 'meta.llama3-3-70b-instruct-v1:0';
export const CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
export const TITAN_V2 = 'amazon.titan-embed-text-v2:0';
export const TITAN_V1 = 'amazon.titan-embed-text-v1';
export const COHERE_EN = 'cohere.embed-english-v3';
export const COHERE_MULTI = 'cohere.embed-multilingual-v3';
export const COHERE_V4 = 'cohere.embed-v4:0';

const CONVERSE_MODELS = new Set([NOVA, LLAMA, CLAUDE]);
const EMBEDDING_MODELS = new Set([TITAN_V2, TITAN_V1, COHERE_EN, COHERE_MULTI, COHERE_V4]);
/**
 * The betas Bedrock's Claude takes (AWS's model-parameters page for the Anthropic Messages API);
 * any other is "invalid beta flag". Claude Code sends `context-management-2025-06-27` on every turn.
 */
const BETAS = new Set([
  'computer-use-2024-10-22',
  'computer-use-2025-01-24',
  'computer-use-2025-11-24',
  'token-efficient-tools-2025-02-19',
  'interleaved-thinking-2025-05-14',
  'output-128k-2025-02-19',
  'dev-full-thinking-2025-05-14',
  'context-1m-2025-08-07',
  'context-management-2025-06-27',
  'effort-2025-11-24',
  'tool-search-tool-2025-10-19',
  'tool-examples-2025-10-29',
]);

export interface BedrockRecordedRequest extends RecordedRequest {
  /** The body's bytes as received (what the signature covers). */
  raw: Buffer;
  /** The model id from the path, decoded. */
  model?: string;
  action?: string;
}

export interface FakeBedrock extends Pick<FakeUpstream, 'peakConcurrency' | 'holdUntilQuiet'> {
  url: string;
  readonly requests: BedrockRecordedRequest[];
  reply(...replies: Reply[]): void;
  /** Answers every valid generation with what `decide` makes of it, instead of the queue (as `FakeUpstream.answerWith`). */
  answerWith(decide: (request: RecordedRequest) => Reply): void;
  accepted(): BedrockRecordedRequest[];
  last(): BedrockRecordedRequest;
  /**
   * Queues what the next ApplyGuardrail calls get instead of the planted assessments
   * (`{ hang: true }`, `{ error }`, `{ raw }`); generations' replies are apart.
   */
  replyGuardrail(...replies: Reply[]): void;
  /** The fake's clock for the signature's date check. */
  useClock(now: () => number): void;
  reset(): void;
  close(): Promise<void>;
}

/** A throttle as Bedrock sends it (`x-amzn-ErrorType: ThrottlingException`, 429, no retry delay). */
export const THROTTLED: UpstreamErrorSpec = { status: 429, type: 'ThrottlingException', message: 'Too many requests, please wait before trying again.' };

const EXCEPTION_TYPE_SUFFIX = ':http://internal.amazon.com/coral/com.amazon.bedrock/';

/**
 * A fake Amazon Bedrock runtime, written from AWS's API reference and strict where it is:
 * - every request must carry a valid SigV4 signature (service `bedrock`, this region): the fake
 *   recomputes it with `@smithy/signature-v4` from what it received (the raw path, the signed
 *   headers, the body's bytes) and its known secret, and answers 403 `InvalidSignatureException`
 *   (mismatch, a date more than 5 minutes off) or `UnrecognizedClientException` (unknown key);
 * - `converse` / `converse-stream` validate the Converse body (unknown fields, empty text
 *   blocks, alternation, a `toolResult` that answers no `toolUse` of the previous turn, tool
 *   blocks without `toolConfig`, inference ranges) with 400 `ValidationException` messages that
 *   name the field, and stream the binary event stream (`@smithy/eventstream-codec`);
 * - `invoke` / `invoke-with-response-stream` serve Claude (a body without `model` and `stream`,
 *   `anthropic_version: "bedrock-2023-05-31"`, betas in `anthropic_beta` and only known ones,
 *   then the strict fake Anthropic API underneath; the stream as `chunk` events of base64
 *   Anthropic events) and the Titan and Cohere embedding models.
 * - `/guardrail/{id}/version/{version}/apply` (ApplyGuardrail) validates the body and answers the
 *   planted policies' assessments (`fake-bedrock-guardrail.ts`).
 * Errors are `{"message"}` bodies named by `x-amzn-ErrorType`; in a stream, exception messages.
 */
export async function startFakeBedrock(): Promise<FakeBedrock> {
  const requests: BedrockRecordedRequest[] = [];
  let queue: Reply[] = [];
  let guardrailQueue: Reply[] = [];
  let decide: ((request: RecordedRequest) => Reply) | undefined;
  let clock = Date.now;
  const probe = concurrencyProbe();
  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  const toolId = counter('tooluse_Fake');
  const claude = anthropicProtocol({ models: [CLAUDE] });
  const verifier = new SignatureV4({ service: 'bedrock', region: BEDROCK_REGION, credentials: BEDROCK_CREDENTIALS, sha256: Sha256 });

  const server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`fake bedrock bug: ${String(error)}`);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    let cut = false;
    const record: BedrockRecordedRequest = Object.assign(
      recordRequest(req, res, raw.toString('utf8'), () => cut),
      { raw },
    );
    probe.opened(res);
    requests.push(record);

    let route: { model: string; action: string };
    try {
      await checkSignature(record);
      route = validate(record);
    } catch (error) {
      if (!(error instanceof Rejection)) throw error;
      record.rejected = { status: error.status, message: error.message };
      return sendError(res, error.status, error.fields.type ?? 'ValidationException', error.message);
    }

    // A token count is not a generation: it takes no scripted reply; a guardrail has its own.
    await probe.heldUntilQuiet();
    const reply: Reply =
      route.action === 'count-tokens'
        ? {}
        : route.action === 'apply-guardrail'
          ? (guardrailQueue.shift() ?? {})
          : decide
            ? decide(record)
            : (queue.shift() ?? { text: ['Hello', ' from', ' Bedrock.'], usage: { input: 12, output: 4 } });
    if (reply.hang) return; // the headers never come; the client's timeout or abort ends it
    if (reply.error) return sendError(res, reply.error.status ?? 500, reply.error.type ?? 'InternalServerException', reply.error.message, reply.error.headers);

    const streaming = route.action === 'converse-stream' || route.action === 'invoke-with-response-stream';
    if (!streaming) {
      const { json, headers: extra } = answerJson(route, record.body as Json, reply);
      const payload = JSON.stringify(json);
      res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': 'fake-request', ...extra });
      if (reply.cutAfter !== undefined) {
        res.write(payload.slice(0, payload.length >> 1));
        await tick();
        cut = true;
        res.socket?.destroy();
        return;
      }
      res.end(payload);
      return;
    }

    let messages = route.action === 'converse-stream' ? converseEvents(record.body as Json, reply) : claudeChunks(record.body as Json, route.model, reply);
    if (reply.streamError) {
      const { after, type, message } = reply.streamError;
      messages = [...messages.slice(0, after), exception(type ?? 'modelStreamErrorException', message)];
    }
    const stop = reply.cutAfter ?? reply.stallAfter;
    if (stop !== undefined) messages = messages.slice(0, stop);
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'fake-request' });
    res.flushHeaders();
    for (const message of messages) {
      if (res.destroyed) return;
      // Each message in two writes split inside its prelude: reads never align with messages.
      res.write(message.subarray(0, 6));
      await tick();
      res.write(message.subarray(6));
      await tick();
    }
    if (reply.cutAfter !== undefined) {
      cut = true;
      res.socket?.destroy();
      return;
    }
    if (reply.stallAfter !== undefined) return; // open and silent until the client leaves
    res.end();
  }

  /** SigV4 as AWS checks it, recomputed with the same library from what arrived. */
  async function checkSignature(request: BedrockRecordedRequest): Promise<void> {
    const auth = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      request.headers.authorization ?? '',
    );
    if (!auth) throw new Rejection(403, 'Missing Authentication Token', { type: 'MissingAuthenticationTokenException' });
    const [, keyId, , region, service, signedList, signature] = auth as unknown as string[];
    if (keyId !== BEDROCK_CREDENTIALS.accessKeyId) {
      throw new Rejection(403, 'The security token included in the request is invalid.', { type: 'UnrecognizedClientException' });
    }
    if (region !== BEDROCK_REGION || service !== 'bedrock') {
      throw new Rejection(403, `Credential should be scoped to a valid region or service.`, { type: 'InvalidSignatureException' });
    }
    const amzDate = request.headers['x-amz-date'] ?? '';
    const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
    if (!date) throw new Rejection(403, 'Date must be in ISO-8601 basic format.', { type: 'InvalidSignatureException' });
    const signingDate = new Date(Date.UTC(+date[1]!, +date[2]! - 1, +date[3]!, +date[4]!, +date[5]!, +date[6]!));
    if (Math.abs(clock() - signingDate.getTime()) > 5 * 60_000) {
      throw new Rejection(403, `Signature expired: ${amzDate} is now earlier than the allowed window.`, { type: 'InvalidSignatureException' });
    }
    // The payload hash the signature covers must be the body's: the signer trusts this header.
    const payloadHash = request.headers['x-amz-content-sha256'];
    if (payloadHash !== undefined && payloadHash !== createHash('sha256').update(request.raw).digest('hex')) {
      throw new Rejection(403, "The provided 'x-amz-content-sha256' header does not match what was computed.", { type: 'InvalidSignatureException' });
    }
    const names = signedList!.split(';');
    if (!names.includes('host')) throw new Rejection(403, "'Host' must be a signed header.", { type: 'InvalidSignatureException' });
    const signedHeaders: Record<string, string> = {};
    for (const name of names) signedHeaders[name] = request.headers[name] ?? '';
    const host = request.headers.host ?? '';
    const expected = await verifier.sign(
      { method: request.method, protocol: 'http:', hostname: host.split(':')[0]!, path: request.path, query: {}, headers: signedHeaders, body: request.raw },
      { signingDate },
    );
    const got = /Signature=([0-9a-f]{64})/.exec(expected.headers.authorization ?? '')?.[1];
    if (got !== signature) {
      throw new Rejection(
        403,
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.',
        { type: 'InvalidSignatureException' },
      );
    }
  }

  function validate(request: BedrockRecordedRequest): { model: string; action: string } {
    const guardrail = /^\/guardrail\/([^/]+)\/version\/([^/]+)\/apply$/.exec(request.path);
    if (request.method === 'POST' && guardrail) {
      checkApplyGuardrail(decodeURIComponent(guardrail[1]!), decodeURIComponent(guardrail[2]!), request.body);
      return { model: '', action: 'apply-guardrail' };
    }
    const match = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream|count-tokens)$/.exec(request.path);
    if (request.method !== 'POST' || !match)
      throw new Rejection(404, `Unknown operation ${request.method} ${request.path}`, { type: 'UnknownOperationException' });
    const model = decodeURIComponent(match[1]!);
    const action = match[2]!;
    request.model = model;
    request.action = action;
    const body = request.body;
    if (!isObject(body)) throw validation('Malformed input request, please reformat your input and try again.');
    if (action === 'count-tokens') {
      checkCountTokens(request, model, body);
    } else if (action.startsWith('converse')) {
      if (!CONVERSE_MODELS.has(model)) throw validation('The provided model identifier is invalid.');
      checkConverse(body);
      if (model === CLAUDE) checkClaudeThinking(body);
    } else if (model === CLAUDE) {
      checkClaudeInvoke(request, body, action === 'invoke-with-response-stream');
    } else if (EMBEDDING_MODELS.has(model)) {
      if (action !== 'invoke') throw validation('The model is unsupported for streaming.');
      checkEmbedding(model, body);
    } else {
      throw validation('The provided model identifier is invalid.');
    }
    return { model, action };
  }

  function checkClaudeInvoke(request: BedrockRecordedRequest, body: Json, streaming: boolean): void {
    for (const key of ['model', 'stream'])
      if (key in body) throw validation(`Malformed input request: #: extraneous key [${key}] is not permitted, please reformat your input and try again.`);
    if (body.anthropic_version !== 'bedrock-2023-05-31') throw validation('Malformed input request: #/anthropic_version: bedrock-2023-05-31 is required.');
    const betas = body.anthropic_beta;
    if (betas !== undefined) {
      if (!Array.isArray(betas)) throw validation('Malformed input request: #/anthropic_beta: expected type: JSONArray.');
      if (betas.some((beta) => !BETAS.has(beta))) throw validation('invalid beta flag');
    }
    const { anthropic_version: _version, anthropic_beta: _beta, ...messagesBody } = body;
    claude.validate({
      ...request,
      path: '/v1/messages',
      headers: { 'x-api-key': 'up-key', 'anthropic-version': '2023-06-01' },
      body: { ...messagesBody, model: CLAUDE, stream: streaming },
    });
  }

  /** CountTokens takes bare foundation-model ids only, and an `invoke` body as base64. */
  function checkCountTokens(request: BedrockRecordedRequest, model: string, body: Json): void {
    if (model !== CLAUDE.replace(/^us\./, '')) throw validation("The provided model doesn't support counting tokens.");
    const keys = Object.keys(body.input ?? {});
    if (keys.length !== 1 || keys[0] !== 'invokeModel' || typeof body.input.invokeModel.body !== 'string') {
      throw validation('1 validation error detected: input must be exactly one of invokeModel or converse.');
    }
    let inner: unknown;
    try {
      inner = JSON.parse(Buffer.from(body.input.invokeModel.body, 'base64').toString('utf8'));
    } catch {
      throw validation('Malformed input request, please reformat your input and try again.');
    }
    if (!isObject(inner)) throw validation('Malformed input request, please reformat your input and try again.');
    checkClaudeInvoke(request, inner, false);
    request.body = { ...body, decoded: inner };
  }

  function answerJson(route: { model: string; action: string }, body: Json, reply: Reply): { json: unknown; headers: Record<string, string> } {
    if (route.action === 'converse') return { json: converseJson(reply), headers: {} };
    if (route.action === 'apply-guardrail') return { json: reply.raw !== undefined ? JSON.parse(reply.raw) : applyGuardrailAnswer(body), headers: {} };
    if (route.action === 'count-tokens') return { json: { inputTokens: fakeTokenCount({ ...body.decoded, model: CLAUDE }) }, headers: {} };
    if (route.model === CLAUDE) {
      const rendered = claude.render('messages', { ...body, model: CLAUDE, stream: false }, reply);
      return { json: rendered.json, headers: {} };
    }
    return embeddingAnswer(route.model, body);
  }

  // ---- Converse -----------------------------------------------------------------------------

  function converseJson(reply: Reply): Json {
    const content: Json[] = [];
    if (reply.reasoning) content.push({ reasoningContent: { reasoningText: { text: reply.reasoning.join(''), signature: 'sig-bedrock-fake' } } });
    if (reply.text && reply.text.length > 0) content.push({ text: reply.text.join('') });
    for (const call of reply.toolCalls ?? []) {
      content.push({ toolUse: { toolUseId: call.id ?? toolId(), name: call.name, input: JSON.parse(call.args.join('') || '{}') } });
    }
    return {
      output: { message: { role: 'assistant', content } },
      stopReason: stopReasonOf(reply),
      usage: converseUsage(reply.usage ?? { input: 12, output: 4 }),
      metrics: { latencyMs: 42 },
    };
  }

  function converseEvents(_body: Json, reply: Reply): Uint8Array[] {
    const out: Uint8Array[] = [event('messageStart', { role: 'assistant' })];
    let index = 0;
    if (reply.reasoning) {
      for (const text of reply.reasoning) out.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { text } } }));
      out.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { signature: 'sig-bedrock-fake' } } }));
      out.push(event('contentBlockStop', { contentBlockIndex: index }));
      index++;
    }
    if (reply.text && reply.text.length > 0) {
      for (const text of reply.text) out.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { text } }));
      out.push(event('contentBlockStop', { contentBlockIndex: index }));
      index++;
    }
    for (const call of reply.toolCalls ?? []) {
      out.push(event('contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId: call.id ?? toolId(), name: call.name } } }));
      for (const input of call.args) out.push(event('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input } } }));
      out.push(event('contentBlockStop', { contentBlockIndex: index }));
      index++;
    }
    out.push(event('messageStop', { stopReason: stopReasonOf(reply) }));
    out.push(event('metadata', { usage: converseUsage(reply.usage ?? { input: 12, output: 4 }), metrics: { latencyMs: 42 } }));
    return out;
  }

  // ---- Claude on invoke ---------------------------------------------------------------------

  /** The fake Anthropic stream, each event a `chunk` of base64 JSON, the invocation metrics on `message_stop`. */
  function claudeChunks(body: Json, _model: string, reply: Reply): Uint8Array[] {
    const rendered = claude.render('messages', { ...body, model: CLAUDE, stream: true }, reply);
    return (rendered.frames ?? []).map((frame) => {
      const data = /^data: (.*)$/m.exec(frame)?.[1] ?? '{}';
      const json = JSON.parse(data) as Json;
      if (json.type === 'message_stop') {
        json['amazon-bedrock-invocationMetrics'] = { inputTokenCount: 12, outputTokenCount: 4, invocationLatency: 42, firstByteLatency: 7 };
      }
      return event('chunk', { bytes: Buffer.from(JSON.stringify(json), 'utf8').toString('base64') });
    });
  }

  // ---- embeddings ---------------------------------------------------------------------------

  function checkEmbedding(model: string, body: Json): void {
    if (model === TITAN_V2 || model === TITAN_V1) {
      const allowed = model === TITAN_V2 ? ['inputText', 'dimensions', 'normalize', 'embeddingTypes'] : ['inputText'];
      for (const key of Object.keys(body))
        if (!allowed.includes(key))
          throw validation(`Malformed input request: #: extraneous key [${key}] is not permitted, please reformat your input and try again.`);
      if (typeof body.inputText !== 'string' || body.inputText === '')
        throw validation('Malformed input request: #/inputText: expected minLength: 1, actual: 0');
      // Titan's limit is 50,000 characters (and 8k tokens) a text.
      if (body.inputText.length > 50_000)
        throw validation(
          `Malformed input request: #/inputText: expected maxLength: 50000, actual: ${body.inputText.length}, please reformat your input and try again.`,
        );
      if (body.dimensions !== undefined && ![256, 512, 1024].includes(body.dimensions))
        throw validation(`Malformed input request: #/dimensions: ${body.dimensions} is not a valid enum value`);
      return;
    }
    for (const key of Object.keys(body)) {
      const allowed = ['texts', 'input_type', 'truncate', 'embedding_types', 'images', ...(model === COHERE_V4 ? ['output_dimension', 'max_tokens'] : [])];
      if (!allowed.includes(key))
        throw validation(`Malformed input request: #: extraneous key [${key}] is not permitted, please reformat your input and try again.`);
    }
    if (!Array.isArray(body.texts) || body.texts.length === 0 || body.texts.length > 96)
      throw validation('Malformed input request: #/texts: expected maxItems: 96');
    if (body.output_dimension !== undefined && ![256, 512, 1024, 1536].includes(body.output_dimension))
      throw validation(`Malformed input request: #/output_dimension: ${body.output_dimension} is not a valid enum value`);
    if (!['search_document', 'search_query', 'classification', 'clustering'].includes(body.input_type))
      throw validation('Malformed input request: #/input_type: required key [input_type] not found');
  }

  function embeddingAnswer(model: string, body: Json): { json: unknown; headers: Record<string, string> } {
    if (model === TITAN_V2 || model === TITAN_V1) {
      const size = model === TITAN_V1 ? 1536 : (body.dimensions ?? 1024);
      return { json: { embedding: vectorOf(body.inputText, size, model === TITAN_V2), inputTextTokenCount: wordCount(body.inputText) }, headers: {} };
    }
    const texts = body.texts as string[];
    const size = model === COHERE_V4 ? (body.output_dimension ?? 1536) : 1024;
    const embeddings = texts.map((text) => vectorOf(text, size, false));
    const tokens = texts.reduce((sum, text) => sum + wordCount(text), 0);
    return {
      json: { id: 'emb-fake', response_type: 'embeddings_by_type', texts, embeddings: body.embedding_types ? { float: embeddings } : embeddings },
      headers: { 'x-amzn-bedrock-input-token-count': String(tokens) },
    };
  }

  // ---- wire helpers -------------------------------------------------------------------------

  function event(type: string, payload: Json): Uint8Array {
    return codec.encode({
      headers: {
        ':event-type': { type: 'string', value: type },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: 'event' },
      },
      // Bedrock pads its events with `p` against length side channels.
      body: fromUtf8(JSON.stringify({ ...payload, p: 'abcdefgh' })),
    });
  }

  function exception(type: string, message: string): Uint8Array {
    return codec.encode({
      headers: {
        ':exception-type': { type: 'string', value: type },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: 'exception' },
      },
      body: fromUtf8(JSON.stringify({ message })),
    });
  }

  function sendError(res: ServerResponse, status: number, type: string, message: string, extra: Record<string, string> = {}): void {
    res.writeHead(status, {
      'content-type': 'application/json',
      'x-amzn-errortype': type + EXCEPTION_TYPE_SUFFIX,
      'x-amzn-requestid': 'fake-request',
      ...extra,
    });
    res.end(JSON.stringify({ message }));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const accepted = () => requests.filter((request) => !request.rejected);
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply: (...replies) => void queue.push(...replies),
    replyGuardrail: (...replies) => void guardrailQueue.push(...replies),
    answerWith(script) {
      decide = script;
    },
    accepted,
    last() {
      const last = accepted().at(-1);
      if (!last) throw new Error(`the fake Bedrock accepted no request; rejected: ${requests.map((r) => `${r.path}: ${r.rejected?.message}`).join('; ')}`);
      return last;
    },
    holdUntilQuiet: (on) => probe.hold(on),
    get peakConcurrency() {
      return probe.peak;
    },
    useClock(now) {
      clock = now;
    },
    reset() {
      requests.length = 0;
      queue = [];
      guardrailQueue = [];
      probe.reset();
      clock = Date.now;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---- Converse body checks, with the real service's messages ----------------------------------

const CONVERSE_FIELDS = new Set([
  'messages',
  'system',
  'inferenceConfig',
  'toolConfig',
  'guardrailConfig',
  'additionalModelRequestFields',
  'promptVariables',
  'additionalModelResponseFieldPaths',
  'requestMetadata',
  'performanceConfig',
  'outputConfig',
]);
const BLOCK_KINDS = new Set([
  'text',
  'image',
  'document',
  'video',
  'toolUse',
  'toolResult',
  'guardContent',
  'cachePoint',
  'reasoningContent',
  'citationsContent',
]);
const IMAGE_FORMATS = new Set(['png', 'jpeg', 'gif', 'webp']);
const DOCUMENT_FORMATS = new Set(['pdf', 'csv', 'doc', 'docx', 'xls', 'xlsx', 'html', 'txt', 'md']);

function checkConverse(body: Json): void {
  for (const key of Object.keys(body))
    if (!CONVERSE_FIELDS.has(key)) throw validation(`Unable to parse request body: extraneous key [${key}] is not permitted.`);
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0)
    throw validation("1 validation error detected: Value null at 'messages' failed to satisfy constraint: Member must not be null");
  if (messages[0].role !== 'user')
    throw validation('A conversation must start with a user message. Try again with a conversation that starts with a user message.');
  let toolBlocks = false;
  messages.forEach((message: Json, m: number) => {
    if (message.role !== 'user' && message.role !== 'assistant') {
      throw validation(
        `1 validation error detected: Value '${message.role}' at 'messages.${m + 1}.member.role' failed to satisfy constraint: Member must satisfy enum value set: [user, assistant]`,
      );
    }
    if (m > 0 && messages[m - 1].role === message.role)
      throw validation(
        'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.',
      );
    if (!Array.isArray(message.content) || message.content.length === 0)
      throw validation(`The content field in the Message object at messages.${m} is empty. Add a ContentBlock object to the content field and try again.`);
    message.content.forEach((block: Json, b: number) => {
      const kinds = Object.keys(block);
      if (kinds.length !== 1 || !BLOCK_KINDS.has(kinds[0]!))
        throw validation(`Unable to parse request body: messages.${m}.content.${b} must have exactly one member of ContentBlock.`);
      checkBlock(block, `messages.${m}.content.${b}`);
      if (block.toolUse || block.toolResult) toolBlocks = true;
    });
    const results = message.content.filter((block: Json) => block.toolResult).map((block: Json) => block.toolResult.toolUseId);
    if (results.length > 0) {
      const previous = m > 0 ? messages[m - 1] : undefined;
      const uses = new Set<string>((previous?.content ?? []).filter((block: Json) => block.toolUse).map((block: Json) => block.toolUse.toolUseId));
      if (results.length > uses.size)
        throw validation(`The number of toolResult blocks at messages.${m}.content exceeds the number of toolUse blocks of previous turn.`);
      const missing = [...uses].filter((id) => !results.includes(id));
      if (missing.length > 0 || results.some((id: string) => !uses.has(id)))
        throw validation(`Expected toolResult blocks at messages.${m}.content for the following Ids: ${missing.join(', ')}`);
    }
  });
  if (body.system !== undefined) {
    if (!Array.isArray(body.system)) throw validation("1 validation error detected: Value at 'system' failed to satisfy constraint: Member must be a list");
    body.system.forEach((block: Json, s: number) => {
      if (!(typeof block.text === 'string' || block.cachePoint || block.guardContent))
        throw validation(`Unable to parse request body: system.${s} must be a SystemContentBlock.`);
      if (block.text === '')
        throw validation(`The text field in the SystemContentBlock object at system.${s} is blank. Add text to the text field, and try again.`);
    });
  }
  checkInference(body.inferenceConfig);
  if (body.guardrailConfig !== undefined) {
    const config = body.guardrailConfig;
    if (!isObject(config) || typeof config.guardrailIdentifier !== 'string' || typeof config.guardrailVersion !== 'string') {
      throw validation(
        "1 validation error detected: Value null at 'guardrailConfig.guardrailIdentifier' failed to satisfy constraint: Member must not be null",
      );
    }
    if (config.trace !== undefined && !['enabled', 'disabled', 'enabled_full'].includes(config.trace)) {
      throw validation(`1 validation error detected: Value '${config.trace}' at 'guardrailConfig.trace' failed to satisfy constraint`);
    }
  }
  if (body.outputConfig !== undefined) {
    const format = body.outputConfig?.textFormat;
    const schema = format?.structure?.jsonSchema?.schema;
    if (format?.type !== 'json_schema' || typeof schema !== 'string') {
      throw validation("1 validation error detected: Value at 'outputConfig.textFormat' failed to satisfy constraint");
    }
    try {
      JSON.parse(schema);
    } catch {
      throw validation('The JSON schema at outputConfig.textFormat.structure.jsonSchema.schema is not valid JSON.');
    }
  }
  if (toolBlocks && body.toolConfig === undefined) throw validation('The toolConfig field must be defined when using toolUse and toolResult content blocks.');
  if (body.toolConfig !== undefined) checkToolConfig(body.toolConfig);
}

/** Claude with thinking on: an assistant turn that tool results continue must start with its signed reasoning. */
function checkClaudeThinking(body: Json): void {
  const thinking = body.additionalModelRequestFields?.thinking;
  if (thinking?.type !== 'enabled') return;
  const messages = body.messages as Json[];
  const last = messages.at(-1)!;
  const previous = messages.at(-2);
  if (last.role !== 'user' || previous?.role !== 'assistant' || !last.content.some((block: Json) => block.toolResult)) return;
  if (!previous.content[0]?.reasoningContent) {
    throw validation(
      `The model returned the following errors: messages.${messages.length - 2}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`tool_use\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`,
    );
  }
}

function checkBlock(block: Json, at: string): void {
  if ('text' in block && (typeof block.text !== 'string' || block.text.trim() === '')) {
    throw validation(`The text field in the ContentBlock object at ${at} is blank. Add text to the text field, and try again.`);
  }
  if (block.image) {
    if (!IMAGE_FORMATS.has(block.image.format))
      throw validation(
        `1 validation error detected: Value '${block.image.format}' at '${at}.member.image.format' failed to satisfy constraint: Member must satisfy enum value set: [png, jpeg, gif, webp]`,
      );
    if (typeof block.image.source?.bytes !== 'string' && !block.image.source?.s3Location) throw validation(`The image source at ${at} is invalid.`);
  }
  if (block.document) {
    if (!DOCUMENT_FORMATS.has(block.document.format))
      throw validation(`1 validation error detected: Value '${block.document.format}' at '${at}.member.document.format' failed to satisfy constraint`);
    if (typeof block.document.name !== 'string' || !/^[A-Za-z0-9()[\]-]+(?: [A-Za-z0-9()[\]-]+)*$/.test(block.document.name)) {
      throw validation(
        `The document file name at ${at} can only contain alphanumeric characters, whitespace characters, hyphens, parentheses, and square brackets.`,
      );
    }
  }
  if (block.toolUse) {
    const { toolUseId, name, input } = block.toolUse;
    if (typeof toolUseId !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(toolUseId))
      throw validation(
        `1 validation error detected: Value at '${at}.member.toolUse.toolUseId' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+`,
      );
    if (typeof name !== 'string' || !isObject(input)) throw validation(`The toolUse block at ${at} is invalid.`);
  }
  if (block.toolResult) {
    const { toolUseId, content, status } = block.toolResult;
    if (typeof toolUseId !== 'string' || !Array.isArray(content)) throw validation(`The toolResult block at ${at} is invalid.`);
    if (status !== undefined && status !== 'success' && status !== 'error')
      throw validation(`1 validation error detected: Value '${status}' at '${at}.member.toolResult.status' failed to satisfy constraint`);
    content.forEach((part: Json, p: number) => {
      if ('text' in part && (typeof part.text !== 'string' || part.text.trim() === ''))
        throw validation(`The text field in the ToolResultContentBlock object at ${at}.toolResult.content.${p} is blank.`);
    });
  }
  if (block.reasoningContent) {
    const text = block.reasoningContent.reasoningText;
    if (!text && typeof block.reasoningContent.redactedContent !== 'string') throw validation(`The reasoningContent block at ${at} is invalid.`);
    if (text && (typeof text.signature !== 'string' || text.signature === '')) throw validation(`The reasoningText block at ${at} has no signature.`);
  }
}

function checkInference(config: unknown): void {
  if (config === undefined) return;
  if (!isObject(config)) throw validation("1 validation error detected: Value at 'inferenceConfig' failed to satisfy constraint");
  for (const key of Object.keys(config)) {
    if (!['maxTokens', 'temperature', 'topP', 'stopSequences'].includes(key))
      throw validation(`Unable to parse request body: extraneous key [inferenceConfig.${key}] is not permitted.`);
  }
  if (config.maxTokens !== undefined && (!Number.isInteger(config.maxTokens) || config.maxTokens < 1)) {
    throw validation(
      `1 validation error detected: Value '${config.maxTokens}' at 'inferenceConfig.maxTokens' failed to satisfy constraint: Member must have value greater than or equal to 1`,
    );
  }
  if (config.temperature !== undefined && (config.temperature < 0 || config.temperature > 1)) {
    throw validation(
      `1 validation error detected: Value '${config.temperature}' at 'inferenceConfig.temperature' failed to satisfy constraint: Member must have value less than or equal to 1`,
    );
  }
  if (config.topP !== undefined && (config.topP < 0 || config.topP > 1)) {
    throw validation(
      `1 validation error detected: Value '${config.topP}' at 'inferenceConfig.topP' failed to satisfy constraint: Member must have value less than or equal to 1`,
    );
  }
  if (config.stopSequences !== undefined && (!Array.isArray(config.stopSequences) || config.stopSequences.length > 4)) {
    throw validation(
      "1 validation error detected: Value at 'inferenceConfig.stopSequences' failed to satisfy constraint: Member must have length less than or equal to 4",
    );
  }
}

function checkToolConfig(config: unknown): void {
  if (!isObject(config) || !Array.isArray(config.tools) || config.tools.length === 0) {
    throw validation(
      "1 validation error detected: Value at 'toolConfig.tools' failed to satisfy constraint: Member must have length greater than or equal to 1",
    );
  }
  config.tools.forEach((tool: Json, t: number) => {
    if (tool.cachePoint) return;
    const spec = tool.toolSpec;
    if (!isObject(spec) || typeof spec.name !== 'string' || !isObject(spec.inputSchema) || !isObject(spec.inputSchema.json)) {
      throw validation(`The toolSpec at toolConfig.tools.${t} is invalid.`);
    }
    for (const key of Object.keys(spec))
      if (!['name', 'description', 'inputSchema', 'strict'].includes(key))
        throw validation(`Unable to parse request body: extraneous key [toolConfig.tools.${t}.toolSpec.${key}] is not permitted.`);
  });
  const choice = config.toolChoice;
  if (choice !== undefined && !(isObject(choice) && (choice.auto || choice.any || isObject(choice.tool))))
    throw validation('The toolChoice at toolConfig.toolChoice is invalid.');
}

function validation(message: string): Rejection {
  return new Rejection(400, message, { type: 'ValidationException' });
}

function stopReasonOf(reply: Reply): string {
  if (reply.finish === 'length') return 'max_tokens';
  return reply.toolCalls && reply.toolCalls.length > 0 ? 'tool_use' : 'end_turn';
}

/** Neutral usage (input including cache) as Bedrock counts it: cache reads and writes apart from `inputTokens`. */
function converseUsage(usage: NeutralUsage): Json {
  const cachedRead = usage.cachedRead ?? 0;
  const cacheWrite = usage.cacheWrite ?? 0;
  const inputTokens = usage.input - cachedRead - cacheWrite;
  return {
    inputTokens,
    outputTokens: usage.output,
    totalTokens: usage.input + usage.output,
    ...(usage.cachedRead !== undefined ? { cacheReadInputTokens: cachedRead } : {}),
    ...(usage.cacheWrite !== undefined ? { cacheWriteInputTokens: cacheWrite } : {}),
  };
}

/** A deterministic vector of a text, unit length when `normalize`. */
function vectorOf(text: string, size: number, normalize: boolean): number[] {
  let seed = 0;
  for (const char of text) seed = (seed * 31 + char.charCodeAt(0)) >>> 0;
  const values = Array.from({ length: size }, (_, i) => Math.sin(seed + i));
  if (!normalize) return values;
  const norm = Math.hypot(...values);
  return values.map((value) => value / norm);
}

function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
