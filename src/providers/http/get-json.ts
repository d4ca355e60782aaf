import { GatewayError } from '../../errors.js';
import { readText, type UpstreamClient, type UpstreamResult } from './upstream-client.js';
import { upstreamError } from './upstream-error.js';

/** GETs a JSON resource; the upstream's error statuses are thrown as `GatewayError`s. */
export async function getJson(client: UpstreamClient, path: string, signal: AbortSignal): Promise<unknown> {
  return readJson(await client.get(path, { signal, headers: { accept: 'application/json' } }));
}

/** Reads a JSON answer, or throws the upstream's error (status ≥ 400) or a 502 for a body that is not JSON. */
export async function readJson(result: UpstreamResult): Promise<unknown> {
  if (result.status >= 400) throw await upstreamError(result);
  const text = await readText(result.body);
  try {
    return JSON.parse(text);
  } catch {
    throw new GatewayError({ status: 502, type: 'upstream_error', message: 'The upstream returned invalid JSON.', code: 'upstream_invalid_response' });
  }
}
