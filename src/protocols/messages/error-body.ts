import type { GatewayError } from '../../errors.js';
import { anthropicErrorType } from './error-type.js';

/**
 * Anthropic's error body, `{type: "error", error: {type, message}, request_id}`: the SDK types
 * `request_id` `string | null` and shows it with the error. It is the id the `request-id` header
 * of the same answer carries. The same body is the data of an `error` event in a stream.
 */
export function anthropicErrorBody(error: GatewayError, requestId: string): Record<string, unknown> {
  return { type: 'error', error: { type: anthropicErrorType(error.status), message: error.message }, request_id: requestId };
}
