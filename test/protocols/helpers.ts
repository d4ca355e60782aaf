import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { expect } from 'vitest';
import type { GatewayError } from '../../src/errors.js';
import type { EncodeContext } from '../../src/protocols/codec.js';
import type { IRStreamEvent } from '../../src/protocols/ir.js';

type Json = Record<string, any>;

/** An IR stream from a list; `fail` (when given) is thrown after the events, as a broken upstream would. */
export async function* irStream(events: IRStreamEvent[], fail?: unknown): AsyncGenerator<IRStreamEvent> {
  for (const event of events) {
    await Promise.resolve();
    yield event;
  }
  if (fail !== undefined) throw fail;
}

export async function collect(frames: AsyncIterable<string>): Promise<string> {
  let out = '';
  for await (const frame of frames) out += frame;
  return out;
}

export function makeCtx(request: Json, errors: GatewayError[] = []): EncodeContext {
  return { model: 'public-model', request, requestId: 'req_test', onStreamError: (error) => errors.push(error) };
}

export interface SseFrame {
  event: string | undefined;
  data: string;
}

/** Splits SSE text into frames; every frame must be well formed (one data line, blank-line end). */
export function parseSse(text: string): SseFrame[] {
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      const lines = block.split('\n');
      let event: string | undefined;
      const data: string[] = [];
      for (const line of lines) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
        else throw new Error(`unexpected SSE line: ${line}`);
      }
      expect(data).toHaveLength(1);
      return { event, data: data[0]! };
    });
}

export function sseBody(text: string): Response {
  return new Response(text, { status: 200, headers: { 'content-type': 'text/event-stream', 'x-request-id': 'req_test' } });
}

export function jsonBody(json: unknown): Response {
  return new Response(JSON.stringify(json), { status: 200, headers: { 'content-type': 'application/json' } });
}

/** Official clients whose "network" returns the given body: the SDKs' own parsers do the checking. */
export function openaiWith(response: Response): OpenAI {
  return new OpenAI({ apiKey: 'x', maxRetries: 0, fetch: async () => response });
}

export function anthropicWith(response: Response): Anthropic {
  return new Anthropic({ apiKey: 'x', maxRetries: 0, fetch: async () => response });
}

/**
 * The Responses stream invariants of reference 1.6.3, checked strictly (the installed SDK's
 * accumulator checks only part of them). Returns the parsed events.
 */
