/**
 * A Gemini thought signature (`IRReasoningPart.thoughtSignature`) travels through a client of
 * another protocol behind this gateway-private prefix, in a slot the client sends back unchanged
 * (a thinking block's `signature`, a reasoning item's `encrypted_content`, a Chat tool call id).
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

/**
 * Chat has no reasoning item to send back, so the signature rides in the id of the tool call it
 * signs, after this separator; the client answers the call with the whole id, and the decoder
 * reads the signature out and keeps the call's own id.
 */
const ID_SEPARATOR = `__${GEMINI_SIGNATURE_PREFIX}`;

export function idWithSignature(id: string, signature: string | undefined): string {
  return signature === undefined ? id : id + ID_SEPARATOR + signature;
}

/** A tool call id as the client sent it back → the call's own id and the signature it carried. */
export function splitSignedId(value: string): { id: string; signature?: string } {
  const at = value.indexOf(ID_SEPARATOR);
  return at < 0 ? { id: value } : { id: value.slice(0, at), signature: value.slice(at + ID_SEPARATOR.length) };
}
