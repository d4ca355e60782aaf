import type { KeyRecord } from '../auth/key-store.js';
import type { GuardrailOutcome } from '../guardrails/checker.js';
import type { IRRequest, IRResponse, IRStreamEvent, TextProtocol } from '../protocols/ir.js';
import type { ModelEntry } from '../routing/model.js';

/**
 * One text generation (Chat, Responses, Messages, Gemini), after admission, as a `wrapText`
 * stage sees it. The stages run around the whole fallback loop, once per request.
 */
export interface TextTurn {
  readonly request: Request;
  readonly requestId: string;
  readonly key: KeyRecord;
  /** The client's abort signal. */
  readonly signal: AbortSignal;
  /** The client's protocol. */
  readonly protocol: TextProtocol;
  /** The public model, resolved in the key's scope. */
  readonly model: ModelEntry;
  /** The body as validated (unknown fields kept); with conversation state, its history expanded. */
  readonly body: Readonly<Record<string, unknown>>;
  /** Replaces the body: passthrough then sends this one, serialized, instead of the client's text. */
  setBody(body: Record<string, unknown>): void;
  /**
   * The body as the IR, decoded on first read (and again after `setBody`). Read it to check the
   * prompt in one shape for every protocol; change the body with `setBody`, not by editing this.
   */
  readonly ir: IRRequest;
  /**
   * Transforms the answer as the IR before it is encoded for the client: whole (`response`) and
   * streamed (`stream`, batches of events as the upstream's reads gave them). Where the upstream
   * speaks the client's protocol, the body still goes on passthrough and the answer is decoded to
   * the IR by that protocol's decoder; a turn with a transform is neither served from nor kept in
   * the response cache.
   */
  transformAnswer(transform: AnswerTransform): void;
  /** Records a guardrail's outcome on the request's usage event (and so the access log, span and metrics). */
  report(outcome: GuardrailOutcome): void;
}

export interface AnswerTransform {
  /** The whole answer; may change its content, or throw a `GatewayError` to refuse it. */
  response?(answer: IRResponse): IRResponse | Promise<IRResponse>;
  /**
   * The stream; may hold, rewrite or drop events, or throw a `GatewayError` to end the stream with
   * the protocol's error event. Must pass `start`, `usage` and `finish` events on.
   */
  stream?(batches: AsyncIterable<readonly IRStreamEvent[]>): AsyncIterable<readonly IRStreamEvent[]>;
}

/**
 * Around each text generation: before and after in one function (onion order, as Hono's
 * middleware). Call `next()` at most once and return its answer (or one built from it), answer
 * yourself, or throw a `GatewayError` to refuse the request in the client's error shape.
 */
export type TextStage = (turn: TextTurn, next: () => Promise<Response>) => Promise<Response>;