export function checkResponsesStream(text: string): Json[] {
  const frames = parseSse(text);
  const events = frames.map((frame) => {
    const data = JSON.parse(frame.data) as Json;
    expect(frame.event).toBe(data.type);
    return data;
  });
  events.forEach((event, i) => {
    expect(event.sequence_number).toBe(i);
  });
  expect(events[0]?.type).toBe('response.created');
  expect(events[1]?.type).toBe('response.in_progress');
  expect(events.slice(2).some((e) => e.type === 'response.in_progress' || e.type === 'response.created')).toBe(false);

  const output: Json[] = [];
  const ids = new Set<string>();
  const openParts = new Map<string, number>();
  /** `*.done` events seen, by kind and item id. */
  const closed = new Set<string>();
  let terminal: Json | undefined;
  for (const event of events.slice(2)) {
    expect(terminal, `event after terminal: ${event.type}`).toBeUndefined();
    switch (event.type) {
      case 'response.output_item.added': {
        expect(event.output_index).toBe(output.length);
        const item = event.item as Json;
        expect(typeof item.id === 'string' && item.id !== '').toBe(true);
        expect(ids.has(item.id)).toBe(false);
        ids.add(item.id);
        if (item.type === 'function_call') expect(typeof item.call_id === 'string' && item.call_id !== '').toBe(true);
        output.push(structuredClone(item));
        break;
      }
      case 'response.output_item.done': {
        const before = output[event.output_index];
        expect(before).toBeDefined();
        expect(event.item.type).toBe(before!.type);
        expect(event.item.id).toBe(before!.id);
        if (before!.type === 'custom_tool_call') {
          expect(closed.has(`args:${before!.id}`), 'custom_tool_call_input.done before output_item.done').toBe(true);
          expect(event.item.input).toBe(before!.input);
        }
        if (before!.type === 'function_call') {
          expect(event.item.call_id).toBe(before!.call_id);
          expect(closed.has(`args:${before!.id}`), 'function_call_arguments.done before output_item.done').toBe(true);
          expect(event.item.arguments).toBe(before!.arguments);
        }
        expect(openParts.has(before!.id), 'content part closed before output_item.done').toBe(false);
        if (before!.type === 'reasoning') {
          before!.summary.forEach((_: unknown, i: number) => {
            expect(closed.has(`summary:${before!.id}:${i}`)).toBe(true);
          });
          expect(event.item.summary).toEqual(before!.summary);
        }
        if (before!.type === 'message') {
          // The done item carries exactly the parts that were streamed.
          expect(event.item.content).toEqual(before!.content);
        }
        output[event.output_index] = structuredClone(event.item);
        break;
      }
      case 'response.content_part.added': {
        const item = itemAt(output, event);
        expect(item.type).toBe('message');
        expect(event.content_index).toBe(item.content.length);
        item.content.push(structuredClone(event.part));
        openParts.set(item.id, event.content_index);
        break;
      }
      case 'response.content_part.done': {
        const item = itemAt(output, event);
        expect(openParts.get(item.id)).toBe(event.content_index);
        expect(closed.has(`part:${item.id}:${event.content_index}`), 'text/refusal done before content_part.done').toBe(true);
        expect(event.part).toEqual(item.content[event.content_index]);
        item.content[event.content_index] = structuredClone(event.part);
        openParts.delete(item.id);
        break;
      }
      case 'response.output_text.delta':
      case 'response.output_text.done': {
        const item = itemAt(output, event);
        expect(item.type).toBe('message');
        const part = item.content[event.content_index];
        expect(part?.type).toBe('output_text');
        if (event.type.endsWith('delta')) part.text += event.delta;
        else {
          expect(event.text).toBe(part.text);
          closed.add(`part:${item.id}:${event.content_index}`);
        }
        break;
      }
      case 'response.refusal.delta':
      case 'response.refusal.done': {
        const item = itemAt(output, event);
        const part = item.content[event.content_index];
        expect(part?.type).toBe('refusal');
        if (event.type.endsWith('delta')) part.refusal += event.delta;
        else {
          expect(event.refusal).toBe(part.refusal);
          closed.add(`part:${item.id}:${event.content_index}`);
        }
        break;
      }
      case 'response.function_call_arguments.delta':
      case 'response.function_call_arguments.done': {
        const item = itemAt(output, event);
        expect(item.type).toBe('function_call');
        if (event.type.endsWith('delta')) item.arguments += event.delta;
        else {
          expect(event.arguments).toBe(item.arguments);
          expect(event.name).toBe(item.name);
          closed.add(`args:${item.id}`);
        }
        break;
      }
      case 'response.custom_tool_call_input.delta':
      case 'response.custom_tool_call_input.done': {
        const item = itemAt(output, event);
        expect(item.type).toBe('custom_tool_call');
        if (event.type.endsWith('delta')) item.input += event.delta;
        else {
          expect(event.input).toBe(item.input);
          closed.add(`args:${item.id}`);
        }
        break;
      }
      case 'response.reasoning_summary_part.added':
      case 'response.reasoning_summary_part.done':
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_summary_text.done': {
        const item = itemAt(output, event);
        expect(item.type).toBe('reasoning');
        if (event.type === 'response.reasoning_summary_part.added') {
          expect(event.summary_index).toBe(item.summary.length);
          item.summary.push(structuredClone(event.part));
        } else if (event.type === 'response.reasoning_summary_text.delta') item.summary[event.summary_index].text += event.delta;
        else if (event.type === 'response.reasoning_summary_text.done') expect(event.text).toBe(item.summary[event.summary_index].text);
        else {
          expect(event.part).toEqual(item.summary[event.summary_index]);
          closed.add(`summary:${item.id}:${event.summary_index}`);
        }
        break;
      }
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed':
        terminal = event;
        break;
      case 'error':
        expect(event.error?.message).toBeTypeOf('string');
        break;
      default:
        throw new Error(`undocumented event type ${event.type}`);
    }
  }
  expect(terminal, 'a terminal event').toBeDefined();
  if (terminal!.type !== 'response.failed') {
    expect(openParts.size).toBe(0);
    // Every item is finished, and the terminal snapshot holds exactly the streamed items.
    expect(terminal!.response.output).toEqual(output);
  }
  return events;
}

function itemAt(output: Json[], event: Json): Json {
  const item = output[event.output_index];
  expect(item, `item at ${event.output_index}`).toBeDefined();
  expect(event.item_id).toBe(item!.id);
  return item!;
}

/** Anthropic stream framing (reference 3.4): event = data.type, message_start first, one block at a time. */
export function checkMessagesStream(text: string): Json[] {
  const events = parseSse(text).map((frame) => {
    const data = JSON.parse(frame.data) as Json;
    expect(frame.event).toBe(data.type);
    return data;
  });
  const first = events[0];
  if (first?.type !== 'error') expect(first?.type).toBe('message_start');
  let next = 0;
  let open: number | undefined;
  for (const event of events.slice(1)) {
    if (event.type === 'message_start') throw new Error('second message_start');
    if (event.type === 'content_block_start') {
      expect(open).toBeUndefined();
      expect(event.index).toBe(next++);
      open = event.index;
    } else if (event.type === 'content_block_delta') {
      expect(event.index).toBe(open);
    } else if (event.type === 'content_block_stop') {
      expect(event.index).toBe(open);
      open = undefined;
    } else if (event.type === 'message_delta') {
      expect(open).toBeUndefined();
      expect(event.usage.output_tokens).toBeTypeOf('number');
    }
  }
  return events;
}
