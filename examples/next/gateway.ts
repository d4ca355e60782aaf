import { createGateway, type KeyStore } from 'infergate';
import { nextRouteHandlers } from 'infergate/next';
import { exampleCatalog, type ExampleOptions } from '../shared/catalog.ts';
import { keyRecordFor, userForRequest, userHeaderHook, type AppUser } from '../shared/users.ts';

type Context = { user?: AppUser | undefined };

/** The key store reads the user that `context` resolved for the request. */
const keys: KeyStore = {
  lookup(key, { serverContext }) {
    const { user } = serverContext as Context;
    return user && user.apiKey === key ? keyRecordFor(user) : undefined;
  },
};

/**
 * The route handlers of `app/api/[...path]/route.ts`: the gateway below `/api` (the route's
 * folder is its mount point), with the user the app's auth resolves as context.
 */
export function buildApp(options: ExampleOptions = {}): ReturnType<typeof nextRouteHandlers> {
  const gateway = createGateway({
    keys,
    ...exampleCatalog(options),
    hooks: { onResponse: userHeaderHook((context) => (context as Context).user) },
  });
  return nextRouteHandlers(gateway, { context: (request): Context => ({ user: userForRequest(request) }) });
}
