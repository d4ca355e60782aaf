import { GatewayError } from '../errors.js';
import type { GuardrailFinding, GuardrailOutcome, GuardrailPhase, TextVerdict } from './checker.js';
import type { Guardrail } from './guardrail.js';
import { maskText } from './mask.js';
import { sortedUnique } from './outcome.js';

export interface PhaseContext {
  readonly phase: GuardrailPhase;
  readonly requestId: string;
  readonly model: string;
  /** The client's signal: a remote check stops when the client leaves. */
  readonly signal: AbortSignal;
  report(outcome: GuardrailOutcome): void;
  /** A check failed or timed out (logged; its message never holds the checked text). */
  failed(guardrail: string, error: unknown): void;
}

/** The texts after the phase's guardrails: masked where a `mask` guardrail found something. */
export interface CheckedTexts {
  readonly texts: readonly string[];
  readonly masked: boolean;
  /** The findings masked in each text. */
  readonly findings: readonly (readonly GuardrailFinding[])[];
}

interface CheckResult {
  readonly guardrail: Guardrail;
  readonly verdicts?: readonly TextVerdict[];
  readonly failure?: unknown;
  readonly durationMs: number;
}

/**
 * Runs one phase's guardrails over the texts, all at once, and applies what they found: a block
 * or a check that fails closed refuses (throws a `GatewayError` in the client's shape, naming the
 * guardrail, never the text); `mask` findings are replaced; every outcome is reported. Local
 * detectors answer synchronously, and then so does this (a stream's windows cost no promise).
 */
export function checkTexts(guardrails: readonly Guardrail[], texts: readonly string[], context: PhaseContext): CheckedTexts | Promise<CheckedTexts> {
  const results: (CheckResult | Promise<CheckResult>)[] = guardrails.map((guardrail) => runCheck(guardrail, texts, context));
  if (results.some(isPromise)) return Promise.all(results).then((settled) => decide(settled, texts, context));
  return decide(results as CheckResult[], texts, context);
}

function runCheck(guardrail: Guardrail, texts: readonly string[], context: PhaseContext): CheckResult | Promise<CheckResult> {
  const started = performance.now();
  const local = guardrail.checker.maxFindingLength !== undefined;
  const controller = local ? undefined : new AbortController();
  const signal = controller ? AbortSignal.any([controller.signal, context.signal]) : context.signal;
  const done = (verdicts: readonly TextVerdict[] | undefined, failure?: unknown): CheckResult => {
    const durationMs = performance.now() - started;
    if (failure !== undefined) return { guardrail, failure, durationMs };
    const invalid = invalidVerdicts(verdicts, texts);
    return invalid ? { guardrail, failure: new Error(invalid), durationMs } : { guardrail, verdicts: verdicts!, durationMs };
  };
  let answer: readonly TextVerdict[] | Promise<readonly TextVerdict[]>;
  try {
    answer = guardrail.checker.check(texts, { phase: context.phase, signal, requestId: context.requestId, model: context.model });
  } catch (error) {
    return done(undefined, error);
  }
  if (!isPromise(answer)) return done(answer);
  const timedOut = new Promise<never>((_, reject) => {
    const timer = setTimeout(() => {
      const error = new Error(`timed out after ${guardrail.timeoutMs} ms`);
      controller?.abort(error);
      reject(error);
    }, guardrail.timeoutMs);
    answer.finally(() => clearTimeout(timer)).catch(() => {});
  });
  return Promise.race([answer, timedOut]).then(
    (verdicts) => done(verdicts),
    (error: unknown) => done(undefined, error),
  );
}

function decide(results: readonly CheckResult[], texts: readonly string[], context: PhaseContext): CheckedTexts {
  const masks: GuardrailFinding[][] = texts.map(() => []);
  let refusal: GatewayError | undefined;
  for (const result of results) {
    const { guardrail } = result;
    const base = { guardrail: guardrail.name, phase: context.phase, action: guardrail.action, durationMs: Math.round(result.durationMs * 1000) / 1000 };
    if (!result.verdicts) {
      const outcome = guardrail.failOpen ? 'failed_open' : 'failed_closed';
      context.failed(guardrail.name, result.failure);
      context.report({ ...base, outcome, categories: [], findings: 0 });
      if (!guardrail.failOpen) refusal ??= unavailable(guardrail, context.phase);
      continue;
    }
    const categories: string[] = [];
    let spans = 0;
    let flags = 0;
    for (const verdict of result.verdicts) {
      spans += verdict.findings.length;
      flags += verdict.flagged?.length ?? 0;
      for (const finding of verdict.findings) categories.push(finding.category);
      if (verdict.flagged) categories.push(...verdict.flagged);
    }
    const found = sortedUnique(categories);
    const outcome: GuardrailOutcome['outcome'] =
      spans + flags === 0 ? 'passed' : guardrail.action === 'monitor' ? 'flagged' : guardrail.action === 'mask' && flags === 0 ? 'masked' : 'blocked';
    context.report({ ...base, outcome, categories: found, findings: spans + flags });
    if (outcome === 'blocked') refusal ??= blocked(guardrail, context.phase, found);
    if (outcome === 'masked') {
      for (const [index, verdict] of result.verdicts.entries()) masks[index]!.push(...verdict.findings);
    }
  }
  if (refusal) throw refusal;
  let masked = false;
  const out = texts.map((text, index) => {
    const findings = masks[index]!;
    if (findings.length === 0) return text;
    masked = true;
    return maskText(text, findings);
  });
  return { texts: masked ? out : texts, masked, findings: masks };
}

function blocked(guardrail: Guardrail, phase: GuardrailPhase, categories: readonly string[]): GatewayError {
  const what = phase === 'input' ? 'The request' : 'The answer';
  return new GatewayError({
    status: 400,
    code: 'guardrail_blocked',
    message: `${what} was refused by guardrail \`${guardrail.name}\` (${phase}: ${categories.join(', ')}).`,
  });
}

function unavailable(guardrail: Guardrail, phase: GuardrailPhase): GatewayError {
  return new GatewayError({
    status: 503,
    type: 'api_error',
    code: 'guardrail_unavailable',
    message: `Guardrail \`${guardrail.name}\` could not check the ${phase === 'input' ? 'request' : 'answer'}, and it fails closed.`,
  });
}

/** Why a checker's answer cannot be used (a custom checker's bug), or undefined. */
function invalidVerdicts(verdicts: readonly TextVerdict[] | undefined, texts: readonly string[]): string | undefined {
  if (!Array.isArray(verdicts) || verdicts.length !== texts.length) return 'expected one verdict per text';
  for (const [index, verdict] of verdicts.entries()) {
    if (!verdict || !Array.isArray(verdict.findings)) return 'expected a verdict with findings';
    const length = texts[index]!.length;
    for (const finding of verdict.findings) {
      if (!(finding.start >= 0 && finding.end > finding.start && finding.end <= length) || typeof finding.category !== 'string') {
        return 'a finding outside its text';
      }
    }
    if (verdict.flagged !== undefined && !Array.isArray(verdict.flagged)) return 'expected flagged categories as an array';
  }
  return undefined;
}

/** A checker's answer (or the phase's) is a promise: a remote check, awaited; a local one is used at once. */
export function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
