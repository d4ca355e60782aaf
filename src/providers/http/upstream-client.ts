import { Agent, request, type Dispatcher } from 'undici';
import { isAbortError, isGatewayError, upstreamTimeout, upstreamTooLarge, upstreamUnreachable } from '../../errors.js';
import { blankHostNames } from './host-names.js';
import { wireBody, type UpstreamBody } from './upstream-body.js';

export interface UpstreamTimeouts {
  /** TCP + TLS connect. Default 10 s. */
  connectMs?: number | undefined;
  /** Until the response headers arrive. Default 120 s (slow first tokens on big prompts). */
  headersMs?: number | undefined;
  /**
   * Longest silence between two body chunks. Default: the gateway's `limits.streamIdleTimeoutMs`
   * (300 s unless set), which calls carry as `idleTimeoutMs`; set here, it wins.
   */
  bodyMs?: number | undefined;
}

/** What every upstream call carries from the client's request (a `CallContext` is one). */
export interface UpstreamCall {
  signal: AbortSignal;
  /** Longest silence of the upstream while its answer is read (see `UpstreamTimeouts.bodyMs`). */
  idleTimeoutMs?: number | undefined;
  /** Told how long the request waited on the upstream (with metrics on), for the gateway's overhead. */
  upstreamWait?: UpstreamWait | undefined;
}

/** Adds up the time a request waits on upstreams (`telemetry/request-timing.ts`). */
export interface UpstreamWait {
  waited(ms: number): void;
}

export interface UpstreamClientOptions {
  /** Base URL; request paths are appended to it (`https://api.openai.com/v1` + `/chat/completions`). */
  baseURL: string;
  /** Headers on every request: auth and the provider's extras. Client headers never override them. */
  headers: Record<string, string>;
  timeouts?: UpstreamTimeouts;
  /** An undici dispatcher to share or to inject in tests. Default: a pooled keep-alive `Agent` per provider. */
  dispatcher?: Dispatcher;
}

export interface UpstreamResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
  /** The call's `upstreamWait`, for the readers of the body to add their wait to. */
  upstreamWait?: UpstreamWait | undefined;
  /**
   * Blanks the provider's credentials and address, and any host name (`host-names.ts`), out of
   * upstream text (an error message) before a client, a log or an event sees it: some upstreams
   * quote what they were sent, or name their own machines.
   */
  redact?: (text: string) => string;
}

/**
 * The pooled keep-alive dispatcher a client makes for itself; a provider whose clients share
 * one (one per Azure deployment) makes it here, with the same defaults.
 */
export function pooledAgent(timeouts: UpstreamTimeouts | undefined): Agent {
  return new Agent({
    connect: { timeout: timeouts?.connectMs ?? 10_000 },
    headersTimeout: timeouts?.headersMs ?? 120_000,
    bodyTimeout: timeouts?.bodyMs ?? 300_000,
    keepAliveTimeout: 30_000,
  });
}

/**
 * An upstream reached through undici's pooled dispatcher (measured: several times cheaper per
 * request than the global fetch). Every call carries the client's abort signal, so a client that
 * leaves cancels the upstream request and its socket is released or destroyed.
 */
export class UpstreamClient {
  private readonly base: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  /** What `redact` blanks out, longest first. */
  private readonly secrets: string[];

  constructor(private readonly options: UpstreamClientOptions) {
    this.base = options.baseURL.replace(/\/+$/, '');
    this.secrets = secretsOf(options.headers, this.base);
    this.ownsDispatcher = !options.dispatcher;
    this.dispatcher = options.dispatcher ?? pooledAgent(options.timeouts);
  }

  /**
   * POSTs a JSON body (or raw bytes with their content type) and returns the raw result. A body
   * in pieces is sent piece by piece with its total length (see `upstream-body.ts`).
   */
  async post(path: string, body: UpstreamBody, init: UpstreamCall & { headers?: Record<string, string>; contentType?: string }): Promise<UpstreamResult> {
    return this.send('POST', path, body, init);
  }

  async get(path: string, init: UpstreamCall & { headers?: Record<string, string> }): Promise<UpstreamResult> {
    return this.send('GET', path, undefined, init);
  }

  async delete(path: string, init: UpstreamCall & { headers?: Record<string, string> }): Promise<UpstreamResult> {
    return this.send('DELETE', path, undefined, init);
  }

