import { upstreamInvalidResponse } from '../../errors.js';
import { newId, unixSeconds } from '../../ids.js';
import type { IRAssistantPart, IRFinishReason, IRResponse } from '../ir.js';
import { fromMessagesUsage } from './usage.js';
import { asObject } from '../../json.js';

/** Anthropic Messages response JSON → IR. Content blocks keep their order; server-tool blocks are skipped. */
export function decodeMessagesResponse(json: unknown): IRResponse {
  const body = asObject(json);
  if (!body || !Array.isArray(body.content)) {
    throw upstreamInvalidResponse('The upstream returned an invalid response');
  }

  const content: IRAssistantPart[] = [];
  for (const raw of body.content) {
    const block = asObject(raw);
    switch (block?.type) {
      case 'text':
        if (typeof block.text === 'string' && block.text !== '') content.push({ type: 'text', text: block.text });
        break;
      case 'thinking':
        content.push({
          type: 'reasoning',
          text: typeof block.thinking === 'string' ? block.thinking : '',
          signature: typeof block.signature === 'string' && block.signature !== '' ? block.signature : undefined,
        });
        break;
      case 'redacted_thinking':
        if (typeof block.data === 'string') content.push({ type: 'reasoning', text: '', redacted: block.data });
        break;
      case 'tool_use':
        content.push({
          type: 'tool_call',
          id: typeof block.id === 'string' ? block.id : newId('toolu_'),
          name: typeof block.name === 'string' ? block.name : '',
          arguments: JSON.stringify(block.input ?? {}),
        });
        break;
    }
  }

  const reason = messagesStopReason(body.stop_reason);
  return {
    id: typeof body.id === 'string' && body.id !== '' ? body.id : newId('msg_'),
    model: typeof body.model === 'string' ? body.model : '',
    created: unixSeconds(), // Anthropic responses carry no timestamp.
    content,
    finishReason: reason,
    stopSequence: reason === 'stop_sequence' && typeof body.stop_sequence === 'string' ? body.stop_sequence : undefined,
    usage: fromMessagesUsage(body.usage),
  };
}

/** Anthropic `stop_reason` → IR finish reason. Unknown values count as a normal stop. */
export function messagesStopReason(reason: unknown): IRFinishReason {
  switch (reason) {
    case 'stop_sequence':
      return 'stop_sequence';
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'pause_turn':
      return 'pause';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}
