import { GatewayError, invalidRequest } from '../errors.js';
import { jsonResponse } from '../http/json-response.js';
import type { RouteContext } from '../http/route.js';
import { modelOfUrl } from '../protocols/gemini/route-fields.js';
import type { ModelListing } from '../routing/catalog.js';

/** What a model answers on the Gemini endpoint, by the endpoint type that serves it there. */
const METHODS: Record<string, string[]> = {
  gemini: ['generateContent', 'streamGenerateContent', 'countTokens'],
  embeddings: ['embedContent', 'batchEmbedContents'],
};
const DEFAULT_PAGE = 50;
const MAX_PAGE = 1000;

/**
 * GET /v1beta/models: the text and embedding models the caller's key may use, in Google's list shape
 * (`models[].name` is `models/<id>`, `supportedGenerationMethods`), paged by `pageSize` (50 by
 * default, at most 1000) and the `nextPageToken` of the page before.
 */
export async function listGeminiModels(context: RouteContext): Promise<Response> {
  const models = geminiModels(context);
  const query = context.url.searchParams;
  const size = pageSize(query.get('pageSize'));
  const token = query.get('pageToken');
  let start = 0;
  if (token) {
    start = models.findIndex((model) => model.id === token);
    if (start < 0) throw invalidRequest(`Invalid 'pageToken': it names no model of this listing.`, 'pageToken', 'invalid_value');
  }
  const page = models.slice(start, start + size);
  const next = models[start + size];
  return jsonResponse({ models: page.map(describe), ...(next ? { nextPageToken: next.id } : {}) });
}

/** GET /v1beta/models/{model}: one text or embedding model the key may use (`models/` prefix optional); 404 otherwise. */
export async function retrieveGeminiModel(context: RouteContext): Promise<Response> {
  const id = modelOfUrl(context.params);
  const found = geminiModels(context).find((model) => model.id === id);
  if (!found)
    throw new GatewayError({ status: 404, message: `models/${id} is not found, or this API key may not use it.`, param: 'model', code: 'model_not_found' });
  return jsonResponse(describe(found));
}

function geminiModels(context: RouteContext): ModelListing[] {
  const { options, key } = context;
  return options.catalog.list(key, { messagesEnabled: options.messagesEnabled }).filter((model) => methodsOf(model).length > 0);
}

function methodsOf(model: ModelListing): string[] {
  return model.supported_endpoint_types.flatMap((type) => METHODS[type] ?? []);
}

function pageSize(text: string | null): number {
  if (text === null || text === '') return DEFAULT_PAGE;
  const size = Number(text);
  if (!Number.isInteger(size) || size < 0) throw invalidRequest(`Invalid 'pageSize': expected a non-negative integer.`, 'pageSize', 'invalid_value');
  // Google: 0 means the default, and more than the maximum is the maximum.
  return size === 0 ? DEFAULT_PAGE : Math.min(size, MAX_PAGE);
}

function describe(model: ModelListing): Record<string, unknown> {
  return { name: `models/${model.id}`, baseModelId: model.id, version: '001', displayName: model.id, supportedGenerationMethods: methodsOf(model) };
}
