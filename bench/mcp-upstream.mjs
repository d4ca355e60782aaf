// The upstream MCP server of bench/mcp-overhead.mjs: built with the SDK (McpServer and its Node
// Streamable HTTP transport, one session per client), a tool `echo` answering its text at once.
// Usage: started by bench/mcp-overhead.mjs (it needs an IPC channel).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { announce, serveIpc } from './lib/ipc.mjs';

/** @type {Map<string, StreamableHTTPServerTransport>} */
const sessions = new Map();

const server = http.createServer(async (req, res) => {
  const id = req.headers['mcp-session-id'];
  let transport = typeof id === 'string' ? sessions.get(id) : undefined;
  if (!transport) {
    const created = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (sid) => void sessions.set(sid, created) });
    const mcp = new McpServer({ name: 'bench-upstream', version: '1' });
    mcp.registerTool('echo', { description: 'Answers its text', inputSchema: { text: z.string() } }, async ({ text }) => ({
      content: [{ type: 'text', text }],
    }));
    await mcp.connect(created);
    transport = created;
  }
  await transport.handleRequest(req, res);
});
server.listen(0, '127.0.0.1', () => {
  serveIpc({});
  announce({ port: /** @type {import('node:net').AddressInfo} */ (server.address()).port });
});
