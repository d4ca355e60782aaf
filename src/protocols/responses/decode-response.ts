import { type GatewayError, upstreamInvalidResponse } from '../../errors.js';
import { newId, unixSeconds } from '../../ids.js';
import { argumentsText } from '../openai/arguments-text.js';
import { openAiStreamError } from '../openai/stream-error.js';
import type { IRAssistantPart, IRFinishReason, IRReasoningPart, IRResponse } from '../ir.js';
import { fromResponsesUsage } from './usage.js';
import { asObject, type Json } from '../../json.js';

/** Responses `response` object → IR. A failed response throws its error; output items keep their order. */
export function decodeResponsesResponse(json: unknown): IRResponse {
  const body = asObject(json);
  if (!body || !Array.isArray(body.output)) throw invalidUpstreamResponse();
  const status = body.status;
  if (status === 'failed') throw openAiStreamError(body.error, 'The upstream failed to generate a response');
  if (status !== undefined && status !== 'completed' && status !== 'incomplete') {
    // `queued` / `in_progress` (background mode) or `cancelled`: there is no answer to return.
    throw upstreamInvalidResponse(`The upstream response is ${String(status)}`);
  }

  const content = decodeOutput(body.output);
  return {
    id: typeof body.id === 'string' && body.id !== '' ? body.id : newId('resp_'),
    model: typeof body.model === 'string' ? body.model : '',
    created: typeof body.created_at === 'number' ? body.created_at : unixSeconds(),
    content,
    finishReason: responsesFinishReason(
      body,
      content.some((part) => part.type === 'tool_call'),
    ),
    usage: fromResponsesUsage(body.usage),
  };
}

/** Terminal status → IR finish reason: `incomplete` says why; `completed` with calls is a tool turn. */
export function responsesFinishReason(response: Json, hasToolCalls: boolean): IRFinishReason {
  if (response.status === 'incomplete') {
    const reason = asObject(response.incomplete_details)?.reason;
    return reason === 'content_filter' ? 'content_filter' : 'length';
  }
  return hasToolCalls ? 'tool_calls' : 'stop';
}

/** Output items → IR parts, in order. */
export function decodeOutput(output: unknown[]): IRAssistantPart[] {
  const content: IRAssistantPart[] = [];
  for (const raw of output) {
    const item = asObject(raw);
    if (!item) continue;
    switch (item.type) {
      case 'reasoning': {
        const part = reasoningPart(item);
        if (part) content.push(part);
        break;
      }
      case 'message':
        for (const rawPart of Array.isArray(item.content) ? item.content : []) {
          const part = asObject(rawPart);
          if (part?.type === 'output_text' && typeof part.text === 'string' && part.text !== '') {
            content.push({ type: 'text', text: part.text });
          } else if (part?.type === 'refusal' && typeof part.refusal === 'string') {
            content.push({ type: 'refusal', refusal: part.refusal });
          }
        }
        break;
      case 'function_call':
        content.push({
          type: 'tool_call',
          // The client answers with `call_id`, never the `fc_` item id.
          id: typeof item.call_id === 'string' && item.call_id !== '' ? item.call_id : String(item.id ?? newId('call_')),
          name: typeof item.name === 'string' ? item.name : '',
          arguments: argumentsText(item.arguments),
        });
        break;
      // Built-in tool items (web_search_call…) have no IR form.
    }
  }
  return content;
}

/** A reasoning item: summary texts joined (or raw reasoning text), opaque content and item id. */
export function reasoningPart(item: Json): IRReasoningPart | undefined {
  const text = joinTexts(item.summary, 'summary_text') || joinTexts(item.content, 'reasoning_text');
  const encrypted = typeof item.encrypted_content === 'string' && item.encrypted_content !== '' ? item.encrypted_content : undefined;
  const id = typeof item.id === 'string' && item.id !== '' ? item.id : undefined;
  if (text === '' && encrypted === undefined && id === undefined) return undefined;
  return { type: 'reasoning', text, encrypted, id };
}

/** Summary parts are separate paragraphs; the stream decoder joins them the same way. */
export const SUMMARY_SEPARATOR = '\n\n';

function joinTexts(parts: unknown, type: string): string {
  if (!Array.isArray(parts)) return '';
  return parts
    .map(asObject)
    .filter((part): part is Json => part?.type === type && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join(SUMMARY_SEPARATOR);
}

function invalidUpstreamResponse(): GatewayError {
  return upstreamInvalidResponse('The upstream returned an invalid response');
}
