/**
 * Reading one JSON string out of a larger JSON text without parsing the rest: the hot stream
 * decoders use it for the events that are nothing but a piece of text, which are most of a
 * stream. Whatever does not have exactly the expected shape goes through `JSON.parse` instead.
 */

const QUOTE = 34;
const BACKSLASH = 92;

/**
 * The JSON string whose opening quote is at `quote`: its value and the index just past its
 * closing quote, or undefined when `text` has no whole string there.
 */
export function stringLiteralAt(text: string, quote: number): { value: string; end: number } | undefined {
  if (text.charCodeAt(quote) !== QUOTE) return undefined;
  let close = text.indexOf('"', quote + 1);
  let escaped = false;
  while (close >= 0) {
    // A quote after an odd run of backslashes is part of the text.
    let slashes = 0;
    while (text.charCodeAt(close - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes > 0) escaped = true;
    if (slashes % 2 === 0) break;
    close = text.indexOf('"', close + 1);
  }
  if (close < 0) return undefined;
  const slash = escaped ? -1 : text.indexOf('\\', quote + 1);
  if (slash >= 0 && slash < close) escaped = true;
  if (!escaped) return { value: text.slice(quote + 1, close), end: close + 1 };
  try {
    return { value: JSON.parse(text.slice(quote, close + 1)) as string, end: close + 1 };
  } catch {
    return undefined;
  }
}
