import { GatewayError } from '../errors.js';

/**
 * A WebSocket handshake: a GET whose `Upgrade` header names `websocket` (a token list, any case).
 * Codex opens one on the Responses path when its provider enables Responses over WebSocket.
 */
export function isWebSocketUpgrade(request: Request): boolean {
  if (request.method !== 'GET') return false;
  const upgrade = request.headers.get('upgrade');
  return upgrade?.split(',').some((token) => token.trim().toLowerCase() === 'websocket') === true;
}

/**
 * The gateway speaks Responses over HTTP only. Codex falls back to HTTP at once on a 426 (and
 * only on it: a 404 or 405 there costs it its retries first); the body is OpenAI's error shape.
 */
export function webSocketNotSupported(path: string): GatewayError {
  return new GatewayError({
    status: 426,
    message: `WebSocket is not supported on ${path}; send the request over HTTP (POST).`,
    type: 'invalid_request_error',
    code: 'websocket_not_supported',
  });
}
