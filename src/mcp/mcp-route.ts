import { randomUUID } from 'node:crypto';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { RouteContext } from '../http/route.js';
import { aggregateServer } from './aggregate-server.js';
import type { McpGateway } from './mcp-session.js';
import type { McpSessionRecord } from './session-store.js';
import type { McpToolCall } from './tool-call.js';

/** A JSON-RPC error answered over HTTP, with the SDK's own codes and messages. */
function rpcErrorResponse(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status });
}

/**
 * `/mcp`: the gateway's Streamable HTTP MCP endpoint. The gateway keeps each session itself (in
 * `store`, so any instance sharing it serves any request), and answers each request with a fresh
 * stateless transport and server: upstream sessions are resumed by their ids.
 */
export function mcpHandler(
  { options, store, upstreams }: McpGateway,
  observeCall: (context: RouteContext, call: McpToolCall) => void,
): (context: RouteContext) => Promise<Response> {
  return async (context) => {
    const { request, key } = context;
    const sessionId = request.headers.get('mcp-session-id');
    if (request.method === 'GET') return new Response(null, { status: 405, headers: { allow: 'POST, DELETE' } });
    if (request.method === 'DELETE') {
      if (!sessionId) return rpcErrorResponse(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      const record = await store.get(sessionId);
      if (!record || record.keyId !== key.id) return rpcErrorResponse(404, -32001, 'Session not found');
      await store.delete(sessionId);
      await Promise.all(Object.entries(record.upstream).map(([server, state]) => upstreams.terminate(server, state)));
      return new Response(null, { status: 200 });
    }
    const body: unknown = await request.json().catch(() => undefined);
    if (body === undefined) return rpcErrorResponse(400, -32700, 'Parse error: Invalid JSON');
    const initializing = !Array.isArray(body) && (body as { method?: unknown })?.method === 'initialize';
    let record: McpSessionRecord | undefined;
    let id = sessionId ?? undefined;
    if (initializing) {
      id = randomUUID();
      record = { keyId: key.id, protocolVersion: LATEST_PROTOCOL_VERSION, createdAt: Date.now(), upstream: await upstreams.initialize(context.signal) };
      await store.set(id, record);
    } else {
      if (!id) return rpcErrorResponse(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      record = await store.get(id);
      // Another key's session is as unknown as none: ids are not confirmed to strangers.
      if (!record || record.keyId !== key.id) return rpcErrorResponse(404, -32001, 'Session not found');
    }
    const server = aggregateServer({
      options,
      upstreams,
      store,
      key,
      sessionId: id,
      record,
      signal: context.signal,
      observeCall: (call) => observeCall(context, call),
    });
    // No session id generator: stateless, the gateway keeps the session itself.
    const transport = new WebStandardStreamableHTTPServerTransport({});
    await server.connect(transport);
    const answer = await transport.handleRequest(request, { parsedBody: body });
    const headers = new Headers(answer.headers);
    headers.set('mcp-session-id', id);
    return new Response(answer.body, { status: answer.status, headers });
  };
}
