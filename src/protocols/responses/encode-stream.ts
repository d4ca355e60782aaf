import type { GatewayError } from '../../errors.js';
import { newId, unixSeconds } from '../../ids.js';
import type { EncodeContext } from '../codec.js';
import { mergeUsage, type IRFinishReason, type IRStreamEvent, type IRUsage } from '../ir.js';
import { publicId } from '../public-id.js';
import { sseEvent } from '../sse-frame.js';
import { driveStreamEncoder } from '../stream-driver.js';
import type { StreamEncoder } from '../codec.js';
import { ClientTools, type ClientTool } from './client-tools.js';
import { CustomInputStream } from './custom-input-stream.js';
import { toEncryptedContent } from './reasoning-opaque.js';
import {
  buildResponse,
  callItem,
  callItemId,
  customInput,
  finishedStatus,
  messageItem,
  outputTextPart,
  reasoningItem,
  refusalPart,
  type ItemStatus,
} from './response-object.js';
import type { Json } from '../../json.js';
import { StreamCallSigner } from '../signed-call-id.js';

/**
 * IR events → Responses SSE events (reference 1.6 / 8.5.A). The SDK accumulator's invariants
 * shape this state machine:
 * - `response.created` then `response.in_progress` come before any item (a lifecycle event
 *   replaces the SDK's snapshot, so a later one would wipe the items);
 * - items are appended in emission order (`output_index` = number of items so far), one open at
 *   a time, and every item-scoped event names the open item's id;
 * - each item is closed with its `*.done` events carrying the full text or arguments, and the
 *   terminal event's `response.output` holds every item;
 * - `sequence_number` counts every event from 0.
 * A call of a tool the client offered as another kind is that kind's item (`client-tools.ts`):
 * a custom tool's raw text streams as `response.custom_tool_call_input.delta`, and a tool search
 * or local shell call arrives whole in its `output_item.done`.
 */
export function encodeResponsesStream(events: AsyncIterable<IRStreamEvent>, ctx: EncodeContext): AsyncGenerator<string> {
  return driveStreamEncoder(events, new ResponsesStreamEncoder(ctx), ctx);
}

interface OpenMessage {
  kind: 'message';
  index: number;
  id: string;
  /** Finished content parts. */
  parts: Json[];
  /** The content part being streamed. */
  part?: { kind: 'text' | 'refusal'; text: string } | undefined;
}

interface OpenReasoning {
  kind: 'reasoning';
  index: number;
  id: string;
  text: string;
  summaryOpen: boolean;
  encrypted?: string;
}

interface OpenToolCall {
  kind: 'tool';
  index: number;
  id: string;
  callId: string;
  /** The flat function name the model called. */
  name: string;
  /** The tool as the client offered it; undefined for a name the request has no tool for. */
  tool: ClientTool | undefined;
  args: string;
  /** A custom tool's raw text, decoded as its arguments stream. */
  input?: CustomInputStream;
}

type OpenItem = OpenMessage | OpenReasoning | OpenToolCall;

export class ResponsesStreamEncoder implements StreamEncoder {
  finished = false;
  private sequence = 0;
  private head: { id: string; createdAt: number } | undefined;
  private usage: IRUsage = {};
  /** Every item so far, finished ones in their final form. */
  private readonly items: Json[] = [];
  private open: OpenItem | undefined;
  private readonly tools: ClientTools;
  /** A Gemini signature also rides in the `call_id` of the call it signs. */
  private readonly signer = new StreamCallSigner();

  constructor(private readonly ctx: EncodeContext) {
    this.tools = ClientTools.of(ctx.request);
  }

  push(raw: IRStreamEvent): string {
    const event = this.signer.sign(raw);
    let out = this.begin(event);
    switch (event.type) {
      case 'start':
      case 'usage':
        this.usage = mergeUsage(this.usage, event.usage);
        break;
      case 'text_delta':
      case 'refusal_delta':
        if (event.text !== '') out += this.contentDelta(event.type === 'text_delta' ? 'text' : 'refusal', event.text);
        break;
      case 'reasoning_delta':
        if (event.text !== '') out += this.reasoningDelta(event.text, event.id);
        break;
      case 'reasoning_end': {
        const [opened, reasoning] = this.openReasoning(event.id);
        out += opened;
        const encrypted = toEncryptedContent(event);
        if (encrypted !== undefined) reasoning.encrypted = encrypted;
        out += this.closeOpen('completed');
        break;
      }
      case 'tool_call_start': {
        out += this.closeOpen('completed');
        const tool = this.tools.lookup(event.name);
        out += this.addItem({
          kind: 'tool',
          index: this.items.length,
          id: callItemId(tool),
          callId: event.id,
          name: event.name,
          tool,
          args: '',
          ...(tool?.kind === 'custom' ? { input: new CustomInputStream() } : {}),
        });
        break;
      }
      case 'tool_call_delta':
        if (this.open?.kind === 'tool' && event.arguments !== '') out += this.toolDelta(this.open, event.arguments);
        break;
      case 'finish':
        this.usage = mergeUsage(this.usage, event.usage);
        out += this.finish(event.reason);
        break;
    }
    return out;
  }

