import { GatewayError } from '../../errors.js';

/** The publishers whose models this provider calls, each with its own wire. */
export type VertexPublisher = 'google' | 'anthropic';

/** Which publisher's endpoint serves a model, and the model's id at that publisher. */
export interface VertexModel {
  publisher: VertexPublisher;
  model: string;
}

const PUBLISHERS: readonly VertexPublisher[] = ['google', 'anthropic'];

/**
 * Reads the publisher from the upstream model id: an explicit `anthropic/…` or `google/…` prefix
 * (Vertex's own `publishers/{p}/models/{m}` naming, shortened) wins; otherwise `claude-*` ids are
 * Anthropic's and everything else Google's (`gemini-*`, tuned endpoints aside).
 */
export function vertexModelOf(upstreamModel: string): VertexModel {
  const slash = upstreamModel.indexOf('/');
  if (slash > 0) {
    const publisher = upstreamModel.slice(0, slash);
    if (!(PUBLISHERS as readonly string[]).includes(publisher)) {
      // The gateway's model config is wrong, not the client's request.
      throw new GatewayError({
        status: 502,
        type: 'upstream_error',
        code: 'unsupported_publisher',
        message: `Vertex AI publisher "${publisher}" is not supported by the gateway (supported: ${PUBLISHERS.join(', ')}).`,
      });
    }
    return { publisher: publisher as VertexPublisher, model: upstreamModel.slice(slash + 1) };
  }
  return { publisher: /^claude-/i.test(upstreamModel) ? 'anthropic' : 'google', model: upstreamModel };
}

/**
 * A model id as a path segment: Vertex writes versions with `@` (`claude-sonnet-4-5@20250929`),
 * which stays readable; anything else outside an id's characters is escaped.
 */
export function modelSegment(model: string): string {
  return encodeURIComponent(model).replace(/%40/g, '@');
}
