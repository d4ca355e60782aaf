import * as v from 'valibot';
import { GatewayError } from '../errors.js';
import { MISSING } from './common.js';

/** Longest piece of a received string quoted back in an error message. */
const MAX_QUOTED = 100;

/**
 * Parses `body` with `schema` and returns the output (unknown fields kept), or throws a 400
 * `GatewayError` for the first issue, OpenAI style:
 * - `param` is the field's path as the client wrote it (`messages[0].role`, `metadata.resolution`,
 *   `image[3]`), null when the body itself is at fault;
 * - `code` is `missing_required_parameter` for an absent field, else `invalid_value`;
 * - the message says what was expected and what was received:
 *   `Invalid value for 'speed': expected a number from 0.5 to 2.0, received 3.`
 *
 * "First" is in schema order (the spec's table order), which is stable whatever the key order of
 * the body.
 */
export function validateBody<S extends v.GenericSchema>(schema: S, body: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, body, { abortEarly: true, message: fallbackExpected });
  if (result.success) return result.output;
  throw issueToError(result.issues[0]);
}

/** Turns a valibot issue into the 400 the client gets. Exported for the multipart validators. */
export function issueToError(issue: v.BaseIssue<unknown>): GatewayError {
  const param = formatPath(issue.path);
  const where = param === null ? 'the request body' : `'${param}'`;
  if (isMissing(issue)) {
    const hint = issue.message.startsWith(MISSING) ? issue.message.slice(MISSING.length) : '';
    return new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'missing_required_parameter',
      param,
      message: `Missing required parameter: ${where}.${hint ? ` ${hint}` : ''}`,
    });
  }
  const message =
    param === null
      ? `Invalid request body: expected ${issue.message}, received ${describeValue(issue.input)}.`
      : `Invalid value for ${where}: expected ${issue.message}, received ${describeValue(issue.input)}.`;
  return new GatewayError({ status: 400, type: 'invalid_request_error', code: 'invalid_value', param, message });
}

/** An absent required key (valibot's object "key" issue), or an issue marked with `missing()`. */
function isMissing(issue: v.BaseIssue<unknown>): boolean {
  if (issue.message.startsWith(MISSING)) return true;
  const last = issue.path?.[issue.path.length - 1];
  return (issue.type === 'loose_object' || issue.type === 'object' || issue.type === 'strict_object') && last?.type === 'object' && last.origin === 'key';
}

/** `[{key:'messages'},{key:0},{key:'role'}]` → `messages[0].role`; no path → null. */
export function formatPath(path: readonly v.IssuePathItem[] | undefined): string | null {
  if (!path || path.length === 0) return null;
  let out = '';
  for (const item of path) {
    const key = item.key;
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

/** What the client sent, short enough for a message: long strings are cut, containers summarized. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    if (value.length <= MAX_QUOTED) return JSON.stringify(value);
    return `${JSON.stringify(value.slice(0, MAX_QUOTED)).slice(0, -1)}…" (${value.length} characters)`;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return `an array of ${value.length} item${value.length === 1 ? '' : 's'}`;
  if (typeof value === 'object') return 'an object';
  return typeof value;
}

/** Used only for a schema built without a message (every schema here has one). */
function fallbackExpected(issue: v.BaseIssue<unknown>): string {
  return issue.expected ? `a value matching ${issue.expected}` : 'a valid value';
}
