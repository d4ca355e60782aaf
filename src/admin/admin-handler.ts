import { createServerAdapter, type ServerAdapter } from '@whatwg-node/server';
import { GatewayError, isGatewayError } from '../errors.js';
import { addHeaders } from '../http/add-headers.js';
import { errorResponse } from '../http/error-response.js';
import { Router } from '../http/router.js';
import { jsonLogger, silentLogger, type Logger } from '../logger.js';
import type { RequestLogReader } from '../logs/request-log.js';
import type { DeploymentHealthEntry } from '../policy/deployment-health.js';
import { openaiStyle } from '../protocols/openai/style.js';
import { adminAuthorizer, type AdminAuthorize } from './admin-auth.js';
import { AdminQuery } from './admin-query.js';
import type { AdminRoute } from './admin-route.js';
import { adminRoutes } from './admin-routes.js';
import { dashboardResponse } from './dashboard-route.js';
import { InvalidCursorError, type ManagedKeyStore } from './keys/managed-key-store.js';

/** Options of `createAdminHandler` (docs/admin.md, "Admin API"). */
export interface AdminHandlerOptions {
  /** The admin key (at least 16 characters), sent as `Authorization: Bearer <admin key>`. Give this or `authorize`. */
  key?: string | undefined;
  /** Your own check (a session, SSO): the actor to audit, or `undefined` for a 401. Give this or `key`. */
  authorize?: AdminAuthorize | undefined;
  /** Where managed keys live: `MemoryKeyStore`, `PostgresKeyStore`, `RedisKeyStore`, or your own. */
  keys: ManagedKeyStore;
  /** The request log to read back. Without one, `/logs` and `/stats` answer 404. */
  log?: RequestLogReader | undefined;
  /** The gateway's deployment health (`/health`); without it the list is empty. */
  health?: (() => DeploymentHealthEntry[]) | undefined;
  /** Where the admin API is mounted. Default `/admin`. */
  basePath?: string | undefined;
  /** Where a store's failure is written (the client gets a 503). Default: JSON lines on stderr; `false`: nowhere. */
  logger?: Logger | false | undefined;
}

/** The admin API as one object: a Fetch handler (`admin.fetch`, `admin.handle`) and a Node request listener. */
export type AdminHandler = ServerAdapter<Record<string, unknown>, AdminCore>;

/** Where the standalone server mounts the admin API, and the default `basePath`. */
export const ADMIN_PATH = '/admin';

/** Answers one admin request: the dashboard's files to anyone, every JSON route to the admin only. */
export class AdminCore {
  private readonly router = new Router<AdminRoute>(adminRoutes);
  private readonly actorOf: ReturnType<typeof adminAuthorizer>;
  private readonly basePath: string;
  private readonly logger: Logger;

  constructor(private readonly options: AdminHandlerOptions) {
    this.actorOf = adminAuthorizer(options);
    if (typeof options.keys?.create !== 'function' || typeof options.keys.lookup !== 'function') {
      throw new TypeError('createAdminHandler: keys must be a ManagedKeyStore (MemoryKeyStore, PostgresKeyStore, RedisKeyStore)');
    }
    const basePath = (options.basePath ?? ADMIN_PATH).replace(/\/+$/, '');
    if (!/^(\/[^/?#]+)*$/.test(basePath)) throw new TypeError(`createAdminHandler: basePath must be a path like "/admin", got "${options.basePath}"`);
    this.basePath = basePath;
    this.logger = options.logger === false ? silentLogger : (options.logger ?? jsonLogger);
  }

  handle = async (request: Request, serverContext: Record<string, unknown>): Promise<Response> => {
    let response: Response;
    try {
      response = await this.route(request, serverContext);
    } catch (error) {
      response = this.failure(error);
    }
    // Keys are shown once and the data is the operator's: no cache keeps an answer (the dashboard's files say their own).
    return response.headers.has('cache-control') ? response : addHeaders(response, { 'cache-control': 'no-store' });
  };

  private async route(request: Request, serverContext: Record<string, unknown>): Promise<Response> {
    if (!URL.canParse(request.url)) throw new GatewayError({ status: 400, message: 'The request URL is not valid.', code: 'invalid_url' });
    const url = new URL(request.url);
    const { basePath } = this;
    if (url.pathname !== basePath && !url.pathname.startsWith(basePath + '/')) throw notFound(url.pathname);
    const path = url.pathname.slice(basePath.length);
    // The dashboard's files (and `<base>` → `<base>/`), to anyone: they hold no data.
    const file = request.method === 'GET' || request.method === 'HEAD' ? await dashboardResponse(path, request.url) : undefined;
    if (file) return file;

    // The key first: without it nothing, not even which paths exist, is told.
    const actor = await this.actorOf(request, serverContext);
    const match = this.router.match(request.method, path);
    if (match.kind === 'not-found') throw notFound(url.pathname);
    if (match.kind === 'method-not-allowed') {
      throw new GatewayError({
        status: 405,
        message: `Method ${request.method} is not allowed on ${url.pathname}; use ${match.allow.join(' or ')}.`,
        code: 'method_not_allowed',
        headers: { allow: match.allow.join(', ') },
      });
    }
    const { keys, log, health } = this.options;
    return match.route.handler({
      request,
      params: match.params,
      actor,
      keys,
      log,
      health,
      query: (allowed) => new AdminQuery(url.searchParams, allowed),
    });
  }

  private failure(error: unknown): Response {
    if (error instanceof InvalidCursorError) {
      return errorResponse(new GatewayError({ status: 400, message: error.message, param: 'cursor', code: 'invalid_cursor' }), openaiStyle, '');
    }
    if (isGatewayError(error)) return errorResponse(error, openaiStyle, '');
    // Past validation, a route only calls its stores: what else throws is one of them failing (its
    // database away). The operator gets the cause in the log, the client a 503 to retry.
    this.logger.error('admin API: a store failed', {
      error: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error),
    });
    const unavailable = new GatewayError({
      status: 503,
      message: 'The key store or request log did not answer; try again shortly.',
      code: 'store_unavailable',
      headers: { 'retry-after': '1' },
    });
    return errorResponse(unavailable, openaiStyle, '');
  }
}

/** Creates the admin API. Options are checked now; a bad one throws a `TypeError` naming it. */
export function createAdminHandler(options: AdminHandlerOptions): AdminHandler {
  return createServerAdapter<Record<string, unknown>, AdminCore>(new AdminCore(options));
}

function notFound(path: string): GatewayError {
  return new GatewayError({ status: 404, message: `Unknown path ${path}.`, code: 'not_found' });
}

/** Whether a Node request target (`/admin`, `/admin/keys?x`) is below the standalone server's admin path. */
export function isAdminTarget(target: string | undefined): boolean {
  return target !== undefined && (target === ADMIN_PATH || /^\/admin[/?]/.test(target));
}
