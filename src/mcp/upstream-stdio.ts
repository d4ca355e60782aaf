import type { Readable } from 'node:stream';
import type { Logger } from '../logger.js';
import type { McpStdioServerConfig } from './mcp-options.js';
import { McpUpstreamClient, type Upstream } from './upstream-client.js';
import { secretBlanker } from './upstream-redact.js';
import { type UpstreamTimeouts, withDeadline } from './upstream-timeout.js';

/** A stderr line longer than this is logged in pieces: a child cannot make one log line of any size. */
const MAX_STDERR_LINE = 1000;
/**
 * After a start that failed, the next waits this long, twice as long after each further failure,
 * up to the maximum; meanwhile the server fails at once with the last failure (a command that
 * cannot start is not spawned for every session and call).
 */
const RESTART_AFTER_FAILURE_MS = 1000;
const MAX_RESTART_AFTER_FAILURE_MS = 30_000;

/**
 * A local command spoken to over stdio: one long-lived process and client per gateway instance,
 * shared by every client session (stdio has no session id: the process is the session). It starts
 * with the first session that needs it, starts again after it died, and stops with `close()`.
 * So a stateful stdio server shares its state across the sessions of one instance, and not
 * across instances.
 *
 * The child gets the SDK's minimal environment (PATH, HOME, USER, SHELL, TERM, LOGNAME) plus the
 * config's `env`, never the gateway's own (its provider keys); its stderr goes to the gateway's
 * log, line by line, with the config's `env` values blanked.
 */
export function stdioUpstream(server: string, config: McpStdioServerConfig, timeouts: UpstreamTimeouts, logger: Logger): Upstream {
  const { timeoutMs } = timeouts;
  const blank = secretBlanker(Object.values(config.env ?? {}));
  let running: Promise<McpUpstreamClient> | undefined;
  let failure: { error: unknown; failures: number; retryAt: number } | undefined;
  let closed = false;

  const start = async (stopped: () => void): Promise<McpUpstreamClient> => {
    // Node only, and loaded only when a stdio server is configured: edge and browser bundles never need it.
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const transport = new StdioClientTransport({
      command: config.command,
      args: [...(config.args ?? [])],
      env: { ...config.env },
      ...(config.cwd !== undefined ? { cwd: config.cwd } : {}),
      stderr: 'pipe',
    });
    if (transport.stderr) logLines(transport.stderr as Readable, (line) => logger.info('MCP stdio server stderr', { server, line: blank(line) }));
    const client = new McpUpstreamClient(server, timeouts);
    client.onclose = () => {
      stopped();
      if (!closed) logger.warn('MCP stdio server stopped; it starts again when next used', { server });
    };
    client.onerror = (error) => logger.warn('MCP stdio server error', { server, error: blank(error.message) });
    try {
      await withDeadline(client.connect(transport), server, timeoutMs);
    } catch (error) {
      await client.close().catch(() => {});
      throw error;
    }
    return client;
  };

  /** The running client, started (once, whoever asks) when there is none. */
  const client = (): Promise<McpUpstreamClient> => {
    if (closed) return Promise.reject(new Error(`Server \`${server}\` is closed.`));
    if (!running) {
      if (failure && Date.now() < failure.retryAt) return Promise.reject(failure.error);
      const started: Promise<McpUpstreamClient> = start(() => {
        if (running === started) running = undefined;
      });
      running = started;
      started.then(
        () => {
          failure = undefined;
        },
        (error: unknown) => {
          if (running === started) running = undefined;
          const failures = (failure?.failures ?? 0) + 1;
          failure = { error, failures, retryAt: Date.now() + Math.min(MAX_RESTART_AFTER_FAILURE_MS, RESTART_AFTER_FAILURE_MS * 2 ** (failures - 1)) };
        },
      );
    }
    return running;
  };

  return {
    async initialize() {
      await client();
      return {};
    },
    async use(_state, _signal, work) {
      return { result: await work(await client()), state: {} };
    },
    async terminate() {},
    async close() {
      closed = true;
      const stopping = running;
      running = undefined;
      await (await stopping?.catch(() => undefined))?.close();
    },
  };
}

/** Calls `line` for each line of `stream` (a long one in pieces), never holding more than one line. */
function logLines(stream: Readable, line: (text: string) => void): void {
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    pending += chunk;
    let at = pending.indexOf('\n');
    while (at >= 0 || pending.length > MAX_STDERR_LINE) {
      const end = at >= 0 && at <= MAX_STDERR_LINE ? at : MAX_STDERR_LINE;
      const text = pending.slice(0, end).replace(/\r$/, '');
      pending = pending.slice(at === end ? end + 1 : end);
      if (text) line(text);
      at = pending.indexOf('\n');
    }
  });
  stream.on('end', () => {
    if (pending) line(pending);
  });
}
