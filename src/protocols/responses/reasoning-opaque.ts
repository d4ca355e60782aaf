import { isRecord } from '../../json.js';
import type { IRReasoningPart } from '../ir.js';
import { GEMINI_SIGNATURE_PREFIX, unwrapGeminiSignature, wrapGeminiSignature } from '../thought-signature.js';

/**
 * Responses has one opaque slot per reasoning item (`encrypted_content`); the IR has three:
 * OpenAI's encrypted reasoning, Anthropic's thinking `signature` and Anthropic's
 * `redacted_thinking` data. A Responses client talking to an Anthropic upstream must replay the
 * signature (or redacted data) on tool-use turns or Anthropic answers 400, so Anthropic's opaque
 * values travel in `encrypted_content` behind a gateway-private prefix and come back as what they
 * were. OpenAI's own encrypted content is passed through untouched. A Gemini thought signature
 * rides the same way behind its own prefix (`thought-signature.ts`).
 */
const SIGNATURE_PREFIX = 'infergate-signature:';
const REDACTED_PREFIX = 'infergate-redacted:';

type Opaque = Pick<IRReasoningPart, 'signature' | 'redacted' | 'encrypted' | 'thoughtSignature'>;

export function toEncryptedContent(part: Opaque): string | undefined {
  if (part.encrypted !== undefined) return part.encrypted;
  if (part.thoughtSignature !== undefined) return wrapGeminiSignature(part.thoughtSignature);
  if (part.signature) return SIGNATURE_PREFIX + part.signature;
  if (part.redacted !== undefined) return REDACTED_PREFIX + part.redacted;
  return undefined;
}

export function fromEncryptedContent(value: string): Opaque {
  if (value.startsWith(SIGNATURE_PREFIX)) return { signature: value.slice(SIGNATURE_PREFIX.length) };
  if (value.startsWith(REDACTED_PREFIX)) return { redacted: value.slice(REDACTED_PREFIX.length) };
  const gemini = unwrapGeminiSignature(value);
  if (gemini !== undefined) return { thoughtSignature: gemini };
  return { encrypted: value };
}

/**
 * The input to forward to an OpenAI Responses upstream as it is: without the reasoning items it
 * cannot take back. A gateway-wrapped signature or redacted thinking is Claude's, not OpenAI's (a
 * client that changed model mid-conversation replays it); with `store: false` an item with no
 * encrypted content names reasoning the upstream never kept (the gateway minted it on another
 * upstream). Either
 * would be a 400 from the upstream. Returns the same array when nothing is dropped.
 */
export function replayableReasoning(input: unknown, store: unknown): unknown {
  if (!Array.isArray(input)) return input;
  const replayable = (item: unknown) => {
    if (!isRecord(item) || item.type !== 'reasoning') return true;
    const opaque = item.encrypted_content;
    if (typeof opaque === 'string')
      return !opaque.startsWith(SIGNATURE_PREFIX) && !opaque.startsWith(REDACTED_PREFIX) && !opaque.startsWith(GEMINI_SIGNATURE_PREFIX);
    return store !== false;
  };
  // Every passthrough request comes here: no copy unless something is dropped.
  return input.every(replayable) ? input : input.filter(replayable);
}
