// The floor: the least a Node passthrough proxy can do — node:http in, undici's pooled Agent out,
// bytes piped both ways, no parsing. What a gateway costs is measured against this.
// Usage: node bench/floor-proxy.mjs <upstream origin>   (started by bench/run.mjs)
import http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';
import { announce, serveIpc } from './lib/ipc.mjs';

const upstream = process.argv[2] ?? 'http://127.0.0.1:8080';
const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 1024 });
const hopByHop = new Set(['connection', 'keep-alive', 'transfer-encoding', 'host', 'content-length', 'upgrade']);
const hopByHopOut = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade']);

const server = http.createServer({ noDelay: true }, async (req, res) => {
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  try {
    /** @type {Record<string, string | string[]>} */
    const headers = {};
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && !hopByHop.has(name)) headers[name] = value;
    const length = req.headers['content-length'];
    const upstreamReply = await request(upstream + req.url, {
      method: /** @type {import('undici').Dispatcher.HttpMethod} */ (req.method),
      headers: length ? { ...headers, 'content-length': length } : headers,
      ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body: req }),
      dispatcher,
      signal: abort.signal,
    });
    /** @type {Record<string, string | string[]>} */
    const out = {};
    for (const [name, value] of Object.entries(upstreamReply.headers)) if (value !== undefined && !hopByHopOut.has(name)) out[name] = value;
    res.writeHead(upstreamReply.statusCode, out);
    await pipeline(upstreamReply.body, res);
  } catch {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
    res.end();
  }
});
server.keepAliveTimeout = 120_000;
serveIpc({
  shutdown: () => {
    setImmediate(() => process.exit(0));
    return true;
  },
});
server.listen(0, '127.0.0.1', () => announce({ port: /** @type {import('node:net').AddressInfo} */ (server.address()).port }));
