import busboy from 'busboy';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One part of a recorded multipart body. */
export interface RecordedPart {
  name: string;
  /** Text fields. */
  value?: string;
  /** Files. */
  filename?: string | undefined;
  contentType?: string;
  data?: Buffer;
}

/** What a fake media upstream received. */
export interface MediaRequest {
  method: string;
  path: string;
  /** Path with the query string. */
  url: string;
  headers: Record<string, string>;
  raw: Buffer;
  /** Parsed JSON body, when it was JSON. */
  json?: any;
  /** Every part in order, when the body was multipart. */
  parts?: RecordedPart[];
}

export type MediaHandler = (request: MediaRequest, response: ServerResponse) => void | Promise<void>;

export interface MediaServer {
  url: string;
  requests: MediaRequest[];
  close(): Promise<void>;
}

/**
 * A loopback HTTP server that records each request (JSON bodies parsed, multipart bodies parsed
 * part by part with busboy) before handing it to `handle`.
 */
export async function startMediaServer(handle: MediaHandler): Promise<MediaServer> {
  const requests: MediaRequest[] = [];
  const server = createServer((req, res) => {
    void record(req).then(
      async (recorded) => {
        requests.push(recorded);
        try {
          await handle(recorded, res);
        } catch (error) {
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: String(error), type: 'server_error' } }));
        }
      },
      () => res.destroy(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function record(req: IncomingMessage): Promise<MediaRequest> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  const url = req.url ?? '/';
  const recorded: MediaRequest = { method: req.method ?? 'GET', path: url.split('?')[0]!, url, headers, raw };
  const type = headers['content-type'] ?? '';
  if (type.startsWith('application/json') && raw.length > 0) recorded.json = JSON.parse(raw.toString('utf8'));
  if (type.startsWith('multipart/form-data')) recorded.parts = await parseParts(type, raw);
  return recorded;
}

function parseParts(contentType: string, raw: Buffer): Promise<RecordedPart[]> {
  return new Promise((resolve, reject) => {
    const parts: RecordedPart[] = [];
    const parser = busboy({ headers: { 'content-type': contentType } });
    parser.on('field', (name, value) => parts.push({ name, value }));
    parser.on('file', (name, stream, info) => {
      const part: RecordedPart = { name, filename: info.filename, contentType: info.mimeType };
      parts.push(part);
      const data: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => data.push(chunk));
      stream.on('end', () => {
        part.data = Buffer.concat(data);
      });
    });
    parser.on('close', () => resolve(parts));
    parser.on('error', reject);
    parser.end(raw);
  });
}

/** Answers `bytes` honouring a single `Range` (206, or 416 past the end), as storage servers do. */
export function serveBytes(request: MediaRequest, response: ServerResponse, bytes: Buffer, contentType = 'video/mp4'): void {
  const match = /^bytes=(\d*)-(\d*)$/.exec(request.headers.range ?? '');
  if (!match) {
    response.writeHead(200, { 'content-type': contentType, 'content-length': bytes.length, 'accept-ranges': 'bytes' });
    response.end(bytes);
    return;
  }
  const start = match[1] ? Number(match[1]) : Math.max(0, bytes.length - Number(match[2]));
  const end = match[1] && match[2] ? Math.min(Number(match[2]), bytes.length - 1) : bytes.length - 1;
  if (start >= bytes.length) {
    response.writeHead(416, { 'content-range': `bytes */${bytes.length}` });
    response.end();
    return;
  }
  response.writeHead(206, {
    'content-type': contentType,
    'content-length': end - start + 1,
    'content-range': `bytes ${start}-${end}/${bytes.length}`,
    'accept-ranges': 'bytes',
  });
  response.end(bytes.subarray(start, end + 1));
}

export function sendJson(response: ServerResponse, body: unknown, status = 200): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
