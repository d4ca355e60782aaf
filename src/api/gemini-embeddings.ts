import { invalidRequest } from '../errors.js';
import { echo } from '../http/echo.js';
import { jsonResponse } from '../http/json-response.js';
import { readJsonBody } from '../http/read-json.js';
import { geminiRequestKeys } from '../protocols/gemini/field-names.js';
import type { RouteContext } from '../http/route.js';
import { modelOfPath, modelOfUrl } from '../protocols/gemini/route-fields.js';
import { type GeminiEmbedRequest, geminiBatchEmbedRequestSchema, geminiEmbedRequestSchema } from '../schemas/gemini-embeddings.js';
import { validateBody } from '../schemas/validate.js';
import { encodeVector } from './embedding-vectors.js';
import { embed } from './embeddings.js';

/**
 * POST /v1beta/models/{model}:batchEmbedContents, which `@google/genai`'s `models.embedContent`
 * calls: each request's text embedded by the model's upstream, whatever it is, answered in
 * Google's shape (`embeddings[].values`).
 */
export async function batchEmbedContents(context: RouteContext): Promise<Response> {
  const body = validateBody(geminiBatchEmbedRequestSchema, await readBody(context));
  const model = modelOfUrl(context.params);
  const { vectors, headers } = await embedTexts(context, model, body.requests, 'requests');
  return jsonResponse({ embeddings: vectors.map((values) => ({ values })) }, 200, headers);
}

/** POST /v1beta/models/{model}:embedContent: one text, answered as `embedding.values`. */
export async function embedContent(context: RouteContext): Promise<Response> {
  const body = validateBody(geminiEmbedRequestSchema, await readBody(context));
  const model = modelOfUrl(context.params);
  const { vectors, headers } = await embedTexts(context, model, [body], undefined);
  return jsonResponse({ embedding: { values: vectors[0] } }, 200, headers);
}

function readBody(context: RouteContext): Promise<unknown> {
  const { request, options } = context;
  return readJsonBody(request, options.limits.jsonBodyBytes, options.limits.requestBodyTimeoutMs, geminiRequestKeys);
}

/**
 * The texts of Gemini embed requests through the shared embeddings call. One request holds one
 * text (its parts joined, as Gemini embeds a whole `Content`); all must name the URL's model and
 * ask for one `outputDimensionality`, which becomes `dimensions`. `taskType` and `title` go along
 * for a Gemini upstream (others ignore them).
 */
async function embedTexts(
  context: RouteContext,
  model: string,
  requests: readonly GeminiEmbedRequest[],
  list: 'requests' | undefined,
): Promise<{ vectors: number[][]; headers: Record<string, string> }> {
  const at = (index: number, field: string) => (list ? `${list}[${index}].${field}` : field);
  const first = requests[0]!;
  requests.forEach((request, index) => {
    if (request.model !== undefined && modelOfPath(request.model) !== model) {
      throw invalidRequest(`${at(index, 'model')} names ${echo(request.model)}, but the URL names models/${model}.`, at(index, 'model'), 'invalid_value');
    }
    if (request.outputDimensionality !== first.outputDimensionality) {
      throw invalidRequest(`Every request must ask for the same outputDimensionality as the first.`, at(index, 'outputDimensionality'), 'invalid_value');
    }
  });
  const { vectors, headers } = await embed(
    context,
    {
      model,
      input: requests.map((request) => request.content.parts.map((part) => part.text).join('\n')),
      ...(first.outputDimensionality !== undefined ? { dimensions: first.outputDimensionality } : {}),
      ...(first.taskType !== undefined ? { task_type: first.taskType } : {}),
    },
    '/v1beta/models/{model}:batchEmbedContents',
  );
  return { vectors: vectors.map((vector) => encodeVector(vector.embedding, 'float') as number[]), headers };
}
