import { isAscii } from 'node:buffer';
import { GatewayError, isGatewayError } from '../errors.js';
import { withDeadline } from './body-deadline.js';
import { parseJsonOutlined } from './outlined-json.js';
import { checkTopLevelKeys, type KeySpelling } from './top-level-keys.js';
import { YIELD_EVERY_BYTES, yieldToLoop } from './yield-to-loop.js';

/** Longest piece of the JSON parser's reason repeated in a message (V8 quotes the input). */
const MAX_REASON = 200;

/**
 * Deepest nesting of arrays and objects accepted. `JSON.parse` takes any depth, but code that
 * walks the value recursively afterwards (`JSON.stringify` when the body is sent upstream, the
 * local model reading a tool's schema) overflows the stack a few thousand levels down: a 500.
 * Real requests (messages, content parts, JSON Schemas) stay far below this.
 */
const MAX_DEPTH = 256;

/**
 * Most values (objects, arrays, strings, numbers…) in one body. Every walk over the parsed body
 * (validation, translation, the cache key's canonical JSON, serializing it again) visits each
 * value a bounded number of times, so this bounds them all; a 32 MiB body of `[0,0,…]` would
 * otherwise be 16 million values, seconds of such walks. Real requests stay far below: 10,000
 * messages, tool schemas, 300,000 embedding tokens. Walks that can do more than one step per value
 * (expanding a schema's `$ref`s) have a budget of their own (`work-budget.ts`).
 */
const MAX_VALUES = 1_000_000;

/**
 * Reads a JSON request body that must be an object, as it arrives:
 * - content type `application/json` or any `+json` type, parameters allowed (a charset other
 *   than UTF-8 is refused: the spec says all JSON bodies are UTF-8) → else 400
 *   `invalid_content_type`;
 * - a declared `content-length` over `limitBytes` → 413 `request_too_large` before reading; the
 *   stream is counted too and cancelled at the limit (chunked bodies declare no length);
 * - empty (or blank) body → 400 `missing_body`; bytes that are not UTF-8 → 400
 *   `invalid_encoding`; malformed JSON → 400 `invalid_json` with the parser's reason; a value
 *   that is not an object → 400 `invalid_body`; arrays and objects nested more than 256 levels
 *   deep → 400 `json_too_deep`; more than 1,000,000 values → 400 `json_too_large`, naming the
 *   top-level field that holds the most; a top-level key written twice, or in another spelling
 *   than the API's (`keys`, see `top-level-keys.ts`) → 400 naming it;
 * - a body still incomplete `timeoutMs` after reading began (a client trickling it, slowloris
 *   style) → 408 `request_body_timeout`, and the connection is closed. No deadline when omitted.
 */
export async function readJsonBody(request: Request, limitBytes: number, timeoutMs?: number, keys?: KeySpelling): Promise<Record<string, unknown>> {
  return (await readJsonBodyWithText(request, limitBytes, timeoutMs, keys)).body;
}

/**
 * `readJsonBody`, also returning the text as received (a leading byte order mark dropped): the
 * passthrough path sends it on with only `model` replaced (`replace-json-model.ts`) rather than
 * serializing the parsed body again.
 */
