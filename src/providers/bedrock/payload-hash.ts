import { createHash } from 'node:crypto';
import { YIELD_EVERY_BYTES, yieldToLoop } from '../../http/yield-to-loop.js';
import type { UpstreamBody } from '../http/upstream-body.js';

/**
 * The hex SHA-256 of a request body exactly as `UpstreamClient.post` sends it (text as UTF-8,
 * pieces one after another), for SigV4's `x-amz-content-sha256`. Pieces are hashed as they are,
 * never joined, with a turn of the event loop every MiB: a 20 MB inline image is not hashed in
 * one blocking go.
 */
export async function payloadHash(body: UpstreamBody): Promise<string> {
  const hash = createHash('sha256');
  if (typeof body === 'string' || body instanceof Uint8Array) return hash.update(body).digest('hex');
  let since = 0;
  for (const piece of body) {
    hash.update(piece);
    since += piece.length;
    if (since >= YIELD_EVERY_BYTES) {
      since = 0;
      await yieldToLoop();
    }
  }
  return hash.digest('hex');
}
