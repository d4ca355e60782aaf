import { randomBytes } from 'node:crypto';

/** A random id with a protocol prefix (`resp_`, `msg_`, `call_`, `chatcmpl-`…): 24 hex characters. */
export function newId(prefix: string): string {
  return prefix + randomBytes(12).toString('hex');
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
