import type { KeyRecord } from '../auth/key-store.js';
import { TOOL_SEPARATOR } from './mcp-options.js';

/**
 * Whether the key may see and call `name` (`<server>__<tool>`): its `mcp` patterns, each a server
 * name (`github`, every tool of it), an exact tool name, or a name with `*` wildcards
 * (`github__create_*`). A key without `mcp` sees no server.
 */
export function mayUse(key: KeyRecord, name: string, server: string): boolean {
  const patterns = key.mcp;
  if (!patterns) return false;
  return patterns.some((pattern) => pattern === '*' || pattern === server || matches(pattern, name));
}

/**
 * Whether any of the key's patterns could match a tool of `server`: only such servers are
 * initialized for the key's sessions and asked for their lists, so a key scoped to one server
 * (or to none) never has the gateway open sessions on the others for it.
 */
export function mayReach(key: KeyRecord, server: string): boolean {
  const prefix = `${server}${TOOL_SEPARATOR}`;
  return (key.mcp ?? []).some((pattern) => {
    if (pattern === server) return true;
    const star = pattern.indexOf('*');
    // Before its first wildcard a pattern is literal: it must agree with `<server>__` as far as both go.
    const literal = star < 0 ? pattern : pattern.slice(0, star);
    return star < 0 ? pattern.startsWith(prefix) : literal.startsWith(prefix) || prefix.startsWith(literal);
  });
}

/**
 * Whether the key may list and read `server`'s resources: it needs the whole server (`github`,
 * `github__*`, `*`), since a resource is not one of the tools a narrower pattern names.
 */
export function mayReadResources(key: KeyRecord, server: string): boolean {
  return mayUse(key, `${server}${TOOL_SEPARATOR}*`, server);
}

function matches(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  const parts = pattern.split('*');
  let at = 0;
  for (const [index, part] of parts.entries()) {
    const found = index === 0 ? (name.startsWith(part) ? 0 : -1) : name.indexOf(part, at);
    if (found < 0) return false;
    at = found + part.length;
  }
  return parts.at(-1) === '' || name.endsWith(parts.at(-1)!);
}
