import type { IRAssistantPart, IRRequest, IRResponse } from '../protocols/ir.js';

/**
 * The texts of a prompt a guardrail checks, in one shape for every protocol: the system prompt,
 * each message's text, tool-call arguments and tool results. Images, files and reasoning are not text here.
 */
export function requestTexts(ir: IRRequest): string[] {
  const texts: string[] = [];
  for (const part of ir.system) texts.push(part.text);
  for (const message of ir.messages) {
    for (const part of message.content) {
      if (part.type === 'text') texts.push(part.text);
      else if (part.type === 'tool_call') texts.push(part.arguments);
      else if (part.type === 'refusal') texts.push(part.refusal);
    }
  }
  return texts.filter((text) => text.length > 0);
}

/** Where an answer's checked texts are: text, refusal and tool-call arguments (reasoning is left as it is). */
type TextSlot = { part: IRAssistantPart; field: 'text' | 'refusal' | 'arguments' };

function slotsOf(response: IRResponse): TextSlot[] {
  const slots: TextSlot[] = [];
  for (const part of response.content) {
    if (part.type === 'text') slots.push({ part, field: 'text' });
    else if (part.type === 'refusal') slots.push({ part, field: 'refusal' });
    else if (part.type === 'tool_call') slots.push({ part, field: 'arguments' });
  }
  return slots;
}

/** The texts of an answer, in the order `withResponseTexts` takes them back. */
export function responseTexts(response: IRResponse): string[] {
  return slotsOf(response).map((slot) => (slot.part as unknown as Record<string, string>)[slot.field]!);
}

/** A copy of the answer with its checked texts replaced, in `responseTexts` order. */
export function withResponseTexts(response: IRResponse, texts: readonly string[]): IRResponse {
  const copy: IRResponse = { ...response, content: response.content.map((part) => ({ ...part })) };
  slotsOf(copy).forEach((slot, index) => {
    (slot.part as unknown as Record<string, string>)[slot.field] = texts[index]!;
  });
  return copy;
}
