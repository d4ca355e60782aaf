import type { IRReasoningPart } from '../ir.js';
import { isRecord, type Json } from '../../json.js';
import { GEMINI_SIGNATURE_PREFIX, unwrapGeminiSignature, wrapGeminiSignature } from '../thought-signature.js';

/**
 * A Messages client replays thinking blocks unchanged, so a thinking block's `signature` is where
 * opaque reasoning from another vendor can ride back to the gateway: OpenAI's encrypted reasoning
 * travels there behind a gateway-private prefix and is recognised on the way back. The prefix,
 * not the shape of the value, says where it came from, so Anthropic never receives OpenAI's
 * reasoning and OpenAI never receives Anthropic's. A Gemini thought signature rides the same way,
 * behind its own prefix (`thought-signature.ts`).
 */
const ENCRYPTED_PREFIX = 'infergate-encrypted:';

/** The thinking block `signature` carrying a reasoning part's opaque value ('' for none). */
export function thinkingSignature(part: Pick<IRReasoningPart, 'signature' | 'encrypted' | 'thoughtSignature'>): string {
  if (part.signature) return part.signature;
  if (part.thoughtSignature !== undefined) return wrapGeminiSignature(part.thoughtSignature);
  return part.encrypted !== undefined ? ENCRYPTED_PREFIX + part.encrypted : '';
}

/** A replayed thinking block's `signature`, read back as what it carried. */
export function fromThinkingSignature(signature: string): Pick<IRReasoningPart, 'signature' | 'encrypted' | 'thoughtSignature'> {
  if (signature === '') return {};
  const gemini = unwrapGeminiSignature(signature);
  if (gemini !== undefined) return { thoughtSignature: gemini };
  return signature.startsWith(ENCRYPTED_PREFIX) ? { encrypted: signature.slice(ENCRYPTED_PREFIX.length) } : { signature };
}

/**
 * `thinking.display: "omitted"`: the client wants no thinking text, only the signature that keeps
 * a multi-turn conversation going (Anthropic then sends thinking blocks with empty text).
 */
export function thinkingOmitted(request: Json): boolean {
  const thinking = request.thinking;
  return isRecord(thinking) && thinking.display === 'omitted';
}

/** The content blocks of one reasoning part in a Message: thinking (text, signature), then redacted data. */
export function thinkingBlocks(part: IRReasoningPart, omitted: boolean): Json[] {
  const blocks: Json[] = [];
  const text = omitted ? '' : part.text;
  const signature = thinkingSignature(part);
  if (text !== '' || signature !== '') blocks.push({ type: 'thinking', thinking: text, signature });
  if (part.redacted !== undefined) blocks.push({ type: 'redacted_thinking', data: part.redacted });
  return blocks;
}

/**
 * The messages to forward to Anthropic as they are: without the thinking blocks Anthropic did not
 * sign, which it would refuse with a 400. Such blocks are the gateway's own answers from another
 * upstream replayed by the client (a model with several deployments, or a conversation moved to
 * another model): OpenAI's encrypted reasoning behind the gateway's prefix, or reasoning text
 * with an empty signature. They are dropped, never forged; an assistant turn left empty goes too.
 * Returns the same array when nothing is dropped, after one pass over the assistant turns.
 */
export function signedThinkingOnly(messages: unknown): unknown {
  if (!Array.isArray(messages) || !messages.some(hasForeignThinking)) return messages;
  const kept: unknown[] = [];
  for (const message of messages) {
    if (!hasForeignThinking(message)) {
      kept.push(message);
      continue;
    }
    const content = (message as { content: unknown[] }).content.filter((block) => !isForeignThinking(block));
    if (content.length > 0) kept.push({ ...(message as Json), content });
  }
  return kept;
}

function hasForeignThinking(message: unknown): boolean {
  return isRecord(message) && message.role === 'assistant' && Array.isArray(message.content) && message.content.some(isForeignThinking);
}

function isForeignThinking(block: unknown): boolean {
  if (!isRecord(block) || block.type !== 'thinking') return false;
  const signature = block.signature;
  return signature === '' || (typeof signature === 'string' && (signature.startsWith(ENCRYPTED_PREFIX) || signature.startsWith(GEMINI_SIGNATURE_PREFIX)));
}