  /**
   * GETs an absolute URL the upstream handed out (e.g. a finished video on a CDN) through the
   * same pooled dispatcher, *without* the provider's credentials: they belong to the API only.
   */
  async download(url: string, init: UpstreamCall & { headers?: Record<string, string> }): Promise<UpstreamResult> {
    const sentAt = init.upstreamWait ? performance.now() : 0;
    try {
      const response = await request(url, {
        method: 'GET',
        headers: init.headers ?? {},
        signal: init.signal,
        dispatcher: this.dispatcher,
        ...this.bodyTimeout(init),
      });
      return { status: response.statusCode, headers: response.headers, body: response.body, redact: this.redact, upstreamWait: init.upstreamWait };
    } catch (error) {
      throw transportError(error);
    } finally {
      init.upstreamWait?.waited(performance.now() - sentAt);
    }
  }

  /** See `UpstreamResult.redact`. */
  readonly redact = (text: string): string => {
    let out = text;
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join('[redacted]');
    return blankHostNames(out);
  };

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private async send(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    body: UpstreamBody | undefined,
    init: UpstreamCall & { headers?: Record<string, string>; contentType?: string },
  ): Promise<UpstreamResult> {
    const wire = body === undefined ? undefined : wireBody(body);
    const headers: Record<string, string> = {
      ...(body !== undefined ? { 'content-type': init.contentType ?? 'application/json' } : {}),
      ...(wire?.length !== undefined ? { 'content-length': String(wire.length) } : {}),
      ...init.headers,
      // Last, so nothing a client forwarded can replace the upstream credentials.
      ...this.options.headers,
    };
    const sentAt = init.upstreamWait ? performance.now() : 0;
    try {
      const response = await request(this.base + path, {
        method,
        headers,
        // undici's docs list iterables among the body types; its typings leave them out.
        body: (wire?.body ?? null) as Exclude<Dispatcher.RequestOptions['body'], undefined>,
        signal: init.signal,
        dispatcher: this.dispatcher,
        ...this.bodyTimeout(init),
      });
      return { status: response.statusCode, headers: response.headers, body: response.body, redact: this.redact, upstreamWait: init.upstreamWait };
    } catch (error) {
      throw transportError(error);
    } finally {
      init.upstreamWait?.waited(performance.now() - sentAt);
    }
  }

  /**
   * undici's per-request body timeout: the provider's own `timeouts.bodyMs`, else the gateway's
   * idle limit the call carries; the one timer undici already runs per request, not a second.
   */
  private bodyTimeout(call: UpstreamCall): { bodyTimeout?: number } {
    const ms = this.options.timeouts?.bodyMs ?? call.idleTimeoutMs;
    return ms === undefined ? {} : { bodyTimeout: ms };
  }
}

/**
 * The header values worth hiding (credentials; short values such as versions are not) with the
 * token of a `Bearer …` value on its own, and the upstream's host as written in the base URL.
 */
function secretsOf(headers: Record<string, string>, base: string): string[] {
  const secrets = new Set<string>();
  for (const value of Object.values(headers)) {
    const token = /^\s*\w+\s+(\S+)\s*$/.exec(value)?.[1];
    for (const candidate of [value.trim(), token]) if (candidate && candidate.length >= 8) secrets.add(candidate);
  }
  try {
    secrets.add(new URL(base).host);
  } catch {
    // Not a URL the client could call either.
  }
  return [...secrets].sort((a, b) => b.length - a.length);
}

/**
 * Maps a transport failure to what the client sees: a timeout → 504, anything else on the way
 * (refused, reset, DNS) → 502. Aborts pass through untouched. The upstream address is never
 * named: it is the operator's business, not the client's.
 */
export function transportError(error: unknown): unknown {
  if (isAbortError(error) || isGatewayError(error)) return error;
  const code = (error as { code?: string }).code ?? '';
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return upstreamTimeout(error);
  }
  return upstreamUnreachable(error);
}

/** Iterates an upstream body, turning transport failures mid-body into `GatewayError`s. */
export async function* upstreamChunks(body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of body) yield chunk;
  } catch (error) {
    throw transportError(error);
  }
}

/** Reads a whole (small) upstream body as text, e.g. a JSON answer or an error body; the read's time is told to `wait`. */
export async function readText(body: AsyncIterable<Uint8Array>, limitBytes = 16 * 1024 * 1024, wait?: UpstreamWait): Promise<string> {
  const startedAt = wait ? performance.now() : 0;
  try {
    return await readChunks(body, limitBytes);
  } finally {
    wait?.waited(performance.now() - startedAt);
  }
}

async function readChunks(body: AsyncIterable<Uint8Array>, limitBytes: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of upstreamChunks(body)) {
    size += chunk.byteLength;
    if (size > limitBytes) {
      // Thrown mid-read: leaving the loop destroys the body, so the rest is never downloaded.
      throw upstreamTooLarge(limitBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
