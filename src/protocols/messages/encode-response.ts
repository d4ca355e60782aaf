import type { EncodeContext } from '../codec.js';
import { effectiveFinishReason, hasToolCall } from '../finish-reason.js';
import type { IRResponse } from '../ir.js';
import { publicId } from '../public-id.js';
import { toMessagesUsage } from './usage.js';
import { messagesStopReason } from './stop-reason.js';
import { thinkingBlocks, thinkingOmitted } from './thinking-opaque.js';
import { toolInput } from './tool-input.js';
import { withSignedCallIds } from '../signed-call-id.js';
import type { Json } from '../../json.js';

/**
 * IR response → Anthropic Message. Reasoning becomes a thinking block whose signature carries its
 * opaque value for replay (`thinking-opaque.ts`), with no text when the client asked for
 * `display: "omitted"`; a Gemini signature also rides in the id of the `tool_use` it signs, for
 * clients that keep no thinking (`signed-call-id.ts`). Refusal text has no block of its own in
 * Messages and is sent as text.
 */
export function encodeMessagesResponse(response: IRResponse, ctx: EncodeContext): Record<string, unknown> {
  const content: Json[] = [];
  const omitted = thinkingOmitted(ctx.request);
  for (const part of withSignedCallIds(response.content)) {
    switch (part.type) {
      case 'reasoning':
        content.push(...thinkingBlocks(part, omitted));
        break;
      case 'text':
        // Anthropic rejects empty text blocks when a client replays them. No `citations` key: the
        // API leaves it out when there are none, and @ai-sdk/anthropic refuses `citations: null`.
        if (part.text !== '') content.push({ type: 'text', text: part.text });
        break;
      case 'refusal':
        if (part.refusal !== '') content.push({ type: 'text', text: part.refusal });
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
