import { GatewayError } from '../errors.js';
import { AdminCredential } from './admin-credential.js';
import type { Actor } from './keys/managed-key-store.js';

/**
 * A host's own check of who may use the admin API (its session cookie, its SSO): the actor the
 * audit records, or `undefined` to refuse (401). `serverContext` is the host's per-request
 * context (Express `req`/`res`…).
 */
export type AdminAuthorize = (request: Request, serverContext: unknown) => Actor | undefined | Promise<Actor | undefined>;

/** The audit's name of whoever holds the admin key. */
export const ADMIN_ACTOR = 'admin';

/**
 * Who is asking, or a 401 (`invalid_admin_key`, `www-authenticate: Bearer`): the admin key's
 * holder (`admin`), or the host's `authorize` answer. A gateway key is no admin key, so it gets
 * the 401 too. The client's address is added when the host tells it (Node's socket).
 */
export function adminAuthorizer(options: { key?: string | undefined; authorize?: AdminAuthorize | undefined }) {
  if ((options.key === undefined) === (options.authorize === undefined)) {
    throw new TypeError('createAdminHandler: give exactly one of key (the admin key) and authorize (your own check)');
  }
  if (options.authorize !== undefined && typeof options.authorize !== 'function') throw new TypeError('createAdminHandler: authorize must be a function');
  const credential = options.key === undefined ? undefined : new AdminCredential(options.key);
  const authorize: AdminAuthorize =
    options.authorize ?? ((request) => (credential!.admits(request.headers.get('authorization')) ? { name: ADMIN_ACTOR } : undefined));

  return async function actorOf(request: Request, serverContext: unknown): Promise<Actor> {
    const actor = await authorize(request, serverContext);
    if (!actor) {
      throw new GatewayError({
        status: 401,
        type: 'invalid_request_error',
        message: 'The admin API needs the admin key: Authorization: Bearer <admin key>.',
        code: 'invalid_admin_key',
        headers: { 'www-authenticate': 'Bearer' },
      });
    }
    const address = actor.address ?? clientAddress(serverContext);
    return address === undefined ? { name: actor.name } : { name: actor.name, address };
  };
}

/** The peer's address under Node (whatwg-node passes `{ req, res }`); other hosts do not tell it. */
function clientAddress(serverContext: unknown): string | undefined {
  const address = (serverContext as { req?: { socket?: { remoteAddress?: unknown } } } | undefined)?.req?.socket?.remoteAddress;
  return typeof address === 'string' ? address : undefined;
}
