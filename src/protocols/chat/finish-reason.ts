import type { IRFinishReason } from '../ir.js';

/** Chat has no stop-sequence or pause reason: both are a normal stop there. */
export function chatFinishReason(reason: IRFinishReason): string {
  switch (reason) {
    case 'stop_sequence':
    case 'pause':
      return 'stop';
    default:
      return reason;
  }
}
