/**
 * Calls to the admin API, next to the page: the page is `<admin base>/`, so `status` resolves to
 * `<admin base>/status`. Every call carries the admin key; an answer that is not 2xx throws an
 * `ApiError` with the API's message.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface Api {
  get<T>(path: string, query?: Query): Promise<T>;
  send<T>(method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T>;
  /** The gateway's clock (ms since epoch), from its last answer's `date`: the charts' ranges and key expiries are its time, not this computer's. */
  now(): number;
}

/** How far the gateway's clock is ahead of this computer's (to the second: `date` has no finer); the sign-in's answer sets it. */
let clockOffset = 0;

export function createApi(adminKey: string, root: URL = new URL('./', location.href)): Api {
  async function call<T>(method: string, path: string, query: Query | undefined, body: unknown): Promise<T> {
    const url = new URL(path, root);
    for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${adminKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new ApiError(0, `The gateway did not answer (${(error as Error).message}).`);
    }
    const serverTime = Date.parse(response.headers.get('date') ?? '');
    if (!Number.isNaN(serverTime)) clockOffset = serverTime - Date.now();
    const payload = (await response.json().catch(() => undefined)) as { error?: { message?: string; code?: string | null } } | undefined;
    if (!response.ok) {
      throw new ApiError(response.status, payload?.error?.message ?? `The gateway answered ${response.status}.`, payload?.error?.code ?? null);
    }
    return payload as T;
  }
  return {
    get: (path, query) => call('GET', path, query, undefined),
    send: (method, path, body) => call(method, path, undefined, body),
    now: () => Date.now() + clockOffset,
  };
}

/** A message for people from anything thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
