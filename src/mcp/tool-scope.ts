import type { KeyRecord } from '../auth/key-store.js';

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
