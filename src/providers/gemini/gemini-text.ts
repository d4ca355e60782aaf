import { eventsOf } from '../../protocols/event-batches.js';
import { geminiUpstream as codec } from '../../protocols/gemini/index.js';
import type { IRRequest } from '../../protocols/ir.js';
import { postJson, streamIR } from '../http/json-call.js';
import type { UpstreamClient } from '../http/upstream-client.js';
import { forwardBody } from '../http/forward-body.js';
import type { CallContext, PassthroughRequest, TextCapability, UpstreamReply } from '../provider.js';

export interface GeminiTextOptions {
  client: UpstreamClient;
  /**
   * The path of a model's call under the client's base URL: `/v1beta/models/{m}:generateContent`
   * on the Gemini API, `…/publishers/google/models/{m}:streamGenerateContent?alt=sse` on Vertex AI.
   */
  path: (model: string, stream: boolean) => string;
  /** The path of a model's `:countTokens`, where the upstream counts (the Gemini API); without it, the gateway counts. */
  countPath?: ((model: string) => string) | undefined;
}

/**
 * Text through the IR on the Gemini wire, shared by the `gemini` and `vertex` providers: the
 * model goes in the path, the body is the Gemini codec's, a stream is `?alt=sse` server-sent events.
 */
export function geminiTextCalls(
  options: GeminiTextOptions,
): Required<Pick<TextCapability, 'streamBatches' | 'stream' | 'generate' | 'passthrough'>> & Pick<TextCapability, 'countTokens'> {
  const { client, path } = options;

  async function* streamBatches(ir: IRRequest, call: CallContext) {
    const body = codec.encodeRequest({ ...ir, stream: true });
    yield* streamIR(client, path(ir.model, true), body, call, codec.streamDecoder());
  }

  return {
    streamBatches,
    stream: (ir, call) => eventsOf(streamBatches(ir, call)),
    async generate(ir, call) {
      const body = codec.encodeRequest({ ...ir, stream: false });
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
    const request = { generateContentRequest: { model: `models/${String(model)}`, ...wire } };
    return postJson(client, options.countPath!(String(model)), request, call);
  }

  /**
   * A Gemini client's body, sent on as it came: the model and streaming are in the URL, so
   * `model` and `stream` (which the route read from the path) stay out of the body, and the
   * client's own text is sent when the gateway has it.
   */
  async function passthrough({ body, rawBody }: PassthroughRequest, call: CallContext): Promise<UpstreamReply> {
    const streaming = body.stream === true;
    const { model, stream: _stream, ...wire } = body;
    return forwardBody(client, path(String(model), streaming), rawBody ?? JSON.stringify(wire), streaming, call);
  }
}

/** `models/{m}:generateContent` or `:streamGenerateContent?alt=sse`, the model id escaped for the path. */
export function geminiModelPath(prefix: string, model: string, stream: boolean): string {
  return `${prefix}/models/${encodeURIComponent(model)}${stream ? ':streamGenerateContent?alt=sse' : ':generateContent'}`;
}
