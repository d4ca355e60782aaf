import { stringLiteralAt } from '../string-literal.js';

const HEAD = '{"type":"content_block_delta","index":';
const DELTA = ',"delta":{"type":"text_delta","text":"';

/**
 * A `content_block_delta` that carries a `text_delta` and nothing else, read without parsing the
 * event (most events of a stream are such): its block index and text. Undefined for any other
 * event, which is then parsed whole.
 */
export function plainTextDelta(data: string): { index: number; text: string } | undefined {
  if (!data.startsWith(HEAD)) return undefined;
  const digits = data.indexOf(',', HEAD.length);
  const index = Number(data.slice(HEAD.length, digits));
  if (!Number.isInteger(index) || index < 0 || !data.startsWith(DELTA, digits)) return undefined;
  const literal = stringLiteralAt(data, digits + DELTA.length - 1);
  if (!literal || literal.end !== data.length - 2 || !data.endsWith('}}')) return undefined;
  return { index, text: literal.value };
}
