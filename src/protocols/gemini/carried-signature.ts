import { isRecord } from '../../json.js';
import type { TextBody } from '../codec.js';
import type { IRReasoningPart } from '../ir.js';

/**
 * A Gemini client sends back each part's `thoughtSignature` unchanged, so that is where the
 * opaque reasoning of other upstreams rides back to the gateway, behind the gateway-private
 * prefixes the other client protocols use for the same values: Anthropic's thinking signature
 * and redacted thinking, OpenAI's encrypted reasoning. Gemini's own signature goes bare, as
 * Gemini clients expect it, and a Gemini upstream gets back only that.
 */
const PREFIXES = {
  signature: 'infergate-signature:',
  redacted: 'infergate-redacted:',
  encrypted: 'infergate-encrypted:',
} as const;

export type Opaque = Pick<IRReasoningPart, 'signature' | 'redacted' | 'encrypted' | 'thoughtSignature'>;

/** The value another vendor's opaque reasoning travels in, or undefined when there is none. */
export function foreignSignature(part: Opaque): string | undefined {
  if (part.signature) return PREFIXES.signature + part.signature;
  if (part.redacted !== undefined) return PREFIXES.redacted + part.redacted;
  if (part.encrypted !== undefined) return PREFIXES.encrypted + part.encrypted;
  return undefined;
}

/** A part's `thoughtSignature`, read back as what it carried. */
export function fromThoughtSignature(value: string): Opaque {
  for (const [field, prefix] of Object.entries(PREFIXES) as [keyof typeof PREFIXES, string][]) {
    if (value.startsWith(prefix)) return { [field]: value.slice(prefix.length) };
  }
  return { thoughtSignature: value };
}

/** True for a value the gateway wrapped: it must never reach a Gemini upstream. */
export function isForeignSignature(value: unknown): boolean {
  return typeof value === 'string' && Object.values(PREFIXES).some((prefix) => value.startsWith(prefix));
}

/**
 * The body to forward to a Gemini upstream as it is: without the thought parts and signatures
 * the gateway wrapped (another vendor's reasoning, from answers of other upstreams), which Gemini
 * would refuse. Returns the same body when there are none.
 */
export function withoutForeignSignatures(body: TextBody): TextBody {
  const contents = body.parsed.contents;
  if (!Array.isArray(contents) || !contents.some(hasForeign)) return body;
  const kept = contents.map((content) => {
    if (!hasForeign(content)) return content;
    const parts: unknown[] = [];
    for (const part of content.parts as unknown[]) {
      if (!isRecord(part) || !isForeignSignature(part.thoughtSignature)) parts.push(part);
      else if (part.thought !== true) {
        const { thoughtSignature: _dropped, ...rest } = part;
        parts.push(rest);
      }
    }
    return { ...content, parts };
  });
  return { parsed: { ...body.parsed, contents: kept }, text: undefined };
}

function hasForeign(content: unknown): content is { parts: unknown[] } {
  return isRecord(content) && Array.isArray(content.parts) && content.parts.some((part) => isRecord(part) && isForeignSignature(part.thoughtSignature));
}
