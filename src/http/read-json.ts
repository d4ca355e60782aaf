import { GatewayError } from '../errors.js';

/** Longest piece of the JSON parser's reason repeated in a message (V8 quotes the input). */
const MAX_REASON = 200;

/**
 * Reads a JSON request body that must be an object, as it arrives:
 * - content type `application/json` or any `+json` type, parameters allowed (a charset other
 *   than UTF-8 is refused: the spec says all JSON bodies are UTF-8) → else 400
 *   `invalid_content_type`;
 * - a declared `content-length` over `limitBytes` → 413 `request_too_large` before reading; the
 *   stream is counted too and cancelled at the limit (chunked bodies declare no length);
 * - empty (or blank) body → 400 `missing_body`; bytes that are not UTF-8 → 400
 *   `invalid_encoding`; malformed JSON → 400 `invalid_json` with the parser's reason; a value
 *   that is not an object → 400 `invalid_body`.
 */
export async function readJsonBody(request: Request, limitBytes: number): Promise<Record<string, unknown>> {
  checkContentType(request.headers.get('content-type'));

  const declared = request.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared) > limitBytes) {
    // Nothing is read; cancelling tells the host it may drop the rest of the upload.
    request.body?.cancel().catch(() => {});
    throw tooLarge(limitBytes);
  }

  const text = await readText(request, limitBytes);
  if (text.trim() === '') {
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'missing_body',
      message: 'A request body is required: send a JSON object.',
    });
  }

  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_json',
      message: `We could not parse the JSON body of your request: ${truncate(reason, MAX_REASON)}`,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_body',
      message: `The request body must be a JSON object, received ${value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`}.`,
    });
  }
  return value as Record<string, unknown>;
}

/** `application/json`, `application/json; charset=utf-8`, `application/vnd.x+json`, any case. */
function checkContentType(header: string | null): void {
  const [essence = '', ...parameters] = (header ?? '').split(';');
  const mediaType = essence.trim().toLowerCase();
  const isJson = mediaType === 'application/json' || /^[a-z0-9.+-]+\/[a-z0-9.+-]+\+json$/.test(mediaType);
  if (!isJson) {
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_content_type',
      message: `Content-Type must be application/json${header ? `, received ${truncate(header, 100)}` : ' (none was sent)'}.`,
    });
  }
  for (const parameter of parameters) {
    const [name = '', raw = ''] = parameter.split('=');
    if (name.trim().toLowerCase() !== 'charset') continue;
    const charset = raw.trim().replace(/^"|"$/g, '').toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') {
      throw new GatewayError({
        status: 400,
        type: 'invalid_request_error',
        code: 'invalid_content_type',
        message: `JSON bodies must be UTF-8, received charset ${truncate(charset, 40)}.`,
      });
    }
  }
}

/** The body decoded as UTF-8 chunk by chunk, stopping with a 413 once past `limitBytes`. */
async function readText(request: Request, limitBytes: number): Promise<string> {
  if (!request.body) return '';
  const reader = request.body.getReader();
  // One decoder per body, fed chunk by chunk: a character split across chunks decodes right.
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const parts: string[] = [];
  let received = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += value.byteLength;
      if (received > limitBytes) throw tooLarge(limitBytes);
      parts.push(decode(decoder, value));
    }
    parts.push(decode(decoder));
  } catch (error) {
    // Stop the upload: nothing more of it will be read.
    reader.cancel().catch(() => {});
    throw error;
  } finally {
    reader.releaseLock();
  }
  return parts.join('');
}

function decode(decoder: TextDecoder, chunk?: Uint8Array): string {
  try {
    return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
  } catch {
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_encoding',
      message: 'The request body is not valid UTF-8.',
    });
  }
}

function tooLarge(limitBytes: number): GatewayError {
  return new GatewayError({
    status: 413,
    type: 'invalid_request_error',
    code: 'request_too_large',
    message: `The request body is larger than the limit of ${limitBytes} bytes.`,
  });
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
