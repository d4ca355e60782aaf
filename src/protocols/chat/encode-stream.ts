import type { GatewayError } from '../../errors.js';
import { unixSeconds } from '../../ids.js';
import type { EncodeContext } from '../codec.js';
import { effectiveFinishReason } from '../finish-reason.js';
import { mergeUsage, type IRStreamEvent, type IRUsage } from '../ir.js';
import { publicId } from '../public-id.js';
import { SSE_DONE, sseData } from '../sse-frame.js';
import { driveStreamEncoder } from '../stream-driver.js';
import type { StreamEncoder } from '../codec.js';
import { toChatUsage } from './usage.js';
import { chatTap } from './tap.js';
import { chatFinishReason } from './finish-reason.js';
import type { Json } from '../../json.js';
import { StreamCallSigner } from '../signed-call-id.js';

/**
 * IR events → `chat.completion.chunk` SSE frames, ending with `data: [DONE]`. What the OpenAI SDK
 * accumulator needs: `role` on the first delta, `type` + `function.name` + `arguments: ""` on a
 * tool call's first delta, tool call indexes 0,1,… and a `finish_reason` on the choice. The usage
 * chunk (`choices: []`) is sent only when the client asked with `stream_options.include_usage`.
 */
export function encodeChatStream(events: AsyncIterable<IRStreamEvent>, ctx: EncodeContext): AsyncGenerator<string> {
  return driveStreamEncoder(events, new ChatStreamEncoder(ctx), ctx);
}

export /** Stands for the delta while the frame around it is serialized once. */
const DELTA_MARK = '\u0000delta\u0000';

export class ChatStreamEncoder implements StreamEncoder {
  finished = false;
  private readonly includeUsage: boolean;
  private head: { id: string; created: number } | undefined;
  private usage: IRUsage = {};
  /** Index of the current tool call: a counter of calls, never an upstream index. */
  private toolIndex = -1;
  /** The chunk's text before and after its delta, once the head is known. */
  private frame: [string, string] | undefined;
  /** A Gemini thought signature rides in the id of the tool call it signs. */
  private readonly signer = new StreamCallSigner();

  constructor(private readonly ctx: EncodeContext) {
    const options = ctx.request.stream_options;
    this.includeUsage = typeof options === 'object' && options !== null && (options as { include_usage?: unknown }).include_usage === true;
  }

  push(raw: IRStreamEvent): string {
    const event = this.signer.sign(raw);
    let out = '';
    if (!this.head) {
      // `start` comes first by contract; a stream that skips it still gets a well-formed head.
      this.head =
        event.type === 'start'
          ? { id: publicId('chatcmpl-', event.id), created: event.created }
          : { id: publicId('chatcmpl-', undefined), created: unixSeconds() };
      out += this.chunk({ role: 'assistant', content: '', refusal: null });
    }
    switch (event.type) {
      case 'start':
      case 'usage':
        this.usage = mergeUsage(this.usage, event.usage);
        break;
      case 'text_delta':
        if (event.text !== '') out += this.chunk({ content: event.text });
        break;
      case 'refusal_delta':
        if (event.text !== '') out += this.chunk({ refusal: event.text });
        break;
      case 'reasoning_delta':
        // Non-standard but widespread (DeepSeek, vLLM…); strict clients ignore unknown delta keys.
        if (event.text !== '') out += this.chunk({ reasoning_content: event.text });
        break;
      case 'reasoning_end':
        // Chat cannot carry signatures or encrypted reasoning, except a Gemini signature in a tool call id.
        break;
      case 'tool_call_start':
        this.toolIndex += 1;
        out += this.chunk({
          tool_calls: [{ index: this.toolIndex, id: event.id, type: 'function', function: { name: event.name, arguments: '' } }],
        });
        break;
      case 'tool_call_delta':
        if (event.arguments !== '' && this.toolIndex >= 0) {
          out += this.chunk({ tool_calls: [{ index: this.toolIndex, function: { arguments: event.arguments } }] });
        }
        break;
      case 'finish': {
        this.usage = mergeUsage(this.usage, event.usage);
        const reason = chatFinishReason(effectiveFinishReason(event.reason, this.toolIndex >= 0));
        out += this.chunk({}, reason);
        if (this.includeUsage) out += sseData({ ...this.base(), choices: [], usage: toChatUsage(this.usage) });
        out += SSE_DONE;
        this.finished = true;
        break;
      }
    }
    return out;
  }

  /** `data: {"error":…}` makes the OpenAI SDKs throw; no `[DONE]`, so it never reads as success. */
  fail(error: GatewayError): string {
    return chatTap.errorFrame(error, this.ctx.requestId);
  }

  private frameParts(): [string, string] {
    const whole = this.chunkWithDelta(DELTA_MARK, null);
    // Serialized, the mark starts with a quote no other string's escaped text can hold.
    const mark = JSON.stringify(DELTA_MARK);
    const at = whole.indexOf(mark);
    return [whole.slice(0, at), whole.slice(at + mark.length)];
  }

  private base(): Json {
    return { id: this.head!.id, object: 'chat.completion.chunk', created: this.head!.created, model: this.ctx.model };
  }

  /**
   * One chunk. The JSON around `delta` is the same for every chunk of the stream, so it is
   * serialized once and reused: each delta then costs one small serialization.
   */
  private chunk(delta: Json, finishReason: string | null = null): string {
    if (finishReason === null) {
      this.frame ??= this.frameParts();
      return this.frame[0] + JSON.stringify(delta) + this.frame[1];
    }
    return this.chunkWithDelta(delta, finishReason);
  }

  private chunkWithDelta(delta: unknown, finishReason: string | null): string {
    return sseData({
      ...this.base(),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(this.includeUsage ? { usage: null } : {}),
    });
  }
}
