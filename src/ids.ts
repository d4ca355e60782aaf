import { randomFillSync } from 'node:crypto';

/** Random bytes drawn in bulk: one system call for a few hundred ids instead of one each. */
const pool = Buffer.alloc(4096);
let used = pool.length;

/** A random id with a protocol prefix (`resp_`, `msg_`, `call_`, `chatcmpl-`…): 24 hex characters. */
export function newId(prefix: string): string {
  if (used + 12 > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += 12;
  return prefix + pool.toString('hex', used - 12, used);
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
