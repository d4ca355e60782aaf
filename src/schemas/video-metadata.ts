/**
 * Bounds of a video request's `metadata`, which the task keeps for 7 days and echoes on every
 * poll: OpenAI's (16 keys, keys of at most 64 characters, string values of at most 512), and
 * 16 KiB of JSON in all for the values that are not strings (Seedance's `content` items, flags).
 */
export const METADATA_BOUNDS = { keys: 16, keyChars: 64, stringChars: 512, jsonBytes: 16 * 1024 } as const;

export const METADATA_EXPECTED =
  `an object of at most ${METADATA_BOUNDS.keys} keys of at most ${METADATA_BOUNDS.keyChars} characters, ` +
  `string values of at most ${METADATA_BOUNDS.stringChars} characters and ${METADATA_BOUNDS.jsonBytes / 1024} KiB of JSON in all ` +
  '(send images in `image` or `images`, which are not kept)';

/** Whether `metadata` is within the bounds. */
export function withinMetadataBounds(metadata: Record<string, unknown>): boolean {
  const keys = Object.keys(metadata);
  if (keys.length > METADATA_BOUNDS.keys) return false;
  for (const key of keys) {
    const value = metadata[key];
    if (key.length > METADATA_BOUNDS.keyChars) return false;
    if (typeof value === 'string' && value.length > METADATA_BOUNDS.stringChars) return false;
  }
  return jsonLengthAtMost(metadata, METADATA_BOUNDS.jsonBytes);
}

/**
 * Whether `value` written as JSON takes at most `limit` characters, counted without writing it:
 * the walk stops as soon as the count passes the limit, so a 30 MiB value costs no more than a
 * small one. Strings count their length plus quotes (escapes are not counted: a bound, not a size).
 */
function jsonLengthAtMost(value: unknown, limit: number): boolean {
  let length = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (Array.isArray(next)) {
      length += 2;
      for (const item of next) {
        if (++length > limit) return false;
        pending.push(item);
      }
    } else if (next !== null && typeof next === 'object') {
      length += 2;
      for (const key in next) {
        length += key.length + 4;
        if (length > limit) return false;
        pending.push((next as Record<string, unknown>)[key]);
      }
    } else {
      length += typeof next === 'string' ? next.length + 2 : String(next).length;
    }
    if (length > limit) return false;
  }
  return true;
}
