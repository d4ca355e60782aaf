import { invalidRequest } from '../errors.js';

/**
 * The longest model id a request may name. Ids come from clients (any `openai/<name>` under a
 * wildcard entry) and end up in caches, usage rows, log lines and upstream paths, so their size
 * is bounded here, before anything keeps them; real ids are far shorter (a Bedrock inference
 * profile ARN is about 100 characters).
 */
export const MODEL_ID_MAX = 256;

// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters in a model id is the point
const CONTROL_CHARACTER = /[\x00-\x1f\x7f-\x9f]/;

/** A `.` or `..` path segment: `encodeURIComponent` keeps dots, so the upstream's URL would collapse (`/model/../converse` → `/converse`). */
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;

/** What an id must be, as the error messages say it (schema convention: the expected phrase only). */
export const MODEL_ID_EXPECTED = `a model id (1 to ${MODEL_ID_MAX} printable characters, no '.' or '..' path segment)`;

/** Whether a string can be a model id: not empty, at most `MODEL_ID_MAX` characters, no control character, no `.`/`..` segment. */
export function isModelId(id: string): boolean {
  return id.length > 0 && id.length <= MODEL_ID_MAX && !CONTROL_CHARACTER.test(id) && !DOT_SEGMENT.test(id);
}

/** A model id from a request's path (Gemini's `models/{model}:…`, `/v1/models/{model}`), or a 400 naming `param`. */
export function checkedModelId(id: string, param = 'model'): string {
  if (isModelId(id)) return id;
  throw invalidRequest(`Invalid '${param}': expected ${MODEL_ID_EXPECTED}.`, param, 'invalid_value');
}
