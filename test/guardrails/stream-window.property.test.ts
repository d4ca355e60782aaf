import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { GuardrailFinding } from '../../src/guardrails/checker.js';
import { piiDetector } from '../../src/guardrails/detectors/pii.js';
import { secretsDetector } from '../../src/guardrails/detectors/secrets.js';
import { maskText } from '../../src/guardrails/mask.js';
import { windowedStream } from '../../src/guardrails/stream-window.js';
import type { IRStreamEvent } from '../../src/protocols/ir.js';
import { CARD_SAMPLES, EMAIL_SAMPLES, IBAN_SAMPLES, PHONE_SAMPLES, SECRET_SAMPLES } from './samples.js';

/**
 * The property the stream window exists for: whatever the chunking, what the client gets is the
 * masked whole answer, and no planted value reaches it, whole or in a chunk.
 */

const PLANTED = [...Object.values(SECRET_SAMPLES), ...EMAIL_SAMPLES, ...CARD_SAMPLES, ...IBAN_SAMPLES, ...PHONE_SAMPLES];

function detectorsOf(categories: { secrets?: string[]; pii?: string[] }) {
  const secrets = secretsDetector({ categories: categories.secrets });
  const pii = piiDetector({ categories: categories.pii });
  const scan = (text: string): GuardrailFinding[] => [...secrets.scan(text), ...pii.scan(text)];
  // Values longer than the hold (PEM blocks, JWTs) are held from where they open.
  const holdFrom = (text: string): number => secrets.holdFrom(text);
  return { scan, holdFrom, holdChars: Math.max(secrets.maxFindingLength, pii.maxFindingLength) };
}

/** Words of printable ASCII, or of letters, digits, escapes' backslash, `@`, accents and emoji (surrogate pairs). */
const word = fc.oneof(
  fc.string({ minLength: 1, maxLength: 12 }),
  fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCXYZ0123456789,.;:!?()"\'\\@+-_é😀'), minLength: 1, maxLength: 12 }),
);
const separator = fc.constantFrom(' ', ' ', ' ', '\n', '. ', ', ');

/** Filler words with planted values, each set apart by spaces. */
const answer = (planted: readonly string[], maxWords: number) =>
  fc
    .array(fc.oneof({ weight: 12, arbitrary: word }, { weight: 1, arbitrary: fc.constantFrom(...planted).map((value) => ` ${value} `) }), {
      maxLength: maxWords,
      size: 'max',
    })
    .chain((parts) => fc.tuple(fc.constant(parts), fc.array(separator, { minLength: parts.length, maxLength: parts.length })))
    .map(([parts, separators]) => parts.map((part, index) => part + separators[index]).join(''));

/** Chunk sizes, many of one character, so values get split anywhere. */
const chunkSizes = fc.array(fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 200 })), { minLength: 1, maxLength: 64 });

function chunk(text: string, sizes: readonly number[]): string[] {
  const chunks: string[] = [];
  for (let at = 0, index = 0; at < text.length; index++) {
    const size = sizes[index % sizes.length]!;
    chunks.push(text.slice(at, at + size));
    at += size;
  }
  return chunks;
}

/** Deltas grouped in batches of 1–3, a `usage` event now and then inside a run. */
function batchesOf(deltas: readonly IRStreamEvent[], grouping: readonly number[]): IRStreamEvent[][] {
  const batches: IRStreamEvent[][] = [];
  for (let at = 0, index = 0; at < deltas.length; index++) {
    const size = grouping[index % grouping.length]!;
    const batch = deltas.slice(at, at + size);
    if (size === 3) batch.push({ type: 'usage', usage: { output: at } });
    batches.push(batch);
    at += size;
  }
  return batches;
}

async function* fromArray(batches: readonly IRStreamEvent[][]): AsyncGenerator<readonly IRStreamEvent[]> {
  for (const batch of batches) yield batch;
}

async function streamed(
  texts: readonly string[],
  kind: 'text' | 'arguments',
  grouping: readonly number[],
  detectors: ReturnType<typeof detectorsOf>,
): Promise<string[]> {
  const deltas: IRStreamEvent[] = texts.map((text) => (kind === 'text' ? { type: 'text_delta', text } : { type: 'tool_call_delta', arguments: text }));
  const head: IRStreamEvent[] = kind === 'arguments' ? [{ type: 'tool_call_start', id: 'call_1', name: 'save' }] : [];
  const batches = batchesOf([...head, ...deltas], grouping);
  batches.push([{ type: 'finish', reason: 'stop' }]);
  const out: string[] = [];
  const release = (window: string) => maskText(window, detectors.scan(window));
  for await (const batch of windowedStream(fromArray(batches), {
    holdChars: detectors.holdChars,
    holdFrom: detectors.holdFrom,
    windowChars: 0,
    sentences: false,
    scan: detectors.scan,
    release,
  })) {
    for (const event of batch) {
      if (event.type === 'text_delta') out.push(event.text);
      if (event.type === 'tool_call_delta') out.push(event.arguments);
    }
  }
  return out;
}

function expectMaskedAsWhole(whole: string, released: readonly string[], detectors: ReturnType<typeof detectorsOf>): void {
  const joined = released.join('');
  expect(joined).toBe(maskText(whole, detectors.scan(whole)));
  for (const value of PLANTED) {
    // In JSON arguments the value appears escaped.
    const forms = [value, JSON.stringify(value).slice(1, -1)];
    for (const form of forms) {
      expect(joined.includes(form)).toBe(false);
      for (const delta of released) expect(delta.includes(form)).toBe(false);
    }
  }
}

const grouping = fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 8 });

describe('windowedStream with the detectors (property)', () => {
  it('text: the client gets the masked whole answer, however it is chunked (short-value categories)', async () => {
    const detectors = detectorsOf({
      secrets: ['openai_api_key', 'anthropic_api_key', 'infergate_api_key', 'aws_access_key_id', 'github_token', 'google_api_key', 'slack_token', 'stripe_key'],
    });
    const planted = PLANTED.filter((value) => !value.startsWith('eyJ') && !value.startsWith('-----'));
    await fc.assert(
      fc.asyncProperty(answer(planted, 400), chunkSizes, grouping, async (whole, sizes, groups) => {
        const released = await streamed(chunk(whole, sizes), 'text', groups, detectors);
        expectMaskedAsWhole(whole, released, detectors);
      }),
      { numRuns: 100 },
    );
  });

  it('text and JSON arguments: every category, long answers', async () => {
    const detectors = detectorsOf({});
    await fc.assert(
      fc.asyncProperty(answer(PLANTED, 1500), chunkSizes, grouping, fc.boolean(), async (text, sizes, groups, asArguments) => {
        const whole = asArguments ? JSON.stringify({ note: text }) : text;
        const released = await streamed(chunk(whole, sizes), asArguments ? 'arguments' : 'text', groups, detectors);
        expectMaskedAsWhole(whole, released, detectors);
        if (asArguments) expect(() => JSON.parse(released.join(''))).not.toThrow();
      }),
      { numRuns: 30 },
    );
  });
});
