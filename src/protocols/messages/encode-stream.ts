import type { GatewayError } from '../../errors.js';
import type { EncodeContext } from '../codec.js';
import { messagesTap } from './tap.js';
import { effectiveFinishReason } from '../finish-reason.js';
import { mergeUsage, type IRFinishReason, type IRStreamEvent, type IRUsage } from '../ir.js';
import { publicId } from '../public-id.js';
import { sseEvent } from '../sse-frame.js';
import { driveStreamEncoder } from '../stream-driver.js';
import type { StreamEncoder } from '../codec.js';
import { toMessagesUsage } from './usage.js';
import { messagesStopReason } from './stop-reason.js';
import { thinkingOmitted, thinkingSignature } from './thinking-opaque.js';
import type { Json } from '../../json.js';
import { StreamCallSigner } from '../signed-call-id.js';

/**
 * IR events → Anthropic Messages SSE (reference 3.4 / 8.5.D). What the Anthropic SDK needs:
 * an `event:` line equal to `data.type` on every frame (it drops frames without one),
 * `message_start` first, content blocks with sequential indexes and one open at a time, deltas
 * matching their block's type, and `message_delta.usage.output_tokens`, held until the finish.
 */
export function encodeMessagesStream(events: AsyncIterable<IRStreamEvent>, ctx: EncodeContext): AsyncGenerator<string> {
  return driveStreamEncoder(events, new MessagesStreamEncoder(ctx), ctx);
}

/** `refusal` is a text block too, but a separate one: a delta of another kind closes a part. */
type BlockKind = 'text' | 'refusal' | 'thinking' | 'tool';

export class MessagesStreamEncoder implements StreamEncoder {
  finished = false;
  private started = false;
  private usage: IRUsage = {};
  private nextIndex = 0;
  private open: { kind: BlockKind; index: number } | undefined;
  private sawToolCall = false;
  /** `thinking.display: "omitted"`: thinking blocks carry their signature, never text. */
  private readonly omitThinking: boolean;
  /** A Gemini signature also rides in the id of the `tool_use` it signs. */
  private readonly signer = new StreamCallSigner();
  /**
   * A Gemini signature that came after the answer's text (a streamed text answer's,
   * `gemini/decode-stream.ts`). Before more content it goes out as usual; at the end of the
   * answer it is left out: a thinking block after the text is what Claude Code would show as its
   * answer (nothing), and Gemini validates no text answer's signature.
   */
  private afterText: string | undefined;

  constructor(private readonly ctx: EncodeContext) {
    this.omitThinking = thinkingOmitted(ctx.request);
  }

  push(raw: IRStreamEvent): string {
    const event = this.signer.sign(raw);
    if (event.type === 'start' || event.type === 'usage') this.usage = mergeUsage(this.usage, event.usage);
    let out = this.begin(event.type === 'start' ? event.id : undefined);
    if (this.afterText !== undefined && event.type !== 'usage' && event.type !== 'finish') {
      out += this.reasoningEnd(thinkingSignature({ thoughtSignature: this.afterText }), undefined);
      this.afterText = undefined;
    }
    switch (event.type) {
      case 'start':
      case 'usage':
        break;
      case 'text_delta':
      case 'refusal_delta':
        if (event.text === '') break;
        out += this.ensureBlock(event.type === 'text_delta' ? 'text' : 'refusal', { type: 'text', text: '' });
        out += this.delta('text_delta', 'text', event.text);
        break;
      case 'reasoning_delta':
        if (event.text === '' || this.omitThinking) break;
        out += this.ensureBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
        out += this.delta('thinking_delta', 'thinking', event.text);
        break;
      case 'reasoning_end':
        if (this.open?.kind === 'text' && isGeminiSignatureOnly(event)) this.afterText = event.thoughtSignature;
        else out += this.reasoningEnd(thinkingSignature(event), event.redacted);
        break;
      case 'tool_call_start':
        this.sawToolCall = true;
        out += this.closeBlock();
        out += this.startBlock('tool', { type: 'tool_use', id: event.id, name: event.name, input: {} });
        break;
      case 'tool_call_delta':
        if (this.open?.kind === 'tool' && event.arguments !== '') {
          out += this.delta('input_json_delta', 'partial_json', event.arguments);
        }
        break;
      case 'finish':
        this.usage = mergeUsage(this.usage, event.usage);
        out += this.finish(event.reason, event.stopSequence);
        break;
    }
    return out;
  }

