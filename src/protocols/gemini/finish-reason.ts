import type { IRFinishReason } from '../ir.js';

/**
 * Gemini `finishReason` → IR. Every blocking reason (safety, recitation, blocklist, prohibited
 * content, personal data, the image variants) is a content filter, which each client protocol
 * reports its own way (`content_filter`, a refusal). Reasons about malformed or unexpected calls
 * end the answer as a plain stop: what was generated is all there is.
 */
export function geminiFinishReason(reason: unknown): IRFinishReason {
  switch (reason) {
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'LANGUAGE':
    case 'IMAGE_SAFETY':
    case 'IMAGE_PROHIBITED_CONTENT':
    case 'IMAGE_RECITATION':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/** IR → Gemini `finishReason`, for answers to Gemini clients. */
export function toGeminiFinishReason(reason: IRFinishReason): string {
  switch (reason) {
    case 'length':
      return 'MAX_TOKENS';
    case 'content_filter':
      return 'SAFETY';
    default:
      return 'STOP';
  }
}
