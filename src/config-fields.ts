import * as v from 'valibot';
import { isStorageUri } from './protocols/storage-uris.js';

/**
 * Field schemas shared by the config file's sections. Each message says what was expected; the
 * config loader adds the path and what was found.
 */

/** An object that rejects unknown fields and names the allowed ones. */
export function strictObject<const TEntries extends v.ObjectEntries>(entries: TEntries) {
  const allowed = Object.keys(entries).join(', ');
  return v.strictObject(entries, (issue) => {
    if (issue.expected === 'never') return `unknown field (allowed: ${allowed})`;
    if (issue.expected === 'Object') return 'expected an object';
    return 'required field is missing';
  });
}

export const text = v.pipe(v.string('expected a string'), v.nonEmpty('expected a non-empty string'));
export const flag = v.boolean('expected true or false');
export const urlText = v.pipe(v.string('expected a URL string'), v.url('expected a URL string'));
export const headers = v.record(v.string(), v.string('expected a string header value'), 'expected an object of header names to strings');
export const nonNegativeNumber = v.pipe(v.number('expected a number'), v.minValue(0, 'expected a number >= 0'));
export const nonNegativeInteger = v.pipe(v.number('expected a number'), v.integer('expected an integer'), v.minValue(0, 'expected a number >= 0'));
export const positiveInteger = v.pipe(v.number('expected a number'), v.integer('expected an integer'), v.minValue(1, 'expected a number >= 1'));
export const timeouts = strictObject({
  connectMs: v.optional(positiveInteger),
  headersMs: v.optional(positiveInteger),
  bodyMs: v.optional(positiveInteger),
});
export const dateLabel = v.pipe(v.string('expected a date string'), v.regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date YYYY-MM-DD'));
/** Prefixes of the cloud-storage URIs requests may name (`s3://bucket/…`, `gs://bucket/…`, `files/`). */
export const storageUriPrefixes = v.array(
  v.pipe(text, v.check(isStorageUri, 'expected an s3://, gs:// or Files-API (files/…) prefix')),
  'expected an array of URI prefixes',
);
