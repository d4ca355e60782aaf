import { GatewayError } from '../errors.js';

/**
 * How the top-level keys of a route's body are spelled, and so which other spellings are refused.
 * - `snake_case` (OpenAI, Anthropic, every JSON media route): every field of these formats is
 *   lower-case ASCII, so a key with an upper-case or non-ASCII letter can only be another
 *   spelling of one (`MODEL`, `Stream_Options`, `ſtream`).
 * - Gemini's camelCase: `fields` are the request's field names (snake_case spellings are the same
 *   field, as Google reads both); a key that differs from one of them by case alone is refused.
 */
export type KeySpelling = 'snake_case' | CamelCaseFields;

export interface CamelCaseFields {
  fields: readonly string[];
  /** The field a key names (`generation_config` → `generationConfig`). */
  camelOf(key: string): string;
}

/**
 * Refuses (400 naming the key) a body whose top level an upstream could read other than the
 * gateway does. The gateway reads `JSON.parse`'s object, exact keys, last duplicate winning, and
 * passthrough sends the client's text on; but Go's `encoding/json` (Ollama's OpenAI layer, other
 * Go gateways) and ASP.NET's web defaults match keys case-insensitively, folding `ſ` to `s` and
 * the Kelvin sign to `k`, and some parsers keep the first duplicate. A key scoped to a cheap model
 * would run the one named in `"MODEL"`, and `"Stream_Options"` would turn off the usage the gateway
 * asks for. So a key is refused when it is written twice (however escaped), has a non-ASCII
 * character, or is another case of a field name. `keys` are the body's top-level keys, decoded, in
 * text order with duplicates (read by `read-json.ts` in its one pass over the text).
 */
export function checkTopLevelKeys(keys: readonly string[], spelling: KeySpelling): void {
  const seen = new Set<string>();
  const camel = spelling === 'snake_case' ? undefined : spelling;
  const fields = new Map(camel?.fields.map((field) => [field.toLowerCase(), field]));
  for (const key of keys) {
    if (/[^\x20-\x7e]/.test(key)) throw refused(key, 'has a character outside printable ASCII, which some upstreams fold into a field name (`ſ` into `s`)');
    const field = camel ? camel.camelOf(key) : key;
    if (seen.has(field)) throw refused(key, 'is written more than once; upstreams disagree on which copy wins, so send it once', 'duplicate_parameter');
    seen.add(field);
    if (!camel) {
      if (/[A-Z]/.test(key)) throw refused(key, 'has an upper-case letter; every field of this API is lower case, and some upstreams would read it as one');
      continue;
    }
    const named = fields.get(field.toLowerCase());
    if (named !== undefined && named !== field) throw refused(key, `is another spelling of \`${named}\`, which some upstreams would read it as`);
  }
}

/** Longest piece of a client's key repeated in an answer. */
const MAX_KEY = 100;

function refused(key: string, why: string, code = 'ambiguous_parameter'): GatewayError {
  const shown = key.length <= MAX_KEY ? key : `${key.slice(0, MAX_KEY)}…`;
  return new GatewayError({
    status: 400,
    type: 'invalid_request_error',
    code,
    param: shown,
    message: `The top-level key ${JSON.stringify(shown)} ${why}.`,
  });
}
