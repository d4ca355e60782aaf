import { type GatewayError, upstreamInvalidResponse } from '../../errors.js';
import { argumentsText } from '../openai/arguments-text.js';
import { newId, unixSeconds } from '../../ids.js';
import { effectiveFinishReason } from '../finish-reason.js';
import type { IRAssistantPart, IRFinishReason, IRResponse } from '../ir.js';
import { fromChatUsage } from './usage.js';
import { asObject } from '../../json.js';

/** Chat Completions response JSON (first choice) → IR. */
export function decodeChatResponse(json: unknown): IRResponse {
  const body = asObject(json);
  const choices = body?.choices;
  const choice = Array.isArray(choices) ? asObject(choices[0]) : undefined;
  const message = asObject(choice?.message);
  if (!body || !choice || !message) throw invalidUpstreamResponse();

  const content: IRAssistantPart[] = [];
  // Non-standard reasoning fields: DeepSeek / vLLM use `reasoning_content`, OpenRouter `reasoning`.
  const reasoning = nonEmptyString(message.reasoning_content) ?? nonEmptyString(message.reasoning);
  if (reasoning !== undefined) content.push({ type: 'reasoning', text: reasoning });
  const text = messageText(message.content);
  if (text !== '') content.push({ type: 'text', text });
  if (Array.isArray(message.tool_calls)) {
    for (const raw of message.tool_calls) {
      const call = asObject(raw);
      const fn = asObject(call?.function);
      if (!call || !fn) continue;
      content.push({
        type: 'tool_call',
        id: typeof call.id === 'string' && call.id !== '' ? call.id : newId('call_'),
        name: typeof fn.name === 'string' ? fn.name : '',
        arguments: argumentsText(fn.arguments),
      });
    }
  }
  const refusal = nonEmptyString(message.refusal);
  if (refusal !== undefined) content.push({ type: 'refusal', refusal });

  const hasToolCalls = content.some((part) => part.type === 'tool_call');
  return {
    id: typeof body.id === 'string' && body.id !== '' ? body.id : newId('chatcmpl-'),
    model: typeof body.model === 'string' ? body.model : '',
    created: typeof body.created === 'number' ? body.created : unixSeconds(),
    content,
    finishReason: effectiveFinishReason(chatFinishReason(choice.finish_reason), hasToolCalls),
    usage: fromChatUsage(body.usage),
  };
}

/** Chat `finish_reason` → IR. Unknown or missing values count as a normal stop. */
export function chatFinishReason(reason: unknown): IRFinishReason {
  switch (reason) {
    case 'length':
      return 'length';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/** `content` is normally a string; a few OpenAI-compatible upstreams send an array of text parts. */
function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => {
      const obj = asObject(part);
      return obj?.type === 'text' && typeof obj.text === 'string' ? obj.text : '';
    })
    .join('');
}

function invalidUpstreamResponse(): GatewayError {
  return upstreamInvalidResponse('The upstream returned an invalid response');
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
