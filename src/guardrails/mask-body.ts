import { GatewayError } from '../errors.js';
import type { GuardrailFinding } from './checker.js';
import { maskText } from './mask.js';

/** Most values masked outside a string of their own (see below) in one request. */
export const MAX_SCATTERED_VALUES = 100;

/**
 * The body with the checked texts masked, so a passthrough upstream gets the client's own fields
 * with only the found values replaced. A string equal to a checked text takes its masked
 * version. A checked text no string equals (a Messages `tool_use` input, which the IR holds
 * serialized) has each found value replaced wherever it appears in the body. The walk visits each
 * value once; `read-json.ts` bounds the body's depth and count.
 */
export function maskBody(
  body: Record<string, unknown>,
  texts: readonly string[],
  masked: readonly string[],
  findings: readonly (readonly GuardrailFinding[])[],
): Record<string, unknown> {
  const byText = new Map<string, string>();
  texts.forEach((text, index) => {
    if (masked[index] !== text) byText.set(text, masked[index]!);
  });
  const seen = new Set<string>();
  const exact = mapStrings(body, (value) => {
    const replacement = byText.get(value);
    if (replacement === undefined) return value;
    seen.add(value);
    return replacement;
  }) as Record<string, unknown>;

  const values = new Map<string, string>();
  texts.forEach((text, index) => {
    if (!byText.has(text) || seen.has(text)) return;
    for (const finding of findings[index]!) {
      const value = text.slice(finding.start, finding.end);
      values.set(value, maskText(value, [{ category: finding.category, start: 0, end: value.length }]));
    }
  });
  if (values.size === 0) return exact;
  // Each value is looked for in every string: bounded, as a client controls both counts.
  if (values.size > MAX_SCATTERED_VALUES) {
    throw new GatewayError({
      status: 400,
      code: 'guardrail_blocked',
      message: `The request holds more than ${MAX_SCATTERED_VALUES} values to mask outside plain text (in tool-call inputs); it was refused.`,
    });
  }
  // Longest first, so a value inside a longer one does not split it.
  const ordered = [...values].sort(([a], [b]) => b.length - a.length);
  return mapStrings(exact, (value) => {
    let out = value;
    for (const [found, replacement] of ordered) if (out.includes(found)) out = out.split(found).join(replacement);
    return out;
  }) as Record<string, unknown>;
}

/** A copy of a JSON value with each string (values, not keys) mapped. */
function mapStrings(value: unknown, map: (value: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map));
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = mapStrings(item, map);
    return copy;
  }
  return value;
}
