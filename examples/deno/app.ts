import { createGateway, type Gateway, type KeyStore } from 'infergate';
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

/** The gateway at `/ai` (its `basePath`: `Deno.serve` has no mount point), and the per-request context. */
export function buildApp(options: ExampleOptions = {}): { gateway: Gateway; context: (request: Request) => Context } {
  const gateway = createGateway({
    keys,
    basePath: '/ai',
    ...exampleCatalog(options),
    hooks: { onResponse: userHeaderHook((context) => (context as Context).user) },
  });
  return { gateway, context: (request) => ({ user: userForRequest(request) }) };
}
