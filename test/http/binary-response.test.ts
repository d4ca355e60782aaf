import { describe, expect, it } from 'vitest';
import { streamBody } from '../../src/http/binary-response.js';
import { YIELD_EVERY_BYTES } from '../../src/http/yield-to-loop.js';
import { loopTurnsDuring } from '../media/helpers.js';

describe('streamBody (security review 5)', () => {
  it('a source that is always ready, read as fast as it comes, still lets the event loop turn every MiB', async () => {
    const chunk = new Uint8Array(64 * 1024);
    const chunks = (16 * YIELD_EVERY_BYTES) / chunk.byteLength;
    const source = (async function* () {
      for (let index = 0; index < chunks; index++) yield chunk;
    })();
    const reader = streamBody(source, undefined).getReader();
    let bytes = 0;
    const turns = await loopTurnsDuring(async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        bytes += value.byteLength;
      }
    });
    expect(bytes).toBe(16 * YIELD_EVERY_BYTES);
    // Before, the whole body went by in microtasks: the loop never turned (0).
    expect(turns).toBeGreaterThanOrEqual(15);
  });
});
