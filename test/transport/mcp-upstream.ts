import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { serve, type Served } from '../helpers/serve.js';

/**
 * An SDK-built MCP server on loopback, the upstream of the hosts' `/mcp`: one tool, `shout`,
 * answering its text in capitals. Run in the test process, so every host (child processes
 * included) reaches it over real HTTP.
 */
export async function startMcpUpstream(): Promise<Served & { url: string }> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const served = await serve(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? transports.get(id) : undefined;
    if (!transport) {
      const made = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID, onsessioninitialized: (sid) => void transports.set(sid, made) });
      transport = made;
      const server = new McpServer({ name: 'tools', version: '1' });
      server.registerTool('shout', { description: 'Answers its text in capitals', inputSchema: { text: z.string() } }, async ({ text }) => ({
        content: [{ type: 'text', text: text.toUpperCase() }],
      }));
      await server.connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  return { ...served, url: `${served.url}/mcp` };
}
