import { invalidRequest } from '../errors.js';

/**
 * Cloud-storage references: URIs an upstream resolves with the operator's own cloud identity,
 * not the client's. Bedrock reads `s3://` with the gateway's IAM principal, Vertex AI reads
 * `gs://` with the project's service agent, and the Gemini API resolves Files-API names
 * (`files/…`, `https://…/v1beta/files/…`) in the API key's project. Passed on as a client sent
 * them, any key could have the model read and repeat the operator's objects (a confused deputy),
 * so each is refused unless the provider's `storageUris` hold a prefix of it, and so do the key's
 * when it has some.
 */

/** Checks a reference a request names; throws the 400 naming `param` when it may not go upstream. */
export type StorageUriCheck = (uri: string, param: string) => void;

const CLOUD_SCHEME = /^(?:s3|gs):\/\//i;
const FILES_API = /^files\/|^https?:\/\/[^/]+\/v1[a-z0-9]*\/files\//i;

/** True for a URI the upstream would read with the operator's identity. */
export function isStorageUri(uri: string): boolean {
  return CLOUD_SCHEME.test(uri) || FILES_API.test(uri);
}

/**
 * The check for one call: a storage URI passes when a prefix of the provider's allows it and,
 * when the key lists prefixes too, one of the key's. Anything else (http URLs, data) passes.
 */
export function storageUriCheck(provider: readonly string[] | undefined, key: readonly string[] | undefined): StorageUriCheck {
  return (uri, param) => {
    if (!isStorageUri(uri) || (allows(provider, uri) && (key === undefined || allows(key, uri)))) return;
    throw invalidRequest(
      `'${param}' names a cloud-storage object, which the upstream would read with the gateway's own credentials; send the file's data instead.`,
      param,
      'storage_uri_not_allowed',
    );
  };
}

/** What an encoder applies when its provider gave no check: every storage URI refused. */
export const refuseStorageUris: StorageUriCheck = storageUriCheck(undefined, undefined);

/**
 * A prefix matches whole path segments (`s3://b/tenant-a` matches `s3://b/tenant-a/x`, not
 * `s3://b/tenant-ab`); a URI with `.`/`..` segments, a backslash or a percent escape matches none,
 * as the upstream might read it as another path.
 */
function allows(prefixes: readonly string[] | undefined, uri: string): boolean {
  if (!prefixes || /(?:^|\/)\.{1,2}(?:\/|$)|[\\%]/.test(uri.slice(uri.indexOf('//') + 2))) return false;
  return prefixes.some(
    (prefix) => prefix !== '' && uri.startsWith(prefix) && (prefix.endsWith('/') || uri.length === prefix.length || uri[prefix.length] === '/'),
  );
}
