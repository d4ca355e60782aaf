import { randomBytes } from 'node:crypto';
import { yieldToLoop } from './yield-to-loop.js';

/** A string literal at least this long is taken out of the text before `JSON.parse`. */
const LONG_LITERAL = 256 * 1024;
/** Characters of a long literal checked per turn of the event loop. */
const CHECK_CHARS = 1024 * 1024;
/** Anything a literal must not hold to be its own value: an escape, or a control character JSON forbids. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding the control characters JSON forbids is the point
const NOT_PLAIN = /[\\\u0000-\u001f]/;
/** Starts the placeholder of a long literal: a NUL (escaped in the text) and a tag no client knows. */
const TAG = `\u0000${randomBytes(9).toString('base64')}:`;
const TAG_LITERAL = JSON.stringify(TAG).slice(1, -1);
/** Deeper than the body reader accepts (`read-json.ts`, 256). */
const MAX_DEPTH = 300;

/**
 * `JSON.parse(text)` for a large body, without parsing its long strings. A 20 MB base64 image
 * cost `JSON.parse` about 30 ms in one call, scanning and copying every character. Here each
 * string literal of 256 K characters or more that has no escape in it is cut out (checked a MiB at
 * a time, with a turn of the event loop between), the rest is parsed, and the literal's value is
 * put back as a slice of `text`: the same characters, never copied. The result equals
 * `JSON.parse(text)`, and so does the error thrown for invalid JSON.
 */
export async function parseJsonOutlined(text: string): Promise<unknown> {
  const long: string[] = [];
  const skeleton: string[] = [];
  let copiedTo = 0;
  for (let open = text.indexOf('"'); open !== -1; ) {
    const close = closingQuote(text, open);
    if (close === -1) break; // Unterminated: JSON.parse says so below.
    if (close - open - 1 >= LONG_LITERAL && !isKey(text, close)) {
      const value = text.slice(open + 1, close);
      if (await isPlain(value)) {
        skeleton.push(text.slice(copiedTo, open), `"${TAG_LITERAL}${long.length}"`);
        long.push(value);
        copiedTo = close + 1;
      }
    }
    open = text.indexOf('"', close + 1);
  }
  if (long.length === 0) return JSON.parse(text);
  skeleton.push(text.slice(copiedTo));
  let value: unknown;
  try {
    value = JSON.parse(skeleton.join(''));
  } catch {
    // Positions in the skeleton's error are not the client's: the whole text gives the real one.
    return JSON.parse(text);
  }
  return restore(value, long);
}

/** Index of the quote closing the string opened at `open`, or -1 when there is none. */
function closingQuote(text: string, open: number): number {
  let end = text.indexOf('"', open + 1);
  while (end !== -1) {
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
  return -1;
}

/** Whether the literal ending at `close` is an object's key (then it stays in the text). */
function isKey(text: string, close: number): boolean {
  return /^\s*:/.test(text.slice(close + 1, close + 64));
}

/** Whether the characters of a literal are its value (nothing escaped, nothing JSON forbids). */
async function isPlain(literal: string): Promise<boolean> {
  for (let start = 0; start < literal.length; start += CHECK_CHARS) {
    if (NOT_PLAIN.test(literal.slice(start, start + CHECK_CHARS))) return false;
    await yieldToLoop();
  }
  return true;
}

/**
 * Puts each long literal back in place of its placeholder, in the parsed value. Below `MAX_DEPTH`
 * levels only: the caller refuses anything nested deeper, and recursing there could overflow.
 */
function restore(value: unknown, long: readonly string[], depth = 0): unknown {
  if (typeof value === 'string') return value.startsWith(TAG) ? long[Number(value.slice(TAG.length))] : value;
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = restore(value[i], long, depth + 1);
    return value;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) record[key] = restore(record[key], long, depth + 1);
  return value;
}
