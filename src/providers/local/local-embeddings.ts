import { invalidRequest } from '../../errors.js';
import { embeddingInputs } from '../embedding-inputs.js';
import type { EmbeddingRequest, EmbeddingResult } from '../media.js';

/** Length of a local vector when the request has no `dimensions`. */
export const LOCAL_EMBEDDING_DIMENSIONS = 256;
/** Longest local vector (text-embedding-3-large's length). */
export const LOCAL_EMBEDDING_MAX_DIMENSIONS = 3072;

/**
 * Offline embeddings: the same input always gives the same unit vector, and texts that share
 * words give close ones. Each feature of the input (its lowercase words, its character
 * trigrams; a token array's ids and id pairs) is hashed to a position and a sign, the counts
 * summed and the vector normalized: feature hashing, not meaning, but enough for a search demo
 * or a test to behave sensibly. Usage is one token per four characters, as the local text models
 * count (a token array's length for token ids).
 */
export function localEmbeddings(request: EmbeddingRequest): EmbeddingResult {
  const dimensions = request.dimensions ?? LOCAL_EMBEDDING_DIMENSIONS;
  if (dimensions > LOCAL_EMBEDDING_MAX_DIMENSIONS) {
    throw invalidRequest(
      `Invalid value for 'dimensions': the local embedding model makes vectors of at most ${LOCAL_EMBEDDING_MAX_DIMENSIONS} dimensions, received ${dimensions}.`,
      'dimensions',
      'invalid_value',
    );
  }
  let tokens = 0;
  const data = embeddingInputs(request.input).map((input, index) => {
    tokens += typeof input === 'string' ? Math.ceil(input.length / 4) : input.length;
    return { index, embedding: unitVector(features(input), dimensions) };
  });
  return { data, usage: { prompt_tokens: tokens } };
}

/** The hashed features of one input, with their weights. */
function features(input: string | number[]): [string, number][] {
  if (typeof input !== 'string') {
    const ids: [string, number][] = input.map((id) => [`t:${id}`, 1]);
    for (let at = 1; at < input.length; at++) ids.push([`b:${input[at - 1]},${input[at]}`, 0.5]);
    return ids;
  }
  const lower = input.toLowerCase();
  const found: [string, number][] = (lower.match(/[\p{L}\p{N}]+/gu) ?? []).map((word) => [`w:${word}`, 1]);
  // Trigrams over the whole text: a text of punctuation or one letter still has features.
  const padded = Array.from(` ${lower} `);
  for (let at = 0; at + 3 <= padded.length; at++) found.push([`c:${padded.slice(at, at + 3).join('')}`, 0.5]);
  return found;
}

function unitVector(weighted: [string, number][], dimensions: number): number[] {
  const vector = new Float64Array(dimensions);
  for (const [feature, weight] of weighted) {
    const hash = fnv1a(feature);
    vector[hash % dimensions]! += hash & 0x80000000 ? -weight : weight;
  }
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  // Every input has at least one feature, but opposite signs can cancel: fall back to one axis.
  if (norm === 0) return Array.from(vector, (_, at) => (at === 0 ? 1 : 0));
  // Rounded to float32, so the float and base64 answers carry the same numbers.
  return Array.from(vector, (value) => Math.fround(value / norm));
}

/** 32-bit FNV-1a over the UTF-16 code units. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let at = 0; at < text.length; at++) {
    hash ^= text.charCodeAt(at);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
