import { sendNodeResponse } from '@whatwg-node/server';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import type { Gateway } from '../src/gateway.js';
import { hostNodeRequest } from '../src/http/host-request.js';

/** What hooks and a custom `KeyStore` receive as `serverContext` under Express. */
export type ExpressContext = {
  /** Express's request: whatever the host's middleware put on it (`req.user`…) is there. */
  req: Request;
  res: Response;
};

/**
 * Express middleware serving the gateway below its mount path: `app.use('/ai', expressMiddleware(gateway))`
 * answers `/ai/v1/chat/completions`. It may run after `express.json()` or another body parser
 * (the parsed body is used; see `hostNodeRequest`), and passes `{ req, res }` to hooks and the
 * key store. The second handler catches a host JSON parser's syntax error, whose text it keeps,
 * so that the gateway answers it in the route's error shape rather than Express's HTML page.
 */
export function expressMiddleware(gateway: Gateway): [RequestHandler, ErrorRequestHandler] {
  function serve(req: Request, res: Response, next: NextFunction, keptText: string | undefined): void {
    const nodeRequest = hostNodeRequest(req, req.url, keptText);
    const context: ExpressContext = { req, res };
    Promise.resolve(gateway.handleNodeRequestAndResponse(nodeRequest, res, context))
      .then((response) => sendNodeResponse(response, res, nodeRequest, true))
      .catch(next);
  }
  // Express tells the two apart by their number of parameters: keep three and four.
  return [
    function infergateExpress(req: Request, res: Response, next: NextFunction): void {
      serve(req, res, next, undefined);
    },
    function infergateExpressParseError(error: unknown, req: Request, res: Response, next: NextFunction): void {
      const failed = error as { type?: unknown; body?: unknown } | undefined;
      if (failed?.type === 'entity.parse.failed' && typeof failed.body === 'string') serve(req, res, next, failed.body);
      else next(error);
    },
  ];
}
