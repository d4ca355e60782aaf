import { stringLiteralAt } from '../string-literal.js';

/** How OpenAI (and most servers that copy it) start the only choice of a text chunk. */
const HEAD = '"choices":[{"index":0,"delta":{"content":"';
const FINISH_REASON = /"finish_reason"\s*:\s*"/;
const USAGE_OBJECT = /"usage"\s*:\s*\{/;

/**
 * The text of a chunk that carries nothing but text for choice 0 (`delta: { content }`, no
 * finish reason, usage, error, tool call or other choice), read without parsing the chunk: most
 * chunks of a stream are such. Undefined for any other chunk, which is then parsed whole.
 */
export function plainContentDelta(data: string): string | undefined {
  const at = data.indexOf(HEAD);
  if (at < 0) return undefined;
  const literal = stringLiteralAt(data, at + HEAD.length - 1);
  // The delta must close right after its content: no reasoning, refusal or tool call beside it.
  if (!literal || data.charCodeAt(literal.end) !== 125) return undefined;
  if (data.indexOf('"delta"', literal.end) >= 0 || data.includes('"error"')) return undefined;
  if (FINISH_REASON.test(data) || USAGE_OBJECT.test(data)) return undefined;
  return literal.value;
}
