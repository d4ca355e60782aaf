import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  InitializeRequestSchema,
  isJSONRPCRequest,
  type JSONRPCMessage,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import type { RouteContext } from '../http/route.js';
import { aggregateServer } from './aggregate-server.js';
import { badMessage, RPC, rpcErrorAnswer, sessionNotFound, sessionRequired } from './mcp-errors.js';
import type { McpGateway } from './mcp-session.js';
import { type PostedMessages, readMessages } from './read-messages.js';
import { invalidParams } from './request-params.js';
import type { McpSessionRecord } from './session-store.js';
import type { McpToolCall } from './tool-call.js';
import { mayReach } from './tool-scope.js';

/** The first protocol version without JSON-RPC batches (2025-06-18 removed them). */
const NO_BATCHES_FROM = '2025-06-18';

/**
 * The session ids the gateway makes are UUIDs; an id longer than this, or with a character the
 * spec does not allow in one (visible ASCII only), was never made here: 404 without a store lookup.
 */
const MAX_SESSION_ID = 128;

/**
 * `/mcp`: the gateway's Streamable HTTP MCP endpoint. The gateway keeps each session itself (in
 * `store`, so any instance sharing it serves any request), and answers each request with a fresh
 * stateless transport and server: upstream sessions are resumed by their ids. What the SDK would
 * refuse is refused here first, in its words, before a session is made or an upstream called.
 */
export function mcpHandler(
  gateway: McpGateway,
  observeCall: (context: RouteContext, session: Session, call: McpToolCall) => void,
): (context: RouteContext) => Promise<Response> {
  return async (context) => {
    if (context.request.method === 'DELETE') return endSession(gateway, context);
    const posted = await readMessages(context);
    const [first] = posted.messages;
    // Claude Code probes for the 2026-07-28 protocol first (no session, that version's header):
    // "no such method" has it fall back to `initialize` at once.
    if (!posted.batch && isJSONRPCRequest(first) && first.method === 'server/discover') return rpcErrorAnswer(first.id, RPC.methodNotFound, 'Method not found');
    const initialize = posted.messages.some((message) => 'method' in message && message.method === 'initialize');
    const session = initialize ? await startSession(gateway, context, posted) : await resumeSession(gateway, context, posted);
    // A refusal answered to the request itself (the host's Response class is not always the global one).
    if (!('record' in session)) return session;
    const { id, record } = session;
    const refused = refuseInvalidParams(posted);
    if (refused) return refused;
    const server = aggregateServer({
      options: gateway.options,
      upstreams: gateway.upstreams,
      store: gateway.store,
      key: context.key,
      sessionId: id,
      record,
      signal: context.signal,
      observeCall: (call) => observeCall(context, session, call),
    });
    // No session id generator: stateless, the gateway keeps the session itself.
    const transport = new WebStandardStreamableHTTPServerTransport({});
    await server.connect(transport);
    const answer = await transport.handleRequest(context.request, { parsedBody: posted.body });
    const headers = new Headers(answer.headers);
    headers.set('mcp-session-id', id);
    return new Response(answer.body, { status: answer.status, headers });
  };
}

/**
 * A request whose params do not fit its method's schema is answered -32602 here (the SDK's server
 * would answer -32603); in a batch (2025-03-26 sessions only) the whole batch is refused, naming it.
 */
function refuseInvalidParams({ messages, batch }: PostedMessages): Response | undefined {
  for (const [index, message] of messages.entries()) {
    const problem = invalidParams(message);
    if (problem === undefined) continue;
    if (batch) throw badMessage(`Invalid Request: message ${index} of the batch: ${problem}`, 'invalid_message');
    return rpcErrorAnswer((message as { id?: unknown }).id, RPC.invalidParams, problem);
  }
  return undefined;
}

/** A client session the route found (or made) for a request: its id and record. */
export interface Session {
  id: string;
  record: McpSessionRecord;
}

/**
 * `initialize`: a new session, its protocol version the one the client asked for when the SDK
 * supports it, else the latest (the SDK's server answers the same). It must come alone, as a
 * request, and without a session id (a client told its session is gone starts a new one without).
 */
async function startSession(
  { options, store, upstreams }: McpGateway,
  context: RouteContext,
  { messages, batch }: PostedMessages,
): Promise<Session | Response> {
  const [message] = messages as [JSONRPCMessage];
  if (batch || !isJSONRPCRequest(message)) throw badMessage('Invalid Request: initialize must be sent alone, as a request with an id', 'invalid_message');
  if (context.request.headers.has('mcp-session-id')) {
    throw badMessage(
      'Invalid Request: Server already initialized; initialize starts a new session: send it without an Mcp-Session-Id header',
      'already_initialized',
    );
  }
  const parsed = InitializeRequestSchema.safeParse(message);
  if (!parsed.success)
    return rpcErrorAnswer(message.id, RPC.invalidParams, 'Invalid params: initialize needs params.protocolVersion, params.capabilities and params.clientInfo');
  const asked = parsed.data.params.protocolVersion;
  const record: McpSessionRecord = {
    keyId: context.key.id,
    protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST_PROTOCOL_VERSION,
    createdAt: Date.now(),
    upstream: await upstreams.initialize(
      context.signal,
      Object.keys(options.servers).filter((server) => mayReach(context.key, server)),
    ),
  };
  // Unguessable, and from the Web Crypto API every host has (not node:crypto: edge runtimes).
  const id = globalThis.crypto.randomUUID();
  await store.set(id, record);
  return { id, record };
}

/** Any other message: the session its header names, the caller's own; batches only in a session of a version that had them. */
async function resumeSession({ store }: McpGateway, context: RouteContext, { batch }: PostedMessages): Promise<Session> {
  const session = await findSession(store, context);
  if (batch && session.record.protocolVersion >= NO_BATCHES_FROM) {
    throw badMessage(
      `Invalid Request: JSON-RPC batches are not part of MCP ${session.record.protocolVersion}, this session's protocol version; send one message per request`,
      'batch_refused',
    );
  }
  return session;
}

/** DELETE: ends the caller's session and its upstream sessions (best effort); 200, or 404 as for any unknown session. */
async function endSession({ store, upstreams }: McpGateway, context: RouteContext): Promise<Response> {
  const { id, record } = await findSession(store, context);
  await store.delete(id);
  await Promise.all(Object.entries(record.upstream).map(([server, state]) => upstreams.terminate(server, state)));
  return new Response(null, { status: 200 });
}

/**
 * The session of the request's `Mcp-Session-Id`: 400 when there is none, 404 when it is unknown,
 * ended, or another key's (ids are not confirmed to strangers). A `MCP-Protocol-Version` header
 * is optional (Gemini CLI sends none: the session's version holds), but one the SDK does not
 * support is a 400, as the spec asks.
 */
async function findSession(store: McpGateway['store'], { request, key }: RouteContext): Promise<Session> {
  const version = request.headers.get('mcp-protocol-version');
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    throw badMessage(
      `Bad Request: Unsupported protocol version: ${version.slice(0, 40)} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
      'unsupported_protocol_version',
    );
  }
  const id = request.headers.get('mcp-session-id');
  if (!id) throw sessionRequired();
  if (id.length > MAX_SESSION_ID || !/^[\x21-\x7e]+$/.test(id)) throw sessionNotFound();
  const record = await store.get(id);
  if (!record || record.keyId !== key.id) throw sessionNotFound();
  return { id, record };
}
