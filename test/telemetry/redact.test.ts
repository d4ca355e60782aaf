import { describe, expect, it } from 'vitest';
import type { Logger } from '../../src/logger.js';
import { REDACTED, redactFields, scrubSecrets } from '../../src/telemetry/redact.js';
import { redactingLogger } from '../../src/telemetry/redacting-logger.js';
import { CLIENT_KEY, PROMPT, UPSTREAM_KEY } from './events.js';

describe('redactFields', () => {
  it('returns a record with nothing to hide as is, without copying', () => {
    const fields = { requestId: 'req_1', keyId: 'key_abc', model: 'fast', latencyMs: 12, usage: { input: 10, output: 3 }, tags: ['a', 'b'] };
    expect(redactFields(fields)).toBe(fields);
  });

  it('redacts secrets under any spelling of a secret-bearing name', () => {
    const fields = {
      authorization: `Bearer ${CLIENT_KEY}`,
      'x-api-key': CLIENT_KEY,
      'api-key': CLIENT_KEY,
      apiKey: CLIENT_KEY,
      api_key: CLIENT_KEY,
      API_KEY: CLIENT_KEY,
      key: CLIENT_KEY,
      token: 1234,
      accessToken: 'abc',
      password: 'hunter2',
      clientSecret: 'shh',
      cookie: 'session=1',
      'set-cookie': ['session=1'],
      'proxy-authorization': 'Basic xyz',
      keyId: 'key_abc',
    };
    const redacted = redactFields(fields);
    expect(redacted).toEqual({ ...Object.fromEntries(Object.keys(fields).map((name) => [name, REDACTED])), keyId: 'key_abc' });
    expect(fields.apiKey).toBe(CLIENT_KEY); // the caller's object is left alone
  });

  it('redacts prompt-bearing fields but keeps counts under the same names', () => {
    const fields = {
      input: PROMPT,
      messages: [{ role: 'user', content: PROMPT }],
      prompt: PROMPT,
      instructions: PROMPT,
      system: [{ type: 'text', text: PROMPT }],
      content: PROMPT,
      text: PROMPT,
      arguments: '{"q":"merger"}',
      body: { model: 'fast', input: PROMPT },
      usage: { input: 10, output: 2, text: 5 },
      message: 'upstream timed out',
    };
    expect(redactFields(fields)).toEqual({
      input: REDACTED,
      messages: REDACTED,
      prompt: REDACTED,
      instructions: REDACTED,
      system: REDACTED,
      content: REDACTED,
      text: REDACTED,
      arguments: REDACTED,
      body: REDACTED,
      usage: { input: 10, output: 2, text: 5 },
      message: 'upstream timed out',
    });
  });

  it('looks into nested objects and arrays', () => {
    const fields = { request: { headers: { authorization: 'Bearer abc', accept: 'application/json' } }, items: [{ apiKey: 'x' }, 'plain'] };
    expect(redactFields(fields)).toEqual({
      request: { headers: { authorization: REDACTED, accept: 'application/json' } },
      items: [{ apiKey: REDACTED }, 'plain'],
    });
  });

  it('survives cycles and cuts deep nesting', () => {
    const cyclic: Record<string, unknown> = { name: 'a', token: 't' };
    cyclic.self = cyclic;
    expect(redactFields({ cyclic })).toEqual({ cyclic: { name: 'a', token: REDACTED, self: '[circular]' } });

    let deep: Record<string, unknown> = { secret: 's' };
    for (let level = 0; level < 20; level++) deep = { next: deep };
    expect(JSON.stringify(redactFields(deep))).toContain('[truncated]');
    expect(JSON.stringify(redactFields(deep))).not.toContain('"s"');

    const shared = { apiKey: 'k' };
    expect(redactFields({ a: shared, b: shared })).toEqual({ a: { apiKey: REDACTED }, b: { apiKey: REDACTED } });
  });

  it('scrubs credentials out of free text anywhere', () => {
    const error = new Error(`401 from upstream: Incorrect API key provided: ${UPSTREAM_KEY}`);
    const redacted = redactFields({
      message: `sent Authorization: Bearer ${CLIENT_KEY}`,
      error,
      list: [`GET https://gemini.test/v1/models?key=${CLIENT_KEY}&alt=sse`],
    });
    expect(JSON.stringify(redacted)).not.toContain(CLIENT_KEY);
    expect(JSON.stringify(redacted)).not.toContain(UPSTREAM_KEY);
    expect(redacted.message).toBe('sent Authorization: Bearer [redacted]');
    expect(redacted.list).toEqual(['GET https://gemini.test/v1/models?key=[redacted]&alt=sse']);
    expect(redacted.error).toMatchObject({ name: 'Error', message: '401 from upstream: Incorrect API key provided: sk-[redacted]' });
    const clean = new Error('upstream timed out');
    expect(redactFields({ error: clean }).error).toBe(clean);
  });
});

describe('scrubSecrets', () => {
  it.each([
    ['Bearer abcdefgh12345678', 'Bearer [redacted]'],
    ['authorization: bearer abcdefgh12345678', 'authorization: bearer [redacted]'],
    ['key sk-ant-api03-abcdefghijklmnopqrstuv rejected', 'key sk-[redacted] rejected'],
    ['x-api-key: abcdefghijkl', 'x-api-key: [redacted]'],
    ['"api-key":"abcdefghijkl"', '"api-key":"[redacted]"'],
    ['https://h.test/x?api_key=abcdefghijkl', 'https://h.test/x?api_key=[redacted]'],
  ])('%s', (text, expected) => {
    expect(scrubSecrets(text)).toBe(expected);
  });

  it('leaves ordinary text alone', () => {
    for (const text of ['upstream timed out after 30000 ms', 'task-abcdefghijklmnopqrstuvwxyz', 'model gpt-test is not available', '/v1/chat/completions']) {
      expect(scrubSecrets(text)).toBe(text);
    }
  });
});

describe('redactingLogger', () => {
  function recording(): { logger: Logger; lines: Array<[string, string, Record<string, unknown> | undefined]> } {
    const lines: Array<[string, string, Record<string, unknown> | undefined]> = [];
    return {
      lines,
      logger: {
        info: (message, fields) => void lines.push(['info', message, fields]),
        warn: (message, fields) => void lines.push(['warn', message, fields]),
        error: (message, fields) => void lines.push(['error', message, fields]),
      },
    };
  }

  it('redacts every record at every level by default', () => {
    const { logger, lines } = recording();
    const redacting = redactingLogger(logger);
    redacting.info('request', { requestId: 'r', apiKey: CLIENT_KEY });
    redacting.warn('retrying', { messages: [PROMPT] });
    redacting.error(`failed with Bearer ${CLIENT_KEY}`);
    expect(lines).toEqual([
      ['info', 'request', { requestId: 'r', apiKey: REDACTED }],
      ['warn', 'retrying', { messages: REDACTED }],
      ['error', 'failed with Bearer [redacted]', undefined],
    ]);
  });

  it('hands the logger back untouched with redact: false', () => {
    const { logger } = recording();
    expect(redactingLogger(logger, { redact: false })).toBe(logger);
  });
});
