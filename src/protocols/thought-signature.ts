/**
 * A Gemini thought signature (`IRReasoningPart.thoughtSignature`) travels through a client of
 * another protocol behind this gateway-private prefix, in a slot the client sends back unchanged
 * (a thinking block's `signature`, a reasoning item's `encrypted_content`), and in the id of the
 * tool call it signs (`signed-call-id.ts`).
 * The prefix says where a value came from, so Gemini gets back only its own signatures and other
 * upstreams never see them.
 */
export const GEMINI_SIGNATURE_PREFIX = 'infergate-gemini:';

export function wrapGeminiSignature(signature: string): string {
  return GEMINI_SIGNATURE_PREFIX + signature;
}

/** The Gemini signature inside a carried value, or undefined when it carries something else. */
export function unwrapGeminiSignature(value: string): string | undefined {
  return value.startsWith(GEMINI_SIGNATURE_PREFIX) ? value.slice(GEMINI_SIGNATURE_PREFIX.length) : undefined;
}
