import type { EncodeContext } from '../codec.js';
import { effectiveFinishReason, hasToolCall } from '../finish-reason.js';
import type { IRResponse } from '../ir.js';
import { publicId } from '../public-id.js';
import { toChatUsage } from './usage.js';
import { chatFinishReason } from './finish-reason.js';
import { withSignedCallIds } from '../signed-call-id.js';

/**
 * IR response → `chat.completion` body. Text parts are joined as a stream would concatenate them;
 * `reasoning_content` (non-standard, the common vendor extension) appears only with reasoning.
 */
export function encodeChatResponse(response: IRResponse, ctx: EncodeContext): Record<string, unknown> {
  let text: string | null = null;
  let refusal: string | null = null;
  let reasoning: string | undefined;
  const toolCalls: Record<string, unknown>[] = [];
  // A Gemini thought signature rides in the id of the call it signs (Chat has no other slot).
  for (const part of withSignedCallIds(response.content)) {
    switch (part.type) {
      case 'text':
        text = (text ?? '') + part.text;
        break;
      case 'refusal':
        refusal = (refusal ?? '') + part.refusal;
        break;
      case 'reasoning':
        if (part.text !== '') reasoning = (reasoning ?? '') + part.text;
        break;
      case 'tool_call':
        toolCalls.push({ id: part.id, type: 'function', function: { name: part.name, arguments: part.arguments } });
        break;
    }
  }

  const message: Record<string, unknown> = { role: 'assistant', content: text, refusal, annotations: [] };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning !== undefined) message.reasoning_content = reasoning;

  return {
    id: publicId('chatcmpl-', response.id),
    object: 'chat.completion',
    created: response.created,
    model: ctx.model,
    choices: [
      {
        index: 0,
        message,
        logprobs: null,
        finish_reason: chatFinishReason(effectiveFinishReason(response.finishReason, hasToolCall(response.content))),
      },
    ],
    usage: toChatUsage(response.usage),
  };
}
