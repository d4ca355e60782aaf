import { upstreamStreamCut } from '../../errors.js';
import { newId, unixSeconds } from '../../ids.js';
import { asObject, type Json } from '../../json.js';
import type { StreamDecoder } from '../codec.js';
import { effectiveFinishReason } from '../finish-reason.js';
import type { IRFinishReason, IRStreamEvent, IRUsage } from '../ir.js';
import { parseEventData, type SseMessage } from '../sse-parse.js';
import { bedrockException } from './exception.js';
import { converseStopReason } from './stop-reason.js';
import { fromConverseUsage } from './usage.js';

interface Block {
  kind: 'text' | 'tool' | 'reasoning';
  /** Tool input was streamed, so none has to be made up at the block's end. */
  streamed: boolean;
  signature: string;
  redacted?: string | undefined;
}

/**
 * ConverseStream events → IR events. Each event-stream message reaches `push` as its
 * `:event-type` (or `:exception-type`) and JSON payload. Converse opens one content block at a
 * time (`contentBlockIndex`): a text or reasoning block starts with its first delta, a tool call
 * with `contentBlockStart`; a reasoning block's signature (or redacted content) arrives as a
 * delta and closes the part with `reasoning_end` at `contentBlockStop`. `messageStop` carries the
 * stop reason and `metadata` the usage, after it: the stream is complete with the metadata (or,
 * when the bytes end without it, with the stop reason alone). An exception event throws.
 */
export function converseStreamDecoder(): StreamDecoder {
  return new ConverseEventReader();
}

export class ConverseEventReader implements StreamDecoder {
  finished = false;
  private started = false;
  private stopReason: IRFinishReason | undefined;
  private sawToolCall = false;
  private readonly blocks = new Map<number, Block>();

  push(message: SseMessage, out: IRStreamEvent[]): void {
    if (this.finished) return;
    const type = message.event ?? '';
    const payload = message.data.trim() === '' ? {} : parseEventData(message.data);
    if (/Exception$/i.test(type)) throw bedrockException(type, typeof payload.message === 'string' ? payload.message : undefined);
    this.event(type, payload, out);
  }

  end(out: IRStreamEvent[]): void {
    if (this.finished) return;
    if (this.stopReason === undefined) throw upstreamStreamCut('upstream stream ended early');
    out.push(this.finish(undefined));
  }

  event(type: string, payload: Json, out: IRStreamEvent[]): void {
    switch (type) {
      case 'messageStart':
        this.start(out);
        break;
      case 'contentBlockStart': {
        this.start(out);
        const tool = asObject(asObject(payload.start)?.toolUse);
        if (tool) {
          this.sawToolCall = true;
          this.blocks.set(indexOf(payload), { kind: 'tool', streamed: false, signature: '' });
          out.push({ type: 'tool_call_start', id: typeof tool.toolUseId === 'string' ? tool.toolUseId : newId('tooluse_'), name: String(tool.name ?? '') });
        }
        break;
      }
      case 'contentBlockDelta':
        this.start(out);
        this.delta(indexOf(payload), asObject(payload.delta) ?? {}, out);
        break;
      case 'contentBlockStop':
        this.stop(indexOf(payload), out);
        break;
      case 'messageStop':
        this.stopReason = converseStopReason(payload.stopReason);
        break;
      case 'metadata':
        if (this.stopReason !== undefined) out.push(this.finish(fromConverseUsage(payload.usage)));
        else out.push({ type: 'usage', usage: fromConverseUsage(payload.usage) });
        break;
      // Unknown events (new ones Bedrock adds) carry nothing the IR knows.
    }
  }

  private start(out: IRStreamEvent[]): void {
    if (this.started) return;
    this.started = true;
    // Converse names no answer: the gateway makes up an id.
    out.push({ type: 'start', id: newId('msg_bdrk_'), model: '', created: unixSeconds() });
  }

  private delta(index: number, delta: Json, out: IRStreamEvent[]): void {
    let block = this.blocks.get(index);
    if (typeof delta.text === 'string') {
      if (!block) this.blocks.set(index, (block = { kind: 'text', streamed: true, signature: '' }));
      if (delta.text !== '') out.push({ type: 'text_delta', text: delta.text });
      return;
    }
    const tool = asObject(delta.toolUse);
    if (tool && block?.kind === 'tool') {
      if (typeof tool.input === 'string' && tool.input !== '') {
        block.streamed = true;
        out.push({ type: 'tool_call_delta', arguments: tool.input });
      }
      return;
    }
    const reasoning = asObject(delta.reasoningContent);
    if (reasoning) {
      if (!block) this.blocks.set(index, (block = { kind: 'reasoning', streamed: false, signature: '' }));
      if (typeof reasoning.text === 'string' && reasoning.text !== '') {
        block.streamed = true;
        out.push({ type: 'reasoning_delta', text: reasoning.text });
      }
      if (typeof reasoning.signature === 'string') block.signature += reasoning.signature;
      if (typeof reasoning.redactedContent === 'string') block.redacted = (block.redacted ?? '') + reasoning.redactedContent;
    }
    // Citations and other deltas have no IR form.
  }

  private stop(index: number, out: IRStreamEvent[]): void {
    const block = this.blocks.get(index);
    if (block?.kind === 'reasoning') {
      if (block.redacted !== undefined) out.push({ type: 'reasoning_end', redacted: block.redacted });
      else if (block.signature !== '') out.push({ type: 'reasoning_end', signature: block.signature });
      else if (block.streamed) out.push({ type: 'reasoning_end' });
    } else if (block?.kind === 'tool' && !block.streamed) {
      // A tool without inputs streams no input: `{}`, so every client gets JSON arguments.
      out.push({ type: 'tool_call_delta', arguments: '{}' });
    }
  }

  private finish(usage: IRUsage | undefined): IRStreamEvent {
    this.finished = true;
    const reason = effectiveFinishReason(this.stopReason ?? 'stop', this.sawToolCall);
    return usage && Object.keys(usage).length > 0 ? { type: 'finish', reason, usage } : { type: 'finish', reason };
  }
}

function indexOf(payload: Json): number {
  return typeof payload.contentBlockIndex === 'number' ? payload.contentBlockIndex : 0;
}
