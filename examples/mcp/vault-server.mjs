#!/usr/bin/env node
/**
 * A small MCP server to try the gateway's `/mcp` with, spoken to over stdio (the gateway starts
 * it: examples/mcp/config.json). One tool, `reveal`, answering with the vault's token: `VAULT_TOKEN`
 * from the environment the gateway's config gives it, a secret no agent holds.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const token = process.env.VAULT_TOKEN || 'tok_unset';

const server = new Server({ name: 'vault', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: 'reveal',
      description: "Reveals the team's vault token",
      inputSchema: { type: 'object', properties: { purpose: { type: 'string', description: 'Why the token is needed' } }, required: ['purpose'] },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  if (request.params.name !== 'reveal') return { content: [{ type: 'text', text: `Unknown tool: ${request.params.name}` }], isError: true };
  return { content: [{ type: 'text', text: `The vault token is ${token}` }] };
});
await server.connect(new StdioServerTransport());
