/**
 * Anthropic's `error.type` for an HTTP status, as the Messages API sends it (reference 3.5).
 * The Anthropic SDK copies it onto the thrown `APIError`; clients branch on it (e.g. retry on
 * `overloaded_error`). Used by `anthropicErrorBody` (`error-body.ts`), for answers and stream events.
 */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
    default:
      // Anthropic uses invalid_request_error for unlisted 4xx and api_error for other 5xx.
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}
