import type { IncomingMessage, ServerResponse } from 'node:http';
import { serve, type Served } from './serve.js';

/**
 * A loopback proxy in front of a fake upstream that holds each request `delayMs()` before
 * passing it on: an upstream whose first byte comes late, made slow or fast again at will.
 */
export async function delayingProxy(target: string, delayMs: () => number): Promise<Served> {
  return serve((req: IncomingMessage, res: ServerResponse) => {
    void forward(req, res).catch(() => res.destroy());
  });

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    await new Promise((resolve) => setTimeout(resolve, delayMs()));
    const headers = Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)) as [string, string][];
    const upstream = await fetch(target + req.url, {
      method: req.method ?? 'GET',
      headers,
      ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
    });
    res.writeHead(
      upstream.status,
      Object.fromEntries([...upstream.headers].filter(([name]) => !['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name))),
    );
    const reader = upstream.body?.getReader();
    for (let read = await reader?.read(); read && !read.done; read = await reader!.read()) res.write(read.value);
    res.end();
  }
}
