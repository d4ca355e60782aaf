import { upstreamInvalidResponse } from '../../errors.js';
import { argumentsText } from '../openai/arguments-text.js';
import { openAiStreamError, streamEndedEarly } from '../openai/stream-error.js';
import { newId, unixSeconds } from '../../ids.js';
import { effectiveFinishReason } from '../finish-reason.js';
import { mergeUsage, type IRFinishReason, type IRStreamEvent, type IRUsage } from '../ir.js';
import type { StreamDecoder } from '../codec.js';
import { parseEventData, type SseMessage } from '../sse-parse.js';
import { fromChatUsage } from './usage.js';
import { chatFinishReason } from './decode-response.js';
import { plainContentDelta } from './plain-delta.js';
import { asObject, parseJson, type Json } from '../../json.js';

interface ToolCall {
  index: number;
  id: string;
  name: string;
  arguments: string;
}

/**
 * Chat Completions chunks → IR events.
 *
 * The IR wants one open part at a time. Chat tool calls are told apart by `index` and OpenAI sends
 * them one after the other, so a call is forwarded live while it is the open part. A call whose
 * first fragment arrives while the open call's arguments are still incomplete JSON means the
 * upstream interleaves: such calls are buffered and emitted whole, in index order, once the open
 * call is complete (or at the finish).
 *
 * The stream succeeds only with a `finish_reason` or `[DONE]`; anything else that ends it throws.
 * One decoder per stream; `push` takes each upstream message as it is parsed.
 */
export function chatStreamDecoder(): StreamDecoder {
  let started = false;
  let finished = false;
  let finishReason: IRFinishReason | undefined;
  let usage: IRUsage = {};
  let sawToolCall = false;
  let open: ToolCall | undefined;
  const buffered = new Map<number, ToolCall>();
  const closed = new Set<number>();
  const known = new Map<number, ToolCall>();
  let out: IRStreamEvent[] = [];

  const closeToolCalls = (): void => {
    if (open) closed.add(open.index);
    open = undefined;
    for (const call of [...buffered.values()].sort((a, b) => a.index - b.index)) {
      out.push({ type: 'tool_call_start', id: call.id, name: call.name });
      if (call.arguments !== '') out.push({ type: 'tool_call_delta', arguments: call.arguments });
      closed.add(call.index);
    }
    buffered.clear();
  };

  const delta = (type: 'text_delta' | 'refusal_delta' | 'reasoning_delta', text: unknown): void => {
    if (typeof text !== 'string' || text === '') return;
    closeToolCalls();
    out.push({ type, text });
  };

  const toolFragment = (raw: Json): void => {
    sawToolCall = true;
    const fn = asObject(raw.function);
    const id = typeof raw.id === 'string' && raw.id !== '' ? raw.id : undefined;
    const name = typeof fn?.name === 'string' ? fn.name : undefined;
    const fragment = argumentsText(fn?.arguments);
    const index = toolIndex(raw, id, known, open);

    if (open?.index === index) {
      open.arguments += fragment;
      if (fragment !== '') out.push({ type: 'tool_call_delta', arguments: fragment });
      return;
    }
    if (closed.has(index)) {
      // Only reachable if a call that looked complete gets more text: whitespace is harmless,
      // anything else cannot be delivered in order.
      if (fragment.trim() === '') return;
      throw upstreamInvalidResponse('The upstream sent tool call fragments out of order');
    }
    let call = buffered.get(index);
    if (!call) {
      call = { index, id: id ?? newId('call_'), name: name ?? '', arguments: '' };
      buffered.set(index, call);
      known.set(index, call);
    } else if (call.name === '' && name) {
      call.name = name;
    }
    call.arguments += fragment;
    // Promote to live when it is the only waiting call and the open one cannot grow any more.
    if (buffered.size === 1 && (!open || isCompleteObject(open.arguments))) {
      if (open) closed.add(open.index);
      buffered.delete(index);
      open = call;
      out.push({ type: 'tool_call_start', id: call.id, name: call.name });
      if (call.arguments !== '') out.push({ type: 'tool_call_delta', arguments: call.arguments });
    }
  };

  const finish = (): IRStreamEvent => {
    finished = true;
    closeToolCalls();
    const reason = effectiveFinishReason(finishReason ?? 'stop', sawToolCall);
    return Object.keys(usage).length > 0 ? { type: 'finish', reason, usage } : { type: 'finish', reason };
  };

  const push = (message: SseMessage, sink: IRStreamEvent[]): void => {
    if (finished) return;
    out = sink;
    const data = message.data.trim();
    if (data === '') return;
    if (data === '[DONE]') {
      if (!started) throw streamEndedEarly();
      out.push(finish());
      return;
    }
    if (started) {
      const text = plainContentDelta(data);
      if (text !== undefined) {
        delta('text_delta', text);
        return;
      }
    }
    const chunk = parseEventData(data);
    if (chunk.error) throw openAiStreamError(chunk.error);
    if (!started) {
      started = true;
      out.push({
        type: 'start',
        id: typeof chunk.id === 'string' && chunk.id !== '' ? chunk.id : newId('chatcmpl-'),
        model: typeof chunk.model === 'string' ? chunk.model : '',
        created: typeof chunk.created === 'number' ? chunk.created : unixSeconds(),
      });
    }

    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    // n > 1 is not expressible in the IR: only the first choice is followed.
    const choice = choices.map(asObject).find((c) => c !== undefined && (c.index === undefined || c.index === 0));
    const d = asObject(choice?.delta);
    if (d) {
      delta('reasoning_delta', nonEmpty(d.reasoning_content) ?? d.reasoning);
      delta('text_delta', d.content);
      delta('refusal_delta', d.refusal);
      if (Array.isArray(d.tool_calls)) for (const raw of d.tool_calls) if (asObject(raw)) toolFragment(raw as Json);
    }
    if (typeof choice?.finish_reason === 'string') {
      finishReason = chatFinishReason(choice.finish_reason);
      closeToolCalls();
    }
    const chunkUsage = asObject(chunk.usage);
    if (chunkUsage) usage = mergeUsage(usage, fromChatUsage(chunkUsage));

    // The usage chunk (`choices: []`) is the last one before `[DONE]`.
    if (finishReason !== undefined && choices.length === 0 && chunkUsage) out.push(finish());
  };

  const end = (sink: IRStreamEvent[]): void => {
    if (finished) return;
    out = sink;
    // Ended without `[DONE]`: acceptable once the finish reason came (only usage may be missing).
    if (!started || finishReason === undefined) throw streamEndedEarly();
    out.push(finish());
  };

  return {
    push,
    end,
    get finished() {
      return finished;
    },
  };
}

/** Which call a fragment belongs to: its `index`, else its id, else the open call. */
function toolIndex(raw: Json, id: string | undefined, known: Map<number, ToolCall>, open: ToolCall | undefined): number {
  if (typeof raw.index === 'number' && Number.isInteger(raw.index) && raw.index >= 0) return raw.index;
  if (id !== undefined) {
    for (const call of known.values()) if (call.id === id) return call.index;
    return known.size === 0 ? 0 : Math.max(...known.keys()) + 1;
  }
  return open?.index ?? 0;
}

/** True when `text` is a whole JSON object: appending anything but whitespace would break it. */
function isCompleteObject(text: string): boolean {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') || !trimmed.endsWith('}')) return false;
  return parseJson(trimmed) !== undefined;
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
