/**
 * Reading JSON of unknown shape: a client's body, an upstream's answer or event, a tool call's
 * arguments. One copy of these for the whole gateway, so "an object" means the same everywhere.
 */

/** A JSON object whose fields are not known yet. */
export type Json = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` if it is a JSON object, else undefined. */
export function asObject(value: unknown): Json | undefined {
  return isRecord(value) ? value : undefined;
}

/** The value `text` holds, or undefined when it is not JSON (no JSON text parses to undefined). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The object `text` holds, or undefined when it is not JSON or not an object. */
export function parseObject(text: string): Json | undefined {
  return asObject(parseJson(text));
}
