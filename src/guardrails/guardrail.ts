import type { GuardrailAction, GuardrailChecker } from './checker.js';
import type { GuardrailSpec } from './guardrail-schema.js';

/** A guardrail ready to run: its checker and what a finding does. */
export interface Guardrail {
  readonly name: string;
  readonly action: GuardrailAction;
  readonly input: boolean;
  readonly output: boolean;
  /** Longest wait for an asynchronous check, in ms. */
  readonly timeoutMs: number;
  readonly failOpen: boolean;
  /** Characters of a streamed answer a remote checker sees at once. */
  readonly window: number;
  readonly checker: GuardrailChecker;
}

/** A host's own guardrail in `createGateway` (`policies.guardrails`, a model's or key's list): any checker. */
export interface CustomGuardrail {
  type: 'custom';
  name: string;
  checker: GuardrailChecker;
  action?: GuardrailAction | undefined;
  phase?: 'input' | 'output' | 'both' | undefined;
  timeoutMs?: number | undefined;
  failOpen?: boolean | undefined;
  window?: number | undefined;
}

export const DEFAULT_TIMEOUT_MS = 2_000;
export const DEFAULT_WINDOW = 1_000;

/** A guardrail as configured: one of the config file's types, or a host's own checker. */
export type GuardrailConfig = GuardrailSpec | CustomGuardrail;

/** The gateway's own lists, in `policies`. */
export interface GuardrailPolicies {
  /** Every request's guardrails. */
  guardrails?: readonly GuardrailConfig[] | undefined;
  /** Each key group's, after the gateway's. */
  groupGuardrails?: Readonly<Record<string, readonly GuardrailConfig[]>> | undefined;
}
