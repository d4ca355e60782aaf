import type { KeyRecord } from '../../auth/key-store.js';
import type { GuardrailOutcome } from '../../guardrails/checker.js';
import type { RouteContext } from '../../http/route.js';
import type { AnswerTransform, TextTurn } from '../../plugins/text-stage.js';
import type { RequestLedger } from '../../policy/request-ledger.js';
import type { ClientCodec, TextBody } from '../../protocols/codec.js';
import type { IRRequest, TextProtocol } from '../../protocols/ir.js';
import type { ModelEntry } from '../../routing/model.js';

/** One text generation as the pipeline's stages and deployments see it (`TextTurn` plus the gateway's own parts). */
export class PipelineTurn implements TextTurn {
  readonly request: Request;
  readonly requestId: string;
  readonly key: KeyRecord;
  readonly signal: AbortSignal;
  readonly protocol: TextProtocol;
  /** What the stages asked of the answer, applied in order (innermost stage's last). */
  readonly transforms: AnswerTransform[] = [];
  private current: TextBody;
  private decoded: IRRequest | undefined;

  constructor(
    readonly context: RouteContext,
    readonly codec: ClientCodec,
    readonly model: ModelEntry,
    readonly ledger: RequestLedger,
    body: TextBody,
  ) {
    this.request = context.request;
    this.requestId = context.requestId;
    this.key = context.key;
    this.signal = context.signal;
    this.protocol = codec.protocol;
    this.current = body;
  }

  get body(): Record<string, unknown> {
    return this.current.parsed;
  }

  /** The body with the client's JSON text while it is still what was sent (passthrough sends that text as it is). */
  get textBody(): TextBody {
    return this.current;
  }

  setBody(body: Record<string, unknown>): void {
    if (body === this.current.parsed) return;
    this.current = { parsed: body, text: undefined };
    this.decoded = undefined;
  }

  get ir(): IRRequest {
    this.decoded ??= this.codec.decodeRequest(this.current.parsed, this.model.id);
    return this.decoded;
  }

  transformAnswer(transform: AnswerTransform): void {
    this.transforms.push(transform);
  }

  report(outcome: GuardrailOutcome): void {
    this.ledger.guardrailChecked(outcome);
  }
}

/** A stage of the text pipeline: the plugins' `wrapText`, and the gateway's own around and inside them. */
export type PipelineStage = (turn: PipelineTurn, next: () => Promise<Response>) => Promise<Response>;
