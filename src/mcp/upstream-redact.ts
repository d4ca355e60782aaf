/** Shorter values are not blanked: they would blank ordinary words too (`env: { DEBUG: '1' }`). */
const MIN_SECRET_LENGTH = 6;

/**
 * Blanks `secrets` (an upstream's credentials: header values, a bearer token, a child's
 * environment) out of text the gateway logs or keeps, such as an upstream's error message or a
 * child's stderr, which may quote what it was given.
 */
export function secretBlanker(secrets: Iterable<string | undefined>): (text: string) => string {
  const values = [...new Set([...secrets].filter((value): value is string => typeof value === 'string' && value.length >= MIN_SECRET_LENGTH))];
  // Longest first, so a secret that contains another is blanked whole.
  values.sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const value of values) if (out.includes(value)) out = out.split(value).join('[redacted]');
    return out;
  };
}

/**
 * `error` with `blank` applied to its message: itself when nothing was blanked, else a plain Error
 * keeping its `code` (a JSON-RPC code the client is answered with).
 */
export function blankedError(error: unknown, blank: (text: string) => string): unknown {
  if (!(error instanceof Error)) return error;
  const message = blank(error.message);
  if (message === error.message) return error;
  const code = (error as { code?: unknown }).code;
  return Object.assign(new Error(message), typeof code === 'number' ? { code } : {});
}
