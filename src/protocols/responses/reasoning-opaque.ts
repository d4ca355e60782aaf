import type { IRReasoningPart } from '../ir.js';

/**
 * Responses has one opaque slot per reasoning item (`encrypted_content`); the IR has two: OpenAI's
 * encrypted reasoning and Anthropic's thinking `signature`. A Responses client talking to an
 * Anthropic upstream must replay the signature on tool-use turns or Anthropic answers 400, so a
 * signature travels in `encrypted_content` behind a gateway-private prefix and comes back as a
 * signature. OpenAI's own encrypted content is passed through untouched.
 */
const SIGNATURE_PREFIX = 'infergate-signature:';

export function toEncryptedContent(part: Pick<IRReasoningPart, 'signature' | 'encrypted'>): string | undefined {
  if (part.encrypted !== undefined) return part.encrypted;
  if (part.signature) return SIGNATURE_PREFIX + part.signature;
  return undefined;
}

export function fromEncryptedContent(value: string): Pick<IRReasoningPart, 'signature' | 'encrypted'> {
  return value.startsWith(SIGNATURE_PREFIX) ? { signature: value.slice(SIGNATURE_PREFIX.length) } : { encrypted: value };
}
