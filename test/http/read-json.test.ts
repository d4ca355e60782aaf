import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { readJsonBody, readJsonBodyWithText } from '../../src/http/read-json.js';
import { readMultipartBody } from '../../src/http/read-multipart.js';

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
    const { stream, pulled, cancelled } = streamed([new Uint8Array(10)]);
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
    // Found by the fuzz corpus: cancelling the unread body reset the connection before the 413
    // was written. The body is left alone (the host discards it after the answer).
    expect(cancelled()).toBe(false);
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

describe('readJsonBody: decoding', () => {
  it('decodes ASCII and multi-byte chunks in any mix, a character cut anywhere', async () => {
    const text = JSON.stringify({ a: 'x'.repeat(300), b: 'héllo 😀 日本', c: 'y'.repeat(300), d: '€'.repeat(50) });
    const bytes = new TextEncoder().encode(text);
    for (const size of [1, 2, 3, 5, 7, 64, 301]) {
      const chunks: Uint8Array[] = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
      const { stream } = streamed(chunks);
      await expect(readJsonBody(jsonRequest(stream), 4096), `chunks of ${size}`).resolves.toEqual(JSON.parse(text));
    }
  });

  it('an invalid byte after a cut character is still refused when ASCII chunks follow', async () => {
    // 0xE2 0x82 starts a three-byte character; an ASCII chunk cannot finish it.
    const { stream } = streamed([
      new TextEncoder().encode('{"a":"'),
      new Uint8Array([0xe2, 0x82]),
      new TextEncoder().encode('xyz'),
      new Uint8Array([0xac]),
      new TextEncoder().encode('"}'),
    ]);
    const error = await failure(jsonRequest(stream));
    expect(error).toMatchObject({ status: 400, code: 'invalid_encoding' });
  });

  it('keeps a U+FEFF that is not at the start', async () => {
    const { stream } = streamed([new TextEncoder().encode('{"a":"'), new Uint8Array([0xef, 0xbb, 0xbf]), new TextEncoder().encode('"}')]);
    await expect(readJsonBody(jsonRequest(stream), LIMIT)).resolves.toEqual({ a: '\ufeff' });
  });

  it('readJsonBodyWithText returns the text as received, without a byte order mark', async () => {
    const text = '{ "model" : "m",\n "input": "héllo" }';
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(text)]);
    await expect(readJsonBodyWithText(jsonRequest(bytes), LIMIT)).resolves.toEqual({ body: { model: 'm', input: 'héllo' }, text });
  });
});

describe('readJsonBody: large bodies', () => {
  const text = JSON.stringify({ model: 'm', data: 'A'.repeat(3 * 1024 * 1024), tail: 'héllo' });
  const bytes = new TextEncoder().encode(text);
  const chunked = () => {
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i += 65_536) chunks.push(bytes.subarray(i, i + 65_536));
    return streamed(chunks).stream;
  };
  const request = (declared: number | undefined) =>
    new Request('http://localhost/v1/responses', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(declared === undefined ? {} : { 'content-length': String(declared) }) },
      body: chunked(),
      duplex: 'half',
    } as RequestInit);

  it.each([
    ['declared exactly', bytes.length],
    ['not declared', undefined],
    // Hosts other than Node may not hold the body to its declared length.
    ['declared shorter than sent', 2 * 1024 * 1024],
    ['declared longer than sent', bytes.length + 1000],
  ])('a 3 MB body, length %s, reads whole and decodes right', async (_, declared) => {
    await expect(readJsonBodyWithText(request(declared), 8 * 1024 * 1024)).resolves.toEqual({ body: JSON.parse(text), text });
  });
});

describe('readJsonBody: deadline', () => {
  /** A body that sends its first bytes, then nothing more until cancelled. */
  function trickle(): { stream: ReadableStream<Uint8Array>; cancelled: () => boolean } {
    let sent = false;
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (!sent) controller.enqueue(new TextEncoder().encode('{"model":"m","input":"'));
        sent = true;
        return new Promise(() => {}); // never more
      },
      cancel() {
        cancelled = true;
      },
    });
    return { stream, cancelled: () => cancelled };
  }

  it('a body not complete within the deadline → 408 request_body_timeout, the upload cancelled', async () => {
    const { stream, cancelled } = trickle();
    const started = Date.now();
    let error: GatewayError | undefined;
    try {
      await readJsonBody(jsonRequest(stream), LIMIT, 100);
    } catch (caught) {
      error = caught as GatewayError;
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 408, type: 'invalid_request_error', code: 'request_body_timeout', headers: { connection: 'close' } });
    expect(error!.message).toContain('100 ms');
    expect(cancelled()).toBe(true);
  });

  it('a body that arrives within the deadline is read, and no timer is left behind', async () => {
    await expect(readJsonBody(jsonRequest('{"a":1}'), LIMIT, 50)).resolves.toEqual({ a: 1 });
    await new Promise((resolve) => setTimeout(resolve, 80));
  });
});

