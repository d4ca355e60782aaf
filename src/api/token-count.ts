import { isGatewayError } from '../errors.js';
import { jsonResponse } from '../http/json-response.js';
import { replaceTopLevelFields } from '../http/replace-json-model.js';
import type { RouteContext } from '../http/route.js';
import type { IRRequest, TextProtocol } from '../protocols/ir.js';
import { countRequestTokens } from '../tokens/count-request.js';
import type { TextBody } from '../protocols/codec.js';
import type { ModelEntry } from '../routing/model.js';
import { readTextRequest, rewrittenFields, type TextRoute } from './text-request.js';
import { firstDeployment } from './upstream-call.js';

/** What one client protocol brings to the input-token count. */
export interface TokenCountEndpoint extends TextRoute {
  protocol: Extract<TextProtocol, 'messages' | 'responses' | 'gemini'>;
  /** The body as it should be counted (e.g. conversation state expanded). */
  prepare?(context: RouteContext, body: Record<string, unknown>, model: ModelEntry): Promise<Record<string, unknown>>;
  decode(body: Record<string, unknown>, upstreamModel: string): IRRequest;
  /** The protocol's answer for a count made here. */
  answer(tokens: number): Record<string, unknown>;
  /** The body an upstream counts, as a generation's passthrough would send it (see `ClientCodec.forPassthrough`). */
  forPassthrough?(body: TextBody): TextBody;
}

/**
 * Input tokens of a request, without generating anything. The model's first deployment (in the
 * order a generation would try them) decides: an upstream that counts in the client's protocol
 * counts it (the body as sent, model mapped); any other is counted here with a tokenizer
 * (`tokens/count-request.ts`), through the same decoding a generation would use, so a request
 * the model cannot serve is refused the same way. An upstream count that fails for the
 * upstream's sake (5xx, unreachable) falls back to the local count: an estimate keeps clients
 * that compact by it working; its 4xx is the client's to see.
 *
 * Counting is not a generation: the key's scope, requests per minute and concurrency apply (the
 * route admits `requests`, before the body), but not its quota, tokens per minute or budgets, as
 * a count costs neither tokens nor dollars; no usage event is sent.
 */
export async function handleTokenCount(context: RouteContext, endpoint: TokenCountEndpoint): Promise<Response> {
  const { request, options } = context;
  const { body: validated, text, model } = await readTextRequest(context, endpoint);
  const body = endpoint.prepare ? await endpoint.prepare(context, validated, model) : validated;

  const { deployment, provider, call } = firstDeployment(context, model, body);
  if (provider.text?.countTokens) {
    const upstreamModel = deployment.upstreamModel;
    const clientBody: TextBody = { parsed: body, text: body === validated ? text : undefined };
    const sent = endpoint.forPassthrough?.(clientBody) ?? clientBody;
    try {
      const counted = await provider.text.countTokens(
        {
          protocol: endpoint.protocol,
          body: { ...sent.parsed, model: upstreamModel },
          rawBody: sent.text === undefined ? undefined : replaceTopLevelFields(sent.text, { model: upstreamModel, ...rewrittenFields(sent.parsed) }),
          headers: request.headers,
        },
        call,
      );
      if (counted !== undefined) return jsonResponse(counted);
    } catch (error) {
      if (context.signal.aborted || (isGatewayError(error) && error.status < 500)) throw error;
      options.logger.warn('upstream token count failed; counting locally', {
        requestId: context.requestId,
        message: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return jsonResponse(endpoint.answer(await countRequestTokens(endpoint.decode(body, deployment.upstreamModel))));
}
