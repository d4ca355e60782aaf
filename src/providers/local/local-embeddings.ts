import { invalidRequest } from '../../errors.js';
import { yieldToLoop } from '../../http/yield-to-loop.js';
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
 * count (a token array's length for token ids). The event loop turns every
 * `FEATURES_PER_TURN` features, so a request of 2,048 long inputs does not hold up others.
 */
export async function localEmbeddings(request: EmbeddingRequest): Promise<EmbeddingResult> {
  const dimensions = request.dimensions ?? LOCAL_EMBEDDING_DIMENSIONS;
  if (dimensions > LOCAL_EMBEDDING_MAX_DIMENSIONS) {
    throw invalidRequest(
      `Invalid value for 'dimensions': the local embedding model makes vectors of at most ${LOCAL_EMBEDDING_MAX_DIMENSIONS} dimensions, received ${dimensions}.`,
      'dimensions',
      'invalid_value',
    );
  }
  let tokens = 0;
  const budget = new YieldBudget();
  const data: EmbeddingResult['data'] = [];
  for (const [index, input] of embeddingInputs(request.input).entries()) {
    tokens += typeof input === 'string' ? Math.ceil(input.length / 4) : input.length;
    const vector = new Float64Array(dimensions);
    await addFeatures(vector, input, budget);
    data.push({ index, embedding: unitVector(vector) });
  }
  return { data, usage: { prompt_tokens: tokens } };
}

/** Features hashed between two turns of the event loop: 2,048 inputs of 16 KB once blocked it for 7 s. */
const FEATURES_PER_TURN = 64 * 1024;

/**
 * Counts features; `due()` is true once every `FEATURES_PER_TURN`, when the caller lets the loop
 * turn (synchronous, so a feature costs no promise of its own).
 */
class YieldBudget {
  private count = 0;

  due(): boolean {
    if (++this.count < FEATURES_PER_TURN) return false;
    this.count = 0;
    return true;
  }
}

/**
 * Adds the hashed features of one input to `vector`, hashed as they are read (no list of them):
 * a text's lowercase words and character trigrams (over the text padded with a space, so a text
 * of punctuation or one letter still has features), a token array's ids and id pairs.
 */
async function addFeatures(vector: Float64Array, input: string | number[], budget: YieldBudget): Promise<void> {
  const add = (hash: number, weight: number) => {
    vector[hash % vector.length]! += hash & 0x80000000 ? -weight : weight;
  };
  if (typeof input !== 'string') {
    for (let at = 0; at < input.length; at++) {
      add(fnv1a(`t:${input[at]}`), 1);
      if (at > 0) add(fnv1a(`b:${input[at - 1]},${input[at]}`), 0.5);
      if (budget.due()) await yieldToLoop();
    }
    return;
  }
  const lower = input.toLowerCase();
  for (const [word] of lower.matchAll(/[\p{L}\p{N}]+/gu)) {
    add(fnv1a(word, WORD_SEED), 1);
    if (budget.due()) await yieldToLoop();
  }
  let first = ' ';
  let second: string | undefined;
  for (const third of codePoints(lower)) {
    if (second !== undefined) {
      add(fnv1a(third, fnv1a(second, fnv1a(first, TRIGRAM_SEED))), 0.5);
      if (budget.due()) await yieldToLoop();
      first = second;
    }
    second = third;
  }
}

/** The code points of ` text ` (padded with a space each side), one at a time. */
function* codePoints(text: string): Generator<string> {
  yield* text;
  yield ' ';
}

function unitVector(vector: Float64Array): number[] {
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  // Every input has at least one feature, but opposite signs can cancel: fall back to one axis.
  if (norm === 0) return Array.from(vector, (_, at) => (at === 0 ? 1 : 0));
  // Rounded to float32, so the float and base64 answers carry the same numbers.
  return Array.from(vector, (value) => Math.fround(value / norm));
}

const FNV_OFFSET = 0x811c9dc5;

/** 32-bit FNV-1a over the UTF-16 code units, continuing from `hash`. */
function fnv1a(text: string, hash = FNV_OFFSET): number {
  for (let at = 0; at < text.length; at++) {
    hash ^= text.charCodeAt(at);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The hashes of the prefixes `w:` and `c:`: a word's feature is `w:<word>`, a trigram's `c:<three code points>`. */
const WORD_SEED = fnv1a('w:');
const TRIGRAM_SEED = fnv1a('c:');
