import { yieldToLoop } from '../http/yield-to-loop.js';

/**
 * Text token counts with OpenAI's BPE encodings (`gpt-tokenizer`, pure JavaScript: the same on
 * Node, Bun and Deno). `o200k_base` is the encoding of GPT-4o, GPT-4.1, GPT-5 and the o-series;
 * `cl100k_base` that of GPT-4 and GPT-3.5. No public tokenizer matches current Claude models, so
 * they are counted with `o200k_base` too: an estimate, close for English and code.
 *
 * An encoding's tables are loaded on first use (about 200 ms, a few MB), never at import time.
 */
export type EncodingName = 'o200k_base' | 'cl100k_base';

interface Encoding {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
}

const loaded = new Map<EncodingName, Promise<Encoding>>();

function load(name: EncodingName): Promise<Encoding> {
  let encoding = loaded.get(name);
  if (!encoding) {
    encoding = name === 'o200k_base' ? import('gpt-tokenizer/encoding/o200k_base') : import('gpt-tokenizer/encoding/cl100k_base');
    // A failed load is tried again next time rather than remembered.
    encoding.catch(() => loaded.delete(name));
    loaded.set(name, encoding);
  }
  return encoding;
}

/** The encoding of an upstream model: `cl100k_base` for GPT-4 and GPT-3.5, `o200k_base` otherwise. */
export function encodingFor(upstreamModel: string): EncodingName {
  const name = upstreamModel.toLowerCase().replace(/^.*\//, '');
  return /^(gpt-4(-|$)|gpt-3\.5|text-embedding-)/.test(name) ? 'cl100k_base' : 'o200k_base';
}

/**
 * Longest run without whitespace encoded in one call. BPE merges in a single pre-token cost
 * quadratic time (200,000 repeated letters take tens of seconds), so longer runs are cut: the
 * count moves by a token or so per cut, the time stays linear.
 */
const MAX_RUN = 1000;
/** Characters per encoder call: whitespace-delimited pieces up to about this size. */
const CHUNK = 8192;
/** Characters counted between two turns of the event loop: a large prompt never blocks it long. */
const YIELD_EVERY = 256 * 1024;

/** Counts the tokens of many texts; each call may yield to the event loop. */
export class TokenCounter {
  private sinceYield = 0;

  private constructor(private readonly encoding: Encoding) {}

  static async open(name: EncodingName): Promise<TokenCounter> {
    return new TokenCounter(await load(name));
  }

  /** Tokens of `text`, special-token lookalikes (`<|endoftext|>`) counted as plain text. */
  async count(text: string): Promise<number> {
    let total = 0;
    for (const piece of pieces(text)) {
      total += this.encoding.countTokens(piece, { disallowedSpecial: NONE });
      this.sinceYield += piece.length;
      if (this.sinceYield >= YIELD_EVERY) {
        this.sinceYield = 0;
        await yieldToLoop();
      }
    }
    return total;
  }
}

const NONE = new Set<string>();

/** `text` cut at whitespace into pieces of about `CHUNK` characters, no run longer than `MAX_RUN`. */
function* pieces(text: string): Generator<string> {
  let start = 0;
  while (start < text.length) {
    if (text.length - start <= CHUNK && !hasLongRun(text, start, text.length)) {
      yield text.slice(start);
      return;
    }
    const end = cutPoint(text, start);
    yield text.slice(start, end);
    start = end;
  }
}

/** Where the piece starting at `start` ends: before the last whitespace within `CHUNK`, or after `MAX_RUN` characters of a run. */
function cutPoint(text: string, start: number): number {
  const limit = Math.min(text.length, start + CHUNK);
  let lastSpace = -1;
  let run = 0;
  for (let i = start; i < limit; i++) {
    if (isSpace(text.charCodeAt(i))) {
      lastSpace = i;
      run = 0;
    } else if (++run > MAX_RUN) {
      // A run too long to encode at once: end before it, or cut it if it starts the piece.
      return lastSpace > start ? lastSpace : safeCut(text, i);
    }
  }
  if (limit === text.length) return limit;
  return lastSpace > start ? lastSpace : safeCut(text, limit);
}

function hasLongRun(text: string, from: number, to: number): boolean {
  let run = 0;
  for (let i = from; i < to; i++) {
    if (isSpace(text.charCodeAt(i))) run = 0;
    else if (++run > MAX_RUN) return true;
  }
  return false;
}

/** Never between the two halves of a surrogate pair. */
function safeCut(text: string, at: number): number {
  const code = text.charCodeAt(at);
  return code >= 0xdc00 && code <= 0xdfff ? at + 1 : at;
}

function isSpace(code: number): boolean {
  return code === 32 || code === 10 || code === 9 || code === 13;
}
