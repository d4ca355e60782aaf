import type { GenericSchema } from 'valibot';
import { GatewayError } from '../errors.js';
import { jsonResponse } from '../http/json-response.js';
import { readJsonBody } from '../http/read-json.js';
import type { RouteContext } from '../http/route.js';
import { sseResponse } from '../http/sse-response.js';
import { startIterable } from '../http/first-item.js';
import { accumulateStream } from '../protocols/accumulate.js';
import type { EncodeContext } from '../protocols/codec.js';
import type { IRRequest, IRResponse, IRStreamEvent, TextProtocol } from '../protocols/ir.js';
import { tapStreamUsage, reportUsage } from '../policy/usage-report.js';
import type { CallContext, Provider } from '../providers/provider.js';
import type { ModelEntry } from '../routing/catalog.js';
import { validateBody } from '../schemas/validate.js';
import type { StreamTap } from '../protocols/stream-tap.js';
import { passthroughText } from './passthrough.js';

/** What one client protocol brings to the shared text pipeline. */
export interface TextEndpoint {
  protocol: TextProtocol;
  /** Path used in messages and usage events, e.g. `/v1/chat/completions`. */
  endpoint: string;
  schema: GenericSchema;
  decode(body: Record<string, unknown>, upstreamModel: string): IRRequest;
  encodeResponse(response: IRResponse, context: EncodeContext): Record<string, unknown>;
  encodeStream(events: AsyncIterable<IRStreamEvent>, context: EncodeContext): AsyncIterable<string>;
  /** How the passthrough path reads usage and ends a cut stream in this protocol. */
  tap: StreamTap;
  /** Checks the route must make before the body is read (e.g. the Messages version header). */
  checkHeaders?(request: Request): void;
}

/**
 * The text pipeline shared by the three protocols: read and validate the body, resolve the model
 * within the key's scope, apply the model's rules, then either pass the body through to an
 * upstream that speaks the client's protocol, or translate through the IR.
 */
export async function handleText(context: RouteContext, endpoint: TextEndpoint): Promise<Response> {
  const { request, options, key } = context;
  endpoint.checkHeaders?.(request);
  const raw = await readJsonBody(request, options.limits.jsonBodyBytes);
  const body = validateBody(endpoint.schema, raw) as Record<string, unknown>;
  const model = options.catalog.resolve(key, body.model as string, 'text', endpoint.endpoint);
  checkModelRules(model, body);

  const provider = options.providers[model.provider]!;
  const call: CallContext = {
    signal: context.signal,
    requestId: context.requestId,
    key,
    model,
    serverContext: context.serverContext,
  };
  const started = Date.now();
  const usageBase = { context, endpoint: endpoint.endpoint, model, started };
  if (provider.passthrough && provider.nativeProtocols?.includes(endpoint.protocol)) {
    return passthroughText(provider, endpoint.tap, body, context, call, usageBase);
  }

  const ir = endpoint.decode(body, model.upstreamModel ?? model.id);
  const encodeContext: EncodeContext = {
    model: model.id,
    request: body,
    requestId: context.requestId,
    onStreamError: (error) => {
      if (error.status >= 500) options.logger.warn('stream failed', { requestId: context.requestId, status: error.status, message: error.message });
    },
  };

  if (!ir.stream) {
    let response: IRResponse;
    try {
      response = await generate(provider, ir, call);
    } catch (error) {
      reportUsage(usageBase, {}, 'error');
      throw error;
    }
    reportUsage(usageBase, response.usage, 'ok');
    return jsonResponse(endpoint.encodeResponse(response, encodeContext));
  }

  const events = await startIterable(providerStream(provider, ir, call));
  return sseResponse(endpoint.encodeStream(tapStreamUsage(events, usageBase), encodeContext));
}

/** The spec's model rules that apply before any upstream call (section 7). */
function checkModelRules(model: ModelEntry, body: Record<string, unknown>): void {
  if (body.previous_response_id != null && !model.previousResponseId) {
    throw new GatewayError({
      status: 400,
      message: `The model \`${model.id}\` does not support previous_response_id; send the conversation in \`input\` instead.`,
      param: 'previous_response_id',
      code: 'unsupported_parameter',
    });
  }
  if (body.service_tier === 'auto' && !model.serviceTierAuto) {
    throw new GatewayError({
      status: 400,
      message: `The model \`${model.id}\` does not support service_tier "auto"; omit it or name a tier.`,
      param: 'service_tier',
      code: 'unsupported_value',
    });
  }
}

async function generate(provider: Provider, ir: IRRequest, call: CallContext): Promise<IRResponse> {
  if (provider.generateText) return provider.generateText(ir, call);
  return accumulateStream(providerStream(provider, ir, call));
}

function providerStream(provider: Provider, ir: IRRequest, call: CallContext): AsyncIterable<IRStreamEvent> {
  if (!provider.streamText) {
    throw new GatewayError({ status: 500, message: `The provider of model \`${call.model.id}\` cannot generate text.` });
  }
  return provider.streamText(ir, call);
}
