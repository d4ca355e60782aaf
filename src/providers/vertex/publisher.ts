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
 * (Vertex's own `publishers/{p}/models/{m}` naming, shortened; the long form is read too) wins;
 * otherwise `claude-*` ids are Anthropic's and everything else Google's (`gemini-*`, tuned
 * endpoints aside).
 */
export function vertexModelOf(upstreamModel: string): VertexModel {
  const { publisher, model } = splitPublisher(upstreamModel);
  if (publisher !== undefined) {
    if (!(PUBLISHERS as readonly string[]).includes(publisher)) {
      // The gateway's model config is wrong, not the client's request.
      throw new GatewayError({
        status: 502,
        type: 'upstream_error',
        code: 'unsupported_publisher',
        message: `Vertex AI publisher "${publisher}" is not supported by the gateway (supported: ${PUBLISHERS.join(', ')}).`,
      });
    }
    return { publisher: publisher as VertexPublisher, model };
  }
  return { publisher: /^claude-/i.test(model) ? 'anthropic' : 'google', model };
}

/**
 * The ids a price catalog may know a Vertex model by, most specific first: without its publisher
 * (`google/gemini-2.5-pro`, `publishers/google/models/…`), then without its `@version`
 * (`gemini-2.5-flash@001`), then without a Gemini stable version's `-001`. The catalog knows Google's
 * and Anthropic's names, not Vertex's spellings of them.
 */
export function vertexCatalogIds(upstreamModel: string): string[] {
  const { model } = splitPublisher(upstreamModel);
  const unversioned = model.replace(/@[^@]*$/, '');
  return [...new Set([model, unversioned, unversioned.replace(/^(gemini-.+)-\d{3}$/, '$1')])];
}

/** `publishers/google/models/x` and `google/x` → `google` and `x`; a bare id has no publisher. */
function splitPublisher(upstreamModel: string): { publisher: string | undefined; model: string } {
  const id = upstreamModel.replace(/^publishers\/([^/]+)\/models\//, '$1/');
  const slash = id.indexOf('/');
  return slash > 0 ? { publisher: id.slice(0, slash), model: id.slice(slash + 1) } : { publisher: undefined, model: id };
}

/**
 * A model id as a path segment: Vertex writes versions with `@` (`claude-sonnet-4-5@20250929`),
 * which stays readable; anything else outside an id's characters is escaped.
 */
export function modelSegment(model: string): string {
  return encodeURIComponent(model).replace(/%40/g, '@');
}
