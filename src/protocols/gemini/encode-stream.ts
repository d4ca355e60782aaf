import type { GatewayError } from '../../errors.js';
import type { Json } from '../../json.js';
import type { EncodeContext, StreamEncoder } from '../codec.js';
import { mergeUsage, type IRStreamEvent, type IRUsage } from '../ir.js';
import { newId } from '../../ids.js';
import { sseData } from '../sse-frame.js';
import { callArgs, includeThoughts, thoughtPart } from './answer-parts.js';
import { toGeminiFinishReason } from './finish-reason.js';
import { geminiTap } from './tap.js';
import { toGeminiUsage } from './usage.js';

/**
 * IR events → `streamGenerateContent?alt=sse`: each frame a whole `GenerateContentResponse`
 * holding the parts that arrived since the last (text as it comes, a function call whole once
 * its arguments are complete, as Gemini sends them), and the last one the `finishReason` and
 * `usageMetadata`. Hidden thought text is held until its reasoning ends, in case another
 * vendor's signature must carry it whole.
 */
export class GeminiStreamEncoder implements StreamEncoder {
  finished = false;
  private responseId: string | undefined;
  private usage: IRUsage = {};
  private readonly showThoughts: boolean;
  /** The thought text not sent yet (hidden thoughts are sent only when a signature must carry them). */
  private thought = '';
  /** Gemini's signature of the part that comes next. */
  private signature: string | undefined;
  private call: { id: string; name: string; args: string } | undefined;

  constructor(private readonly ctx: EncodeContext) {
    this.showThoughts = includeThoughts(ctx.request);
  }

  push(event: IRStreamEvent): string {
    switch (event.type) {
      case 'start':
        this.responseId = event.id;
        this.usage = mergeUsage(this.usage, event.usage);
        return '';
      case 'usage':
        this.usage = mergeUsage(this.usage, event.usage);
        return '';
      case 'text_delta':
      case 'refusal_delta':
        // A delta of another kind closes the reasoning part, signed or not.
        this.thought = '';
        return event.text === '' ? '' : this.chunk([...this.closeCall(), this.signed({ text: event.text })]);
      case 'reasoning_delta':
        if (event.text === '') return '';
        if (!this.showThoughts) {
          this.thought += event.text;
          return '';
        }
        return this.chunk([...this.closeCall(), { text: event.text, thought: true }]);
      case 'reasoning_end': {
        // Shown thought text went out already: the carrying part then holds none (clients join thought parts).
        const part = thoughtPart({ ...event, text: this.thought }, false);
        this.thought = '';
        if (event.thoughtSignature) this.signature = event.thoughtSignature;
        return part ? this.chunk([...this.closeCall(), part]) : '';
      }
      case 'tool_call_start': {
        this.thought = '';
        const parts = this.closeCall();
        this.call = { id: event.id, name: event.name, args: '' };
        return parts.length > 0 ? this.chunk(parts) : '';
      }
      case 'tool_call_delta':
        if (this.call) this.call.args += event.arguments;
        return '';
      case 'finish': {
        this.usage = mergeUsage(this.usage, event.usage);
        const parts = this.closeCall();
        if (this.signature !== undefined) parts.push(this.signed({ text: '' }));
        this.finished = true;
        return this.chunk(parts.length > 0 ? parts : [{ text: '' }], {
          finishReason: toGeminiFinishReason(event.reason),
          usageMetadata: toGeminiUsage(this.usage),
        });
      }
    }
  }

  /** `data: {"error":{code,message,status}}`: `@google/genai` throws an ApiError on it. */
  fail(error: GatewayError): string {
    return geminiTap.errorFrame(error, this.ctx.requestId);
  }

  private signed(part: Json): Json {
    if (this.signature === undefined) return part;
    const out = { ...part, thoughtSignature: this.signature };
    this.signature = undefined;
    return out;
  }

  /** The open call as its whole part, or nothing. */
  private closeCall(): Json[] {
    const call = this.call;
    if (!call) return [];
    this.call = undefined;
    return [this.signed({ functionCall: { id: call.id, name: call.name, args: callArgs(call.args, call.name) } })];
  }

  private chunk(parts: Json[], end?: { finishReason: string; usageMetadata: Json }): string {
    this.responseId ??= newId('');
    const candidate: Json = { content: { role: 'model', parts }, index: 0 };
    if (end) candidate.finishReason = end.finishReason;
    return sseData({
      candidates: [candidate],
      ...(end ? { usageMetadata: end.usageMetadata } : {}),
      modelVersion: this.ctx.model,
      responseId: this.responseId,
    });
  }
}
