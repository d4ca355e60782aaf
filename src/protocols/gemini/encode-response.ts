import type { Json } from '../../json.js';
import type { EncodeContext } from '../codec.js';
import type { IRResponse } from '../ir.js';
import { callArgs, includeThoughts, thoughtPart } from './answer-parts.js';
import { toGeminiFinishReason } from './finish-reason.js';
import { toGeminiUsage } from './usage.js';

/**
 * IR response → `GenerateContentResponse`: one candidate whose parts are, in order, thoughts
 * (when shown or carrying another vendor's reasoning), text and function calls (`args` an
 * object, `id` kept so the client can answer it), with Gemini's signature on the part it signs.
 * A refusal reads as text; the finish reason is Gemini's (`STOP` for function calls too).
 */
export function encodeGeminiResponse(response: IRResponse, ctx: EncodeContext): Record<string, unknown> {
  const shown = includeThoughts(ctx.request);
  const parts: Json[] = [];
  let signature: string | undefined;
  const signed = (part: Json): Json => {
    if (signature === undefined) return part;
    const out = { ...part, thoughtSignature: signature };
    signature = undefined;
    return out;
  };
  for (const part of response.content) {
    switch (part.type) {
      case 'reasoning': {
        const thought = thoughtPart(part, shown);
        if (thought) parts.push(thought);
        if (part.thoughtSignature) signature = part.thoughtSignature;
        break;
      }
      case 'text':
        parts.push(signed({ text: part.text }));
        break;
      case 'refusal':
        parts.push(signed({ text: part.refusal }));
        break;
      case 'tool_call':
        parts.push(signed({ functionCall: { id: part.id, name: part.name, args: callArgs(part.arguments, part.name) } }));
        break;
    }
  }
  // Nothing followed the signature: Gemini then sends it on an empty text part.
  if (signature !== undefined) parts.push(signed({ text: '' }));
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: toGeminiFinishReason(response.finishReason), index: 0 }],
    usageMetadata: toGeminiUsage(response.usage),
    modelVersion: ctx.model,
    responseId: response.id,
  };
}
