import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { createGateway, type KeyStore } from 'infergate';
import { expressMiddleware, type ExpressContext } from 'infergate/express';
import { exampleCatalog, type ExampleOptions } from '../shared/catalog.ts';
import { keyRecordFor, userForNodeHeaders, userHeaderHook, type AppUser } from '../shared/users.ts';

declare global {
  // Augments Express's own Request type (its global namespace), not a second `Express`.
  // biome-ignore lint/suspicious/noRedeclare: declaration merging with @types/express
  namespace Express {
    interface Request {
      /** Set by `authenticateUser`, the host's own auth middleware. */
      user?: AppUser | undefined;
    }
  }
}

/** The host app's own API authentication: finds the caller in its user table by their key. */
function authenticateUser(req: Request, _res: Response, next: NextFunction): void {
  req.user = userForNodeHeaders(req.headers);
  next();
}

/**
 * The gateway's keys are the app's users' keys: the key store reads the user that the host's
 * middleware resolved from its own table (`req.user`), and turns their plan into a scope.
 */
const keys: KeyStore = {
  lookup(key, { serverContext }) {
    const { user } = (serverContext as ExpressContext).req;
    return user && user.apiKey === key ? keyRecordFor(user) : undefined;
  },
};

/** An Express app with its own routes and body parser, and the gateway mounted at `/ai`. */
export function buildApp(options: ExampleOptions = {}): Express {
  const gateway = createGateway({
    keys,
    ...exampleCatalog(options),
    hooks: { onResponse: userHeaderHook((context) => (context as ExpressContext).req.user) },
  });

  const app = express();
  app.use(authenticateUser);
  // The app's own routes want parsed JSON. The gateway works behind this parser too (it uses what
  // was parsed), but the parser's size limit then applies to gateway requests: hence 32mb.
  app.use(express.json({ limit: '32mb' }));
  app.get('/', (req, res) => {
    res.json({ app: 'infergate Express example', gateway: '/ai/v1', user: req.user?.id ?? null });
  });
  app.use('/ai', expressMiddleware(gateway));
  return app;
}
