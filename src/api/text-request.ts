import { readJsonBodyWithText } from '../http/read-json.js';
import { geminiRequestKeys } from '../protocols/gemini/field-names.js';
import type { RouteContext } from '../http/route.js';
import type { ClientCodec } from '../protocols/codec.js';
import type { ModelEntry } from '../routing/model.js';
import { validateBody } from '../schemas/validate.js';
import { checkItemCount } from './request-limits.js';
import { scopedPromptCacheKey } from '../policy/prompt-cache-key.js';

/** What a text route checks a request against before anything else. */
export type TextRoute = Pick<ClientCodec, 'protocol' | 'endpoint' | 'schema' | 'checkHeaders' | 'routeFields'>;

/** A text request read within the limits, validated, and its model resolved in the key's scope. */
export interface TextRequest {
  body: Record<string, unknown>;
  /**
   * The client's JSON text, for a passthrough that replaces only what the gateway rewrote in
   * `body` (`model`, a scoped `prompt_cache_key`: see `rewrittenFields`).
   */
  text: string;
  model: ModelEntry;
}

export async function readTextRequest(context: RouteContext, route: TextRoute): Promise<TextRequest> {
  const { request, options, key } = context;
  route.checkHeaders?.(request);
  const { limits } = options;
  const { body: raw, text } = await readJsonBodyWithText(
    request,
    limits.jsonBodyBytes,
    limits.requestBodyTimeoutMs,
    route.protocol === 'gemini' ? geminiRequestKeys : 'snake_case',
  );
  checkItemCount(route.protocol, raw, limits.messages);
  const validated = validateBody(route.schema, raw) as Record<string, unknown>;
  const routed = route.routeFields ? { ...validated, ...route.routeFields(context.params, context.url) } : validated;
  // OpenAI's prompt cache hint names the caller's own cache (`policy/prompt-cache-key.ts`).
  const openai = route.protocol === 'chat' || route.protocol === 'responses';
  const body = openai ? scopedPromptCacheKey(routed, key, options.policies.promptCacheKey) : routed;
  return { body, text, model: options.catalog.resolve(key, body.model as string, 'text', route.endpoint) };
}

/** The top-level fields a passthrough sets from the body rather than the client's text: `prompt_cache_key` when there is one. */
export function rewrittenFields(body: Record<string, unknown>): Record<string, unknown> {
  return typeof body.prompt_cache_key === 'string' ? { prompt_cache_key: body.prompt_cache_key } : {};
}
