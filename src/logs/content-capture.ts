import { type BodySource, bodySourceOf, pullResponse } from '../http/pull-body.js';
import { ANSWER_DECODERS } from '../protocols/answer-decoders.js';
import type { IRStreamEvent, TextProtocol } from '../protocols/ir.js';
import { type SseMessage, SseReader } from '../protocols/sse-parse.js';
import { scrubSecrets } from '../telemetry/redact.js';

/** The texts of one request, as a usage event carries them with `captureContent` on. */
export interface CapturedContent {
  /** The client's JSON body as it was read. */
  request?: string | undefined;
  /** A JSON answer's body as the client got it; a stream's text and tool calls, assembled. */
  response?: string | undefined;
}

/** Each text's default cap, in UTF-8 bytes. */
export const DEFAULT_CONTENT_BYTES = 32 * 1024;
/** Ends a text cut at the cap (counted in it). */
export const CUT_MARKER = '…[truncated]';
const MARKER_BYTES = Buffer.byteLength(CUT_MARKER);
/** Characters kept past the cap until the cut, so a credential across the cut is still scrubbed whole. */
const SCRUB_MARGIN = 512;

/**
 * One request's prompt and answer for the request log, made only when the operator opts in
 * (`captureContent`): with it off no capture exists and no answer is watched. The texts are
 * scrubbed of credentials (`scrubSecrets`, as log lines are) and cut at the cap with a marker.
 * A stream's answer is read as the client gets it, decoded by its protocol's decoder, so the
 * passthrough and the translated paths are captured alike; its text is kept only up to the cap.
 */
export class ContentCapture {
  private answer = '';
  private inToolCall = false;

  /**
   * `requestText` is read when the usage event is made: the prompt as it went upstream, so a
   * prompt an input guardrail masked is kept masked.
   */
  constructor(
    private readonly requestText: () => string,
    private readonly maxBytes: number,
  ) {}

  /** The texts so far; `answerText` is a JSON answer's body (a stream's is what was watched). */
  content(answerText?: string): CapturedContent {
    const answer = answerText ?? this.answer;
    return { request: capped(this.requestText(), this.maxBytes), ...(answer !== '' ? { response: capped(answer, this.maxBytes) } : {}) };
  }

  /** `response` with its stream watched on the way out (it is passed on unchanged); any other answer as it is. */
  watch(response: Response, protocol: TextProtocol): Response {
    if (response.status !== 200 || !response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
    const source = bodySourceOf(response);
    if (!source) return response;
    return pullResponse(this.watchedSource(source, protocol), response.status, Object.fromEntries(response.headers));
  }

  private watchedSource(source: BodySource, protocol: TextProtocol): BodySource {
    const reader = new SseReader();
    const decoder = ANSWER_DECODERS[protocol].streamDecoder();
    const events: IRStreamEvent[] = [];
    let watching = true;
    const onMessage = (message: SseMessage) => decoder.push(message, events);
    return {
      pull: async () => {
        const chunk = await source.pull();
        if (!watching) return chunk;
        try {
          if (chunk === null) watching = false;
          else reader.feed(typeof chunk === 'string' ? Buffer.from(chunk) : chunk, onMessage);
          for (const event of events) this.note(event);
          events.length = 0;
          // Past the cap, nothing more is kept: the rest is not decoded.
          if (this.answer.length > this.maxBytes + SCRUB_MARGIN) watching = false;
        } catch {
          // An error frame or a cut: the text so far is what the client got.
          watching = false;
        }
        return chunk;
      },
      cancel: () => {
        watching = false;
        source.cancel();
      },
    };
  }

  /** Text and refusals as they come; each tool call on a line of its own, `[tool_call name] arguments`. */
  private note(event: IRStreamEvent): void {
    switch (event.type) {
      case 'text_delta':
      case 'refusal_delta':
        if (this.inToolCall) this.answer += '\n';
        this.inToolCall = false;
        this.answer += event.text;
        break;
      case 'tool_call_start':
        this.answer += `${this.answer === '' ? '' : '\n'}[tool_call ${event.name}] `;
        this.inToolCall = true;
        break;
      case 'tool_call_delta':
        this.answer += event.arguments;
        break;
    }
  }
}

/** `text` scrubbed of credentials, at most `maxBytes` UTF-8 bytes: cut with `CUT_MARKER` when longer. */
export function capped(text: string, maxBytes: number): string {
  const head = text.length > maxBytes + SCRUB_MARGIN ? text.slice(0, maxBytes + SCRUB_MARGIN) : text;
  const scrubbed = scrubSecrets(head);
  if (head === text && Buffer.byteLength(scrubbed) <= maxBytes) return scrubbed;
  const cut = Buffer.from(scrubbed)
    .subarray(0, Math.max(0, maxBytes - MARKER_BYTES))
    .toString('utf8');
  // A character cut in two decodes to U+FFFD: dropped rather than kept half.
  return cut.replace(/\uFFFD$/, '') + CUT_MARKER;
}
