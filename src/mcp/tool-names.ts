import { createHash } from 'node:crypto';
import { TOOL_SEPARATOR } from './mcp-options.js';

/**
 * The longest tool name clients see. Chat Completions' function names stop at 64 characters,
 * Gemini CLI truncates longer MCP tool names and Codex caps its flattened ones there too.
 */
export const MAX_TOOL_NAME = 64;
const HASH_LENGTH = 10;
const SHORTENED = new RegExp(`${TOOL_SEPARATOR}[0-9a-f]{${HASH_LENGTH}}$`);

/** A name clients use, split into the configured server and the name on that server. */
export interface RoutedName {
  server: string;
  name: string;
}

/**
 * `<server>__<name>`, split after the configured server the name starts with: server names
 * cannot contain `__`, so an upstream name that does (`files__read__all`) stays whole. The
 * longest configured name wins when one server's name is another's prefix plus `_`.
 */
export function routeName(full: string, servers: Readonly<Record<string, unknown>>): RoutedName | undefined {
  let server: string | undefined;
  for (const name of Object.keys(servers)) {
    if (full.startsWith(name + TOOL_SEPARATOR) && name.length > (server?.length ?? -1)) server = name;
  }
  return server === undefined ? undefined : { server, name: full.slice(server.length + TOOL_SEPARATOR.length) };
}

/**
 * The name clients see for `tool` of `server`: `<server>__<tool>`, or, past 64 characters, its
 * first 52 characters then `__` and a hash of the whole, so the name stays distinct and stable
 * (any instance computes it again to map a call back). A server name too long to keep in a
 * shortened name leaves the name whole.
 */
export function clientToolName(server: string, tool: string): string {
  const full = `${server}${TOOL_SEPARATOR}${tool}`;
  const kept = MAX_TOOL_NAME - HASH_LENGTH - TOOL_SEPARATOR.length;
  if (full.length <= MAX_TOOL_NAME || server.length + TOOL_SEPARATOR.length > kept) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, HASH_LENGTH);
  return `${full.slice(0, kept)}${TOOL_SEPARATOR}${hash}`;
}

/** Whether `full` may be a shortened name: its tool is then found by listing the server's tools. */
export function mayBeShortened(full: string): boolean {
  return full.length === MAX_TOOL_NAME && SHORTENED.test(full);
}