  /** `error` (which makes the SDK throw an APIError) then `response.failed`, the terminal event. */
  fail(error: GatewayError): string {
    let out = this.begin(undefined);
    const code = error.code ?? (error.status === 429 ? 'rate_limit_exceeded' : error.status >= 500 ? 'server_error' : error.type);
    out += this.emit('error', {
      code,
      message: error.message,
      param: error.param,
      // The live API nests the fields; the SDKs read `error` (and throw on it).
      error: { type: error.type, code, message: error.message, param: error.param },
    });
    const output = [...this.items];
    if (this.open) output[this.open.index] = this.snapshot(this.open, 'incomplete');
    out += this.emit('response.failed', {
      response: this.response('failed', output, this.usage, undefined, { code, message: error.message }),
    });
    return out;
  }

  // ---- lifecycle ---------------------------------------------------------------------------

  /** `response.created` + `response.in_progress`, once, before anything else. */
  private begin(event: IRStreamEvent | undefined): string {
    if (this.head) return '';
    this.head =
      event?.type === 'start' ? { id: publicId('resp_', event.id), createdAt: event.created } : { id: publicId('resp_', undefined), createdAt: unixSeconds() };
    const response = this.response('in_progress', [], null);
    return this.emit('response.created', { response }) + this.emit('response.in_progress', { response });
  }

  private finish(reason: IRFinishReason): string {
    const status = finishedStatus(reason);
    let out = this.closeOpen(status === 'incomplete' ? 'incomplete' : 'completed');
    const type = status === 'completed' ? 'response.completed' : 'response.incomplete';
    out += this.emit(type, { response: this.response(status, this.items, this.usage, reason) });
    this.finished = true;
    return out;
  }

  private response(
    status: 'in_progress' | 'completed' | 'incomplete' | 'failed',
    output: Json[],
    usage: IRUsage | null,
    finishReason?: IRFinishReason,
    error?: { code: string; message: string },
  ): Json {
    return buildResponse(
      {
        id: this.head!.id,
        createdAt: this.head!.createdAt,
        status,
        output: [...output],
        usage,
        ...(finishReason !== undefined ? { finishReason } : {}),
        ...(error ? { error } : {}),
      },
      this.ctx,
    );
  }

  /**
   * The hot events, one per upstream delta, written as text: the bytes `emit` would make for
   * `{ ...ref, delta, ...after }`, with one string serialized instead of an object. `ref` and
   * `after` are serialized fields (`"item_id":"…","output_index":0`).
   */
  private emitDelta(type: string, ref: string, delta: string, after = ''): string {
    return `event: ${type}\ndata: {"type":"${type}",${ref},"delta":${JSON.stringify(delta)}${after},"sequence_number":${this.sequence++}}\n\n`;
  }

  private emit(type: string, payload: Json): string {
    return sseEvent(type, { type, ...payload, sequence_number: this.sequence++ });
  }

  // ---- items -------------------------------------------------------------------------------

  private addItem(item: OpenItem): string {
    this.open = item;
    const snapshot = this.snapshot(item, 'in_progress');
    this.items.push(snapshot);
    return this.emit('response.output_item.added', { output_index: item.index, item: snapshot });
  }

  /** The item as it stands; `in_progress` for `output_item.added`, final for `output_item.done`. */
  private snapshot(item: OpenItem, status: ItemStatus): Json {
    switch (item.kind) {
      case 'message': {
        const parts = [...item.parts];
        if (item.part) parts.push(item.part.kind === 'text' ? outputTextPart(item.part.text) : refusalPart(item.part.text));
        return messageItem(item.id, parts, status);
      }
      case 'reasoning':
        return reasoningItem(item.id, status === 'in_progress' ? '' : item.text, status === 'in_progress' ? undefined : item.encrypted);
      case 'tool':
        return callItem(item.tool, item.name, item.id, item.callId, item.args, status);
    }
  }

  /** Closes the open item with its `*.done` events; `status` is its final status. */
  private closeOpen(status: ItemStatus): string {
    const item = this.open;
    if (!item) return '';
    let out = '';
    const ref = { item_id: item.id, output_index: item.index };
    switch (item.kind) {
      case 'message':
        out += this.closePart(item);
        break;
      case 'reasoning':
        if (item.summaryOpen) {
          const part = { type: 'summary_text', text: item.text };
          out += this.emit('response.reasoning_summary_text.done', { ...ref, summary_index: 0, text: item.text });
          out += this.emit('response.reasoning_summary_part.done', { ...ref, summary_index: 0, part });
        }
        break;
      case 'tool':
        out += this.closeToolCall(item);
        break;
    }
    const final = this.snapshot(item, status);
    this.items[item.index] = final;
    this.open = undefined;
    return out + this.emit('response.output_item.done', { output_index: item.index, item: final });
  }

