import { createHash, timingSafeEqual } from 'node:crypto';

/** The shortest admin key accepted: it opens operator routes, so it must not be guessable. */
export const ADMIN_KEY_MIN_LENGTH = 16;

/**
 * The operator's credential for the standalone server's own routes (`/metrics`; the admin API
 * later): `Authorization: Bearer <admin key>`, from `INFERGATE_ADMIN_KEY` or the config file's
 * `admin.key`. It is not a gateway key, and no gateway key opens these routes. Compared in
 * constant time, over digests so that the key's length does not show either.
 */
export class AdminCredential {
  private readonly digest: Buffer;

  constructor(key: string) {
    if (key.length < ADMIN_KEY_MIN_LENGTH) throw new TypeError(`the admin key must be at least ${ADMIN_KEY_MIN_LENGTH} characters`);
    this.digest = sha256(key);
  }

  /** Whether a request's `Authorization` header carries the admin key. */
  admits(authorization: string | null | undefined): boolean {
    const token = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1];
    return token !== undefined && timingSafeEqual(sha256(token), this.digest);
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
