import type { KeyRecord } from '../auth/key-store.js';
import { GatewayError } from '../errors.js';
import { isRecord } from '../json.js';
import type { TextProtocol } from '../protocols/ir.js';
import type { ModelEntry } from '../routing/model.js';
import type { ResolvedResponseCache } from './response-cache-options.js';

/** The request header that turns the cache on or off for one request. */
export const CACHE_HEADER = 'x-infergate-cache';

/**
 * Whether this request may use the cache, by who asked, in this order: the request's
 * `x-infergate-cache: off`, the key's `cache: false` (the host's word is final), the request's
 * `x-infergate-cache: on`, the key's `cache: true`, then the model's `cache`. Another header
 * value is a 400.
 */
export function cacheWanted(request: Request, key: KeyRecord, model: ModelEntry): boolean {
  const header = request.headers.get(CACHE_HEADER)?.trim().toLowerCase();
  if (header !== undefined && header !== 'on' && header !== 'off') {
    throw new GatewayError({
      status: 400,
      message: `The ${CACHE_HEADER} header must be "on" or "off".`,
      param: CACHE_HEADER,
      code: 'invalid_value',
    });
  }
  if (header === 'off' || key.cache === false) return false;
  if (header === 'on' || key.cache === true) return true;
  return Boolean(model.cache);
}

/**
 * Why a request's answer must not come from (nor go to) the cache, or undefined when it may:
 * - it samples (`temperature` absent or above 0; every protocol's default is 1) unless
 *   `allowSampling` is set for the cache or the model;
 * - it asks for several answers (`n`, `candidateCount`) or for what the cache does not keep
 *   (log probabilities, audio output);
 * - it carries tools the upstream runs (web search, code execution, MCP…), whose results change
 *   from one call to the next; function tools the client runs are fine;
 * - it keeps or continues state (Responses `previous_response_id`, `conversation`, `background`,
 *   `store: true`, or `store` left out where the gateway keeps responses: a cached answer's id
 *   would be stored nowhere).
 */
export function uncacheableReason(
  protocol: TextProtocol,
  body: Record<string, unknown>,
  model: ModelEntry,
  settings: ResolvedResponseCache,
  keepsResponses: boolean,
): string | undefined {
  const config = isRecord(body.generationConfig) ? body.generationConfig : {};
  const temperature = protocol === 'gemini' ? config.temperature : body.temperature;
  const allowSampling = settings.allowSampling || (isRecord(model.cache) && model.cache.allowSampling === true);
  if (temperature !== 0 && !allowSampling) return 'sampling';
  if ((typeof body.n === 'number' && body.n > 1) || (typeof config.candidateCount === 'number' && config.candidateCount > 1)) return 'several answers';
  if (body.logprobs === true || (typeof body.top_logprobs === 'number' && body.top_logprobs > 0) || config.responseLogprobs === true) return 'logprobs';
  if (Array.isArray(body.include) && body.include.some((item) => String(item).includes('logprobs'))) return 'logprobs';
  if (body.audio !== undefined || (Array.isArray(body.modalities) && body.modalities.includes('audio'))) return 'audio output';
  if (hostedTools(protocol, body)) return 'hosted tools';
  if (protocol === 'responses') {
    if (body.previous_response_id != null || body.conversation != null || body.background === true) return 'stateful';
    if (body.store === true || (body.store !== false && keepsResponses)) return 'stateful';
  }
  return undefined;
}

/** Tools the client runs: Chat's and Responses' `function` and `custom`, Messages' custom tools (no type, or `custom`). */
const CLIENT_TOOL_TYPES = new Set(['function', 'custom']);

/** Whether the request offers a tool the upstream runs (its results are not the model's to repeat). */
function hostedTools(protocol: TextProtocol, body: Record<string, unknown>): boolean {
  if (body.web_search_options !== undefined || body.mcp_servers !== undefined || body.container != null) return true;
  const tools = Array.isArray(body.tools) ? body.tools : [];
  if (protocol === 'gemini') {
    // Gemini's tool objects hold `functionDeclarations`; anything else (googleSearch, codeExecution, urlContext…) runs at Google.
    return tools.some((tool) => isRecord(tool) && Object.keys(tool).some((name) => name !== 'functionDeclarations'));
  }
  return tools.some((tool) => isRecord(tool) && tool.type !== undefined && !CLIENT_TOOL_TYPES.has(String(tool.type)));
}
