import { readFileSync } from 'node:fs';
import type { IRStreamEvent, IRUsage } from '../../../src/protocols/ir.js';
import type { StreamDecoder } from '../../../src/protocols/codec.js';
import { SseReader, type SseMessage } from '../../../src/protocols/sse-parse.js';

export function fixture(name: string): string {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
}

/** The text as a byte stream cut every `size` bytes, like TCP reads (splits land mid-line and mid-character). */
export async function* byteChunks(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.slice(offset, offset + size);
}

/**
 * Runs a fresh stream decoder over SSE text read in chunks, as the gateway does (`streamIR`), and
 * returns the events it produced and the error it threw.
 */
export async function decodeText(newDecoder: () => StreamDecoder, text: string, chunkSize = 17): Promise<{ events: IRStreamEvent[]; error: unknown }> {
  const decoder = newDecoder();
  const reader = new SseReader();
  const out: IRStreamEvent[] = [];
  const decode = (message: SseMessage) => decoder.push(message, out);
  try {
    for await (const chunk of byteChunks(text, chunkSize)) {
      reader.feed(chunk, decode);
      if (decoder.finished) break;
    }
    if (!decoder.finished) {
      reader.end(decode);
      decoder.end(out);
    }
    return { events: out.map(withoutRaw), error: undefined };
  } catch (error) {
    return { events: out.map(withoutRaw), error };
  }
}

/**
 * The value with the upstream's raw usage object left out of every `usage`: the decoders keep
 * it for the usage event (checked in `raw-usage.test.ts`); these tests compare the counters.
 */
export function withoutRaw<T>(value: T): T {
  if (!value || typeof value !== 'object' || !('usage' in value)) return value;
  const { raw: _raw, ...usage } = (value as { usage?: IRUsage }).usage ?? {};
  return (value as { usage?: IRUsage }).usage ? { ...value, usage } : value;
}
