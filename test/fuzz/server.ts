import { createGateway } from '../../src/index.js';
import { createLocalProvider, localModels } from '../../src/providers/local/local-provider.js';
import { serve } from '../helpers/serve.js';
import { startHttpUpstream } from '../mcp/fixtures/http-upstream.js';
import { CASE_HEADER, FUZZ_KEY, FUZZ_LIMITS, OTHER_KEY, SLOW_VIDEO_MODEL, STATEFUL_MODEL } from './settings.js';

/**
 * The gateway under fuzz, run in its own process (`node --import tsx test/fuzz/server.ts`) so that
 * a crash shows as the process exiting instead of taking the test runner down with it. Prints one
 * JSON line `{"url": …}` on stdout once listening; the gateway's log lines go to stderr as JSON,
 * where the harness reads them (an `unexpected error` there is a 500 it must fail on), each with
 * the number of the case whose request it is about (`fuzzCase`, from the `x-fuzz-case` header).
 *
 * An uncaught exception or unhandled rejection is a crash even if Node would survive it: both are
 * written to stderr with a `crash` marker and the process exits with code 70.
 */
for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
  process.on(event, (error: unknown) => {
    const detail = error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : { value: String(error) };
    process.stderr.write(JSON.stringify({ level: 'crash', message: event, error: detail }) + '\n');
    process.exit(70);
  });
}

/** Which fuzz case each request belongs to (the harness tags them), so a log line names its case. */
const caseOfRequest = new Map<string, string>();

const gateway = createGateway({
  keys: [
    { key: FUZZ_KEY, id: 'key_fuzz', mcp: ['vault'] },
    { key: OTHER_KEY, id: 'key_other', mcp: ['vault'] },
  ],
  // An SDK-built MCP server on loopback, so a fuzzed `tools/call` of `vault__echo` reaches a real upstream.
  mcp: { servers: { vault: { url: `${(await startHttpUpstream()).url}/mcp` } } },
  providers: {
    // No pacing: streamed answers are read to the end by the harness, as fast as possible.
    local: createLocalProvider({ chunkDelayMs: 0, videoRenderMs: 0 }),
    // A video model whose tasks never finish, for the 409 of the content download.
    slow: createLocalProvider({ chunkDelayMs: 0, videoRenderMs: 24 * 3600 * 1000 }),
  },
  models: [
    ...localModels('local'),
    { id: SLOW_VIDEO_MODEL, provider: 'slow', kind: 'video', upstreamModel: 'local-video' },
    // Keeps its responses in the gateway's store: the stored-response routes have something to read.
    { id: STATEFUL_MODEL, provider: 'local', upstreamModel: 'local-chat', previousResponseId: true },
  ],
  videoRefreshIntervalMs: 0,
  limits: FUZZ_LIMITS,
  hooks: {
    onRequest: ({ request, requestId }) => {
      const tag = request.headers.get(CASE_HEADER);
      if (tag) caseOfRequest.set(requestId, tag);
    },
  },
  logger: {
    info() {},
    warn: (message, fields) => log('warn', message, fields),
    error: (message, fields) => log('error', message, fields),
  },
});

function log(level: string, message: string, fields?: Record<string, unknown>): void {
  const requestId = typeof fields?.requestId === 'string' ? fields.requestId : undefined;
  const fuzzCase = requestId === undefined ? undefined : caseOfRequest.get(requestId);
  process.stderr.write(JSON.stringify({ level, message, ...fields, ...(fuzzCase ? { fuzzCase } : {}) }) + '\n');
}

const served = await serve(gateway);
process.stdout.write(JSON.stringify({ url: served.url }) + '\n');
