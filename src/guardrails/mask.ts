import type { GuardrailFinding } from './checker.js';

/**
 * `text` with each finding replaced by `[REDACTED:<category>]`. Overlapping or touching findings
 * become one mask (named after the first). A span is widened so the result stays well-formed:
 * never half a surrogate pair, and never half a backslash escape, since tool-call arguments are
 * JSON text (a lone `\` before the mask, or an escape cut off by it, would make them invalid).
 */
export function maskText(text: string, findings: readonly GuardrailFinding[]): string {
  if (findings.length === 0) return text;
  const spans = findings
    .map((finding) => ({ category: finding.category, start: widenStart(text, finding.start), end: widenEnd(text, finding.end) }))
    .filter((span) => span.start < span.end)
    .sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let done = 0;
  for (let index = 0; index < spans.length; ) {
    const first = spans[index]!;
    let end = first.end;
    // Spans are sorted by start: take in every later one that begins before this mask ends.
    while (++index < spans.length && spans[index]!.start <= end) end = Math.max(end, spans[index]!.end);
    out += text.slice(done, first.start) + `[REDACTED:${first.category}]`;
    done = end;
  }
  return out + text.slice(done);
}

/** Whether the backslash at `index` escapes the next character (an odd run of backslashes ends there). */
export function isEscapingBackslash(text: string, index: number): boolean {
  let run = 0;
  while (index - run >= 0 && text.charCodeAt(index - run) === 0x5c) run++;
  return run % 2 === 1;
}

/** Where the escape sequence covering `index` starts (`\n`, `\"`, `\u00e9`), or `index` when none does. */
export function escapeStartAt(text: string, index: number): number {
  // `\x` with x at index, or `\uXXXX` with index on one of the four hex digits.
  for (let back = 1; back <= 5 && index - back >= 0; back++) {
    const at = index - back;
    if (text.charCodeAt(at) !== 0x5c) continue;
    if (!isEscapingBackslash(text, at)) return index;
    return at + escapeLength(text, at) > index ? at : index;
  }
  return index;
}

/** Where the escape sequence covering `index` ends, or `index` when none does. */
export function escapeEndAt(text: string, index: number): number {
  const start = escapeStartAt(text, index);
  return start === index ? index : Math.min(text.length, start + escapeLength(text, start));
}

function escapeLength(text: string, backslash: number): number {
  return text[backslash + 1] === 'u' && /^u[0-9A-Fa-f]{4}/.test(text.slice(backslash + 1, backslash + 6)) ? 6 : 2;
}

function widenStart(text: string, start: number): number {
  let at = Math.max(0, Math.min(start, text.length));
  if (isLowSurrogate(text.charCodeAt(at)) && isHighSurrogate(text.charCodeAt(at - 1))) at--;
  return escapeStartAt(text, at);
}

function widenEnd(text: string, end: number): number {
  let at = Math.max(0, Math.min(end, text.length));
  if (at > 0 && at < text.length && isLowSurrogate(text.charCodeAt(at)) && isHighSurrogate(text.charCodeAt(at - 1))) at++;
  // `at` may fall inside an escape that began in the span: take in the rest of it.
  return escapeEndAt(text, at);
}

export function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
