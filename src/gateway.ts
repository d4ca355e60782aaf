import { createServerAdapter, type ServerAdapter } from '@whatwg-node/server';
import { authenticate } from './auth/authenticate.js';
import { GatewayError, isAbortError, isGatewayError } from './errors.js';
import { addHeaders } from './http/add-headers.js';
import { checkHeaderSize } from './http/header-limit.js';
import type { ClientStyle } from './http/client-style.js';
import { errorResponse } from './http/error-response.js';
import { isWebSocketUpgrade, webSocketNotSupported } from './http/websocket-upgrade.js';
import { openaiStyle } from './protocols/openai/style.js';
import { Router, type RouteMatch } from './http/router.js';
import { newId } from './ids.js';
import type { RouteContext } from './http/route.js';
import { HeldAdmission } from './policy/route-admission.js';
import { resolveOptions, type GatewayOptions } from './options.js';
import { createRuntime, type GatewayRuntime } from './runtime.js';
import { RequestTiming } from './telemetry/request-timing.js';
import { routes } from './api/routes.js';

/**
 * The gateway as one object: a Fetch handler (`gateway.fetch(url, init)`, `gateway.handle`),
 * a Node request listener (`http.createServer(gateway)`), and a test client, all from
 * `@whatwg-node/server`. `gateway.options` holds the runtime built from the options.
 */
export type Gateway = ServerAdapter<Record<string, unknown>, GatewayCore>;

/** Holds the runtime built from the options and answers one request at a time; no work at import time. */
export class GatewayCore {
  private readonly router: Router;

  constructor(readonly options: GatewayRuntime) {
    this.router = new Router(routes);
    const poller = options.videoPoller;
    if (poller) options.videoTasks.startPoller(poller.intervalMs, poller.batchSize);
  }

  /** Stops the background work (the video poller) and closes the guardrails' pool; `gateway.dispose()` calls it. */
  dispose = async (): Promise<void> => {
    await Promise.all([this.options.videoTasks.stop(), this.options.closeGuardrails(), this.options.mcp?.close()]);
  };

  handle = async (request: Request, serverContext: Record<string, unknown>): Promise<Response> => {
    const requestId = newId('req_');
    const { plugins } = this.options;
    const timing = this.options.timesRequests ? new RequestTiming() : undefined;
    // The error shape of the matched route, known before the plugins run: a plugin's failure on
    // `/v1/messages` is answered as Anthropic's clients parse it.
    let style: ClientStyle = openaiStyle;
    let response: Response | undefined;

    try {
      const target = this.locate(request);
      style = target.style;
      for (const plugin of plugins) {
        // The first plugin that answers ends the stage.
        if (response) break;
        await plugin.onGatewayRequest?.({
          request,
          requestId,
          serverContext,
          respondWith: (early) => {
            response = early;
          },
        });
      }
      response ??= await this.route(request, target, requestId, serverContext, timing);
    } catch (error) {
      response = this.failure(error, style, requestId, request);
    }

    const overheadMs = timing?.answered();
    response = addHeaders(response, {
      'x-request-id': requestId,
      ...style.responseHeaders?.(requestId),
      'x-contract-version': this.options.contractVersion,
      ...(overheadMs !== undefined ? { 'x-infergate-overhead-ms': overheadMs.toFixed(2) } : {}),
    });

    for (const plugin of plugins) {
      if (!plugin.onGatewayResponse) continue;
      try {
        await plugin.onGatewayResponse({
          request,
          requestId,
          response,
          serverContext,
          setResponse: (replacement) => {
            response = replacement;
          },
        });
      } catch (error) {
        this.options.logger.error('onGatewayResponse plugin failed', { requestId, error: describe(error) });
      }
    }
    return response;
  };

  /** The route a request's path (under `basePath`) matches, and the error shape its clients parse. */
  private locate(request: Request): Target {
    const url = URL.canParse(request.url) ? new URL(request.url) : undefined;
    const pathname = url?.pathname ?? rawPathOf(request.url);
    const { basePath } = this.options;
    const underBase = !basePath || pathname === basePath || pathname.startsWith(basePath + '/');
    const path = basePath ? pathname.slice(basePath.length) || '/' : pathname;
    const match: RouteMatch = underBase ? this.router.match(request.method, path) : { kind: 'not-found' };
    return { url, pathname, match, style: match.kind === 'not-found' ? openaiStyle : styleOf(match, request) };
  }

