import { type GatewayError, upstreamInvalidResponse } from '../../errors.js';
import { newId, unixSeconds } from '../../ids.js';
import { argumentsText } from '../openai/arguments-text.js';
import { openAiStreamError, streamEndedEarly } from '../openai/stream-error.js';
import type { IRAssistantPart, IRStreamEvent } from '../ir.js';
import type { StreamDecoder } from '../codec.js';
import { parseEventData, type SseMessage } from '../sse-parse.js';
import { fromResponsesUsage } from './usage.js';
import { decodeOutput, reasoningPart, responsesFinishReason, SUMMARY_SEPARATOR } from './decode-response.js';
import { asObject, type Json } from '../../json.js';

interface ItemState {
  /** The item's id as the upstream named it ('' when it named none). */
  id: string;
  type: string;
  /** A delta was forwarded for this item, so its `.done` text must not be sent again. */
  streamed: boolean;
  /** Last reasoning summary index seen, to separate summary parts like the JSON decoder does. */
  summaryIndex?: number;
}

/**
 * Responses stream events → IR events. OpenAI streams output items one after the other, so each
 * item's deltas map straight to one IR part. Text or arguments that only arrive in `.done` events
 * (some compatible servers send no deltas) are emitted once there. Lifecycle, `content_part.*`
 * and built-in tool events carry nothing the IR needs and are skipped.
 *
 * The stream succeeds only with `response.completed` or `response.incomplete`. One decoder per stream.
 */
