import { readJson } from '../http/get-json.js';
import type { UpstreamClient } from '../http/upstream-client.js';
import type { TextCapability } from '../provider.js';

/**
 * Anthropic's own count (`POST /v1/messages/count_tokens`) for Messages bodies, sent as the
 * client wrote them (model mapped) with the headers the provider sends on passthrough
 * (`anthropic-version`, `anthropic-beta`): betas change what is counted (tools, thinking).
 */
export function anthropicTokenCounting(
  client: UpstreamClient,
  headersFor: (clientHeaders: Headers) => Record<string, string>,
): Pick<TextCapability, 'countTokens'> {
  return {
    async countTokens({ protocol, body, rawBody, headers }, call) {
      if (protocol !== 'messages') return undefined;
      const result = await client.post('/messages/count_tokens', rawBody ?? JSON.stringify(body), {
        signal: call.signal,
        idleTimeoutMs: call.idleTimeoutMs,
        upstreamWait: call.upstreamWait,
        headers: headersFor(headers),
      });
      return readJson(result);
    },
  };
}
