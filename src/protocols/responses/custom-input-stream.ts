import { CUSTOM_INPUT } from './client-tools.js';

const OPENING = new RegExp(`^\\s*\\{\\s*"${CUSTOM_INPUT}"\\s*:\\s*"`);
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/**
 * The raw text of a custom tool call, decoded while its JSON arguments (`{"input": "…"}`) stream
 * in, so the client sees `response.custom_tool_call_input.delta` as the model writes. Arguments
 * of another shape are not decoded here: the caller sends the whole input when the call closes.
 */
export class CustomInputStream {
  private raw = '';
  /** Index in `raw` of the next character to decode; -1 before the opening, -2 once given up. */
  private cursor = -1;
  private closed = false;
  /** The text decoded and handed out so far. */
  decoded = '';

  /** Adds an argument fragment; returns the text it completes (possibly empty). */
  push(fragment: string): string {
    this.raw += fragment;
    if (this.cursor === -2 || this.closed) return '';
    if (this.cursor === -1) {
      const match = OPENING.exec(this.raw);
      if (!match) {
        // Still a possible start of the opening? Otherwise the arguments have another shape.
        if (!couldOpen(this.raw)) this.cursor = -2;
        return '';
      }
      this.cursor = match[0].length;
    }
    let out = '';
    while (this.cursor < this.raw.length) {
      const char = this.raw[this.cursor]!;
      if (char === '"') {
        this.closed = true;
        break;
      }
      if (char !== '\\') {
        out += char;
        this.cursor += 1;
        continue;
      }
      const next = this.raw[this.cursor + 1];
      if (next === undefined) break; // the escape continues in the next fragment
      if (next === 'u') {
        const hex = this.raw.slice(this.cursor + 2, this.cursor + 6);
        if (hex.length < 4) break;
        out += String.fromCharCode(parseInt(hex, 16));
        this.cursor += 6;
        continue;
      }
      out += ESCAPES[next] ?? next;
      this.cursor += 2;
    }
    this.decoded += out;
    return out;
  }
}

/** Whether `raw` is a prefix of some `{"input": "` opening (whitespace allowed). */
function couldOpen(raw: string): boolean {
  const compact = raw.replace(/\s+/g, '');
  const opening = `{"${CUSTOM_INPUT}":"`;
  return opening.startsWith(compact);
}
