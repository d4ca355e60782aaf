import { upstreamInvalidResponse } from '../../errors.js';
import { isRecord, parseJson, type Json } from '../../json.js';
import type { IRReasoningPart } from '../ir.js';
import { foreignSignature } from './carried-signature.js';

/**
 * What the JSON and stream encoders share: how reasoning becomes parts a Gemini client keeps
 * and sends back. Thought text is shown when the client asked (`includeThoughts`); another
 * vendor's opaque reasoning rides in a thought part's `thoughtSignature` with its whole text
 * (Anthropic checks the text against the signature), shown or not; Gemini's own signature goes
 * on the part it signs, the one that follows, as Gemini sends it.
 */
export function includeThoughts(request: Json): boolean {
  const config = request.generationConfig;
  const thinking = isRecord(config) ? config.thinkingConfig : undefined;
  return isRecord(thinking) && thinking.includeThoughts === true;
}

/** The thought part of a reasoning part, or undefined when nothing of it is shown or carried. */
export function thoughtPart(part: Pick<IRReasoningPart, 'text' | 'signature' | 'redacted' | 'encrypted'>, shown: boolean): Json | undefined {
  const carried = foreignSignature(part);
  if (carried !== undefined) return { text: part.text, thought: true, thoughtSignature: carried };
  return shown && part.text !== '' ? { text: part.text, thought: true } : undefined;
}

/** A function call's arguments as the object Gemini sends. */
export function callArgs(argumentsText: string, name: string): Json {
  if (argumentsText.trim() === '') return {};
  const args = parseJson(argumentsText);
  if (!isRecord(args)) throw upstreamInvalidResponse(`The upstream sent arguments for '${name}' that are not a JSON object.`);
  return args;
}
