import { GatewayError } from '../errors.js';
import { echo } from '../http/echo.js';
import { jsonResponse } from '../http/json-response.js';
import { readKeyPatch, readKeySettings, readRotation } from './admin-body.js';
import { adminRoute, type AdminContext, type AdminRoute } from './admin-route.js';
import { KeyRevokedError, type IssuedKey, type ManagedKey } from './keys/managed-key-store.js';

/** `/keys` and `/audit`: the operator's actions on managed keys, each one audited by the store. */
export const keyRoutes: readonly AdminRoute[] = [
  adminRoute('POST', '/keys', async function createKey({ request, keys, actor, query }) {
    query([]);
    const settings = await readKeySettings(request);
    return jsonResponse(issued(await keys.create(settings, actor)), 201);
  }),
  adminRoute('GET', '/keys', async function listKeys({ keys, query }) {
    const params = query(['limit', 'cursor', 'includeRevoked']);
    const page = await keys.list({ limit: params.limit(), cursor: params.text('cursor'), includeRevoked: params.flag('includeRevoked') });
    return jsonResponse({ object: 'list', ...page });
  }),
  adminRoute('GET', '/keys/:id', async function getKey({ keys, params, query }) {
    query([]);
    return jsonResponse(found(await keys.get(params.id!), params.id!));
  }),
  adminRoute('PATCH', '/keys/:id', async function updateKey({ request, keys, params, actor, query }) {
    query([]);
    const patch = await readKeyPatch(request);
    return jsonResponse(found(await unlessRevoked(() => keys.update(params.id!, patch, actor)), params.id!));
  }),
  adminRoute('DELETE', '/keys/:id', async function revokeKey({ keys, params, actor, query }) {
    query([]);
    return jsonResponse(found(await keys.revoke(params.id!, actor), params.id!));
  }),
  adminRoute('POST', '/keys/:id/rotate', async function rotateKey({ request, keys, params, actor, query }) {
    query([]);
    const { graceSeconds } = await readRotation(request);
    const rotated = await unlessRevoked(() => keys.rotate(params.id!, { graceMs: graceSeconds * 1000 }, actor));
    return jsonResponse(issued(found(rotated, params.id!)));
  }),
  adminRoute('GET', '/audit', async function listAudit({ keys, query }: AdminContext) {
    const params = query(['keyId', 'limit', 'cursor']);
    const page = await keys.audit({ keyId: params.text('keyId'), limit: params.limit(), cursor: params.text('cursor') });
    return jsonResponse({ object: 'list', ...page });
  }),
];

/** A key with its secret: the only answer that shows it. */
function issued({ key, secret }: IssuedKey): ManagedKey & { key: string } {
  return { ...key, key: secret };
}

function found<T>(value: T | undefined, id: string): T {
  if (value === undefined) throw new GatewayError({ status: 404, message: `No key with id '${echo(id)}'.`, param: 'id', code: 'key_not_found' });
  return value;
}

/** A revoked key is final: changing or rotating it is a 409. */
async function unlessRevoked<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (!(error instanceof KeyRevokedError)) throw error;
    throw new GatewayError({ status: 409, message: `${error.message} A revoked key cannot be changed or rotated.`, code: 'key_revoked' });
  }
}
