import { newId } from '../ids.js';
import type { McpToolCallEvent } from '../mcp/tool-call-event.js';
import type { McpCallOutcome } from '../mcp/tool-call.js';
import { CUT_MARKER, DEFAULT_CONTENT_BYTES } from './content-capture.js';

/**
 * The request log's tool calls (docs/admin.md, "Tool calls"): one row per `tools/call` through
 * `/mcp` (every `McpToolCallEvent`), so "who called which tool when" outlives a restart. Kept
 * beside the requests' rows, written by the same sink off the call's path.
 */

/** One tool call: the event's ids, names, outcome and sizes; the arguments only with `mcp.captureArguments`. */
export interface ToolCallRow extends Omit<McpToolCallEvent, 'error' | 'arguments'> {
  /** `tcall_…`, made when the row is: one POST may carry several calls, so the request id is not unique. */
  id: string;
  /** The upstream's error message, cut to 500 characters, or null. */
  error: string | null;
  /**
   * The call's arguments, only when the event carries them (`mcp.captureArguments`); arguments whose
   * JSON is over 32 KiB are kept as that JSON's text, cut and ending with `…[truncated]`.
   */
  arguments?: unknown;
}

/** Filters of `/admin/tool-calls`: every one optional, all of them applied together. */
export interface ToolCallQuery {
  keyId?: string | undefined;
  server?: string | undefined;
  tool?: string | undefined;
  outcome?: McpCallOutcome | undefined;
  /** ms since epoch, `from` included, `to` excluded. */
  from?: number | undefined;
  to?: number | undefined;
  /** Newest first. A cursor comes from the previous page's `next`. */
  cursor?: string | undefined;
  /** 1–500. */
  limit: number;
}

export interface ToolCallPage {
  data: ToolCallRow[];
  next?: string | undefined;
}

export const TOOL_CALL_OUTCOMES: readonly McpCallOutcome[] = ['ok', 'tool_error', 'refused', 'upstream_error', 'timeout', 'cancelled'];

const MAX_ERROR = 500;

/** The row of a tool call event. */
export function toolCallRowOf(event: McpToolCallEvent): ToolCallRow {
  const { error, arguments: args, ...fields } = event;
  return {
    id: newId('tcall_'),
    ...fields,
    startedAt: Math.round(event.startedAt),
    error: error === undefined ? null : error.length > MAX_ERROR ? error.slice(0, MAX_ERROR) : error,
    ...(args !== undefined ? { arguments: keptArguments(args) } : {}),
  };
}

/** The arguments as kept: as they are, or past the cap their JSON's text, cut (a row's size stays bounded). */
function keptArguments(value: unknown): unknown {
  const json = JSON.stringify(value);
  if (json === undefined || json.length <= DEFAULT_CONTENT_BYTES / 2 || Buffer.byteLength(json) <= DEFAULT_CONTENT_BYTES) return value;
  return cutUtf8(json, DEFAULT_CONTENT_BYTES - Buffer.byteLength(CUT_MARKER)) + CUT_MARKER;
}

function cutUtf8(text: string, bytes: number): string {
  const cut = Buffer.from(text).subarray(0, bytes).toString('utf8');
  // A character split by the cut decodes as U+FFFD: drop it.
  return cut.endsWith('\uFFFD') ? cut.slice(0, -1) : cut;
}
