/** Header a client sends to forbid replaying its request on another attempt (`off`). */
export const RETRY_HEADER = 'x-infergate-retry';

/**
 * Tools the upstream runs itself, whose effects a replay could repeat: after a timeout or a
 * 5xx, such a request may already have acted (spec section 6 warns against blind replays).
 */
const SIDE_EFFECT_TOOL = /^(mcp|code_interpreter|computer_use|computer_use_preview|local_shell|shell|apply_patch|code_execution(_\d+)?)$/;

/**
 * Whether a failed attempt may be replayed freely. When not, only failures proving the
 * upstream never took the request (refused connection, 429) are retried.
 */
export function isReplaySafe(request: Request, body: Record<string, unknown>): boolean {
  if (request.headers.get(RETRY_HEADER)?.toLowerCase() === 'off') return false;
  if (Array.isArray(body.mcp_servers) && body.mcp_servers.length > 0) return false;
  if (!Array.isArray(body.tools)) return true;
  return !body.tools.some((tool) => {
    const type = (tool as { type?: unknown } | null)?.type;
    return typeof type === 'string' && SIDE_EFFECT_TOOL.test(type);
  });
}
