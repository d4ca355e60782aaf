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
}

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
    const payload = (await response.json().catch(() => undefined)) as { error?: { message?: string; code?: string | null } } | undefined;
    if (!response.ok) {
      throw new ApiError(response.status, payload?.error?.message ?? `The gateway answered ${response.status}.`, payload?.error?.code ?? null);
    }
    return payload as T;
  }
  return {
    get: (path, query) => call('GET', path, query, undefined),
    send: (method, path, body) => call(method, path, undefined, body),
  };
}

/** A message for people from anything thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
