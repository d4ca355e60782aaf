import { isRecord, parseObject } from '../json.js';

/**
 * A Chat client that did not ask for usage (`stream_options.include_usage`) still has to be
 * charged: the gateway asks the upstream for it, reads it, and takes it out again before the
 * client sees it (the usage-only chunk, and the `"usage":null` every other chunk then carries),
 * so the client gets the stream it asked for.
 *
 * A stream's `stream_options` is always sent rebuilt, `include_usage: true` last and keys with an
 * upper-case or non-ASCII letter left out: an upstream that matches keys case-insensitively, last
 * one winning (Go's `encoding/json`), would read `{"include_usage":true,"INCLUDE_USAGE":false}`
 * as no usage, and the stream would cost nothing.
 */
export function withUsageRequested(body: Record<string, unknown>): { body: Record<string, unknown>; stripUsageFrames: boolean } {
  if (body.stream !== true) return { body, stripUsageFrames: false };
  const options = isRecord(body.stream_options) ? body.stream_options : {};
  const kept = Object.entries(options).filter(([key]) => key !== 'include_usage' && /^[\x20-\x40\x5b-\x7e]*$/.test(key));
  return {
    body: { ...body, stream_options: { ...Object.fromEntries(kept), include_usage: true } },
    stripUsageFrames: options.include_usage !== true,
  };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** A frame and the blank line that ends it (lines end in CRLF, LF or a lone CR), or the unended rest. */
const FRAME = /[\s\S]*?(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r(?!\n)|\n)|[\s\S]+/g;

/** Whole SSE frames without the usage the client did not ask for; the bytes as they were when there is none. */
export function dropUsageFrames(frames: Uint8Array): Uint8Array {
  const text = decoder.decode(frames);
  if (!text.includes('"usage"')) return frames;
  const kept = (text.match(FRAME) ?? [])
    .filter((frame) => !isUsageOnly(frame))
    // Inside a JSON string a quote is always escaped, so this text can only be the field itself.
    .map((frame) => frame.replaceAll(',"usage":null', '').replaceAll('"usage":null,', ''));
  return encoder.encode(kept.join(''));
}

function isUsageOnly(frame: string): boolean {
  if (!frame.includes('"usage"')) return false;
  const data = frame.replace(/^data: ?/m, '').trim();
  const chunk = parseObject(data);
  return Array.isArray(chunk?.choices) && chunk.choices.length === 0 && chunk.usage != null;
}
