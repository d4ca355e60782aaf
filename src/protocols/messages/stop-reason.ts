import type { IRFinishReason } from '../ir.js';

/** IR finish reason → Anthropic `stop_reason` (reference 8.4). */
export function messagesStopReason(reason: IRFinishReason): string {
  switch (reason) {
    case 'stop':
      return 'end_turn';
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    case 'stop_sequence':
      return 'stop_sequence';
    case 'pause':
      return 'pause_turn';
  }
}
