import type { BodySpec, FuzzCase, MultipartSpec, Piece } from './cases.js';
import { fixtures } from './fixtures.js';
import { routeOf } from './routes.js';
import { FUZZ_KEY, MCP_FUZZ_VERSION } from './settings.js';
import type { WireRequest } from './wire.js';

export const DEFAULT_BOUNDARY = 'fuzzboundary';

/**
 * Ids made at start, substituted for their `{name}` in targets: video tasks (`{completed}`,
 * `{queued}`, another key's `{foreign}`) and stored responses (`{response}`, another key's
 * `{foreignResponse}`); in header values, MCP sessions (`{mcpSession}`, another key's `{foreignMcpSession}`).
 */
export type PreparedIds = Record<'completed' | 'queued' | 'foreign' | 'response' | 'foreignResponse' | 'mcpSession' | 'foreignMcpSession', string>;

const utf8 = new TextEncoder();

export function pieceBytes(piece: Piece): Uint8Array {
  if (typeof piece === 'string') return utf8.encode(piece);
  if ('repeat' in piece) return utf8.encode(piece.repeat.repeat(piece.times));
  if ('hex' in piece) return Buffer.from(piece.hex.replace(/\s+/g, ''), 'hex');
  return fixtures[piece.fixture];
}

export function piecesBytes(pieces: readonly Piece[]): Buffer {
  return Buffer.concat(pieces.map(pieceBytes));
}

/** The multipart body as a browser would write it, except where the spec asks for damage. */
export function multipartBytes(spec: MultipartSpec): Buffer {
  const boundary = spec.boundary ?? DEFAULT_BOUNDARY;
  const pieces: Piece[] = [];
  for (const part of spec.parts) {
    pieces.push(`--${boundary}\r\n`);
    const disposition =
      part.disposition !== undefined
        ? part.disposition
        : `form-data${part.name !== undefined ? `; name="${part.name}"` : ''}${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`;
    if (disposition !== null) pieces.push(`Content-Disposition: ${expandRuns(disposition)}\r\n`);
    if (part.contentType !== undefined) pieces.push(`Content-Type: ${part.contentType}\r\n`);
    pieces.push('\r\n', ...(Array.isArray(part.value) ? part.value : [part.value]), '\r\n');
  }
  if (!spec.unterminated) pieces.push(`--${boundary}--\r\n`);
  return piecesBytes(pieces);
}

export function bodyBytes(body: BodySpec | undefined): Buffer {
  if (!body) return Buffer.alloc(0);
  const bytes =
    'json' in body ? Buffer.from(JSON.stringify(body.json) ?? '', 'utf8') : 'parts' in body ? piecesBytes(body.parts) : multipartBytes(body.multipart);
  return body.truncateAt === undefined ? bytes : bytes.subarray(0, body.truncateAt);
}

/** The route's usual headers: the ones a well-behaved client of that route sends. */
function defaultHeaders(testCase: FuzzCase, body: Buffer): Record<string, string | string[]> {
  const route = routeOf(testCase.route);
  const headers: Record<string, string | string[]> = { host: '127.0.0.1' };
  if (route.style === 'anthropic') {
    headers['x-api-key'] = FUZZ_KEY;
    headers['anthropic-version'] = '2023-06-01';
  } else if (route.style === 'gemini') {
    headers['x-goog-api-key'] = FUZZ_KEY;
  } else {
    headers.authorization = `Bearer ${FUZZ_KEY}`;
  }
  if (route.style === 'mcp') {
    headers.accept = 'application/json, text/event-stream';
    if (route.name === 'mcp') {
      headers['mcp-session-id'] = '{mcpSession}';
      headers['mcp-protocol-version'] = MCP_FUZZ_VERSION;
    }
  }
  if (route.body === 'json') headers['content-type'] = 'application/json';
  if (route.body === 'multipart') headers['content-type'] = 'multipart/form-data; boundary={boundary}';
  if (testCase.chunked) headers['transfer-encoding'] = 'chunked';
  else if (body.byteLength > 0 || route.method === 'POST') headers['content-length'] = String(body.byteLength);
  return headers;
}

/** Turns a case into the bytes to send. */
export function materialize(testCase: FuzzCase, ids: PreparedIds): WireRequest {
  const route = routeOf(testCase.route);
  const body = bodyBytes(testCase.body);
  const boundary = testCase.body && 'multipart' in testCase.body ? (testCase.body.multipart.boundary ?? DEFAULT_BOUNDARY) : DEFAULT_BOUNDARY;

  const merged: Record<string, string | string[] | null> = { ...defaultHeaders(testCase, body), ...lowerCased(testCase.headers) };
  if (testCase.contentLength !== undefined) merged['content-length'] = testCase.contentLength === null ? null : String(testCase.contentLength);
  const headers: [string, string][] = [];
  for (const [name, value] of Object.entries(merged)) {
    if (value === null) continue;
    for (const one of Array.isArray(value) ? value : [value]) {
      const expanded = one.replaceAll('{boundary}', boundary).replace(/\{(mcpSession|foreignMcpSession)\}/g, (_, name: keyof PreparedIds) => ids[name]);
      headers.push([name, expandRuns(expanded)]);
    }
  }
  for (let i = 0; i < (testCase.extraHeaders ?? 0); i++) headers.push([`x-fuzz-${i}`, String(i)]);

  const declared = Number(merged['content-length']);
  const target = expandRuns(testCase.target ?? route.path).replace(
    /\{(completed|queued|foreign|response|foreignResponse)\}/g,
    (_, name: keyof PreparedIds) => ids[name],
  );
  return {
    method: testCase.method ?? route.method,
    target,
    headers,
    body: testCase.chunked ? chunkedBytes(body, testCase.chunked) : body,
    // A client that declared more than it has gives up after sending it.
    halfClose: Number.isFinite(declared) && declared > body.byteLength,
  };
}

/** `{{20000×g}}` → 20 000 `g`s: long header values, targets and field names, written short. */
export function expandRuns(text: string): string {
  return text.replace(/\{\{(\d+)×(.*?)\}\}/gs, (_, times: string, unit: string) => unit.repeat(Number(times)));
}

function lowerCased(headers: FuzzCase['headers']): Record<string, string | string[] | null> {
  const out: Record<string, string | string[] | null> = {};
  for (const [name, value] of Object.entries(headers ?? {})) out[name.toLowerCase()] = value;
  return out;
}

function chunkedBytes(body: Buffer, size: number): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.byteLength; at += size) {
    const chunk = body.subarray(at, at + size);
    parts.push(Buffer.from(`${chunk.byteLength.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}
