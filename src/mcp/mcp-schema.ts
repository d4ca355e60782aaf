import * as v from 'valibot';
import { flag, positiveInteger, strictObject, text } from '../config-fields.js';
import { formatPath } from '../schemas/validate.js';
import type { McpOptions } from './mcp-options.js';
import { TRANSPORT_HEADERS } from './upstream-headers.js';

/**
 * `mcp` as the config file and `createGateway` write it (docs/configuration.md, "mcp"). Messages
 * say what was expected, never what was found: a header or a token in the wrong place is a secret.
 */

/**
 * A server's name is the prefix of its tools (`github__create_issue`), split at the first `__`:
 * letters, digits, `-` and single `_` inside the name, so no name holds `__` or ends with `_`
 * (`a_` + `__` + `b` would read as `a` + `_b`). At most 32 characters, so that full tool names
 * stay within the 64 that Gemini CLI and Codex keep.
 */
export const MCP_SERVER_NAME = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;
export const MCP_SERVER_NAME_MAX = 32;

/** A key's `mcp`: at most this many patterns, each at most this long. */
export const MCP_PATTERNS_MAX = 256;
export const MCP_PATTERN_LENGTH_MAX = 200;

/** A key's `mcp` list: server names, tool names (`github__create_issue`) or either with `*` wildcards. */
export const McpPatternsSchema = v.pipe(
  v.array(
    v.pipe(
      v.string('expected a string'),
      v.regex(/^[A-Za-z0-9_*-]+$/, 'expected a server or tool name pattern (letters, digits, "_", "-" and "*")'),
      v.maxLength(MCP_PATTERN_LENGTH_MAX, `expected at most ${MCP_PATTERN_LENGTH_MAX} characters`),
    ),
    'expected an array of server or tool name patterns',
  ),
  v.maxLength(MCP_PATTERNS_MAX, `expected at most ${MCP_PATTERNS_MAX} patterns`),
);

const serverName = v.pipe(
  v.string(),
  v.regex(MCP_SERVER_NAME, 'expected a server name of letters, digits, "-" and single "_" inside (never "__")'),
  v.maxLength(MCP_SERVER_NAME_MAX, `expected a server name of at most ${MCP_SERVER_NAME_MAX} characters`),
);

const httpUrl = v.pipe(
  v.string('expected an http(s) URL string'),
  v.url('expected an http(s) URL string'),
  v.regex(/^https?:\/\//i, 'expected an http(s) URL string'),
);

// Names and values `new Headers()` accepts: a bad one would fail every request, not the start.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const headerMap = v.pipe(
  v.custom<unknown>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), 'expected an object of header names to strings'),
  v.record(
    v.pipe(
      v.string(),
      v.regex(HEADER_NAME, "expected a header name (letters, digits and !#$%&'*+.^_`|~-)"),
      v.check((name) => !TRANSPORT_HEADERS.has(name.toLowerCase()), 'expected a header the MCP transport does not set itself'),
    ),
    v.pipe(v.string('expected a string header value'), v.regex(/^[^\r\n\0]*$/, 'expected a header value without line breaks')),
    'expected an object of header names to strings',
  ),
);

const stringMap = v.pipe(
  v.custom<unknown>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), 'expected an object of names to strings'),
  v.record(v.string(), v.string('expected a string'), 'expected an object of names to strings'),
);

const OAuthSchema = strictObject({
  tokenUrl: httpUrl,
  clientId: text,
  clientSecret: text,
  scope: v.optional(text),
  audience: v.optional(text),
  authMethod: v.optional(v.picklist(['client_secret_basic', 'client_secret_post'], 'expected "client_secret_basic" or "client_secret_post"')),
});

const HttpServerSchema = v.pipe(
  strictObject({
    url: httpUrl,
    headers: v.optional(headerMap),
    bearerToken: v.optional(text),
    oauth: v.optional(OAuthSchema),
    timeoutMs: v.optional(positiveInteger),
    maxTotalTimeoutMs: v.optional(positiveInteger),
  }),
  v.check(
    (server) => [server.bearerToken, server.oauth, authorizationOf(server.headers)].filter((given) => given !== undefined).length <= 1,
    'expected one of "bearerToken", "oauth" and an "Authorization" header, not several',
  ),
);

const StdioServerSchema = strictObject({
  command: text,
  args: v.optional(v.array(v.string('expected a string'), 'expected an array of strings')),
  env: v.optional(stringMap),
  cwd: v.optional(text),
  timeoutMs: v.optional(positiveInteger),
  maxTotalTimeoutMs: v.optional(positiveInteger),
});

const notAServer = v.custom<never>(() => false, 'expected { "url", … } (Streamable HTTP) or { "command", … } (stdio)');

/** An HTTP server has a `url`, a stdio one a `command`: the errors are then those of the one meant. */
const ServerSchema = v.lazy((input) => {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return notAServer;
  if ('command' in input && !('url' in input)) return StdioServerSchema;
  if ('url' in input) return HttpServerSchema;
  return notAServer;
});

/** `mcp` without `sessionStore`, which is an object (`createGateway`) or a store's config (the file). */
export const mcpFields = {
  servers: v.pipe(
    v.custom<unknown>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), 'expected an object of server names to servers'),
    v.record(serverName, ServerSchema, 'expected an object of server names to servers'),
    v.check((servers) => Object.keys(servers).length > 0, 'expected at least one server'),
  ),
  captureArguments: v.optional(flag),
  timeoutMs: v.optional(positiveInteger),
  maxTotalTimeoutMs: v.optional(positiveInteger),
};

function authorizationOf(headers: Record<string, string> | undefined): string | undefined {
  return Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === 'authorization')?.[1];
}

const OptionsSchema = strictObject({ ...mcpFields, sessionStore: v.optional(v.unknown()) });

/** `createGateway({ mcp })`: the same rules as the file; throws a `TypeError` naming the field. */
export function checkMcpOptions(options: McpOptions): McpOptions {
  check(OptionsSchema, options, 'options.mcp');
  const store = options.sessionStore;
  for (const method of ['get', 'set', 'update', 'delete'] as const) {
    if (store !== undefined && typeof store?.[method] !== 'function')
      throw new TypeError(`options.mcp.sessionStore must be an McpSessionStore (missing ${method}())`);
  }
  return options;
}

/** A `createGateway` key's `mcp`: the same rules as the file's and the admin API's. */
export function checkMcpPatterns(patterns: readonly string[], where: string): void {
  check(McpPatternsSchema, patterns, where);
}

function check(schema: v.GenericSchema, value: unknown, where: string): void {
  const result = v.safeParse(schema, value);
  if (result.success) return;
  const [issue] = result.issues;
  const path = formatPath(issue.path);
  throw new TypeError(`${where}${path === null ? '' : path.startsWith('[') ? path : `.${path}`}: ${issue.message}`);
}
