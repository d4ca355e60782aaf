import { postJson } from '../http/json-call.js';
import type { UpstreamClient } from '../http/upstream-client.js';
import type { ModerationCapability } from '../provider.js';

/**
 * OpenAI's `POST /moderations` (`{ model, input: [...] }`, one result per input) through the
 * provider's client: its base URL (`…/v1`), key and pooled connections. The answer is returned
 * parsed; the `openai-moderation` guardrail reads it.
 */
export function openAIModeration(client: UpstreamClient): ModerationCapability {
  return {
    moderate: (request, call) => postJson(client, '/moderations', { model: request.model, input: request.input }, { signal: call.signal }),
  };
}
