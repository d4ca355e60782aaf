import { readFileSync } from 'node:fs';

/** Google's token endpoint, where a service account's signed JWT is exchanged for an access token. */
export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';

/** The fields of a service-account key file (the JSON the Cloud console downloads) that are used. */
export interface ServiceAccountKey {
  type?: string | undefined;
  project_id?: string | undefined;
  private_key_id?: string | undefined;
  /** PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`). */
  private_key: string;
  client_email: string;
  /** Default `https://oauth2.googleapis.com/token`. */
  token_uri?: string | undefined;
}

/** A service account ready to sign with: what the JWT names and where it is exchanged. */
export interface ServiceAccount {
  email: string;
  privateKey: string;
  keyId: string | undefined;
  tokenURI: string;
  projectId: string | undefined;
}

/**
 * Reads a service-account key from a file path or an object already parsed, checking what the
 * token exchange needs; throws a `TypeError` saying what is wrong (never quoting the key).
 */
export function readServiceAccount(credentials: string | ServiceAccountKey): ServiceAccount {
  const key = typeof credentials === 'string' ? readKeyFile(credentials) : credentials;
  if (typeof key !== 'object' || key === null) throw new TypeError('credentials: expected a service-account key object');
  if (key.type !== undefined && key.type !== 'service_account') {
    // `authorized_user` (gcloud's own login) holds a refresh token, not a key to sign with.
    throw new TypeError(`credentials: type "${String(key.type)}" is not a service-account key; pass accessToken or getAccessToken instead`);
  }
  if (typeof key.client_email !== 'string' || key.client_email === '') throw new TypeError('credentials: client_email is missing');
  if (typeof key.private_key !== 'string' || !/-----BEGIN PRIVATE KEY-----/.test(key.private_key)) {
    throw new TypeError('credentials: private_key is missing or not a PKCS#8 PEM key');
  }
  return {
    email: key.client_email,
    privateKey: key.private_key,
    keyId: typeof key.private_key_id === 'string' && key.private_key_id !== '' ? key.private_key_id : undefined,
    tokenURI: typeof key.token_uri === 'string' && key.token_uri !== '' ? key.token_uri : GOOGLE_TOKEN_URI,
    projectId: typeof key.project_id === 'string' && key.project_id !== '' ? key.project_id : undefined,
  };
}

/** The key file, read once when the provider is built, so a wrong path fails at start-up. */
function readKeyFile(path: string): ServiceAccountKey {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new TypeError(`credentials: cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
  try {
    return JSON.parse(text.replace(/^\uFEFF/, '')) as ServiceAccountKey;
  } catch {
    // The parser's message may quote the file's text, which holds the key.
    throw new TypeError(`credentials: ${path} is not valid JSON`);
  }
}
