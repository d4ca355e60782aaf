import { createHash } from 'node:crypto';
import { WorkBudget } from '../work-budget.js';

/**
 * Top-level fields that do not change the answer: how it is delivered (`stream`,
 * `stream_options`; Gemini's method sets `stream` too), who asked (`user`, `safety_identifier`,
 * `metadata`), hints to the upstream's own prompt cache, and `store` (a cached request never
 * keeps state). `model` is replaced by the resolved public model id.
 */
const IGNORED_FIELDS = new Set([
  'model',
  'stream',
  'stream_options',
  'user',
  'safety_identifier',
  'metadata',
  'prompt_cache_key',
  'prompt_cache_retention',
  'store',
]);

/** Version of the key's input: bump it when what is hashed or stored changes, so old entries are never read. */
const KEY_VERSION = 1;

/**
 * Most values of a body the canonical JSON visits (sorting keys costs about 5 times what parsing
 * does): past it the request is not cached rather than hashed for tens of milliseconds more.
 */
const CANONICAL_VALUES = 100_000;

/** Thrown by the budget of a body too large to hash; caught here, never seen by a client. */
class TooLargeToHash extends Error {}

export interface CacheKeyInput {
  /** The caller's key id: the namespace. Never the key itself. */
  keyId: string;
  /** The client protocol (`chat`, `responses`, `messages`, `gemini`), or `embeddings`. */
  protocol: string;
  /** The public model id the request resolved to. */
  model: string;
  body: Record<string, unknown>;
  /** Request headers that change the answer (Messages' `anthropic-beta`), by lower-case name. */
  headers: Record<string, string>;
}

/**
 * The store key of a request: `<url-encoded key id>:<sha256>`. The hash covers the client
 * protocol, the public model, the request headers that matter and the body in canonical JSON
 * (object keys sorted at every depth, `undefined` left out, `IGNORED_FIELDS` dropped at the top),
 * so two bodies that differ only in key order or in those fields share an entry, and a streamed
 * and a JSON request share one too. Each key id is its own namespace: keys never share answers.
 * Undefined for a body of more than `CANONICAL_VALUES` values: such a request is not cached.
 */
export function cacheKeyOf(input: CacheKeyInput): string | undefined {
  const budget = new WorkBudget({ nodes: CANONICAL_VALUES, chars: Number.POSITIVE_INFINITY }, () => new TooLargeToHash());
  const hash = createHash('sha256');
  try {
    hash.update(`${KEY_VERSION}\n${input.protocol}\n${JSON.stringify(input.model)}\n${canonicalJson(input.headers, budget)}\n`);
    const fields = Object.keys(input.body)
      .filter((name) => !IGNORED_FIELDS.has(name) && input.body[name] !== undefined)
      .sort();
    for (const name of fields) hash.update(`${JSON.stringify(name)}:${canonicalJson(input.body[name], budget)}\n`);
  } catch (error) {
    if (error instanceof TooLargeToHash) return undefined;
    throw error;
  }
  return `${encodeURIComponent(input.keyId)}:${hash.digest('hex')}`;
}

/**
 * JSON with object keys sorted at every depth: the same value gives the same text whatever its
 * key order. Each value visited spends one node of `budget`.
 */
export function canonicalJson(value: unknown, budget: WorkBudget): string {
  budget.spend('body', 1);
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item, budget))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(record).sort()) {
    if (record[key] !== undefined) parts.push(`${JSON.stringify(key)}:${canonicalJson(record[key], budget)}`);
  }
  return `{${parts.join(',')}}`;
}
