import { invalidRequest } from '../errors.js';
import { echo } from '../http/echo.js';
import type { ClientStyle } from '../http/client-style.js';
import { jsonResponse } from '../http/json-response.js';
import type { RouteContext } from '../http/route.js';
import { geminiStyle } from '../protocols/gemini/style.js';
import { anthropicStyle } from '../protocols/messages/style.js';
import { listGeminiModels, retrieveGeminiModel } from './gemini-models.js';
import { openaiStyle } from '../protocols/openai/style.js';
import { type ModelListing, modelNotFound } from '../routing/catalog.js';
import { checkedModelId } from '../routing/model-id.js';

/**
 * GET /v1/models: only what the caller's key may use, in one body both kinds of clients read.
 * OpenAI clients read `{object: "list", data: [{id, object, created, owned_by}]}`; Anthropic
 * clients (Claude Code's model picker, `client.models.list()`) read `data[].type`, `id`,
 * `display_name`, `created_at`, the limits and capabilities of `ModelInfo` (`modelInfo` below)
 * and the page fields `has_more`, `first_id`, `last_id`, and page with `limit`, `after_id` and
 * `before_id`. Each entry carries both sets of fields.
 */
export async function listModels(context: RouteContext): Promise<Response> {
  const { options, key, url, request } = context;
  if (modelsStyle(request) === geminiStyle) return listGeminiModels(context);
  const all = options.catalog.list(key, { messagesEnabled: options.messagesEnabled });
  // OpenAI's listing has no query parameters (it ignores any); Anthropic's pages.
  const page = modelsStyle(request) === anthropicStyle ? pageOf(all, url.searchParams) : { models: all, hasMore: false };
  const data = page.models.map((model) => describe(model, context));
  return jsonResponse({ object: 'list', data, has_more: page.hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
}

/** GET /v1/models/{model}: one model the key may use, in the same two-sided shape; 404 otherwise. */
export async function retrieveModel(context: RouteContext): Promise<Response> {
  const { options, key, params, request } = context;
  if (modelsStyle(request) === geminiStyle) return retrieveGeminiModel(context);
  const id = checkedModelId(params.model ?? '');
  const found = options.catalog.list(key, { messagesEnabled: options.messagesEnabled }).find((model) => model.id === id);
  if (!found) throw modelNotFound(id);
  return jsonResponse(describe(found, context));
}

/**
 * Anthropic's clients send `anthropic-version` (Claude Code also `x-api-key` alone), Gemini's
 * `x-goog-api-key` or `?key=` (`@google/genai` lists `/v1/models`): their auth header, error shape
 * and listing.
 */
export function modelsStyle(request: Request): ClientStyle {
  const headers = request.headers;
  if (headers.has('x-goog-api-key') || geminiStyle.apiKey(request) !== undefined) return geminiStyle;
  return headers.has('anthropic-version') || (headers.has('x-api-key') && !headers.has('authorization')) ? anthropicStyle : openaiStyle;
}

function describe(model: ModelListing, context: RouteContext): Record<string, unknown> {
  return { ...model, ...modelInfo(model, context) };
}

/**
 * The fields the Anthropic SDK's `ModelInfo` requires besides `id`. A listed model is one the key
 * may use: `active`, never deprecated. `max_input_tokens` is the context window the price catalog
 * (genai-prices) gives the model's first deployment; `max_tokens` and `capabilities` no catalog
 * gives, and `line` is Anthropic's own naming: `null`, which the SDK types allow.
 */
function modelInfo(model: ModelListing, { options }: RouteContext): Record<string, unknown> {
  const entry = options.catalog.get(model.id);
  const deployment = entry ? options.catalog.deployments(entry)[0] : undefined;
  const window = deployment
    ? options.pricing.contextWindow({ model: model.id, provider: deployment.provider, upstreamModel: deployment.upstreamModel })
    : undefined;
  return {
    type: 'model',
    display_name: model.id,
    created_at: new Date(model.created * 1000).toISOString(),
    capabilities: null,
    max_input_tokens: window ?? null,
    max_tokens: null,
    lifecycle: 'active',
    deprecated_at: null,
    retires_at: null,
    line: null,
  };
}

/** Anthropic's paging: `limit` (1–1000, default 20 there; everything here when absent), `after_id`, `before_id`. */
function pageOf(models: ModelListing[], query: URLSearchParams): { models: ModelListing[]; hasMore: boolean } {
  let start = 0;
  let end = models.length;
  const after = query.get('after_id');
  const before = query.get('before_id');
  if (after !== null) start = indexOf(models, after, 'after_id') + 1;
  if (before !== null) end = indexOf(models, before, 'before_id');
  const limitText = query.get('limit');
  if (limitText === null) return { models: models.slice(start, end), hasMore: false };
  const limit = Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw invalidRequest(`Invalid 'limit': expected an integer from 1 to 1000.`, 'limit', 'invalid_value');
  // Paging backwards (`before_id`) takes the models just before it.
  const slice = before !== null && after === null ? models.slice(Math.max(start, end - limit), end) : models.slice(start, Math.min(end, start + limit));
  const hasMore = before !== null && after === null ? end - limit > start : start + limit < end;
  return { models: slice, hasMore };
}

function indexOf(models: ModelListing[], id: string, param: string): number {
  const at = models.findIndex((model) => model.id === id);
  if (at < 0) throw invalidRequest(`Invalid '${param}': no model '${echo(id)}' in this listing.`, param, 'invalid_value');
  return at;
}