  private async route(
    request: Request,
    target: Target,
    requestId: string,
    serverContext: Record<string, unknown>,
    timing: RequestTiming | undefined,
  ): Promise<Response> {
    const { url, pathname, match, style } = target;
    // A Host header that makes no URL (`a b`, `[::1`, port 99999) is the client's mistake.
    if (!url) throw new GatewayError({ status: 400, message: 'The request URL (its Host header and target) is not valid.', code: 'invalid_url' });
    if (match.kind === 'not-found') throw notFound(pathname);
    if (match.kind === 'method-not-allowed') {
      if (match.webSocketFallback && isWebSocketUpgrade(request)) throw webSocketNotSupported(pathname);
      throw new GatewayError({
        status: 405,
        message: `Method ${request.method} is not allowed on ${pathname}; use ${match.allow.join(' or ')}.`,
        code: 'method_not_allowed',
        headers: { allow: match.allow.join(', ') },
      });
    }

    const { route, params } = match;
    checkHeaderSize(request, this.options.limits.headerBytes);
    if (route.style.name === 'anthropic' && !this.options.messagesEnabled) {
      throw new GatewayError({ status: 404, message: 'The Messages endpoint is not available on this gateway (coming soon).' });
    }
    // A gateway without MCP servers has no `/mcp`: unknown to anyone, before any key is asked for.
    if (route.style.name === 'mcp' && !this.options.mcp) throw notFound(pathname);
    const key = await authenticate(request, style, this.options.keyStore, serverContext);
    // Fails closed: a plugin that throws here (a suspended tenant's 403) refuses the request.
    for (const plugin of this.options.plugins) await plugin.onAuthenticated?.({ request, requestId, key, serverContext });
    const context: RouteContext = { request, url, params, requestId, key, options: this.options, serverContext, signal: request.signal, timing };
    if (!route.admits) return route.handler(context);
    // The key's limits before anything of the body is read: a key over them costs no upload.
    const admission = await HeldAdmission.take(context, route.admits);
    return admission.run(() => route.handler({ ...context, admission }));
  }

  private failure(error: unknown, style: ClientStyle, requestId: string, request: Request): Response {
    if (!isGatewayError(error)) {
      if (isAbortError(error) && request.signal.aborted) {
        // The client left; nobody reads this response.
        return new Response(null, { status: 499 });
      }
      this.options.logger.error('unexpected error', { requestId, error: describe(error) });
    } else if (error.status >= 500) {
      const detail = error.detail === undefined ? {} : { detail: error.detail };
      this.options.logger.warn('request failed', { requestId, status: error.status, message: error.message, ...detail });
    }
    return errorResponse(error, style, requestId);
  }
}

/** Creates the gateway. Options are validated now; a bad option throws a `TypeError` naming it. */
export function createGateway(options: GatewayOptions): Gateway {
  const resolved = resolveOptions(options);
  const core = new GatewayCore(createRuntime(resolved));
  // whatwg-node runs its own stages of the caller's plugins (onRequest, onResponse, instrumentation, dispose).
  return createServerAdapter<Record<string, unknown>, GatewayCore>(core, { plugins: [...resolved.plugins, { onDispose: core.dispose }] });
}

/** Where a request goes: its URL (none when its Host header makes none), its path as sent, the route match. */
interface Target {
  url: URL | undefined;
  pathname: string;
  match: RouteMatch;
  style: ClientStyle;
}

/** The path of a URL that does not parse: what follows its scheme and authority. */
function rawPathOf(url: string): string {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/]*(\/[^?#]*)?/i.exec(url)?.[1] ?? '/';
}

/** The error shape of a matched path: its route's, or the one the request's headers ask for (a route both kinds of clients call). */
function styleOf(match: Exclude<RouteMatch, { kind: 'not-found' }>, request: Request): ClientStyle {
  const route = match.kind === 'found' ? match.route : match;
  return route.styleFor?.(request) ?? route.style;
}

function notFound(path: string): GatewayError {
  return new GatewayError({ status: 404, message: `Unknown path ${path}.`, code: 'not_found' });
}

function describe(error: unknown): Record<string, unknown> {
  if (error instanceof Error) return { name: error.name, message: error.message, stack: error.stack };
  return { value: String(error) };
}
