import type { RequestLogReader } from '../logs/request-log.js';
import type { DeploymentHealthEntry } from '../policy/deployment-health.js';
import { openaiStyle } from '../protocols/openai/style.js';
import type { AdminQuery } from './admin-query.js';
import type { Actor, ManagedKeyStore } from './keys/managed-key-store.js';

/** What an admin route handler gets: the request, who asked, and the stores. */
export interface AdminContext {
  request: Request;
  params: Record<string, string>;
  actor: Actor;
  keys: ManagedKeyStore;
  log: RequestLogReader | undefined;
  health: (() => DeploymentHealthEntry[]) | undefined;
  /** The query string, taking only the parameters named (any other is a 400). */
  query(allowed: readonly string[]): AdminQuery;
}

export interface AdminRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Below the admin base path; `:name` segments are parameters. */
  path: string;
  /** Errors in OpenAI's shape, as every admin answer. */
  style: typeof openaiStyle;
  handler(context: AdminContext): Promise<Response>;
}

/** One line of a routing table. */
export function adminRoute(method: AdminRoute['method'], path: string, handler: AdminRoute['handler']): AdminRoute {
  return { method, path, style: openaiStyle, handler };
}
