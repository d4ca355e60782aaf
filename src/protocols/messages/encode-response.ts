import type { EncodeContext } from '../codec.js';
import { effectiveFinishReason, hasToolCall } from '../finish-reason.js';
import type { IRResponse } from '../ir.js';
import { publicId } from '../public-id.js';
import { toMessagesUsage } from '../usage.js';
import { messagesStopReason } from './stop-reason.js';
import { toolInput } from './tool-input.js';

type Json = Record<string, unknown>;

/**
 * IR response → Anthropic Message. Reasoning becomes a thinking block (its signature kept for
 * replay); opaque reasoning without a signature (OpenAI's encrypted content) becomes a
 * `redacted_thinking` block right after it, which the Messages decoder reads back as one part.
 * Refusal text has no block of its own in Messages and is sent as text.
 */
export function encodeMessagesResponse(response: IRResponse, ctx: EncodeContext): Record<string, unknown> {
  const content: Json[] = [];
  for (const part of response.content) {
    switch (part.type) {
      case 'reasoning':
        if (part.text !== '' || part.signature) {
          content.push({ type: 'thinking', thinking: part.text, signature: part.signature ?? '' });
        }
        if (part.encrypted !== undefined && !part.signature) content.push({ type: 'redacted_thinking', data: part.encrypted });
        break;
      case 'text':
        // Anthropic rejects empty text blocks when a client replays them.
        if (part.text !== '') content.push({ type: 'text', text: part.text, citations: null });
        break;
      case 'refusal':
        if (part.refusal !== '') content.push({ type: 'text', text: part.refusal, citations: null });
        break;
      case 'tool_call':
        content.push({ type: 'tool_use', id: part.id, name: part.name, input: toolInput(part.arguments) });
        break;
    }
  }

  return {
    id: publicId('msg_', response.id),
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    stop_reason: messagesStopReason(effectiveFinishReason(response.finishReason, hasToolCall(response.content))),
    stop_sequence: response.stopSequence ?? null,
    usage: toMessagesUsage(response.usage),
  };
}
