import { isRecord } from '../../json.js';

/**
 * Google's documented value for a function call Gemini did not sign ("Thought signatures",
 * Gemini API and Vertex AI docs): a turn another model made (a conversation moved to Gemini, a
 * fallback from another provider) or one whose signature was another vendor's and was left out.
 * Gemini 3 validates the first function call of each model step in the current turn and answers
 * 400 `Function call is missing a thought_signature` without one; this value makes the validator
 * skip the call. The gateway sends it, never a made-up signature.
 */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';

/**
 * Models that validate signatures: Gemini 3 and later, aliases such as `gemini-flash-latest`
 * included. Gemini 1.x and 2.x do not, and get no value they did not issue.
 */
export function validatesSignatures(model: string): boolean {
  return /gemini/i.test(model) && !/gemini-[12][.-]/i.test(model);
}

/**
 * `contents` with the skip value on the first function call of each model step in the current
 * turn that has no signature, or `contents` itself when none lacks one. The current turn starts
 * at the last user content with text (what Gemini CLI reads as the start of its active loop);
 * without one, every step counts.
 */
export function withSkippedSignatures<T>(contents: T[]): T[] {
  let start = contents.findLastIndex((content) => isRecord(content) && content.role === 'user' && hasText(content.parts));
  if (start < 0) start = 0;
  let out: T[] | undefined;
  for (let i = start; i < contents.length; i++) {
    const content = contents[i];
    if (!isRecord(content) || content.role !== 'model' || !Array.isArray(content.parts)) continue;
    const at = content.parts.findIndex((part) => isRecord(part) && part.functionCall !== undefined);
    const call = content.parts[at] as Record<string, unknown> | undefined;
    if (call === undefined || call.thoughtSignature !== undefined) continue;
    const parts = content.parts.slice();
    parts[at] = { ...call, thoughtSignature: SKIP_SIGNATURE };
    out ??= contents.slice();
    out[i] = { ...content, parts } as T;
  }
  return out ?? contents;
}

function hasText(parts: unknown): boolean {
  return Array.isArray(parts) && parts.some((part) => isRecord(part) && typeof part.text === 'string' && part.text !== '');
}