  // ---- tool calls --------------------------------------------------------------------------

  private toolDelta(call: OpenToolCall, delta: string): string {
    call.args += delta;
    const ref = { item_id: call.id, output_index: call.index };
    if (call.input) {
      const text = call.input.push(delta);
      return text === '' ? '' : this.emit('response.custom_tool_call_input.delta', { ...ref, delta: text });
    }
    if (call.tool === undefined || call.tool.kind === 'function') {
      return this.emitDelta('response.function_call_arguments.delta', `"item_id":${JSON.stringify(call.id)},"output_index":${call.index}`, delta);
    }
    return '';
  }

  private closeToolCall(call: OpenToolCall): string {
    const ref = { item_id: call.id, output_index: call.index };
    if (call.input) {
      // What the arguments hold in the end is the input; a part not streamed yet goes now.
      const input = customInput(call.args);
      const rest = input.startsWith(call.input.decoded) ? input.slice(call.input.decoded.length) : '';
      let out = rest === '' ? '' : this.emit('response.custom_tool_call_input.delta', { ...ref, delta: rest });
      out += this.emit('response.custom_tool_call_input.done', { ...ref, input });
      return out;
    }
    if (call.tool === undefined || call.tool.kind === 'function') {
      return this.emit('response.function_call_arguments.done', { ...ref, name: call.tool?.name ?? call.name, arguments: call.args });
    }
    return '';
  }

  // ---- message content ---------------------------------------------------------------------

  private contentDelta(kind: 'text' | 'refusal', delta: string): string {
    let out = '';
    let message = this.open;
    if (message?.kind !== 'message') {
      out += this.closeOpen('completed');
      message = { kind: 'message', index: this.items.length, id: newId('msg_'), parts: [] };
      out += this.addItem(message);
    }
    if (message.part?.kind !== kind) {
      out += this.closePart(message);
      message.part = { kind, text: '' };
      out += this.emit('response.content_part.added', {
        item_id: message.id,
        output_index: message.index,
        content_index: message.parts.length,
        part: kind === 'text' ? outputTextPart('') : refusalPart(''),
      });
    }
    message.part.text += delta;
    const ref = `"item_id":${JSON.stringify(message.id)},"output_index":${message.index},"content_index":${message.parts.length}`;
    return (
      out +
      (kind === 'text' ? this.emitDelta('response.output_text.delta', ref, delta, ',"logprobs":[]') : this.emitDelta('response.refusal.delta', ref, delta))
    );
  }

  private closePart(message: OpenMessage): string {
    const part = message.part;
    if (!part) return '';
    const ref = { item_id: message.id, output_index: message.index, content_index: message.parts.length };
    const final = part.kind === 'text' ? outputTextPart(part.text) : refusalPart(part.text);
    const done =
      part.kind === 'text'
        ? this.emit('response.output_text.done', { ...ref, text: part.text, logprobs: [] })
        : this.emit('response.refusal.done', { ...ref, refusal: part.text });
    message.parts.push(final);
    message.part = undefined;
    return done + this.emit('response.content_part.done', { ...ref, part: final });
  }

  // ---- reasoning ---------------------------------------------------------------------------

  /** The open reasoning item, or a new one named `id` when the upstream's item had one (its encrypted content is bound to it). */
  private openReasoning(id: string | undefined): [string, OpenReasoning] {
    if (this.open?.kind === 'reasoning') return ['', this.open];
    let out = this.closeOpen('completed');
    const itemId = id?.startsWith('rs_') ? id : newId('rs_');
    const reasoning: OpenReasoning = { kind: 'reasoning', index: this.items.length, id: itemId, text: '', summaryOpen: false };
    out += this.addItem(reasoning);
    return [out, reasoning];
  }

  private reasoningDelta(delta: string, id: string | undefined): string {
    const [opened, reasoning] = this.openReasoning(id);
    let out = opened;
    const ref = { item_id: reasoning.id, output_index: reasoning.index, summary_index: 0 };
    if (!reasoning.summaryOpen) {
      reasoning.summaryOpen = true;
      out += this.emit('response.reasoning_summary_part.added', { ...ref, part: { type: 'summary_text', text: '' } });
    }
    reasoning.text += delta;
    return (
      out +
      this.emitDelta(
        'response.reasoning_summary_text.delta',
        `"item_id":${JSON.stringify(reasoning.id)},"output_index":${reasoning.index},"summary_index":0`,
        delta,
      )
    );
  }
}
