import { GatewayError, upstreamStreamCut } from '../../errors.js';
import { newId, unixSeconds } from '../../ids.js';
import { asObject, isRecord, type Json } from '../../json.js';
import type { StreamDecoder } from '../codec.js';
import { effectiveFinishReason } from '../finish-reason.js';
import type { IRFinishReason, IRStreamEvent, IRUsage } from '../ir.js';
import { parseEventData, type SseMessage } from '../sse-parse.js';
import { synthesizeCallId } from './call-id.js';
import { geminiFinishReason } from './finish-reason.js';
import { fromGeminiUsage } from './usage.js';

/**
 * Gemini `streamGenerateContent?alt=sse` → IR events. Every SSE message is a whole
 * `GenerateContentResponse` whose first candidate holds the parts generated since the last one:
 * `thought: true` text is reasoning, other text is the answer, a `functionCall` part is a whole
 * call (its arguments come at once). A part's `thoughtSignature` becomes a `reasoning_end`
 * carrying it just before the part starts (the IR's convention, see `ir.ts`), except on a text
 * chunk that continues the answer's text: Gemini streams a text answer's signature on its last
 * chunk, and a reasoning part there would cut the answer in two (two text blocks, two messages:
 * Claude Code and Codex show only the last). That signature waits for the end of the text and
 * goes back on an empty text part after it; Gemini validates signatures on calls only.
 * `usageMetadata` is cumulative; `finishReason` marks the last chunk, and the stream is complete
 * once it came (the usage of the same chunk, or of the next, is awaited).
 *
 * The same reader decodes a JSON answer (`decodeGeminiResponse`), which is one such chunk.
 */
export function geminiStreamDecoder(): StreamDecoder {
  return new GeminiChunkReader();
}

export class GeminiChunkReader implements StreamDecoder {
  finished = false;
  private started = false;
  private finishReason: IRFinishReason | undefined;
  private usage: IRUsage = {};
  private sawUsage = false;
  private sawToolCall = false;
  /** The last part was the answer's text, which a text chunk continues. */
  private inText = false;
  /** The signature of a text chunk that continued the text, held until the text ends. */
  private heldSignature: string | undefined;

  push(message: SseMessage, out: IRStreamEvent[]): void {
    if (this.finished) return;
    const data = message.data.trim();
    if (data === '' || data === '[DONE]') return;
    this.chunk(parseEventData(data), out);
  }

  end(out: IRStreamEvent[]): void {
    if (this.finished) return;
    if (!this.started || this.finishReason === undefined) throw upstreamStreamCut('upstream stream ended early');
    this.finish(out);
  }

  /** A whole answer read: ends it even without a finish reason (a blocked prompt has none). */
  complete(out: IRStreamEvent[]): void {
    if (this.finished) return;
    this.finishReason ??= 'stop';
    this.end(out);
  }

  chunk(chunk: Json, out: IRStreamEvent[]): void {
    if (isRecord(chunk.error)) throw geminiError(chunk.error);
    if (!this.started) {
      this.started = true;
      out.push({
        type: 'start',
        id: typeof chunk.responseId === 'string' && chunk.responseId !== '' ? chunk.responseId : newId('gen_'),
        model: typeof chunk.modelVersion === 'string' ? chunk.modelVersion : '',
        created: unixSeconds(),
      });
    }
    if (isRecord(chunk.usageMetadata)) {
      // Cumulative: the latest replaces what came before.
      this.usage = fromGeminiUsage(chunk.usageMetadata);
      this.sawUsage = true;
    }
    const candidates = Array.isArray(chunk.candidates) ? chunk.candidates : [];
    // candidateCount > 1 is never asked for: only the first candidate is followed.
    const candidate = candidates.map(asObject).find((c) => c !== undefined && (c.index === undefined || c.index === 0));
    const parts = asObject(candidate?.content)?.parts;
    if (Array.isArray(parts)) for (const part of parts) if (isRecord(part)) this.part(part, out);

    if (typeof candidate?.finishReason === 'string') this.finishReason = geminiFinishReason(candidate.finishReason);
    // A blocked prompt: no candidate, the reason in `promptFeedback`.
    else if (candidates.length === 0 && typeof asObject(chunk.promptFeedback)?.blockReason === 'string') this.finishReason = 'content_filter';
    if (this.finishReason !== undefined && this.sawUsage) this.finish(out);
  }

  private part(part: Json, out: IRStreamEvent[]): void {
    const text = typeof part.text === 'string' ? part.text : undefined;
    const signature = typeof part.thoughtSignature === 'string' && part.thoughtSignature !== '' ? part.thoughtSignature : undefined;
    if (part.thought !== true && text && this.inText) {
      out.push({ type: 'text_delta', text });
      this.heldSignature = signature ?? this.heldSignature;
      return;
    }
    this.releaseSignature(out);
    this.inText = false;
    if (part.thought === true) {
      if (text) out.push({ type: 'reasoning_delta', text });
      return;
    }
    if (signature !== undefined) out.push({ type: 'reasoning_end', thoughtSignature: signature });
    if (text !== undefined) {
      if (text !== '') out.push({ type: 'text_delta', text });
      this.inText = text !== '';
      return;
    }
    const call = asObject(part.functionCall);
    if (call) {
      this.sawToolCall = true;
      const id = typeof call.id === 'string' && call.id !== '' ? call.id : synthesizeCallId();
      out.push({ type: 'tool_call_start', id, name: typeof call.name === 'string' ? call.name : '' });
      out.push({ type: 'tool_call_delta', arguments: JSON.stringify(isRecord(call.args) ? call.args : {}) });
    }
    // Executable code, its results and generated media have no place in the IR.
  }

  /** A signature held for the end of the text, now that the text ended. */
  private releaseSignature(out: IRStreamEvent[]): void {
    if (this.heldSignature === undefined) return;
    out.push({ type: 'reasoning_end', thoughtSignature: this.heldSignature });
    this.heldSignature = undefined;
  }

  private finish(out: IRStreamEvent[]): void {
    this.releaseSignature(out);
    this.finished = true;
    const reason = effectiveFinishReason(this.finishReason ?? 'stop', this.sawToolCall);
    out.push(Object.keys(this.usage).length > 0 ? { type: 'finish', reason, usage: this.usage } : { type: 'finish', reason });
  }
}

/** A Gemini error object (`{code, message, status}`) → `GatewayError` with its HTTP status and message. */
export function geminiError(error: Json): GatewayError {
  const code = typeof error.code === 'number' && error.code >= 400 && error.code <= 599 ? error.code : 502;
  const message = typeof error.message === 'string' && error.message !== '' ? error.message : 'The upstream failed while streaming';
  return new GatewayError({ status: code, message, code: typeof error.status === 'string' ? error.status : null });
}
