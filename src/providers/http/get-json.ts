import { upstreamInvalidResponse } from '../../errors.js';
import { parseJson } from '../../json.js';
import { readText, type UpstreamCall, type UpstreamClient, type UpstreamResult } from './upstream-client.js';
import { errorInAnswer, upstreamError } from './upstream-error.js';

/**
 * GETs a JSON resource with the call's abort signal and idle limit; the upstream's error statuses
 * are thrown as `GatewayError`s.
 */
export async function getJson(client: UpstreamClient, path: string, call: UpstreamCall): Promise<unknown> {
  return readJson(
    await client.get(path, {
      signal: call.signal,
      idleTimeoutMs: call.idleTimeoutMs,
      upstreamWait: call.upstreamWait,
      headers: { accept: 'application/json' },
    }),
  );
}

/** Reads a JSON answer, or throws the upstream's error (status ≥ 400) or a 502 for a body that is not JSON. */
export async function readJson(result: UpstreamResult): Promise<unknown> {
  if (result.status >= 400) throw await upstreamError(result);
  return parseAnswer(await readText(result.body, undefined, result.upstreamWait), result.redact);
}

/**
 * A successful upstream answer's JSON. Not JSON (a cut body, a proxy's HTML page) or an error
 * body sent with a 200 is the upstream failing: thrown as a 502, never handed on as an answer.
 */
export function parseAnswer(text: string, redact?: (text: string) => string): unknown {
  const json = parseJson(text);
  if (json === undefined) throw upstreamInvalidResponse('The upstream returned invalid JSON.');
  const error = errorInAnswer(json, redact);
  if (error) throw error;
  return json;
}
