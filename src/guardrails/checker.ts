/**
 * What a guardrail checks with: a detector (regex, secrets, PII) or an adapter (a moderation,
 * ApplyGuardrail or Presidio endpoint, a host's function). The engine (`guardrail-stage.ts`)
 * decides what a verdict does (block, mask, monitor), with the timeout and `failOpen`.
 */

export type GuardrailPhase = 'input' | 'output';
export type GuardrailAction = 'block' | 'mask' | 'monitor';

/** Something found in one text: where (UTF-16 offsets into that text) and what kind. */
export interface GuardrailFinding {
  readonly category: string;
  readonly start: number;
  readonly end: number;
}

/** What a checker says about one text. */
export interface TextVerdict {
  /** Spans found, which a `mask` action replaces; empty when none. */
  readonly findings: readonly GuardrailFinding[];
  /**
   * Categories flagged for the text as a whole, with no span (a moderation category, a denied
   * topic): they cannot be masked, so a `mask` guardrail blocks on them.
   */
  readonly flagged?: readonly string[] | undefined;
}

export interface CheckContext {
  readonly phase: GuardrailPhase;
  /** Aborted when the guardrail's timeout passes or the client leaves: a remote call must stop. */
  readonly signal: AbortSignal;
  readonly requestId: string;
  /** The public model id of the request. */
  readonly model: string;
}

/** A detector or adapter: one verdict per text, in order. */
export interface GuardrailChecker {
  check(texts: readonly string[], context: CheckContext): readonly TextVerdict[] | Promise<readonly TextVerdict[]>;
  /**
   * A local detector's longest finding, in characters: a stream holds back this many characters so
   * a value never reaches the client split across chunks. Unset for remote checkers, which see a
   * stream in windows (sentences or `window` characters).
   */
  readonly maxFindingLength?: number | undefined;
  /**
   * A local detector's values longer than `maxFindingLength` (a PEM block, a JWT): where one may
   * have begun and still be growing at the end of `text`, or -1. A stream holds from there.
   */
  holdFrom?(text: string): number;
  /** False when the checker only flags whole texts (moderation): `mask` is then refused by config. */
  readonly canMask: boolean;
}

/**
 * One guardrail's result for one phase of one request: never the matched text. A stream's output
 * checks (one per window) are merged into one outcome per guardrail.
 */
export interface GuardrailOutcome {
  readonly guardrail: string;
  readonly phase: GuardrailPhase;
  readonly action: GuardrailAction;
  /**
   * `passed`: nothing found; `masked`: found and replaced; `blocked`: the request or answer was
   * refused; `flagged`: found by a `monitor` guardrail, passed unchanged; `failed_open`: the check
   * failed or timed out and the text passed; `failed_closed`: it failed and the text was refused.
   */
  readonly outcome: 'passed' | 'masked' | 'blocked' | 'flagged' | 'failed_open' | 'failed_closed';
  /** The categories found, each once, sorted. */
  readonly categories: readonly string[];
  /** How many findings (spans and flags) in all. */
  readonly findings: number;
  /** Time spent checking, in ms (all windows of a stream). */
  readonly durationMs: number;
}
