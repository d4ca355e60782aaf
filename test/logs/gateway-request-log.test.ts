import { describe, expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { MemoryRequestLog } from '../../src/logs/memory-request-log.js';
import type { RequestLogRow, RequestLogSink } from '../../src/logs/request-log.js';
import { createLocalProvider } from '../../src/providers/local/local-provider.js';
import { recordingLogger } from '../helpers/recording-logger.js';

const headers = { authorization: 'Bearer sk-1', 'content-type': 'application/json' };
const chat = (stream: boolean) => JSON.stringify({ model: 'local-chat', stream, messages: [{ role: 'user', content: 'Hello there' }] });

function gatewayWith(requestLog: RequestLogSink, logger: Parameters<typeof createGateway>[0]['logger'] = false) {
  return createGateway({
    keys: [{ key: 'sk-1', id: 'key-one', group: 'team-a' }],
    providers: { local: createLocalProvider({ chunkDelayMs: 0 }) },
    logger,
    requestLog,
  });
}

/** A sink whose writes never finish (a database that stopped answering). */
function hangingSink(): RequestLogSink & { rows: RequestLogRow[] } {
  const rows: RequestLogRow[] = [];
  return {
    rows,
    write: (row) => {
      rows.push(row);
      return new Promise<void>(() => {});
    },
    flush: () => new Promise<void>(() => {}),
    close: async () => {},
    sinkStats: () => ({ written: 0, queued: rows.length, dropped: 0, failedBatches: 0, failedRows: 0 }),
  };
}

const until = async (condition: () => boolean) => {
  for (let tries = 0; !condition() && tries < 1000; tries++) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe('options.requestLog', () => {
  it('writes one row per request, with the request id the client was told, for JSON and streams', async () => {
    const log = new MemoryRequestLog();
    const gateway = gatewayWith(log);
    const json = await gateway.fetch('http://gw.test/v1/chat/completions', { method: 'POST', headers, body: chat(false) });
    await json.text();
    const stream = await gateway.fetch('http://gw.test/v1/chat/completions', { method: 'POST', headers, body: chat(true) });
    await stream.text();
    await until(() => log.sinkStats().written === 2);
    const jsonRow = await log.get(json.headers.get('x-request-id')!);
    expect(jsonRow).toMatchObject({
      keyId: 'key-one',
      keyGroup: 'team-a',
      model: 'local-chat',
      stream: false,
      status: 'ok',
      httpStatus: 200,
      endpoint: '/v1/chat/completions',
    });
    expect(jsonRow!.inputTokens).toBeGreaterThan(0);
    expect(await log.get(stream.headers.get('x-request-id')!)).toMatchObject({ stream: true, status: 'ok' });
  });

  it('a refused request (bad key) has no row', async () => {
    const log = new MemoryRequestLog();
    const gateway = gatewayWith(log);
    const response = await gateway.fetch('http://gw.test/v1/chat/completions', {
      method: 'POST',
      headers: { ...headers, authorization: 'Bearer nope' },
      body: chat(false),
    });
    expect(response.status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(log.sinkStats().written).toBe(0);
  });

  it('a sink whose write never finishes delays no answer, JSON or stream', async () => {
    const sink = hangingSink();
    const gateway = gatewayWith(sink);
    for (const stream of [false, true, false]) {
      const response = await gateway.fetch('http://gw.test/v1/chat/completions', { method: 'POST', headers, body: chat(stream) });
      expect(response.status).toBe(200);
      expect(await response.text()).toContain(stream ? '[DONE]' : 'chat.completion');
    }
    await until(() => sink.rows.length === 3);
    expect(sink.rows).toHaveLength(3);
  });

  it('a sink that throws or rejects breaks no answer, and the failure is logged', async () => {
    const { logger, lines } = recordingLogger();
    const failures = () => lines.filter((line) => JSON.stringify(line).includes('sink exploded'));
    for (const write of [
      () => {
        throw new Error('sink exploded');
      },
      () => Promise.reject(new Error('sink exploded')),
    ]) {
      const sink: RequestLogSink = { ...hangingSink(), write };
      const gateway = gatewayWith(sink, logger);
      const response = await gateway.fetch('http://gw.test/v1/chat/completions', { method: 'POST', headers, body: chat(false) });
      expect(response.status).toBe(200);
      await response.json();
    }
    await until(() => failures().length === 2);
    expect(failures()).toHaveLength(2);
  });

  it('is validated', () => {
    expect(() => gatewayWith({ write() {} } as unknown as RequestLogSink)).toThrow('options.requestLog must be a RequestLogSink (missing flush())');
  });
});
