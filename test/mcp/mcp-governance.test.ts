import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { propagation, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createGateway } from '../../src/gateway.js';
import type { GatewayOptions } from '../../src/options.js';
import { MemoryRequestLog } from '../../src/logs/memory-request-log.js';
import type { McpToolCallEvent } from '../../src/mcp/tool-call-event.js';
import { metricsHandler } from '../../src/metrics.js';
import type { RefusalEvent } from '../../src/policy/events.js';
import { freePort, serve } from '../helpers/serve.js';
import { type HttpUpstream, startHttpUpstream } from './fixtures/http-upstream.js';
import { sample } from '../helpers/prometheus.js';
import { recordingLogger } from '../helpers/recording-logger.js';

/**
 * Tool calls governed like model calls: the SDK's client through the gateway's `/mcp` to an
 * SDK-built upstream on loopback; each `tools/call` is one event (`hooks.onToolCall`), one access
 * log line, one span and metrics, never with the arguments or the upstream's credential; the key's
 * requests per minute count every JSON-RPC POST.
 */

const TOKEN = randomUUID();
const UPSTREAM_SECRET = 'upstream-SECRET-7c1d';
const CLIENT_KEY = 'sk-gov-client-SECRET';
/** An argument value that must show up nowhere unless `captureArguments` is on, and then only on the event. */
const ARGUMENT = 'private-argument-4a9b';
let upstream: HttpUpstream;
let dead: string;
/** The `slow` tool answers once the test opens its gate (`closeGate`); `slowStarted` resolves when it waits there. */
let slowGate: Promise<void> = Promise.resolve();
let openGate = () => {};
let startSlow = () => {};
let slowStarted: Promise<void> = Promise.resolve();
function closeGate(): void {
  slowGate = new Promise((resolve) => (openGate = resolve));
  slowStarted = new Promise((resolve) => (startSlow = resolve));
}

beforeAll(async () => {
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  upstream = await startHttpUpstream({
    tools(server) {
      server.registerTool('reveal', { description: 'Tells the token', inputSchema: { label: z.string() } }, async ({ label }) => ({
        content: [{ type: 'text', text: `${label.length}: ${TOKEN}` }],
      }));
      // The SDK's server answers a throwing tool with `isError: true`: the tool failed, the call did not.
      server.registerTool('fail', { description: 'Always fails' }, async () => {
        throw new Error('the tool broke');
      });
      server.registerTool('slow', { description: 'Answers when the test lets it' }, async () => {
        startSlow();
        await slowGate;
        return { content: [{ type: 'text', text: 'done' }] };
      });
    },
  });
  dead = `http://127.0.0.1:${await freePort()}/mcp`;
});
afterAll(async () => {
  await upstream?.close();
});

interface Observed {
  url: string;
  events: McpToolCallEvent[];
  refusals: RefusalEvent[];
  lines: ReturnType<typeof recordingLogger>['lines'];
  exporter: InMemorySpanExporter;
  metrics: ReturnType<typeof metricsHandler>;
  requestLog: MemoryRequestLog;
  close(): Promise<void>;
}

/** A gateway in front of the upstream (and a dead one), with every observer on. */
async function observedGateway(overrides: Partial<GatewayOptions> = {}, captureArguments = false): Promise<Observed> {
  const events: McpToolCallEvent[] = [];
  const refusals: RefusalEvent[] = [];
  const { logger, lines } = recordingLogger();
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
  const metrics = metricsHandler();
  const requestLog = new MemoryRequestLog({ size: 100 });
  const instance = createGateway({
    providers: {},
    models: [],
    keys: [{ key: CLIENT_KEY, id: 'gov-key', group: 'tools-team', mcp: ['vault__reveal', 'vault__fail', 'gone'] }],
    mcp: { servers: { vault: { url: `${upstream.url}/mcp`, bearerToken: UPSTREAM_SECRET }, gone: { url: dead } }, captureArguments },
    hooks: { onToolCall: (event) => void events.push(event) },
    plugins: [{ onRefused: (event) => void refusals.push(event) }],
    accessLog: true,
    logger,
    telemetry: { tracer },
    metrics: { meterProvider: metrics.meterProvider },
    requestLog,
    ...overrides,
  });
  const served = await serve(instance as never);
  return { url: served.url, events, refusals, lines, exporter, metrics, requestLog, close: served.close };
}

