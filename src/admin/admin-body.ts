import * as v from 'valibot';
import type { KeyPatch, KeySettings } from './keys/managed-key-store.js';
import { keySettingFields } from '../auth/key-schema.js';
import { nonNegativeInteger, strictObject, text } from '../config-fields.js';
import { GatewayError } from '../errors.js';
import { readJsonBody } from '../http/read-json.js';
import { describeValue, formatPath } from '../schemas/validate.js';

/**
 * The admin API's request bodies: read with a small cap, then validated with the same field
 * schemas as the config file's `keys` (`auth/key-schema.ts`), so the API accepts exactly what the
 * file accepts for a key. Unknown fields are refused, naming them.
 */

/** Largest body accepted: a key's settings are a few hundred bytes; metadata gets the rest. */
export const ADMIN_BODY_BYTES = 64 * 1024;

/** A body still arriving after this long is refused (408), as the gateway's own routes do. */
const BODY_TIMEOUT_MS = 30_000;

/** A key's `name`: a label for people, not a document. */
const MAX_NAME_LENGTH = 200;

/** Longest grace period of a rotation: 30 days. */
export const MAX_GRACE_SECONDS = 30 * 86_400;
export const DEFAULT_GRACE_SECONDS = 86_400;

const settingFields = { name: v.pipe(text, v.maxLength(MAX_NAME_LENGTH, `expected at most ${MAX_NAME_LENGTH} characters`)), ...keySettingFields };

const KeySettingsSchema = strictObject(optionalFields(settingFields));

/** A patch: any field of the settings, `null` to clear it. */
const KeyPatchSchema = strictObject(
  Object.fromEntries(Object.entries(settingFields).map(([name, schema]) => [name, v.optional(v.nullable(schema))])) as {
    [name in keyof typeof settingFields]: v.OptionalSchema<v.NullableSchema<(typeof settingFields)[name], undefined>, undefined>;
  },
);

const RotateSchema = strictObject({
  graceSeconds: v.optional(v.pipe(nonNegativeInteger, v.maxValue(MAX_GRACE_SECONDS, `expected at most ${MAX_GRACE_SECONDS} (30 days)`))),
});

/** `POST /keys`. */
export async function readKeySettings(request: Request): Promise<KeySettings> {
  return validate(KeySettingsSchema, await readBody(request, Object.keys(settingFields))) as KeySettings;
}

/** `PATCH /keys/{id}`. */
export async function readKeyPatch(request: Request): Promise<KeyPatch> {
  return validate(KeyPatchSchema, await readBody(request, Object.keys(settingFields))) as KeyPatch;
}

/** `POST /keys/{id}/rotate`: the body is optional (`curl -X POST` sends none). */
export async function readRotation(request: Request): Promise<{ graceSeconds: number }> {
  const body = hasNoBody(request) ? {} : await readBody(request, ['graceSeconds']);
  return { graceSeconds: validate(RotateSchema, body).graceSeconds ?? DEFAULT_GRACE_SECONDS };
}

/**
 * The JSON object of the body, capped at `ADMIN_BODY_BYTES` (413) and bounded in depth and values
 * by the gateway's reader. `fields` are the body's field names: another case of one, or one
 * written twice, is refused (`top-level-keys.ts`).
 */
function readBody(request: Request, fields: readonly string[]): Promise<Record<string, unknown>> {
  return readJsonBody(request, ADMIN_BODY_BYTES, BODY_TIMEOUT_MS, { fields, camelOf: (key) => key });
}

function hasNoBody(request: Request): boolean {
  const { headers } = request;
  return !headers.has('content-type') && !headers.has('transfer-encoding') && (headers.get('content-length') ?? '0').trim() === '0';
}

/** Most unknown fields one message names. */
const MAX_UNKNOWN_NAMED = 20;

/** The output, or a 400: every unknown field named (likely typos), else the first problem. */
function validate<S extends v.GenericSchema>(schema: S, body: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, body);
  if (result.success) return result.output;
  const unknown = unknownFields(schema, body, result.issues);
  if (unknown.length > 0) {
    // In name order: valibot finds nested ones first.
    const params = unknown.map((issue) => formatPath(issue.path)!).sort();
    // The schema's message lists the fields allowed there (`config-fields.ts` strictObject).
    const allowed = unknown.length === 1 ? `: ${unknown[0]!.message}` : '';
    return fail(`Unknown field${params.length === 1 ? '' : 's'} ${params.map((name) => `'${name}'`).join(', ')}${allowed}.`, params[0]!, 'unknown_parameter');
  }
  const [issue] = result.issues;
  const param = formatPath(issue.path);
  if (issue.received === 'undefined') return fail(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
  return fail(`Invalid value for '${param ?? 'body'}': ${issue.message}, received ${describeValue(issue.input)}.`, param, 'invalid_value');
}

/**
 * The unknown-field issues of a body. valibot reports one per object, so each found is taken out
 * of a copy and the copy checked again (a bounded number of times).
 */
function unknownFields(schema: v.GenericSchema, body: unknown, issues: readonly v.BaseIssue<unknown>[]): v.BaseIssue<unknown>[] {
  const isUnknown = (issue: v.BaseIssue<unknown>) => issue.type === 'strict_object' && issue.expected === 'never';
  const found: v.BaseIssue<unknown>[] = [];
  let copy: unknown;
  let next = issues.find(isUnknown);
  while (next && found.length < MAX_UNKNOWN_NAMED) {
    found.push(next);
    copy ??= structuredClone(body);
    const keys = next.path!.map((item) => item.key as string | number);
    let parent = copy as Record<string | number, unknown>;
    for (const key of keys.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
    delete parent[keys.at(-1)!];
    const again = v.safeParse(schema, copy);
    next = again.success ? undefined : again.issues.find(isUnknown);
  }
  return found;
}

function fail(message: string, param: string | null, code: string): never {
  throw new GatewayError({ status: 400, type: 'invalid_request_error', message, param, code });
}

function optionalFields<const E extends v.ObjectEntries>(entries: E): { [name in keyof E]: v.OptionalSchema<E[name], undefined> } {
  return Object.fromEntries(Object.entries(entries).map(([name, schema]) => [name, v.optional(schema)])) as {
    [name in keyof E]: v.OptionalSchema<E[name], undefined>;
  };
}
