import { describe, expect, it } from 'vitest';
import { secretsDetector } from '../../src/guardrails/detectors/secrets.js';
import { maskText } from '../../src/guardrails/mask.js';
import { windowedStream } from '../../src/guardrails/stream-window.js';
import type { IRStreamEvent } from '../../src/protocols/ir.js';

/**
 * The secrets guardrail on a stream holds back only its short values' length (about 260
 * characters), not its longest value's (a 4 KB PEM block): a long value is held from where it
 * opens, so the rest of the answer still streams.
 */

const secrets = secretsDetector({});
const PROSE = 'The quick brown fox jumps over the lazy dog. '.repeat(40);
const PEM = `-----BEGIN PRIVATE KEY-----\n${'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n'.repeat(60)}-----END PRIVATE KEY-----`;

/** Streams `text` in 16-character deltas; returns what the client had received when each delta went in. */
async function stream(text: string): Promise<{ releasedAt: number[]; out: string }> {
  const chunks = text.match(/[\s\S]{1,16}/g)!;
  const releasedAt: number[] = [];
  let out = '';
  let fed = 0;
  async function* source(): AsyncGenerator<readonly IRStreamEvent[]> {
    for (const chunk of chunks) {
      fed += chunk.length;
      yield [{ type: 'text_delta', text: chunk }];
    }
    yield [{ type: 'finish', reason: 'stop' }];
  }
  const options = {
    holdChars: secrets.maxFindingLength,
    windowChars: 0,
    sentences: false,
    holdFrom: (pending: string) => secrets.holdFrom(pending),
    scan: (pending: string) => secrets.scan(pending),
    release: (window: string) => maskText(window, secrets.scan(window)),
  };
  for await (const batch of windowedStream(source(), options)) {
    for (const event of batch) if (event.type === 'text_delta') out += event.text;
    releasedAt.push(fed - out.length);
  }
  return { releasedAt, out };
}

describe('stream hold of the secrets guardrail', () => {
  it('holds back a few hundred characters, not the longest value', async () => {
    expect(secrets.maxFindingLength).toBeLessThan(300);
    const { releasedAt, out } = await stream(PROSE);
    expect(out).toBe(PROSE);
    // While the prose streams, the client is never more than the hold (plus one batch) behind.
    expect(Math.max(...releasedAt.slice(0, -1))).toBeLessThanOrEqual(secrets.maxFindingLength + 16 + Math.ceil(secrets.maxFindingLength / 8));
  });

  it('holds a PEM block from its BEGIN line until it is whole, then masks it whole', async () => {
    const { out } = await stream(`${PROSE}${PEM}${PROSE}`);
    expect(out).toBe(`${PROSE}[REDACTED:private_key]${PROSE}`);
    expect(out).not.toContain('MIIEvQ');
  });
});
