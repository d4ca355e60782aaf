import type { McpToolCallEvent } from '../../mcp/tool-call-event.js';

/** Distinct tool names kept as labels per server; past it, `_OTHER`. */
export const MAX_TOOLS_PER_SERVER = 100;

/** What a metric says of a tool call's server and tool, from a bounded set. */
export interface ToolLabels {
  server: string;
  tool: string;
}

/**
 * Tool labels from a bounded set, so clients cannot grow the metrics without end: servers are the
 * configured ones (a name that matched none is `_OTHER`); tool names come from the client, and an
 * upstream may answer an unknown name with a tool error rather than a refusal, so each server keeps
 * its first `MAX_TOOLS_PER_SERVER` names and counts the rest as `_OTHER`. A refused call's tool is
 * `_OTHER` (the gateway's refusal says nothing of what the name was).
 */
export class ToolLabeler {
  private readonly seen = new Map<string, Set<string>>();

  of(event: Pick<McpToolCallEvent, 'server' | 'tool' | 'outcome'>): ToolLabels {
    const server = event.server || '_OTHER';
    if (!event.server || event.outcome === 'refused') return { server, tool: '_OTHER' };
    let tools = this.seen.get(server);
    if (!tools) this.seen.set(server, (tools = new Set()));
    if (tools.has(event.tool)) return { server, tool: event.tool };
    if (tools.size >= MAX_TOOLS_PER_SERVER) return { server, tool: '_OTHER' };
    tools.add(event.tool);
    return { server, tool: event.tool };
  }
}