  /** `event: error` makes the Anthropic SDK throw an APIError with `error.type`. */
  fail(error: GatewayError): string {
    return messagesTap.errorFrame(error, this.ctx.requestId);
  }

  private frame(data: Json & { type: string }): string {
    return sseEvent(data.type, data);
  }

  /** `message_start`, once; input usage as far as it is known (Anthropic semantics: cache apart). */
  private begin(id: string | undefined): string {
    if (this.started) return '';
    this.started = true;
    return this.frame({
      type: 'message_start',
      message: {
        id: publicId('msg_', id),
        type: 'message',
        role: 'assistant',
        model: this.ctx.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: toMessagesUsage(this.usage),
      },
    });
  }

  private startBlock(kind: BlockKind, contentBlock: Json): string {
    this.open = { kind, index: this.nextIndex++ };
    return this.frame({ type: 'content_block_start', index: this.open.index, content_block: contentBlock });
  }

  private ensureBlock(kind: BlockKind, contentBlock: Json): string {
    if (this.open?.kind === kind) return '';
    return this.closeBlock() + this.startBlock(kind, contentBlock);
  }

  /**
   * The hot frame, one per upstream delta, written as text: the bytes `frame` would make for
   * `{ type, index, delta: { type, [field]: text } }`, with one string serialized instead of an object.
   */
  private delta(type: string, field: string, text: string): string {
    return `event: content_block_delta\ndata: {"type":"content_block_delta","index":${this.open!.index},"delta":{"type":"${type}","${field}":${JSON.stringify(text)}}}\n\n`;
  }

  private closeBlock(): string {
    if (!this.open) return '';
    const index = this.open.index;
    this.open = undefined;
    return this.frame({ type: 'content_block_stop', index });
  }

  /**
   * A signature (or OpenAI's encrypted reasoning, carried as one) is the last delta of its
   * thinking block; Anthropic's redacted data follows as a `redacted_thinking` block, as in the
   * JSON encoder.
   */
  private reasoningEnd(signature: string, redacted: string | undefined): string {
    let out = '';
    if (signature !== '') {
      out += this.ensureBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
      out += this.delta('signature_delta', 'signature', signature);
    }
    if (this.open?.kind === 'thinking') out += this.closeBlock();
    if (redacted !== undefined) {
      out += this.closeBlock();
      out += this.startBlock('thinking', { type: 'redacted_thinking', data: redacted });
      out += this.closeBlock();
    }
    return out;
  }

  private finish(reason: IRFinishReason, stopSequence: string | undefined): string {
    let out = this.closeBlock();
    const all = toMessagesUsage(this.usage);
    const usage: Json = { output_tokens: all.output_tokens };
    if (all.output_tokens_details !== undefined) usage.output_tokens_details = all.output_tokens_details;
    // Counters are cumulative and overwrite the SDK's snapshot: send input ones only when known.
    if (this.usage.input !== undefined) {
      usage.input_tokens = all.input_tokens;
      usage.cache_creation_input_tokens = all.cache_creation_input_tokens;
      usage.cache_read_input_tokens = all.cache_read_input_tokens;
    }
    out += this.frame({
      type: 'message_delta',
      delta: {
        stop_reason: messagesStopReason(effectiveFinishReason(reason, this.sawToolCall)),
        stop_sequence: stopSequence ?? null,
      },
      usage,
    });
    out += this.frame({ type: 'message_stop' });
    this.finished = true;
    return out;
  }
}

function isGeminiSignatureOnly(event: Extract<IRStreamEvent, { type: 'reasoning_end' }>): boolean {
  return event.thoughtSignature !== undefined && !event.signature && event.redacted === undefined && event.encrypted === undefined;
}
