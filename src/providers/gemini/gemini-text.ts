import { eventsOf } from '../../protocols/event-batches.js';
import { geminiUpstream as codec, refuseCachedContent } from '../../protocols/gemini/index.js';
import type { IRRequest } from '../../protocols/ir.js';
import { postJson, streamIR } from '../http/json-call.js';
import type { UpstreamClient } from '../http/upstream-client.js';
import { forwardBody } from '../http/forward-body.js';
import { stringifyBody } from '../http/stringify-body.js';
import { isRecord } from '../../json.js';
import { type StorageUriCheck, storageUriCheck } from '../../protocols/storage-uris.js';
import type { CallContext, PassthroughRequest, TextCapability, UpstreamReply } from '../provider.js';
import { validatesSignatures, withSkippedSignatures } from '../../protocols/gemini/skip-signature.js';

export interface GeminiTextOptions {
  client: UpstreamClient;
  /**
   * The path of a model's call under the client's base URL: `/v1beta/models/{m}:generateContent`
   * on the Gemini API, `…/publishers/google/models/{m}:streamGenerateContent?alt=sse` on Vertex AI.
   */
  path: (model: string, stream: boolean) => string;
  /** The path of a model's `:countTokens`, where the upstream counts (the Gemini API); without it, the gateway counts. */
  countPath?: ((model: string) => string) | undefined;
  /** Prefixes of the `gs://` and Files-API URIs clients may name (the provider's `storageUris`). Default: none. */
  storageUris?: readonly string[] | undefined;
}

/**
 * Text through the IR on the Gemini wire, shared by the `gemini` and `vertex` providers: the
 * model goes in the path, the body is the Gemini codec's, a stream is `?alt=sse` server-sent events.
 */
export function geminiTextCalls(
  options: GeminiTextOptions,
): Required<Pick<TextCapability, 'streamBatches' | 'stream' | 'generate' | 'passthrough'>> & Pick<TextCapability, 'countTokens'> {
  const { client, path } = options;
  /** The storage URIs one call may name: the provider's prefixes, narrowed by the key's. */
  const storage = (call: CallContext) => storageUriCheck(options.storageUris, call.key.storageUris);

  async function* streamBatches(ir: IRRequest, call: CallContext) {
    const body = codec.encodeRequest({ ...ir, stream: true }, { storageUris: storage(call) });
    yield* streamIR(client, path(ir.model, true), body, call, codec.streamDecoder());
  }

  return {
    streamBatches,
    stream: (ir, call) => eventsOf(streamBatches(ir, call)),
    async generate(ir, call) {
      const body = codec.encodeRequest({ ...ir, stream: false }, { storageUris: storage(call) });
      return codec.decodeResponse(await postJson(client, path(ir.model, false), body, call));
    },
    passthrough: (request, call) => passthrough(request, call),
    ...(options.countPath ? { countTokens } : {}),
  };

  /**
   * A Gemini client's count at the upstream, as a `generateContentRequest` (the Gemini API counts
   * system instruction and tools only in that form); other protocols are counted by the gateway.
   */
  async function countTokens({ protocol, body }: PassthroughRequest, call: CallContext): Promise<unknown> {
    if (protocol !== 'gemini') return undefined;
    const { model, stream: _stream, ...wire } = body;
    // Counting reads the cache and the files too: the same refusals as a generation.
    refuseCachedContent(wire);
    checkFileUris(wire, storage(call));
    const request = { generateContentRequest: { model: `models/${String(model)}`, ...withSkipValues(wire, String(model)) } };
    return postJson(client, options.countPath!(String(model)), request, call);
  }

  /**
   * A Gemini client's body, sent on as the gateway read and checked it (camelCase), not as the
   * client's text: the text may hold what the checks did not see (a snake_case twin of a field,
   * a body `model` other than the path's). The model and streaming are in the URL, so `model`
   * and `stream` stay out of the body; every `fileData.fileUri` is checked as on the translated
   * path, and calls Gemini did not sign get the skip value it takes for them.
   */
  async function passthrough({ body }: PassthroughRequest, call: CallContext): Promise<UpstreamReply> {
    const streaming = body.stream === true;
    const { model, stream: _stream, ...wire } = body;
    checkFileUris(wire, storage(call));
    return forwardBody(client, path(String(model), streaming), await stringifyBody(withSkipValues(wire, String(model))), streaming, call);
  }
}

/**
 * A Gemini client's body with Google's skip value on the calls Gemini did not sign, as the
 * translated path sends them (`skip-signature.ts`): a history from another upstream, or one whose
 * foreign signatures were left out.
 */
function withSkipValues(body: Record<string, unknown>, model: string): Record<string, unknown> {
  if (!Array.isArray(body.contents) || !validatesSignatures(model)) return body;
  const contents = withSkippedSignatures(body.contents);
  return contents === body.contents ? body : { ...body, contents };
}

/**
 * Each `fileData.fileUri` of a Gemini body, through `check`: in its turns, its system instruction
 * and the parts a function response carries (which the translated path reads too).
 */
function checkFileUris(body: Record<string, unknown>, check: StorageUriCheck): void {
  const contents = Array.isArray(body.contents) ? body.contents : [];
  contents.forEach((content, i) => {
    checkPartUris(content, `contents[${i}]`, check);
  });
  checkPartUris(body.systemInstruction, 'systemInstruction', check);
}

function checkPartUris(content: unknown, param: string, check: StorageUriCheck): void {
  const parts = isRecord(content) && Array.isArray(content.parts) ? content.parts : [];
  parts.forEach((part, j) => {
    if (!isRecord(part)) return;
    const file = part.fileData;
    if (isRecord(file) && typeof file.fileUri === 'string') check(file.fileUri, `${param}.parts[${j}].fileData.fileUri`);
    if (isRecord(part.functionResponse)) checkPartUris(part.functionResponse, `${param}.parts[${j}].functionResponse`, check);
  });
}

/** `models/{m}:generateContent` or `:streamGenerateContent?alt=sse`, the model id escaped for the path. */
export function geminiModelPath(prefix: string, model: string, stream: boolean): string {
  return `${prefix}/models/${encodeURIComponent(model)}${stream ? ':streamGenerateContent?alt=sse' : ':generateContent'}`;
}
