import type { GuardrailConfig } from '../guardrails/guardrail.js';
import { createHash } from 'node:crypto';
import type { Budget } from '../policy/budget.js';
import type { UsageEvent } from '../policy/events.js';
import type { KeyLimits } from '../policy/limit-engine.js';

/**
 * Who is calling. The key itself never appears here: `id` is what logs, hooks and stores use.
 */
export interface KeyRecord {
  /** Stable, non-secret identifier of the key. */
  id: string;
  disabled?: boolean | undefined;
  /** Public model ids the key may use, or `'*'` for every model. */
  models: readonly string[] | '*';
  /** The group the key belongs to; a model that lists `groups` serves only those. Default `default`. */
  group?: string | undefined;
  /** Free-form data for hooks and custom policies (owner, plan…). */
  metadata?: Record<string, unknown> | undefined;
  /** This key's limits; each one set overrides `options.policies.limits`. */
  limits?: KeyLimits | undefined;
  /**
   * Balance left, in the key store's own unit. At 0 or below, requests get 429
   * `insufficient_quota` before any upstream call; `KeyStore.charge` is where it goes down.
   */
  balance?: number | undefined;
  /**
   * Dollars this key may spend per period (`{ usd: 5, period: '1d' }`), kept by the limit engine;
   * overrides `options.policies.budget`, and `false` opts the key out of it.
   */
  budget?: Budget | false | undefined;
  /**
   * The response cache for this key's requests (when the gateway has `responseCache`): `true` on
   * every model, `false` never (not even with `x-infergate-cache: on`). Unset: as the model says.
   */
  cache?: boolean | undefined;
  /**
   * Refuse (400) a sampling hint the upstream lacks instead of dropping it and naming it in
   * `x-infergate-dropped-params` (docs/providers.md). Unset: as the model says.
   */
  strictParams?: boolean | undefined;
  /**
   * Prefixes of the cloud-storage URIs (`s3://…`, `gs://…`) this key's requests may name, within
   * those the provider allows (its `storageUris`): a tenant's own folder of the operator's bucket.
   * Unset: the provider's prefixes.
   */
  storageUris?: readonly string[] | undefined;
  /**
   * This key's guardrails (docs/policies.md, "Guardrails"), after the gateway's, its group's and
   * the model's; one of the same name replaces theirs.
   */
  guardrails?: readonly GuardrailConfig[] | undefined;
  /** The MCP servers and tools the key may list and call at `/mcp` (`github`, `github__create_*`); absent: none. */
  mcp?: readonly string[] | undefined;
}

/** What a key store sees of the request, so a host can resolve keys from its own auth. */
export interface KeyLookupContext {
  request: Request;
  /** The host's per-request context (Express `req`/`res`, a resolved user…). */
  serverContext: unknown;
}

/** Resolves an API key to its record; `undefined` means unknown (401). */
export interface KeyStore {
  lookup(key: string, context: KeyLookupContext): Promise<KeyRecord | undefined> | KeyRecord | undefined;
  /**
   * Called once per request that used something (`event.cost` > 0), after it ended, with its
   * usage event: where a store that owns balances charges them. A cut stream is charged for
   * what was produced. Failures are logged, never surfaced to the client.
   */
  charge?(key: KeyRecord, event: UsageEvent): Promise<void> | void;
}

export interface StaticKey {
  key: string;
  id?: string | undefined;
  models?: readonly string[] | '*' | undefined;
  group?: string | undefined;
  disabled?: boolean | undefined;
  metadata?: Record<string, unknown> | undefined;
  limits?: KeyLimits | undefined;
  /** Starting balance in cost units (`options.policies.cost`, tokens by default), kept in this process. */
  balance?: number | undefined;
  /** Dollar budget (`KeyRecord.budget`). */
  budget?: Budget | false | undefined;
  /** The response cache for this key's requests (`KeyRecord.cache`). */
  cache?: boolean | undefined;
  /** Refuse hints the upstream lacks instead of dropping them (`KeyRecord.strictParams`). */
  strictParams?: boolean | undefined;
  /** Cloud-storage URI prefixes this key may name (`KeyRecord.storageUris`). */
  storageUris?: readonly string[] | undefined;
  /** This key's guardrails (`KeyRecord.guardrails`). */
  guardrails?: readonly GuardrailConfig[] | undefined;
  /** MCP servers and tools this key may use (`KeyRecord.mcp`). */
  mcp?: readonly string[] | undefined;
}

/** A key's default id: a short hash, so two keys never share an id and the key stays secret. */
export function keyId(key: string): string {
  return 'key_' + createHash('sha256').update(key).digest('hex').slice(0, 12);
}

/** Keys from a list (options or the config file). */
export class StaticKeyStore implements KeyStore {
  private readonly records = new Map<string, KeyRecord>();

  constructor(keys: readonly StaticKey[]) {
    for (const entry of keys) {
      const models = entry.models ?? '*';
      this.records.set(entry.key, {
        id: entry.id ?? keyId(entry.key),
        models: models === '*' || models.includes('*') ? '*' : [...models],
        group: entry.group ?? 'default',
        disabled: entry.disabled ?? false,
        ...(entry.metadata ? { metadata: entry.metadata } : {}),
        ...(entry.limits ? { limits: entry.limits } : {}),
        ...(entry.balance !== undefined ? { balance: entry.balance } : {}),
        ...(entry.budget !== undefined ? { budget: entry.budget } : {}),
        ...(entry.cache !== undefined ? { cache: entry.cache } : {}),
        ...(entry.strictParams !== undefined ? { strictParams: entry.strictParams } : {}),
        ...(entry.storageUris ? { storageUris: [...entry.storageUris] } : {}),
        ...(entry.guardrails ? { guardrails: entry.guardrails } : {}),
        ...(entry.mcp ? { mcp: [...entry.mcp] } : {}),
      });
    }
  }

  lookup(key: string): KeyRecord | undefined {
    return this.records.get(key);
  }

  /** Takes the request's cost off the key's balance, when it has one (in memory, this process only). */
  charge(key: KeyRecord, event: UsageEvent): void {
    if (typeof key.balance === 'number') key.balance -= event.cost;
  }
}
