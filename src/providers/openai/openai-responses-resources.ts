import { readJson } from '../http/get-json.js';
import type { UpstreamClient } from '../http/upstream-client.js';
import type { StoredResponseRequest, TextCapability } from '../provider.js';

/**
 * The Responses API's other endpoints, on an upstream that speaks Responses: input token counts
 * (`POST /responses/input_tokens`), the responses it stored (`GET`/`DELETE /responses/{id}`,
 * `GET /responses/{id}/input_items`) and Codex's remote compaction (`POST /responses/compact`).
 * Bodies and query strings go as the client sent them (model mapped); answers come back parsed.
 */
export function openAIResponsesResources(client: UpstreamClient): Pick<TextCapability, 'countTokens' | 'storedResponse' | 'compact'> {
  return {
    async countTokens({ protocol, body, rawBody }, call) {
      if (protocol !== 'responses') return undefined;
      return readJson(
        await client.post('/responses/input_tokens', rawBody ?? JSON.stringify(body), {
          signal: call.signal,
          idleTimeoutMs: call.idleTimeoutMs,
          upstreamWait: call.upstreamWait,
        }),
      );
    },

    async storedResponse({ action, id, query }: StoredResponseRequest, call) {
      const search = query.size > 0 ? `?${query.toString()}` : '';
      const path = `/responses/${encodeURIComponent(id)}`;
      const init = { signal: call.signal, idleTimeoutMs: call.idleTimeoutMs, upstreamWait: call.upstreamWait, headers: { accept: 'application/json' } };
      if (action === 'delete') return readJson(await client.delete(path, init));
      return readJson(await client.get(action === 'input_items' ? `${path}/input_items${search}` : path + search, init));
    },

    async compact({ body, rawBody }, call) {
      return readJson(
        await client.post('/responses/compact', rawBody ?? JSON.stringify(body), {
          signal: call.signal,
          idleTimeoutMs: call.idleTimeoutMs,
          upstreamWait: call.upstreamWait,
        }),
      );
    },
  };
}
