import { YIELD_EVERY_BYTES, yieldToLoop } from '../../http/yield-to-loop.js';

/**
 * A request body for an upstream: text, bytes, or pieces of either sent one after another, never
 * joined. Pieces let a large body go out without a copy of the whole: the client's JSON text
 * with only `model` replaced (`http/replace-json-model.ts`), a multipart body around uploaded
 * files, or JSON with a long string outlined (`stringify-body.ts`).
 */
export type UpstreamBody = string | Uint8Array | readonly BodyPiece[];
export type BodyPiece = string | Uint8Array;

/** Text up to this size is encoded in one go by undici (fast enough not to be felt). */
const ENCODE_AT_ONCE = 1024 * 1024;
/** Larger text is encoded this many characters at a time, as the socket takes it. */
const SLICE_CHARS = 256 * 1024;

/**
 * What undici gets for a body: a small string or bytes as they are; anything else as an async
 * iterable with its exact byte length (so the upstream gets a `content-length`, not a chunked
 * body). The iterable encodes text slice by slice and hands the event loop back every MiB: on
 * loopback the socket takes 20 MB without ever asking undici to wait, and encoding and writing
 * it all in one go blocked other streams for about 30 ms.
 */
export function wireBody(body: UpstreamBody): { body: string | Uint8Array | AsyncIterable<Uint8Array>; length?: number } {
  if (typeof body === 'string') return body.length <= ENCODE_AT_ONCE ? { body } : { body: encodePieces([body]), length: Buffer.byteLength(body) };
  if (body instanceof Uint8Array) return { body };
  let length = 0;
  let small = true;
  for (const piece of body) {
    length += typeof piece === 'string' ? Buffer.byteLength(piece) : piece.byteLength;
    if (typeof piece !== 'string' || length > ENCODE_AT_ONCE) small = false;
  }
  if (small) return { body: (body as string[]).join('') };
  return { body: encodePieces(body), length };
}

async function* encodePieces(pieces: readonly BodyPiece[]): AsyncGenerator<Uint8Array> {
  let sent = 0;
  let yieldAt = YIELD_EVERY_BYTES;
  for (const piece of pieces) {
    for (const bytes of piece instanceof Uint8Array ? [piece] : slices(piece)) {
      if (bytes.byteLength === 0) continue;
      yield bytes;
      sent += bytes.byteLength;
      if (sent >= yieldAt) {
        yieldAt = sent + YIELD_EVERY_BYTES;
        await yieldToLoop();
      }
    }
  }
}

/** Text encoded as UTF-8 in slices of `SLICE_CHARS` characters, each when asked for. */
function* slices(text: string): Generator<Uint8Array> {
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + SLICE_CHARS, text.length);
    // Never split a surrogate pair: each half alone would be encoded as U+FFFD.
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    yield Buffer.from(text.slice(start, end), 'utf8');
    start = end;
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
