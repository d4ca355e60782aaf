import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { readJsonBody } from '../../src/http/read-json.js';

const LIMIT = 1024;

function jsonRequest(body: BodyInit | null, headers: Record<string, string> = { 'content-type': 'application/json' }): Request {
  return new Request('http://localhost/v1/responses', {
    method: 'POST',
    headers,
    body,
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit);
}

/** A body without content-length, delivered in chunks; records whether it was cancelled. */
function streamed(chunks: Uint8Array[]): { stream: ReadableStream<Uint8Array>; pulled: () => number; cancelled: () => boolean } {
  let index = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[index++];
      if (chunk) controller.enqueue(chunk);
      else controller.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, pulled: () => index, cancelled: () => cancelled };
}

async function failure(request: Request, limit = LIMIT): Promise<GatewayError> {
  try {
    await readJsonBody(request, limit);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected readJsonBody to fail');
}

describe('readJsonBody: accepted', () => {
  it('returns the parsed object', async () => {
    await expect(readJsonBody(jsonRequest('{"model":"m","input":"hi","x":[1]}'), LIMIT)).resolves.toEqual({
      model: 'm',
      input: 'hi',
      x: [1],
    });
  });

  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON;Charset="UTF-8"',
    'application/vnd.api+json',
    'application/merge-patch+json; charset=utf8',
  ])('content type %s', async (contentType) => {
    await expect(readJsonBody(jsonRequest('{"a":1}', { 'content-type': contentType }), LIMIT)).resolves.toEqual({ a: 1 });
  });

  it('decodes multi-byte characters split across chunks', async () => {
    const bytes = new TextEncoder().encode('{"text":"héllo 😀"}');
    const chunks = Array.from(bytes, (byte) => new Uint8Array([byte]));
    const { stream } = streamed(chunks);
    await expect(readJsonBody(jsonRequest(stream), LIMIT)).resolves.toEqual({ text: 'héllo 😀' });
  });

  it('accepts a body of exactly the limit', async () => {
    const text = `{"a":"${'x'.repeat(LIMIT - 8)}"}`;
    expect(new TextEncoder().encode(text).byteLength).toBe(LIMIT);
    await expect(readJsonBody(jsonRequest(text), LIMIT)).resolves.toHaveProperty('a');
  });

  it('ignores a UTF-8 byte order mark', async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('{"a":1}')]);
    await expect(readJsonBody(jsonRequest(bytes), LIMIT)).resolves.toEqual({ a: 1 });
  });
});

describe('readJsonBody: rejected', () => {
  it('malformed JSON → 400 invalid_json with the parser reason', async () => {
    const error = await failure(jsonRequest('{"model": m}'));
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'invalid_json', param: null });
    expect(error.message).toMatch(/^We could not parse the JSON body of your request: .+/);
    expect(error.message).toMatch(/JSON/);
  });

  it('truncated JSON → 400 invalid_json', async () => {
    const error = await failure(jsonRequest('{"model":"m","input":"h'));
    expect(error).toMatchObject({ status: 400, code: 'invalid_json' });
  });

  it('keeps the parser reason short', async () => {
    const error = await failure(jsonRequest(`{"a": ${'y'.repeat(LIMIT - 10)}`));
    expect(error.code).toBe('invalid_json');
    expect(error.message.length).toBeLessThan(320);
  });

  it.each([
    ['no body', null],
    ['an empty body', ''],
    ['a blank body', ' \n\t '],
  ])('%s → 400 missing_body', async (_, payload) => {
    const error = await failure(jsonRequest(payload));
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'missing_body' });
    expect(error.message).toMatch(/A request body is required/);
  });

  it.each([
    ['text/plain', { 'content-type': 'text/plain' }],
    ['multipart', { 'content-type': 'multipart/form-data; boundary=x' }],
    ['application/jsonx', { 'content-type': 'application/jsonx' }],
    ['charset latin1', { 'content-type': 'application/json; charset=iso-8859-1' }],
  ])('wrong content type (%s) → 400 invalid_content_type', async (_, headers) => {
    const error = await failure(jsonRequest('{"a":1}', headers));
    expect(error).toMatchObject({ status: 400, code: 'invalid_content_type', param: null });
  });

  it('no content type → 400 invalid_content_type', async () => {
    // A Request with a Blob body of no type gets no content-type header.
    const request = jsonRequest(new Blob(['{"a":1}']), {});
    expect(request.headers.get('content-type')).toBeNull();
    const error = await failure(request);
    expect(error).toMatchObject({ status: 400, code: 'invalid_content_type' });
    expect(error.message).toMatch(/^Content-Type must be application\/json/);
  });

  it.each([
    ['an array', '[{"model":"m"}]', /received an array/],
    ['a string', '"hello"', /received a string/],
    ['a number', '42', /received a number/],
    ['null', 'null', /received null/],
  ])('%s → 400 invalid_body', async (_, payload, received) => {
    const error = await failure(jsonRequest(payload));
    expect(error).toMatchObject({ status: 400, code: 'invalid_body' });
    expect(error.message).toMatch(/^The request body must be a JSON object/);
    expect(error.message).toMatch(received);
  });

  it('invalid UTF-8 bytes → 400 invalid_encoding', async () => {
    const bytes = new Uint8Array([...new TextEncoder().encode('{"a":"'), 0xff, 0xfe, ...new TextEncoder().encode('"}')]);
    const error = await failure(jsonRequest(bytes));
    expect(error).toMatchObject({ status: 400, code: 'invalid_encoding' });
  });

  it('a truncated multi-byte character at the end → 400 invalid_encoding', async () => {
    const bytes = new Uint8Array([...new TextEncoder().encode('{"a":"'), 0xe2, 0x82]);
    const error = await failure(jsonRequest(bytes));
    expect(error).toMatchObject({ status: 400, code: 'invalid_encoding' });
  });

  it('content-length over the limit → 413 without reading', async () => {
    const { stream, pulled } = streamed([new Uint8Array(10)]);
    const request = new Request('http://localhost/v1/responses', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(LIMIT + 1) },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    const error = await failure(request);
    expect(error).toMatchObject({ status: 413, type: 'invalid_request_error', code: 'request_too_large' });
    expect(error.message).toContain(String(LIMIT));
    // A ReadableStream may pull once ahead when created; the gateway itself reads nothing.
    expect(pulled()).toBeLessThanOrEqual(1);
  });

  it('streamed body over the limit without content-length → 413 and the stream is cancelled', async () => {
    const chunk = new TextEncoder().encode(`{"a":"${'x'.repeat(500)}`);
    const { stream, pulled, cancelled } = streamed(Array.from({ length: 100 }, () => chunk));
    const request = jsonRequest(stream);
    expect(request.headers.get('content-length')).toBeNull();
    const error = await failure(request);
    expect(error).toMatchObject({ status: 413, code: 'request_too_large' });
    // Stopped at the limit: three 506-byte chunks pass 1024, far from the 100 offered.
    expect(pulled()).toBeLessThan(10);
    expect(cancelled()).toBe(true);
  });
});
