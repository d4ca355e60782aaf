import { bearerToken, type ClientStyle } from '../../http/client-style.js';
import { anthropicErrorBody } from './error-body.js';

/**
 * Anthropic's clients: `x-api-key`, and Bearer too, because the current `@anthropic-ai/sdk` sends
 * its key that way; `{ type: "error", error: { type, message }, request_id }`; the `request-id` header.
 */
export const anthropicStyle: ClientStyle = {
  name: 'anthropic',
  apiKey: (request) => request.headers.get('x-api-key') ?? bearerToken(request),
  missingKeyMessage: 'Missing API key: send it in the x-api-key header.',
  errorBody: anthropicErrorBody,
  responseHeaders: (requestId) => ({ 'request-id': requestId }),
};