export async function readJsonBodyWithText(
  request: Request,
  limitBytes: number,
  timeoutMs?: number,
  keys: KeySpelling = 'snake_case',
): Promise<{ body: Record<string, unknown>; text: string }> {
  const { value, text } = await readJsonText(request, limitBytes, timeoutMs);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_body',
      message: `The request body must be a JSON object, received ${value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`}.`,
    });
  }
  if (text.length > YIELD_EVERY_BYTES) await yieldToLoop();
  checkTopLevelKeys(checkShape(text), keys);
  return { body: value as Record<string, unknown>, text };
}

/**
 * `readJsonBody` for a body that may be any JSON value (a JSON-RPC batch is an array), under the
 * same limits, depth and value count; the caller judges its shape. Its top-level keys are not
 * checked: that is for bodies an upstream reads as text.
 */
export async function readJsonValue(request: Request, limitBytes: number, timeoutMs?: number): Promise<unknown> {
  const { value, text } = await readJsonText(request, limitBytes, timeoutMs);
  if (typeof value !== 'object' || value === null) return value;
  if (text.length > YIELD_EVERY_BYTES) await yieldToLoop();
  checkShape(text);
  return value;
}

/** The body read and parsed: content type, length, encoding and syntax checked (see `readJsonBody`). */
async function readJsonText(request: Request, limitBytes: number, timeoutMs: number | undefined): Promise<{ value: unknown; text: string }> {
  checkContentType(request.headers.get('content-type'));

  const declared = request.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared) > limitBytes) {
    // Nothing is read, and the body is left alone: cancelling it reset the connection before the
    // 413 was written (the client saw ECONNRESET, no answer). Node discards the rest of the
    // upload after the answer; closing instead would still reset a client busy sending it.
    throw tooLarge(limitBytes);
  }

  const text = await readText(request, limitBytes, timeoutMs, declared !== null && /^\d+$/.test(declared.trim()) ? Number(declared) : undefined);
  if (text.trim() === '') {
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'missing_body',
      message: 'A request body is required: send a JSON object.',
    });
  }

  // A large body is decoded, parsed and checked in separate turns of the event loop, its long
  // strings left out of the parse (`outlined-json.ts`), so no one step of a 20 MB body holds
  // other streams much more than 20 ms.
  const large = text.length > YIELD_EVERY_BYTES;
  if (large) await yieldToLoop();
  try {
    return { value: large ? await parseJsonOutlined(text) : JSON.parse(text), text };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_json',
      message: `We could not parse the JSON body of your request: ${truncate(reason, MAX_REASON)}`,
    });
  }
}

/** `application/json`, `application/json; charset=utf-8`, `application/vnd.x+json`, any case. */
function checkContentType(header: string | null): void {
  const [essence = '', ...parameters] = (header ?? '').split(';');
  const mediaType = essence.trim().toLowerCase();
  const isJson = mediaType === 'application/json' || /^[a-z0-9.+-]+\/[a-z0-9.+-]+\+json$/.test(mediaType);
  if (!isJson) {
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_content_type',
      message: `Content-Type must be application/json${header ? `, received ${truncate(header, 100)}` : ' (none was sent)'}.`,
    });
  }
  for (const parameter of parameters) {
    const [name = '', raw = ''] = parameter.split('=');
    if (name.trim().toLowerCase() !== 'charset') continue;
    const charset = raw.trim().replace(/^"|"$/g, '').toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') {
      throw new GatewayError({
        status: 400,
        type: 'invalid_request_error',
        code: 'invalid_content_type',
        message: `JSON bodies must be UTF-8, received charset ${truncate(charset, 40)}.`,
      });
    }
  }
}

/**
 * The body as text, stopping with a 413 once past `limitBytes`, or with a 408 when it is not
 * complete `timeoutMs` after reading began. The bytes are kept as they arrive and decoded once
 * at the end: decoding each chunk left 20 MB of small strings for the garbage collector to copy
 * (pauses of tens of ms) and a join to copy them all again.
 */
async function readText(request: Request, limitBytes: number, timeoutMs: number | undefined, declaredBytes: number | undefined): Promise<string> {
  if (!request.body) return '';
  const reader = request.body.getReader();
  const deadline = withDeadline(reader, timeoutMs);
  let chunks: Uint8Array[] = [];
  // A large body of declared length is copied into one buffer as it arrives: joining the chunks
  // at the end copied 20 MB in one go (about 20 ms, most of it faulting in the fresh pages). The
  // buffer is made once the first MiB has come, not on the client's word alone.
  let whole: Buffer | undefined;
  let received = 0;
  let yieldAt = YIELD_EVERY_BYTES;
  try {
    for (;;) {
      const { done, value } = await deadline.read();
      if (done) break;
      received += value.byteLength;
      if (received > limitBytes) throw tooLarge(limitBytes);
      if (whole && received <= whole.length) {
        whole.set(value, received - value.byteLength);
      } else {
        // More than declared (a host that does not enforce the length): keep chunks from here.
        if (whole) chunks = [whole.subarray(0, received - value.byteLength)];
        whole = undefined;
        chunks.push(value);
      }
      if (received >= yieldAt) {
        if (yieldAt === YIELD_EVERY_BYTES && declaredBytes !== undefined && declaredBytes > received) {
          whole = Buffer.allocUnsafe(declaredBytes);
          let at = 0;
          for (const chunk of chunks) {
            whole.set(chunk, at);
            at += chunk.byteLength;
          }
          chunks = [];
        }
        yieldAt = received + YIELD_EVERY_BYTES;
        await yieldToLoop();
      }
    }
  } catch (error) {
    // Stop the upload: nothing more of it will be read.
    reader.cancel().catch(() => {});
    throw bodyReadFailure(error);
  } finally {
    deadline.clear();
    releaseLock(reader);
  }
  const bytes = whole ? whole.subarray(0, received) : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
  if (received > YIELD_EVERY_BYTES) await yieldToLoop();
  const text = decode(bytes);
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * UTF-8 bytes as text. Most of a large JSON body is ASCII (base64 always is), and ASCII copied as
 * Latin-1 is the same text for a fraction of the UTF-8 decoder's work.
 */
function decode(bytes: Uint8Array): string {
  if (isAscii(bytes)) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  try {
    // The byte order mark is kept here and removed by the caller, in both cases alike.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_encoding',
      message: 'The request body is not valid UTF-8.',
    });
  }
}

/** Releases the reader; a read left pending by a passed deadline makes some hosts throw here. */
export function releaseLock(reader: ReadableStreamDefaultReader<Uint8Array>): void {
  try {
    reader.releaseLock();
  } catch {
    // The pending read is abandoned with the request.
  }
}

/**
 * A body stream that failed while being read: the client closed the connection mid-upload, or
 * Node's HTTP parser found the rest malformed (and answered 400 itself). The client's doing, so a
 * 400 rather than a masked, logged 500; our own errors (413, bad encoding…) pass unchanged.
 */
export function bodyReadFailure(error: unknown): GatewayError {
  if (isGatewayError(error)) return error;
  return new GatewayError({
    status: 400,
    type: 'invalid_request_error',
    code: 'incomplete_body',
    message: 'The request body ended before it was complete (the connection was closed, or the body was malformed).',
    cause: error,
  });
}

function tooLarge(limitBytes: number): GatewayError {
  return new GatewayError({
    status: 413,
    type: 'invalid_request_error',
    code: 'request_too_large',
    message: `The request body is larger than the limit of ${limitBytes} bytes.`,
  });
}

/**
 * 400 naming the top-level field whose value nests arrays and objects past `MAX_DEPTH`, if one
 * does; else 400 naming the top-level field that holds the most values when the body has more
 * than `MAX_VALUES`. Returns the top-level keys, read in the same pass.
 */
function checkShape(text: string): string[] {
  const shape = shapeOf(text, MAX_DEPTH);
  if (shape.tooDeep !== undefined) {
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'json_too_deep',
      param: paramOf(shape.tooDeep),
      message: `The JSON body is nested more than ${MAX_DEPTH} levels deep${shape.tooDeep === null ? '' : ` in '${truncate(shape.tooDeep, 100)}'`}.`,
    });
  }
  if (shape.values <= MAX_VALUES) return shape.keys;
  const [field] = [...shape.valuesByField].reduce((most, entry) => (entry[1] > most[1] ? entry : most), [null as string | null, -1]);
  throw new GatewayError({
    status: 400,
    type: 'invalid_request_error',
    code: 'json_too_large',
    param: paramOf(field),
    message: `The JSON body holds more than ${MAX_VALUES} values${field === null ? '' : `, most of them in '${truncate(field, 100)}'`}.`,
  });
}

/** A top-level key as the validator writes paths: `tools`, or `["odd key"]`. */
function paramOf(field: string | null): string | null {
  return field === null ? null : /^[A-Za-z_$][\w$]*$/.test(field) ? field : `[${JSON.stringify(field)}]`;
}

interface Shape {
  /** The top-level key under which arrays and objects nest past the limit, if any. */
  tooDeep: string | null | undefined;
  /** Values in the whole body, and under each top-level key. */
  values: number;
  valuesByField: Map<string | null, number>;
  /** The top-level keys, decoded, in text order, duplicates included. */
  keys: string[];
}

/**
 * One pass over the valid JSON text of an object: how deep it nests and about how many values it
 * holds (each array or object counts, and each comma: one per value but the first of each
 * container). Strings are skipped whole (`indexOf` to their closing quote), so
 * brackets inside them don't count and a 20 MB base64 string costs ~10 ms. Stops at the first
 * value nested too deep.
 */
function shapeOf(text: string, maxDepth: number): Shape {
  const valuesByField = new Map<string | null, number>();
  const keys: string[] = [];
  let values = 0;
  let depth = 0;
  // At depth 1 a string after `{` or `,` is a key: the last one read names the field.
  let expectKey = false;
  let key: string | null = null;
  let counted = 0;
  const tally = () => {
    valuesByField.set(key, (valuesByField.get(key) ?? 0) + counted);
    counted = 0;
  };
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22) {
      const end = closingQuote(text, i);
      if (expectKey) {
        tally();
        key = JSON.parse(text.slice(i, end + 1)) as string;
        keys.push(key);
      }
      expectKey = false;
      i = end;
    } else if (code === 0x5b || code === 0x7b) {
      if (++depth > maxDepth) return { tooDeep: key, values, valuesByField, keys };
      values++;
      counted++;
      expectKey = depth === 1;
    } else if (code === 0x5d || code === 0x7d) {
      depth--;
    } else if (code === 0x2c) {
      values++;
      counted++;
      expectKey = depth === 1;
    }
  }
  tally();
  return { tooDeep: undefined, values, valuesByField, keys };
}

/** Index of the quote closing the string opened at `open`: the first one not escaped by an odd run of backslashes. */
function closingQuote(text: string, open: number): number {
  let end = text.indexOf('"', open + 1);
  for (;;) {
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
