import Fastify, { type FastifyInstance } from 'fastify';
import { createGateway, type KeyStore } from 'infergate';
import { fastifyPlugin, type FastifyContext } from 'infergate/fastify';
import { exampleCatalog, type ExampleOptions } from '../shared/catalog.ts';
import { keyRecordFor, userForNodeHeaders, userHeaderHook, type AppUser } from '../shared/users.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the host's own `onRequest` auth hook. */
    user?: AppUser | undefined;
  }
}

/** The key store reads the user that the host's auth hook resolved (`request.user`). */
const keys: KeyStore = {
  lookup(key, { serverContext }) {
    const { user } = (serverContext as FastifyContext).request;
    return user && user.apiKey === key ? keyRecordFor(user) : undefined;
  },
};

/** A Fastify app with its own JSON route, and the gateway registered under the prefix `/ai`. */
export function buildApp(options: ExampleOptions = {}): FastifyInstance {
  const gateway = createGateway({
    keys,
    ...exampleCatalog(options),
    hooks: { onResponse: userHeaderHook((context) => (context as FastifyContext).request.user) },
  });

  const app = Fastify();
  app.decorateRequest('user', undefined);
  app.addHook('onRequest', async (request) => {
    request.user = userForNodeHeaders(request.headers);
  });
  // The app's own routes keep Fastify's parsers; the plugin leaves the gateway's bodies unread.
  app.post('/echo', async (request) => ({ received: request.body }));
  app.get('/', async (request) => ({ app: 'infergate Fastify example', gateway: '/ai/v1', user: request.user?.id ?? null }));
  app.register(fastifyPlugin, { gateway, prefix: '/ai' });
  return app;
}
