import { randomBytes } from 'node:crypto';
import { yieldToLoop } from '../../http/yield-to-loop.js';
import { JoinedText } from '../../protocols/data-url.js';
import type { BodyPiece, UpstreamBody } from './upstream-body.js';

/** A string at least this long is escaped on its own, in slices, instead of inside `JSON.stringify`. */
const LONG_STRING = 256 * 1024;
/** Characters escaped per turn of the event loop (about a millisecond of work). */
const SLICE_CHARS = 256 * 1024;

/**
 * `JSON.stringify(value)` for an upstream request, without blocking the event loop on long
 * strings. A translated request with a 20 MB inline image spends about 70 ms in one
 * `JSON.stringify` call, most of it escaping the base64 string; here each long string is left
 * out of the main call (a placeholder stands in) and escaped 256 K characters at a time with a
 * turn of the event loop between slices. A long `JoinedText` (a data URL around base64) is
 * written part by part, never joined. The result is the same JSON text, as pieces that
 * `UpstreamClient.post` sends without joining. Without long strings it is `JSON.stringify`.
 */
export async function stringifyBody(value: unknown): Promise<UpstreamBody> {
  if (!hasLongString(value, 0)) return JSON.stringify(value);
  const long: (string | JoinedText)[] = [];
  // A NUL and a random tag: no string of the request can be mistaken for a placeholder.
  const tag = `\u0000${randomBytes(9).toString('base64')}:`;
  const outline = (text: string | JoinedText) => {
    long.push(text);
    return `${tag}${long.length - 1}`;
  };
  const skeleton = JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === 'string') return item.length < LONG_STRING ? item : outline(item);
    // JSON.stringify joins a JoinedText (its toJSON) before a replacer sees it: the object holding
    // it is copied with a placeholder in its place instead.
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return item;
    if (!Object.values(item).some((field) => field instanceof JoinedText)) return item;
    const copy: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(item)) {
      copy[key] = field instanceof JoinedText ? (field.length < LONG_STRING ? field.toJSON() : outline(field)) : field;
    }
    return copy;
  });
  // The placeholder as JSON.stringify wrote it: the NUL escaped as \u0000.
  const placeholder = new RegExp(`"${escapeRegExp(JSON.stringify(tag).slice(1, -1))}(\\d+)"`, 'g');
  const pieces: BodyPiece[] = [];
  let at = 0;
  for (const match of skeleton.matchAll(placeholder)) {
    pieces.push(skeleton.slice(at, match.index));
    await pushEscaped(pieces, long[Number(match[1])]!);
    at = match.index + match[0].length;
  }
  pieces.push(skeleton.slice(at));
  return pieces;
}

/** Appends `text` as a JSON string literal, escaped slice by slice with a yield between slices. */
async function pushEscaped(pieces: BodyPiece[], text: string | JoinedText): Promise<void> {
  pieces.push('"');
  for (const part of typeof text === 'string' ? [text] : text.parts) await pushEscapedPart(pieces, part);
  pieces.push('"');
}

async function pushEscapedPart(pieces: BodyPiece[], text: string): Promise<void> {
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + SLICE_CHARS, text.length);
    // Keep a surrogate pair together: apart, each half would be escaped as a lone surrogate.
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    const slice = text.slice(start, end);
    const escaped = JSON.stringify(slice);
    // Nothing to escape (base64 never has anything): keep the slice, a view of the original.
    pieces.push(escaped.length === slice.length + 2 ? slice : escaped.slice(1, -1));
    start = end;
    await yieldToLoop();
  }
}

/** Whether a string of `LONG_STRING` characters or more is in `value` (as JSON.stringify sees it). */
function hasLongString(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return value.length >= LONG_STRING;
  // Deeper than any request is nested; JSON.stringify itself reports cycles.
  if (typeof value !== 'object' || value === null || depth > 64) return false;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return true;
  if (Array.isArray(value)) return value.some((item) => hasLongString(item, depth + 1));
  return Object.values(value).some((item) => hasLongString(item, depth + 1));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
