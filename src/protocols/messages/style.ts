import { bearerToken, type ClientStyle } from '../../http/client-style.js';
import { anthropicErrorType } from './error-type.js';

/**
 * Anthropic's clients: `x-api-key`, and Bearer too, because the current `@anthropic-ai/sdk` sends
 * its key that way; `{ type: "error", error: { type, message } }`; the `request-id` header.
 */
export const anthropicStyle: ClientStyle = {
  name: 'anthropic',
  apiKey: (request) => request.headers.get('x-api-key') ?? bearerToken(request),
  missingKeyMessage: 'Missing API key: send it in the x-api-key header.',
  errorBody: (error) => ({ type: 'error', error: { type: anthropicErrorType(error.status), message: error.message } }),
  responseHeaders: (requestId) => ({ 'request-id': requestId }),
};