export function responsesStreamDecoder(): StreamDecoder {
  let started = false;
  let finished = false;
  let sawToolCall = false;
  let sawItem = false;
  const items = new Map<string, ItemState>();
  let out: IRStreamEvent[] = [];

  const start = (response: Json | undefined): void => {
    if (started) return;
    started = true;
    out.push({
      type: 'start',
      id: typeof response?.id === 'string' && response.id !== '' ? response.id : newId('resp_'),
      model: typeof response?.model === 'string' ? response.model : '',
      created: typeof response?.created_at === 'number' ? response.created_at : unixSeconds(),
    });
  };

  const item = (id: unknown, type: string): ItemState => {
    const key = typeof id === 'string' ? id : '';
    let state = items.get(key);
    if (!state) {
      state = { id: key, type, streamed: false };
      items.set(key, state);
    }
    return state;
  };

  const delta = (type: 'text_delta' | 'refusal_delta' | 'reasoning_delta', text: unknown, state: ItemState): void => {
    if (typeof text !== 'string' || text === '') return;
    state.streamed = true;
    // A reasoning item's id goes with its text: an encoder that names the item reuses it.
    out.push(type === 'reasoning_delta' && state.id !== '' ? { type, text, id: state.id } : { type, text });
  };

  const itemAdded = (raw: Json): void => {
    sawItem = true;
    const state = item(raw.id, String(raw.type));
    if (raw.type !== 'function_call') return;
    sawToolCall = true;
    out.push({ type: 'tool_call_start', id: callId(raw), name: typeof raw.name === 'string' ? raw.name : '' });
    const args = argumentsText(raw.arguments);
    if (args !== '') {
      state.streamed = true;
      out.push({ type: 'tool_call_delta', arguments: args });
    }
  };

  const itemDone = (raw: Json): void => {
    const known = items.has(typeof raw.id === 'string' ? raw.id : '');
    if (!known) itemAdded(raw);
    const state = item(raw.id, String(raw.type));
    switch (raw.type) {
      case 'function_call': {
        const args = argumentsText(raw.arguments);
        if (!state.streamed && args !== '') out.push({ type: 'tool_call_delta', arguments: args });
        break;
      }
      case 'message':
        if (state.streamed) break;
        for (const part of Array.isArray(raw.content) ? raw.content : []) {
          const obj = asObject(part);
          if (obj?.type === 'output_text') delta('text_delta', obj.text, state);
          else if (obj?.type === 'refusal') delta('refusal_delta', obj.refusal, state);
        }
        break;
      case 'reasoning': {
        const part = reasoningPart(raw);
        if (!state.streamed && part) delta('reasoning_delta', part.text, state);
        // Only opaque content needs an explicit end: it is what lets the reasoning be replayed.
        if (part?.encrypted !== undefined) out.push({ type: 'reasoning_end', encrypted: part.encrypted, ...(state.id !== '' ? { id: state.id } : {}) });
        break;
      }
    }
    state.streamed = true;
  };

  const push = (message: SseMessage, sink: IRStreamEvent[]): void => {
    if (finished) return;
    out = sink;
    const data = message.data.trim();
    if (data === '' || data === '[DONE]') return;
    const event = parseEventData(data);
    const type = typeof event.type === 'string' ? event.type : message.event;
    const response = asObject(event.response);

    switch (type) {
      case 'response.created':
      case 'response.in_progress':
      case 'response.queued':
        start(response);
        break;
      case 'response.output_item.added': {
        start(undefined);
        const raw = asObject(event.item);
        if (raw) itemAdded(raw);
        break;
      }
      case 'response.output_item.done': {
        start(undefined);
        const raw = asObject(event.item);
        if (raw) itemDone(raw);
        break;
      }
      case 'response.output_text.delta':
        start(undefined);
        delta('text_delta', event.delta, item(event.item_id, 'message'));
        break;
      case 'response.refusal.delta':
        start(undefined);
        delta('refusal_delta', event.delta, item(event.item_id, 'message'));
        break;
      case 'response.reasoning_summary_text.delta': {
        start(undefined);
        const state = item(event.item_id, 'reasoning');
        const index = typeof event.summary_index === 'number' ? event.summary_index : 0;
        if (state.summaryIndex !== undefined && index !== state.summaryIndex && state.streamed) {
          out.push({ type: 'reasoning_delta', text: SUMMARY_SEPARATOR, ...(state.id !== '' ? { id: state.id } : {}) });
        }
        state.summaryIndex = index;
        delta('reasoning_delta', event.delta, state);
        break;
      }
      case 'response.reasoning_text.delta':
        start(undefined);
        delta('reasoning_delta', event.delta, item(event.item_id, 'reasoning'));
        break;
      case 'response.function_call_arguments.delta': {
        start(undefined);
        const state = item(event.item_id, 'function_call');
        if (typeof event.delta === 'string' && event.delta !== '') {
          state.streamed = true;
          out.push({ type: 'tool_call_delta', arguments: event.delta });
        }
        break;
      }
      case 'response.function_call_arguments.done': {
        const state = item(event.item_id, 'function_call');
        const args = argumentsText(event.arguments);
        if (!state.streamed && args !== '') {
          state.streamed = true;
          out.push({ type: 'tool_call_delta', arguments: args });
        }
        break;
      }
      case 'response.completed':
      case 'response.incomplete': {
        if (!response) throw invalidEvent();
        start(response);
        const output = Array.isArray(response.output) ? response.output : [];
        // A server that sends only the terminal event still has its whole answer in `output`.
        if (!sawItem) for (const part of decodeOutput(output)) out.push(...partEvents(part));
        const hasToolCalls = sawToolCall || output.some((raw) => asObject(raw)?.type === 'function_call');
        const usage = fromResponsesUsage(response.usage);
        const reason = responsesFinishReason(response, hasToolCalls);
        finished = true;
        out.push(Object.keys(usage).length > 0 ? { type: 'finish', reason, usage } : { type: 'finish', reason });
        return;
      }
      case 'response.failed':
        throw openAiStreamError(response?.error, 'The upstream failed to generate a response');
      case 'error':
        // The live API nests the fields under `error`; the SDK type has them flat.
        throw openAiStreamError(asObject(event.error) ?? event);
    }
  };

  return {
    push,
    end: () => {
      if (!finished) throw streamEndedEarly();
    },
    get finished() {
      return finished;
    },
  };
}

/** `call_id` is what the client answers with; the `fc_` item id is a fallback only. */
function callId(raw: Json): string {
  if (typeof raw.call_id === 'string' && raw.call_id !== '') return raw.call_id;
  return typeof raw.id === 'string' && raw.id !== '' ? raw.id : newId('call_');
}

function partEvents(part: IRAssistantPart): IRStreamEvent[] {
  switch (part.type) {
    case 'text':
      return [{ type: 'text_delta', text: part.text }];
    case 'refusal':
      return [{ type: 'refusal_delta', text: part.refusal }];
    case 'reasoning':
      return [
        ...(part.text !== '' ? [{ type: 'reasoning_delta' as const, text: part.text, ...(part.id ? { id: part.id } : {}) }] : []),
        ...(part.encrypted !== undefined ? [{ type: 'reasoning_end' as const, encrypted: part.encrypted, ...(part.id ? { id: part.id } : {}) }] : []),
      ];
    case 'tool_call':
      return [
        { type: 'tool_call_start', id: part.id, name: part.name },
        ...(part.arguments !== '' ? [{ type: 'tool_call_delta' as const, arguments: part.arguments }] : []),
      ];
  }
}

function invalidEvent(): GatewayError {
  return upstreamInvalidResponse('The upstream sent an invalid stream event');
}
