/**
 * Replaces the top-level `"model"` value of a JSON text without parsing and re-serializing it.
 * The passthrough path sends the client's body on with only the model id changed; doing that as
 * `JSON.stringify({ ...body, model })` re-encodes the whole body (about 70 ms of blocked event
 * loop for a 20 MB inline image, then 20 ms more to turn the string into bytes). Here only the
 * structure of the top-level object is walked: string values are skipped with `indexOf('"')`,
 * so a 20 MB base64 string costs about a millisecond, and the pieces returned are slices of the
 * original text (no copy).
 *
 * The text must be valid JSON with an object at the top (the caller has parsed it already);
 * anything else throws. Every top-level `model` key is replaced, duplicates included (parsers
 * differ on which duplicate wins, so none may keep the client's id), keys written with escapes
 * (`"mod\u0065l"`) included; `model` keys inside nested values are left alone. A body without
 * one gets `"model"` inserted first.
 */
export function replaceTopLevelModel(json: string, model: string): string {
  return replaceTopLevelModelPieces(json, model).join('');
}

/**
 * The same as `replaceTopLevelModel`, as pieces to send one after another: joining them would
 * copy the whole body once more for nothing.
 */
export function replaceTopLevelModelPieces(json: string, model: string): string[] {
  return replaceTopLevelFields(json, { model });
}

/**
 * The general form, as pieces: every top-level occurrence of each key of `fields` gets the new
 * value (JSON-encoded); a key the body lacks is inserted first. E.g. the passthrough of a Chat
 * stream also sets `stream_options` to ask the upstream for usage.
 */
export function replaceTopLevelFields(json: string, fields: Readonly<Record<string, unknown>>): string[] {
  const keys = Object.keys(fields);
  const values = new Map(keys.map((key) => [key, JSON.stringify(fields[key]) as string | undefined]));
  // Removing a key is not what this does; `undefined` has no JSON text to put in its place.
  if ([...values.values()].includes(undefined)) throw new TypeError('replaceTopLevelFields: every value must be a JSON value');
  const { open, empty, spans } = scanTopLevel(json, keys);
  // A byte order mark is dropped: JSON parsers upstream are not required to accept one.
  const start = json.charCodeAt(0) === BOM ? 1 : 0;
  const missing = keys.filter((key) => !spans.some((span) => span.key === key));
  const pieces: string[] = [];
  let at = start;
  if (missing.length > 0) {
    const inserted = missing.map((key) => `${JSON.stringify(key)}:${values.get(key)}`).join(',');
    pieces.push(json.slice(start, open + 1), `${inserted}${empty ? '' : ','}`);
    at = open + 1;
  }
  for (const span of spans) {
    pieces.push(json.slice(at, span.start), values.get(span.key)!);
    at = span.end;
  }
  pieces.push(json.slice(at));
  return pieces;
}

/** Where the value of `key` lies in the text: `start` inclusive, `end` exclusive (UTF-16 offsets). */
export interface JsonSpan {
  key: string;
  start: number;
  end: number;
}

/**
 * Walks the top-level object of `json` and returns the spans of every value of the `keys`, in
 * text order, the index of the opening brace, and whether the object has no key at all.
 */
export function scanTopLevel(json: string, keys: readonly string[]): { open: number; empty: boolean; spans: JsonSpan[] } {
  const spans: JsonSpan[] = [];
  const { open, empty } = walkTopLevel(json, (keyStart, keyEnd, start, end) => {
    const key = keys.find((candidate) => keyMatches(json, keyStart, keyEnd, candidate));
    if (key !== undefined) spans.push({ key, start, end });
  });
  return { open, empty, spans };
}

/**
 * Walks the members of the top-level object of `json`, calling `member` with where each key
 * (quotes included) and its value lie; returns the index of the opening brace, and whether the
 * object has no key at all.
 */
function walkTopLevel(json: string, member: (keyStart: number, keyEnd: number, start: number, end: number) => void): { open: number; empty: boolean } {
  let i = skipSpace(json, json.charCodeAt(0) === BOM ? 1 : 0);
  if (json.charCodeAt(i) !== OPEN_BRACE) throw malformed(i, 'an object');
  const open = i;
  i = skipSpace(json, i + 1);
  if (json.charCodeAt(i) === CLOSE_BRACE) return { open, empty: true };
  for (;;) {
    if (json.charCodeAt(i) !== QUOTE) throw malformed(i, 'a key');
    const keyStart = i;
    const keyEnd = stringEnd(json, i);
    i = skipSpace(json, keyEnd);
    if (json.charCodeAt(i) !== COLON) throw malformed(i, "':'");
    const start = skipSpace(json, i + 1);
    const end = valueEnd(json, start);
    member(keyStart, keyEnd, start, end);
    i = skipSpace(json, end);
    const next = json.charCodeAt(i);
    if (next === CLOSE_BRACE) return { open, empty: false };
    if (next !== COMMA) throw malformed(i, "',' or '}'");
    i = skipSpace(json, i + 1);
  }
}

const BOM = 0xfeff;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** The key string `json[start, end)` (quotes included) is `key`, however it was escaped. */
function keyMatches(json: string, start: number, end: number, key: string): boolean {
  if (end - start === key.length + 2 && json.startsWith(key, start + 1)) return true;
  // `"mod\u0065l"` is `model` too; only a key with an escape can be spelled another way.
  const raw = json.slice(start, end);
  return raw.includes('\\') && JSON.parse(raw) === key;
}

function skipSpace(json: string, i: number): number {
  for (;;) {
    const c = json.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

/**
 * Index just past the closing quote of the JSON string opening at `start` (the text is valid
 * JSON). `indexOf` finds quotes at memory speed: a 20 MB base64 value is skipped in about 1 ms,
 * where a loop over its characters takes 70.
 */
export function stringEnd(json: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = json.indexOf('"', from);
    if (quote === -1) throw malformed(start, 'a closed string');
    // The quote is escaped when an odd number of backslashes precede it.
    let backslashes = 0;
    while (json.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** Index just past the value starting at `start`. */
function valueEnd(json: string, start: number): number {
  const first = json.charCodeAt(start);
  if (first === QUOTE) return stringEnd(json, start);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) return containerEnd(json, start);
  // A number, true, false or null: up to the next delimiter.
  let i = start;
  for (;;) {
    const c = json.charCodeAt(i);
    if (Number.isNaN(c) || c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) break;
    i++;
  }
  if (i === start) throw malformed(start, 'a value');
  return i;
}

/** Index just past the object or array opening at `start`; strings inside are skipped whole. */
function containerEnd(json: string, start: number): number {
  let depth = 0;
  for (let i = start; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEnd(json, i) - 1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  throw malformed(start, 'a closed object or array');
}

function malformed(at: number, expected: string): SyntaxError {
  return new SyntaxError(`replaceTopLevelModel: expected ${expected} at offset ${at}; the text must be a JSON object`);
}
