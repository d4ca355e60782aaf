import type { IRFinishReason } from '../ir.js';

/**
 * Converse `stopReason` → IR. A guardrail or the model's own filter is a content filter, which
 * each client protocol reports its way; running out of context is running out of tokens.
 */
export function converseStopReason(reason: unknown): IRFinishReason {
  switch (reason) {
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'stop_sequence':
      return 'stop_sequence';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      return 'stop';
  }
}
