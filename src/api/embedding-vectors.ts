import { Buffer } from 'node:buffer';
import type { EmbeddingVector } from '../providers/media.js';

/**
 * A vector in the client's `encoding_format`: numbers for `float`, or the base64 of its
 * little-endian float32 values for `base64` (what OpenAI sends and its SDKs decode). A provider
 * may hand either form; it is converted only when it differs.
 */
export function encodeVector(embedding: EmbeddingVector['embedding'], format: 'float' | 'base64'): number[] | string {
  if (format === 'base64') return typeof embedding === 'string' ? embedding : base64Of(embedding);
  if (typeof embedding === 'string') return floatsOf(embedding);
  return Array.isArray(embedding) ? (embedding as number[]) : Array.from(embedding);
}

/** How many values the vector has. */
export function vectorLength(embedding: EmbeddingVector['embedding']): number {
  if (typeof embedding !== 'string') return embedding.length;
  return Math.floor(Buffer.byteLength(embedding, 'base64') / 4);
}

function base64Of(values: readonly number[] | Float32Array): string {
  const bytes = Buffer.allocUnsafe(values.length * 4);
  for (let at = 0; at < values.length; at++) bytes.writeFloatLE(values[at]!, at * 4);
  return bytes.toString('base64');
}

function floatsOf(base64: string): number[] {
  const bytes = Buffer.from(base64, 'base64');
  const values = new Array<number>(bytes.length >> 2);
  for (let at = 0; at < values.length; at++) values[at] = bytes.readFloatLE(at * 4);
  return values;
}
