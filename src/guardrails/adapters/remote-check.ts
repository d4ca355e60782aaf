import { isAbortError, isGatewayError } from '../../errors.js';
import type { GuardrailSpec } from '../guardrail-schema.js';
import type { TextVerdict } from '../checker.js';

/**
 * A remote check that failed: an error status, an answer the adapter cannot read, the service out
 * of reach. The message names the guardrail and the status, never the text checked nor the
 * service's own words (a validation message may quote what it was sent). The engine applies the
 * guardrail's `failOpen` to it.
 */
export class GuardrailCheckError extends Error {
  override readonly name = 'GuardrailCheckError';

  constructor(
    readonly guardrail: string,
    message: string,
    /** The status the service (or the gateway's client of it) answered, when there was one. */
    readonly status?: number,
  ) {
    super(message);
  }
}

/** The name outcomes and errors use for a guardrail: its `name`, else its `type`. */
export function guardrailName(spec: GuardrailSpec): string {
  return spec.name ?? spec.type;
}

/**
 * Runs one call to the guardrail's service. An abort (the guardrail's timeout, the client gone)
 * passes as it is; any other failure becomes a `GuardrailCheckError` with the status and the
 * error's code when it is a plain token.
 */
export async function callService<T>(guardrail: string, service: string, signal: AbortSignal, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (signal.aborted || isAbortError(error)) throw error;
    if (!isGatewayError(error)) throw new GuardrailCheckError(guardrail, `The ${service} of guardrail "${guardrail}" failed.`);
    const code = [error.code, error.type].find((value) => value !== null && /^[\w.-]{1,64}$/.test(value));
    throw new GuardrailCheckError(
      guardrail,
      `The ${service} of guardrail "${guardrail}" failed: status ${error.status}${code ? ` (${code})` : ''}.`,
      error.status,
    );
  }
}

/** An answer the adapter cannot read: what is wrong with it, in the adapter's words only. */
export function malformed(guardrail: string, service: string, what: string): GuardrailCheckError {
  return new GuardrailCheckError(guardrail, `The ${service} of guardrail "${guardrail}" answered ${what}.`);
}

/** Positions of the texts worth sending: an empty text has nothing to find (and some services refuse it). */
export function nonEmptyPositions(texts: readonly string[]): number[] {
  const positions: number[] = [];
  texts.forEach((text, at) => {
    if (text !== '') positions.push(at);
  });
  return positions;
}

export const NOTHING_FOUND: TextVerdict = Object.freeze({ findings: Object.freeze([]) });

/** A verdict with whole-text categories; `flagged` only when there are some. */
export function flaggedVerdict(categories: readonly string[]): TextVerdict {
  return categories.length ? { findings: [], flagged: categories } : NOTHING_FOUND;
}