async function connect(url: string, headers: Record<string, string> = {}): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'test', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${CLIENT_KEY}`, ...headers } },
  });
  await client.connect(transport);
  return { client, transport };
}

const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;

describe('a tool call through /mcp', () => {
  let gateway: Observed;
  let sessionId: string;
  let protocolVersion: string;
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const revealArguments = { label: ARGUMENT };
  let revealResult: unknown;

  beforeAll(async () => {
    gateway = await observedGateway();
    const { client, transport } = await connect(gateway.url, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    sessionId = transport.sessionId!;
    protocolVersion = transport.protocolVersion!;
    revealResult = await client.callTool({ name: 'vault__reveal', arguments: revealArguments });
    const failed = await client.callTool({ name: 'vault__fail', arguments: { label: ARGUMENT } });
    expect(failed.isError).toBe(true);
    // Out of the key's scope: refused before any upstream hears of it.
    await expect(client.callTool({ name: 'vault__secret', arguments: { label: ARGUMENT } })).rejects.toThrow(/Unknown tool/);
    await expect(client.callTool({ name: 'gone__echo', arguments: { label: ARGUMENT } })).rejects.toThrow();
    await client.close();
    await vi.waitFor(() => expect(gateway.events).toHaveLength(4));
    await vi.waitFor(() => expect(gateway.exporter.getFinishedSpans()).toHaveLength(4));
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('is one event per call with its server, tool, outcome, duration and bytes, and no arguments', () => {
    const [ok, toolError, refused, upstreamError] = gateway.events;
    for (const event of gateway.events) {
      expect(event).toMatchObject({ keyId: 'gov-key', keyGroup: 'tools-team', sessionId, protocolVersion });
      expect(event.requestId).toMatch(/^req_/);
      expect(event.durationMs).toBeGreaterThanOrEqual(0);
      expect(event.startedAt).toBeLessThanOrEqual(Date.now());
      expect(event).not.toHaveProperty('arguments');
    }
    // Each call is its own POST: its own request id.
    expect(new Set(gateway.events.map((event) => event.requestId)).size).toBe(4);
    expect(ok).toMatchObject({ server: 'vault', tool: 'reveal', outcome: 'ok' });
    expect(ok!.requestBytes).toBe(bytes({ name: 'vault__reveal', arguments: revealArguments }));
    expect(ok!.responseBytes).toBe(bytes(revealResult));
    expect(ok).not.toHaveProperty('error');
    expect(toolError).toMatchObject({ server: 'vault', tool: 'fail', outcome: 'tool_error' });
    expect(toolError!.responseBytes).toBeGreaterThan(0);
    expect(refused).toMatchObject({ server: 'vault', tool: 'secret', outcome: 'refused' });
    expect(upstreamError).toMatchObject({ server: 'gone', tool: 'echo', outcome: 'upstream_error' });
    expect(upstreamError!.error).toEqual(expect.any(String));
    expect(JSON.stringify(gateway.events)).not.toContain(ARGUMENT);
    expect(JSON.stringify(gateway.events)).not.toContain(UPSTREAM_SECRET);
  });

  it('is one access log line each, without arguments, keys or upstream credentials', () => {
    const calls = gateway.lines.filter((line) => line.message === 'tool call');
    expect(calls.map((line) => [line.fields!.server, line.fields!.tool, line.fields!.outcome])).toEqual([
      ['vault', 'reveal', 'ok'],
      ['vault', 'fail', 'tool_error'],
      ['vault', 'secret', 'refused'],
      ['gone', 'echo', 'upstream_error'],
    ]);
    expect(calls[0]!.fields).toMatchObject({
      requestId: gateway.events[0]!.requestId,
      keyId: 'gov-key',
      endpoint: '/mcp',
      sessionId,
      durationMs: gateway.events[0]!.durationMs,
      requestBytes: gateway.events[0]!.requestBytes,
      responseBytes: gateway.events[0]!.responseBytes,
    });
    expect(calls[3]!.fields!.error).toEqual(gateway.events[3]!.error);
    const everything = JSON.stringify(gateway.lines);
    for (const secret of [ARGUMENT, UPSTREAM_SECRET, CLIENT_KEY, TOKEN]) expect(everything).not.toContain(secret);
  });

  it('is one MCP server span each in the caller’s trace, after the MCP conventions, without arguments', () => {
    const spans = gateway.exporter.getFinishedSpans();
    expect(spans.map((span) => span.name)).toEqual(['tools/call vault__reveal', 'tools/call vault__fail', 'tools/call', 'tools/call gone__echo']);
    for (const span of spans) {
      expect(span.kind).toBe(SpanKind.SERVER);
      expect(span.spanContext().traceId).toBe(traceId);
      expect(span.attributes).toMatchObject({
        'mcp.method.name': 'tools/call',
        'gen_ai.operation.name': 'execute_tool',
        'mcp.session.id': sessionId,
        'infergate.key_id': 'gov-key',
      });
    }
    const [ok, toolError, refused, upstreamError] = spans;
    expect(ok!.attributes).toMatchObject({
      'gen_ai.tool.name': 'vault__reveal',
      'infergate.mcp.server': 'vault',
      'infergate.mcp.tool': 'reveal',
      'infergate.mcp.outcome': 'ok',
      'infergate.mcp.request_bytes': gateway.events[0]!.requestBytes,
      'infergate.mcp.response_bytes': gateway.events[0]!.responseBytes,
    });
    expect(ok!.attributes).not.toHaveProperty('error.type');
    expect(ok!.status.code).toBe(SpanStatusCode.UNSET);
    expect(toolError!.attributes['error.type']).toBe('tool_error');
    expect(refused!.attributes).toMatchObject({ 'error.type': '-32602', 'rpc.response.status_code': '-32602', 'gen_ai.tool.name': 'vault__secret' });
    expect(upstreamError!.attributes['error.type']).toBe('upstream_error');
    for (const failed of [toolError, refused, upstreamError]) expect(failed!.status.code).toBe(SpanStatusCode.ERROR);
    expect(ok!.attributes['mcp.protocol.version']).toBe(protocolVersion);
    const everything = JSON.stringify(spans.map((span) => [span.attributes, span.events, span.status]));
    for (const secret of [ARGUMENT, UPSTREAM_SECRET, CLIENT_KEY, TOKEN]) expect(everything).not.toContain(secret);
  });

  it('is counted by server, tool and outcome, and timed by the MCP conventions’ attributes', async () => {
    const text = await gateway.metrics.text();
    const calls = (labels: Record<string, string>) => sample(text, 'infergate_mcp_tool_calls_total', labels);
    expect(calls({ infergate_mcp_server: 'vault', infergate_mcp_tool: 'reveal', infergate_mcp_outcome: 'ok' })).toBe(1);
    expect(calls({ infergate_mcp_server: 'vault', infergate_mcp_tool: 'fail', infergate_mcp_outcome: 'tool_error' })).toBe(1);
    // A refused name is whatever the client sent: never a label.
    expect(calls({ infergate_mcp_server: 'vault', infergate_mcp_tool: '_OTHER', infergate_mcp_outcome: 'refused' })).toBe(1);
    expect(calls({ infergate_mcp_server: 'gone', infergate_mcp_tool: 'echo', infergate_mcp_outcome: 'upstream_error' })).toBe(1);
    expect(calls({})).toBe(4);
    const duration = (labels: Record<string, string>) => sample(text, 'mcp_server_operation_duration_count', labels);
    expect(duration({ mcp_method_name: 'tools/call', gen_ai_operation_name: 'execute_tool', gen_ai_tool_name: 'vault__reveal' })).toBe(1);
    expect(duration({ gen_ai_tool_name: 'vault__fail', error_type: 'tool_error' })).toBe(1);
    expect(duration({ gen_ai_tool_name: '_OTHER', error_type: '-32602' })).toBe(1);
    // The conventions' buckets, up to five minutes.
    expect(sample(text, 'mcp_server_operation_duration_bucket', { gen_ai_tool_name: 'vault__reveal', le: '300' })).toBe(1);
    expect(text).not.toContain('gov-key');
    expect(text).not.toContain('secret');
  });

  it('costs nothing: no usage in GET /v1/usage, no request log row', async () => {
    expect((await gateway.requestLog.query({ limit: 10 })).data).toEqual([]);
    const usage = await fetch(`${gateway.url}/v1/usage`, { headers: { authorization: `Bearer ${CLIENT_KEY}` } });
    expect(((await usage.json()) as { data: unknown[] }).data).toEqual([]);
  });
});

describe('mcp.captureArguments', () => {
  it('puts the arguments on the event only: never on the access log or the span', async () => {
    const gateway = await observedGateway({}, true);
    try {
      const { client } = await connect(gateway.url);
      await client.callTool({ name: 'vault__reveal', arguments: { label: ARGUMENT } });
      await client.close();
      await expect.poll(() => gateway.exporter.getFinishedSpans().length).toBe(1);
      expect(gateway.events[0]!.arguments).toEqual({ label: ARGUMENT });
      expect(JSON.stringify(gateway.lines)).not.toContain(ARGUMENT);
      expect(JSON.stringify(gateway.exporter.getFinishedSpans().map((span) => span.attributes))).not.toContain(ARGUMENT);
    } finally {
      await gateway.close();
    }
  });
});

describe('onToolCall', () => {
  it('a throwing observer is logged and never changes the answer', async () => {
    const gateway = await observedGateway({
      hooks: {
        onToolCall: () => {
          throw new Error('observer broke');
        },
      },
    });
    try {
      const { client } = await connect(gateway.url);
      const result = await client.callTool({ name: 'vault__reveal', arguments: { label: 'x' } });
      expect(JSON.stringify(result.content)).toContain(TOKEN);
      await client.close();
      await vi.waitFor(() =>
        expect(gateway.lines).toContainEqual(
          expect.objectContaining({ level: 'error', message: 'onToolCall observer failed', fields: expect.objectContaining({ message: 'observer broke' }) }),
        ),
      );
      // The other observers still saw the call.
      expect(gateway.lines.filter((line) => line.message === 'tool call')).toHaveLength(1);
    } finally {
      await gateway.close();
    }
  });
});

describe('a key’s limits on /mcp', () => {
  /** One JSON-RPC POST as an MCP client sends it; a tool call's answer comes as one SSE event. */
  const post = (url: string, body: unknown, session?: string) =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${CLIENT_KEY}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(session ? { 'mcp-session-id': session } : {}),
      },
      body: JSON.stringify(body),
    });
  const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'vault__reveal', arguments: { label: 'x' } } });

  it('refuses the third JSON-RPC POST of a key with 2 requests per minute with a 429, the tool never called', async () => {
    const gateway = await observedGateway({
      keys: [{ key: CLIENT_KEY, id: 'gov-key', mcp: ['vault'], limits: { requestsPerMinute: 2 } }],
    });
    try {
      const initialize = await post(gateway.url, {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      });
      expect(initialize.status).toBe(200);
      const session = initialize.headers.get('mcp-session-id')!;
      await initialize.text();
      const first = await post(gateway.url, call(1), session);
      expect(first.status).toBe(200);
      expect(await first.text()).toContain(TOKEN);
      const third = await post(gateway.url, call(2), session);
      expect(third.status).toBe(429);
      expect(third.headers.get('retry-after')).toMatch(/^\d+$/);
      // In MCP's shape (the route's client style), the gateway's code for programs to branch on.
      expect(await third.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'rate_limit_exceeded' } } });
      await expect.poll(() => gateway.refusals.length).toBe(1);
      expect(gateway.refusals[0]).toMatchObject({ keyId: 'gov-key', reason: 'requests', status: 429 });
      // Only the admitted call was made and observed.
      await expect.poll(() => gateway.events.length).toBe(1);
      // Sent without an MCP-Protocol-Version header (as Gemini CLI does): the session's version still.
      expect(gateway.events[0]).toMatchObject({ outcome: 'ok', sessionId: session, protocolVersion: '2025-06-18' });
    } finally {
      await gateway.close();
    }
  });

  it('holds a concurrency slot for a tool call until its answer is sent', async () => {
    const gateway = await observedGateway({
      keys: [{ key: CLIENT_KEY, id: 'gov-key', mcp: ['vault'], limits: { concurrentRequests: 1 } }],
    });
    try {
      closeGate();
      const { client } = await connect(gateway.url);
      const slow = client.callTool({ name: 'vault__slow', arguments: {} });
      await slowStarted;
      // The slow call's POST is still answering (its SSE body is open): a second one is refused.
      await expect(client.callTool({ name: 'vault__reveal', arguments: { label: 'x' } })).rejects.toThrow(/429|[Rr]ate limit|concurren/);
      await vi.waitFor(() => expect(gateway.refusals).toMatchObject([{ reason: 'concurrency', status: 429 }]));
      openGate();
      expect((await slow).content).toEqual([{ type: 'text', text: 'done' }]);
      // Its answer sent, the slot is free again.
      expect(JSON.stringify((await client.callTool({ name: 'vault__reveal', arguments: { label: 'x' } })).content)).toContain(TOKEN);
      await client.close();
    } finally {
      await gateway.close();
    }
  });

  it('lets a key with no quota or balance left call tools: a tool call costs nothing', async () => {
    const gateway = await observedGateway({
      keys: [{ key: CLIENT_KEY, id: 'gov-key', mcp: ['vault'], limits: { quota: 0 }, balance: 0 }],
    });
    try {
      const { client } = await connect(gateway.url);
      const result = await client.callTool({ name: 'vault__reveal', arguments: { label: 'x' } });
      expect(JSON.stringify(result.content)).toContain(TOKEN);
      await client.close();
      expect(gateway.refusals).toEqual([]);
    } finally {
      await gateway.close();
    }
  });
});
