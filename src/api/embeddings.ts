import { upstreamInvalidResponse } from '../errors.js';
import { jsonResponse } from '../http/json-response.js';
import { readJsonBody } from '../http/read-json.js';
import type { RouteContext } from '../http/route.js';
import { embeddingInputs } from '../providers/embedding-inputs.js';
import type { EmbeddingResult, EmbeddingVector } from '../providers/media.js';
import { type EmbeddingRequestBody, embeddingRequestSchema } from '../schemas/embeddings.js';
import type { RequestLedger } from '../policy/request-ledger.js';
import type { ModelEntry } from '../routing/model.js';
import { validateBody } from '../schemas/validate.js';
import { encodeVector, vectorLength } from './embedding-vectors.js';
import { runMediaCall, upstreamModel } from './media-call.js';
import { consultEmbeddingCache } from '../cache/embedding-cache.js';

/**
 * POST /v1/embeddings, in OpenAI's shape whatever the upstream: one vector per input in input
 * order, as floats or base64 as the client asked, the public model id, and usage in tokens
 * (which the usage event and token limits count as input).
 */
export async function createEmbeddings(context: RouteContext): Promise<Response> {
  const { request, options } = context;
  const body = validateBody(embeddingRequestSchema, await readJsonBody(request, options.limits.jsonBodyBytes, options.limits.requestBodyTimeoutMs));
  const { model, vectors, usage, headers } = await embed(context, body, '/v1/embeddings');
  const format = body.encoding_format ?? 'float';
  return jsonResponse(
    {
      object: 'list',
      data: vectors.map((vector, index) => ({ object: 'embedding', index, embedding: encodeVector(vector.embedding, format) })),
      model: model.id,
      usage,
    },
    200,
    headers,
  );
}

/**
 * One embeddings request of any client shape, given as OpenAI's body: the model resolved in the
 * key's scope, the deployments tried in turn under the key's limits, the vectors checked and put
 * in input order, and the ledger settled with the input tokens. An exact repeat may be answered
 * from the response cache (`headers` then say so).
 */
export async function embed(
  context: RouteContext,
  body: EmbeddingRequestBody,
  endpoint: string,
): Promise<{
  model: ModelEntry;
  vectors: EmbeddingVector[];
  usage: { prompt_tokens: number; total_tokens: number };
  ledger: RequestLedger;
  headers: Record<string, string>;
}> {
  const model = context.options.catalog.resolve(context.key, body.model, 'embedding', endpoint);
  const cache = await consultEmbeddingCache(context, model, body, endpoint);
  if (cache.hit) return { model, ...cache.hit };
  const inputs = embeddingInputs(body.input).length;
  const media = { model, kind: 'embedding', endpoint, stream: false, capability: 'embeddings', what: 'Embeddings' } as const;
  // The answer is checked inside the attempt: a deployment that answers wrong falls back like one that fails.
  const { result, ledger } = await runMediaCall(context, media, async (provider, call) =>
    inOrder(await provider.embeddings.embed({ ...body, model: upstreamModel(call.model) }, call), inputs, body.dimensions),
  );
  const prompt = result.usage.prompt_tokens;
  ledger.finish({ status: 'ok', usage: { input: prompt } });
  const usage = { prompt_tokens: prompt, total_tokens: result.usage.total_tokens ?? prompt };
  cache.keep({ vectors: result.vectors, usage });
  return { model, vectors: result.vectors, usage, ledger, headers: { ...ledger.headers, ...cache.headers } };
}

/**
 * The provider's vectors by input position: exactly one per input, and `dimensions` long when
 * the client asked for a length. Anything else is the upstream failing (502), not an answer.
 */
function inOrder(result: EmbeddingResult, inputs: number, dimensions: number | undefined): EmbeddingResult & { vectors: EmbeddingVector[] } {
  const vectors = new Array<EmbeddingVector | undefined>(inputs);
  for (const vector of result.data) {
    if (!Number.isInteger(vector.index) || vector.index < 0 || vector.index >= inputs || vectors[vector.index]) {
      throw upstreamInvalidResponse(`The upstream's embeddings do not match the ${inputs} input${inputs === 1 ? '' : 's'} (index ${vector.index}).`);
    }
    if (dimensions !== undefined && vectorLength(vector.embedding) !== dimensions) {
      throw upstreamInvalidResponse(`The upstream returned a vector of ${vectorLength(vector.embedding)} values where ${dimensions} were asked.`);
    }
    vectors[vector.index] = vector;
  }
  if (result.data.length !== inputs) throw upstreamInvalidResponse(`The upstream returned ${result.data.length} embeddings for ${inputs} inputs.`);
  return { ...result, vectors: vectors as EmbeddingVector[] };
}