describe('readJsonBody: nesting depth (found by the fuzz corpus)', () => {
  it('more than 256 levels of arrays or objects → 400 json_too_deep naming the top-level field', async () => {
    // 4 000 levels parsed fine, then overflowed the stack of JSON.stringify downstream: a 500.
    const deep = `{"model":"m","tools":${'['.repeat(300)}${']'.repeat(300)}}`;
    const error = await failure(jsonRequest(deep), 10_000);
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'json_too_deep', param: 'tools' });
    expect(error.message).toBe("The JSON body is nested more than 256 levels deep in 'tools'.");
  });

  it('256 levels are accepted, and brackets inside strings do not count', async () => {
    const atLimit = `{"a":${'['.repeat(255)}${']'.repeat(255)},"s":"${'['.repeat(400)}\\"{{"}`;
    await expect(readJsonBody(jsonRequest(atLimit), 10_000)).resolves.toHaveProperty('s');
  });

  it('a key ending in an escaped backslash is read whole, and named as the validator writes odd keys', async () => {
    const deep = String.raw`{"k\\":` + `${'['.repeat(300)}${']'.repeat(300)}}`;
    const error = await failure(jsonRequest(deep), 10_000);
    expect(error).toMatchObject({ code: 'json_too_deep', param: String.raw`["k\\"]` });
  });
});

describe('readJsonBody: value count (issue 22, work bounds)', () => {
  it('more than 1,000,000 values → 400 json_too_large naming the top-level field that holds the most', async () => {
    // 2.4 MB: every walk after the parse (validation, translation, the cache key) pays per value.
    const wide = `{"model":"m","messages":[${'{"a":1},'.repeat(1000)}0],"junk":[${'0,'.repeat(1_000_001)}0]}`;
    const error = await failure(jsonRequest(wide), 10_000_000);
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'json_too_large', param: 'junk' });
    expect(error.message).toBe("The JSON body holds more than 1000000 values, most of them in 'junk'.");
  });

  it('a million values in all are accepted', async () => {
    const body = `{"input":[${'1,'.repeat(999_990)}1]}`;
    await expect(readJsonBody(jsonRequest(body), 10_000_000)).resolves.toHaveProperty('input');
  });
});

describe('reading a body whose stream fails (found by the fuzz corpus)', () => {
  /** A body that sends a first chunk, then fails as a request does when its client disconnects mid-upload. */
  function cut(first: string): ReadableStream<Uint8Array> {
    let sent = false;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) controller.error(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
        else controller.enqueue(new TextEncoder().encode(first));
        sent = true;
      },
    });
  }

  it('JSON: a connection closed mid-body → 400 incomplete_body, not an unexpected error (a logged 500)', async () => {
    const error = await failure(jsonRequest(cut('{"model":"m","input":"')));
    expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'incomplete_body', param: null });
  });

  it('multipart: the same → 400 incomplete_body', async () => {
    const request = new Request('http://localhost/v1/images/edits', {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=b' },
      body: cut('--b\r\nContent-Disposition: form-data; name="model"\r\n\r\nm\r\n'),
      duplex: 'half',
    } as RequestInit);
    const error = await readMultipartBody(request, { fileBytes: 1024, files: 1, bodyBytes: 4096, fieldBytes: 1024, fields: 8, fileField: 'file' }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 400, code: 'incomplete_body' });
  });
});

describe('readMultipartBody: bounds checked as the body arrives (issue 22, uploads)', () => {
  const limits = { fileBytes: 1024 * 1024, files: 16, bodyBytes: 64 * 1024, fieldBytes: 1024 * 1024, fields: 8, fileField: 'file' };
  const filePart = (index: number) => new TextEncoder().encode(`--b\r\ncontent-disposition: form-data; name="file"; filename="${index}.wav"\r\n\r\n`);
  const formRequest = (stream: ReadableStream<Uint8Array>) =>
    new Request('http://localhost/v1/audio/transcriptions', {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=b' },
      body: stream,
      duplex: 'half',
    } as RequestInit);

  it('a body past bodyBytes is a 413 as soon as it is passed, the rest never read', async () => {
    const chunks = Array.from({ length: 64 }, (_, index) => (index === 0 ? filePart(0) : new Uint8Array(16 * 1024).fill(97)));
    const body = streamed(chunks);
    const error = await readMultipartBody(formRequest(body.stream), limits).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 413, code: 'request_too_large', param: null, message: 'The request body is larger than 65536 bytes.' });
    expect(body.pulled()).toBeLessThan(8);
    expect(body.cancelled()).toBe(true);
  });

  it('a file past `files` stops the reading at its part: the files after it are never read', async () => {
    const file = new Uint8Array(1024).fill(1);
    const crlf = new TextEncoder().encode('\r\n');
    const chunks = Array.from({ length: 16 }, (_, index) => [filePart(index), file, crlf]).flat();
    const body = streamed(chunks);
    const error = await readMultipartBody(formRequest(body.stream), { ...limits, files: 1 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 413, param: 'file', message: 'At most 1 file may be uploaded.' });
    expect(body.pulled()).toBeLessThan(8);
    expect(body.cancelled()).toBe(true);
  });

  it('onFile sees each file part as it starts, with the fields before it, and its throw stops the reading', async () => {
    const seen: string[] = [];
    const model = new TextEncoder().encode('--b\r\ncontent-disposition: form-data; name="model"\r\n\r\nseedream\r\n');
    const chunks = [model, ...Array.from({ length: 12 }, (_, index) => [filePart(index), new Uint8Array(512), new TextEncoder().encode('\r\n')]).flat()];
    const body = streamed(chunks);
    const error = await readMultipartBody(formRequest(body.stream), {
      ...limits,
      onFile: (field, fields) => {
        seen.push(`${field} ${fields.model}`);
        if (seen.length === 3) throw new GatewayError({ status: 400, message: 'Three is too many.', param: 'file', code: 'invalid_value' });
      },
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, message: 'Three is too many.', param: 'file' });
    expect(seen).toEqual(['file seedream', 'file seedream', 'file seedream']);
    expect(body.cancelled()).toBe(true);
    expect(body.pulled()).toBeLessThan(chunks.length);
  });
});
