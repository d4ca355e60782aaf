import { upstreamInvalidResponse } from '../../errors.js';
import { newId, unixSeconds } from '../../ids.js';
import { asObject } from '../../json.js';
import { effectiveFinishReason, hasToolCall } from '../finish-reason.js';
import type { IRAssistantPart, IRResponse } from '../ir.js';
import { converseStopReason } from './stop-reason.js';
import { fromConverseUsage } from './usage.js';

/**
 * Converse response JSON (`output.message.content`, `stopReason`, `usage`) → IR. Blocks keep
 * their order; a reasoning block keeps its signature (or redacted content) for the next turn.
 */
export function decodeConverseResponse(json: unknown): IRResponse {
  const body = asObject(json);
  const message = asObject(asObject(body?.output)?.message);
  if (!body || !message || !Array.isArray(message.content)) throw upstreamInvalidResponse('The upstream returned an invalid response');

  const content: IRAssistantPart[] = [];
  for (const raw of message.content) {
    const block = asObject(raw);
    if (!block) continue;
    if (typeof block.text === 'string') {
      if (block.text !== '') content.push({ type: 'text', text: block.text });
      continue;
    }
    const tool = asObject(block.toolUse);
    if (tool) {
      content.push({
        type: 'tool_call',
        id: typeof tool.toolUseId === 'string' ? tool.toolUseId : newId('tooluse_'),
        name: typeof tool.name === 'string' ? tool.name : '',
        arguments: JSON.stringify(tool.input ?? {}),
      });
      continue;
    }
    const reasoning = asObject(block.reasoningContent);
    if (reasoning) {
      const text = asObject(reasoning.reasoningText);
      if (text) {
        const signature = typeof text.signature === 'string' && text.signature !== '' ? text.signature : undefined;
        content.push({ type: 'reasoning', text: typeof text.text === 'string' ? text.text : '', signature });
      } else if (typeof reasoning.redactedContent === 'string') {
        content.push({ type: 'reasoning', text: '', redacted: reasoning.redactedContent });
      }
    }
    // Images, citations and guard content have no IR form in an answer.
  }

  return {
    id: newId('msg_bdrk_'),
    model: '',
    created: unixSeconds(),
    content,
    finishReason: effectiveFinishReason(converseStopReason(body.stopReason), hasToolCall(content)),
    usage: fromConverseUsage(body.usage),
  };
}
