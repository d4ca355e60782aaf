import { GatewayError, upstreamStreamCut } from '../../errors.js';
import { newId, unixSeconds } from '../../ids.js';
import type { IRStreamEvent } from '../ir.js';
import type { StreamDecoder } from '../codec.js';
import { parseEventData, type SseMessage } from '../sse-parse.js';
import { fromMessagesUsage } from './usage.js';
import { messagesStopReason } from './decode-response.js';
import { plainTextDelta } from './plain-delta.js';
import { asObject, type Json } from '../../json.js';

interface BlockState {
  type: string;
  /** A delta was forwarded, so a `tool_use` start `input` must not be sent again. */
  streamed: boolean;
  signature: string;
  input?: unknown;
}

/**
 * Anthropic Messages stream events → IR events (reference §3.4, §8.5 C/E). Anthropic opens one
 * content block at a time, which is exactly the IR's sequential parts.
 *
 * Usage: input counters come in `message_start`, output in `message_delta`. Every counter is
 * cumulative, so later values overwrite earlier ones, and the IR usage (prompt including cache)
 * is recomputed from the merged raw counters.
 *
 * The stream succeeds only with `message_stop`. One decoder per stream.
 */
export function messagesStreamDecoder(): StreamDecoder {
  let started = false;
  let finished = false;
  let stopReason: unknown;
  let stopSequence: unknown;
  let rawUsage: Json = {};
  const blocks = new Map<number, BlockState>();
  let out: IRStreamEvent[] = [];

  const mergeRawUsage = (update: unknown): void => {
    const obj = asObject(update);
    if (!obj) return;
    rawUsage = { ...rawUsage };
    for (const [key, value] of Object.entries(obj)) if (value !== null && value !== undefined) rawUsage[key] = value;
  };

  const start = (message: Json | undefined): void => {
    if (started) return;
    started = true;
    mergeRawUsage(message?.usage);
    const usage = fromMessagesUsage(rawUsage);
    out.push({
      type: 'start',
      id: typeof message?.id === 'string' && message.id !== '' ? message.id : newId('msg_'),
      model: typeof message?.model === 'string' ? message.model : '',
      created: unixSeconds(),
      ...(Object.keys(usage).length > 0 ? { usage } : {}),
    });
  };

  const push = (message: SseMessage, sink: IRStreamEvent[]): void => {
    if (finished) return;
    out = sink;
    const data = message.data.trim();
    if (data === '' || data === '[DONE]') return;
    const plain = plainTextDelta(data);
    if (plain) {
      if (plain.text !== '' && blocks.get(plain.index)?.type === 'text') out.push({ type: 'text_delta', text: plain.text });
      return;
    }
    const event = parseEventData(data);
    const type = typeof event.type === 'string' ? event.type : message.event;

    switch (type) {
      case 'message_start':
        start(asObject(event.message));
        break;
      case 'content_block_start': {
        start(undefined);
        const block = asObject(event.content_block) ?? {};
        const state: BlockState = { type: String(block.type), streamed: false, signature: '' };
        blocks.set(blockIndex(event), state);
        if (block.type === 'text' && typeof block.text === 'string' && block.text !== '') {
          state.streamed = true;
          out.push({ type: 'text_delta', text: block.text });
        } else if (block.type === 'tool_use') {
          state.input = block.input;
          out.push({ type: 'tool_call_start', id: typeof block.id === 'string' ? block.id : newId('toolu_'), name: String(block.name ?? '') });
        } else if (block.type === 'thinking') {
          if (typeof block.signature === 'string') state.signature = block.signature;
          if (typeof block.thinking === 'string' && block.thinking !== '') {
            state.streamed = true;
            out.push({ type: 'reasoning_delta', text: block.thinking });
          }
        } else if (block.type === 'redacted_thinking' && typeof block.data === 'string') {
          out.push({ type: 'reasoning_end', redacted: block.data });
        }
        // Server-tool blocks (server_tool_use, web_search_tool_result…) have no IR form.
        break;
      }
      case 'content_block_delta': {
        const state = blocks.get(blockIndex(event));
        const delta = asObject(event.delta);
        if (!state || !delta) break;
        if (delta.type === 'text_delta' && state.type === 'text') {
          if (typeof delta.text === 'string' && delta.text !== '') out.push({ type: 'text_delta', text: delta.text });
        } else if (delta.type === 'input_json_delta' && state.type === 'tool_use') {
          if (typeof delta.partial_json === 'string' && delta.partial_json !== '') {
            state.streamed = true;
            out.push({ type: 'tool_call_delta', arguments: delta.partial_json });
          }
        } else if (delta.type === 'thinking_delta' && state.type === 'thinking') {
          if (typeof delta.thinking === 'string' && delta.thinking !== '') {
            state.streamed = true;
            out.push({ type: 'reasoning_delta', text: delta.thinking });
          }
        } else if (delta.type === 'signature_delta' && state.type === 'thinking' && typeof delta.signature === 'string') {
          state.signature += delta.signature;
        }
        // citations_delta: citations have no IR form.
        break;
      }
      case 'content_block_stop': {
        const state = blocks.get(blockIndex(event));
        if (state?.type === 'thinking' && (state.streamed || state.signature !== '')) {
          out.push(state.signature !== '' ? { type: 'reasoning_end', signature: state.signature } : { type: 'reasoning_end' });
        } else if (state?.type === 'tool_use' && !state.streamed) {
          // Input given whole in the start block, or none at all (a tool without parameters
          // streams one empty `input_json_delta`): send it as one delta, `{}` for none, so Chat
          // and Responses clients get JSON arguments as from the JSON decoder.
          out.push({ type: 'tool_call_delta', arguments: JSON.stringify(asObject(state.input) ?? {}) });
        }
        break;
      }
      case 'message_delta': {
        start(undefined);
        const delta = asObject(event.delta);
        if (delta?.stop_reason !== undefined && delta.stop_reason !== null) stopReason = delta.stop_reason;
        if (delta?.stop_sequence !== undefined && delta.stop_sequence !== null) stopSequence = delta.stop_sequence;
        mergeRawUsage(event.usage);
        break;
      }
      case 'message_stop': {
        start(undefined);
        const reason = messagesStopReason(stopReason);
        const usage = fromMessagesUsage(rawUsage);
        finished = true;
        out.push({
          type: 'finish',
          reason,
          ...(reason === 'stop_sequence' && typeof stopSequence === 'string' ? { stopSequence } : {}),
          ...(Object.keys(usage).length > 0 ? { usage } : {}),
        });
        return;
      }
      case 'error':
        throw messagesStreamError(event.error);
      // `ping` and unknown events carry nothing.
    }
  };

  return {
    push,
    end: () => {
      if (!finished) throw upstreamStreamCut('upstream stream ended early');
    },
    get finished() {
      return finished;
    },
  };
}

/** An Anthropic in-stream error → `GatewayError` keeping the upstream type and message. */
function messagesStreamError(raw: unknown): GatewayError {
  const error = asObject(raw) ?? {};
  const type = typeof error.type === 'string' && error.type !== '' ? error.type : 'api_error';
  const message = typeof error.message === 'string' && error.message !== '' ? error.message : 'The upstream failed while streaming';
  // Anthropic's own 529 for overload is not a status clients know; 503 says the same.
  const status = type === 'overloaded_error' ? 503 : type === 'rate_limit_error' ? 429 : 502;
  return new GatewayError({ status, type, message });
}

function blockIndex(event: Json): number {
  return typeof event.index === 'number' ? event.index : -1;
}
