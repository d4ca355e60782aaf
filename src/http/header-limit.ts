import { GatewayError } from '../errors.js';

/**
 * Refuses a request whose request line and headers together exceed `limitBytes` with a 431 in
 * the route's error shape. Node's server applies its own `maxHeaderSize` (16 KiB by default)
 * before the gateway runs; Bun, Deno and serverless hosts accept far more, so the gateway
 * checks in every host. Counted as on the wire: `METHOD path HTTP/1.1`, then `name: value` per
 * header, each line with its CRLF (header values are byte strings, so length is bytes).
 */
export function checkHeaderSize(request: Request, limitBytes: number): void {
  const url = request.url;
  // The path and query of an absolute URL: what the request line carried.
  const pathStart = url.indexOf('/', url.indexOf('//') + 2);
  let size = request.method.length + 1 + (pathStart === -1 ? 1 : url.length - pathStart) + 11;
  for (const [name, value] of request.headers) {
    size += name.length + 2 + value.length + 2;
    if (size > limitBytes) throw tooLarge(limitBytes);
  }
  if (size > limitBytes) throw tooLarge(limitBytes);
}

function tooLarge(limitBytes: number): GatewayError {
  return new GatewayError({
    status: 431,
    type: 'invalid_request_error',
    code: 'request_headers_too_large',
    message: `The request line and headers are larger than the limit of ${limitBytes} bytes.`,
  });
}
