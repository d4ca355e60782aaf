import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { parseAnswer } from '../../src/providers/http/get-json.js';
import { UpstreamClient } from '../../src/providers/http/upstream-client.js';
import { errorInAnswer, expectEventStream, upstreamError } from '../../src/providers/http/upstream-error.js';

/** Regression tests of the upstream-answer checks the fault matrix relies on. */

async function* bytes(text: string): AsyncGenerator<Uint8Array> {
  yield new TextEncoder().encode(text);
}

/** An upstream result as `UpstreamClient` hands it out (the body only needs to be iterable here). */
function result(status: number, contentType: string, body: string, redact?: (text: string) => string) {
  const iterable = Object.assign(bytes(body), { destroyed: false, destroy() {} });
  return { status, headers: { 'content-type': contentType }, body: iterable as never, ...(redact ? { redact } : {}) };
}

describe('a 200 whose body is an error', () => {
  it.each([
    ['OpenAI style', { error: { message: 'quota gone', type: 'insufficient_quota', code: 'insufficient_quota' } }],
    ['Anthropic style', { type: 'error', error: { type: 'overloaded_error', message: 'quota gone' } }],
  ])('%s → a 502 keeping the message', (_name, body) => {
    const error = errorInAnswer(body);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 502, type: 'upstream_error', message: 'quota gone' });
  });

  it.each([
    ['a chat completion', { id: 'chatcmpl-1', choices: [] }],
    ['a failed Ark task (it has an id: an answer that reports a failure)', { id: 'cgt-1', status: 'failed', error: { code: 'X', message: 'sensitive' } }],
    ['a failed Response', { id: 'resp_1', object: 'response', status: 'failed', error: { code: 'server_error', message: 'x' } }],
    ['an image answer', { created: 1, data: [] }],
    ['an answer with error: null', { created: 1, data: [], error: null }],
    ['an array', []],
  ])('%s is an answer', (_name, body) => {
    expect(errorInAnswer(body)).toBeUndefined();
  });

  it('parseAnswer throws a 502 for text that is not JSON, and for an error body', () => {
    expect(() => parseAnswer('<html>502 Bad Gateway</html>')).toThrow(expect.objectContaining({ status: 502, code: 'upstream_invalid_response' }));
    expect(() => parseAnswer('{"id":"x","choices":[')).toThrow(expect.objectContaining({ status: 502 }));
    expect(() => parseAnswer('{"error":{"message":"nope"}}')).toThrow(expect.objectContaining({ status: 502, message: 'nope' }));
    expect(parseAnswer('{"id":"x"}')).toEqual({ id: 'x' });
  });
});

describe('a stream request answered with something else', () => {
  it('JSON: a 502 with the upstream message, before anything is streamed', async () => {
    await expect(expectEventStream(result(200, 'application/json', '{"error":{"message":"no stream for you"}}'))).rejects.toMatchObject({
      status: 502,
      message: 'no stream for you',
    });
  });

  it('HTML: a 502 that does not quote the page', async () => {
    const error = await expectEventStream(result(200, 'text/html; charset=utf-8', '<html><h1>Bad Gateway</h1></html>')).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 502, code: 'upstream_invalid_response' });
    expect((error as Error).message).not.toContain('<html>');
  });

  it.each(['text/event-stream; charset=utf-8', 'text/plain', ''])('"%s" passes (some servers label real streams loosely)', async (type) => {
    await expect(expectEventStream(result(200, type, 'data: {}\n\n'))).resolves.toBeUndefined();
  });
});

describe('upstream text is redacted', () => {
  const client = new UpstreamClient({
    baseURL: 'http://10.0.0.7:8000/v1',
    headers: { authorization: 'Bearer up-SECRET-token-123', 'openai-organization': 'org-SECRET-99', 'x-short': 'v1' },
  });

  it('credentials (whole or the token of a Bearer value) and the upstream address', () => {
    expect(client.redact('Incorrect API key provided: up-SECRET-token-123 for org-SECRET-99 at http://10.0.0.7:8000/v1')).toBe(
      'Incorrect API key provided: [redacted] for [redacted] at [host]',
    );
    expect(client.redact('got "Bearer up-SECRET-token-123"')).toBe('got "[redacted]"');
    // Short header values (versions, flags) are no secrets and words like them stay.
    expect(client.redact('use v1 of the API')).toBe('use v1 of the API');
  });

  it('in every message made from an upstream error', async () => {
    const error = await upstreamError(result(400, 'application/json', '{"error":{"message":"boom for up-SECRET-token-123"}}', client.redact));
    expect(error.message).toBe('boom for [redacted]');
    // A 5xx keeps the upstream's words for the operator only; they are redacted there too.
    const failed = await upstreamError(result(500, 'application/json', '{"error":{"message":"boom for up-SECRET-token-123"}}', client.redact));
    expect([failed.message, failed.detail]).toEqual(['The upstream answered with status 500.', 'boom for [redacted]']);
    expect(errorInAnswer({ error: { message: 'key up-SECRET-token-123' } }, client.redact)?.message).toBe('key [redacted]');
  });

  it('the client closes cleanly', async () => {
    await client.close();
  });
});
