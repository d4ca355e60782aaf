import { createHash, randomBytes } from 'node:crypto';

/** Every managed key starts so: scanners (GitHub's, trufflehog) and people can tell it is an infergate key. */
export const MANAGED_KEY_PREFIX = 'sk-ig-';

/** The shape of every key `newKeySecret` makes. */
const MANAGED_KEY_SHAPE = /^sk-ig-[A-Za-z0-9_-]{43}$/;

/**
 * Whether a key a client sent could be a managed one: any other is unknown without asking the
 * store, so keys of another kind (the config file's, junk) never cost a database round trip.
 */
export function couldBeManagedKey(secret: string): boolean {
  return secret.length === MANAGED_KEY_PREFIX.length + 43 && MANAGED_KEY_SHAPE.test(secret);
}

/** A new key: the prefix and 32 random bytes (256 bits) in base64url. */
export function newKeySecret(): string {
  return MANAGED_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * What stores keep instead of the key: its SHA-256, in hex. A slow password hash (bcrypt, argon2)
 * protects guessable secrets; these have 256 random bits, which no hash speed makes guessable, and
 * every request looks one up, so a fast hash is the right one (as GitHub and Stripe do for tokens).
 */
export function hashKeySecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** The part of a key shown in lists: the prefix and four characters, not enough to use it. */
export function visiblePrefix(secret: string): string {
  return secret.slice(0, MANAGED_KEY_PREFIX.length + 4);
}

/** A new key id: `key_` and 16 hex characters (never derived from the secret). */
export function newKeyId(): string {
  return 'key_' + randomBytes(8).toString('hex');
}
