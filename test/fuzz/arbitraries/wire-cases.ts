import fc from 'fast-check';
import type { BodySpec, FuzzCase, RouteName } from '../cases.js';
import { bodyBytes } from '../materialize.js';
import { fuzzRoutes, validBodies, validEditForm, validTranscriptionForm } from '../routes.js';
import { FUZZ_KEY } from '../settings.js';

/** A route's usual valid body, so that only the request head is at fault. */
function validBody(route: RouteName): BodySpec | undefined {
  if (route === 'edits') return { multipart: { parts: [...validEditForm] } };
  if (route === 'transcriptions') return { multipart: { parts: [...validTranscriptionForm] } };
  const bases = validBodies[route === 'responses-alias' ? 'responses' : route];
  return bases ? { json: bases[0] } : undefined;
}

type HeadChange =
  | { kind: 'method'; method: string }
  | { kind: 'target'; target: (path: string) => string; label: string }
  | { kind: 'header'; name: string; value: string | string[] | null }
  | { kind: 'length'; length: (actual: number) => number | string | null; label: string }
  | { kind: 'chunked'; size: number }
  | { kind: 'many-headers'; count: number };

const method = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'FOO', 'get', 'PROPFIND', 'M-SEARCH');

const targets: [string, (path: string) => string][] = [
  ['trailing slash', (p) => `${p}/`],
  ['double slash', (p) => `${p}//`],
  ['leading double slash', (p) => `/${p}`],
  ['upper case', (p) => p.toUpperCase()],
  ['query', (p) => `${p}?a=b&a=c`],
  ['bad escape in query', (p) => `${p}?%zz=%`],
  ['long query', (p) => `${p}?q={{12000×q}}`],
  ['query overriding body fields', (p) => `${p}?model=local-image&stream=true&__proto__=x`],
  ['key and alt in the query', (p) => `${p.split('?')[0]}?key=${FUZZ_KEY}&alt=json&key=other`],
  ['fragment', (p) => `${p}#frag`],
  ['encoded NUL', (p) => `${p}%00`],
  ['dot segment', (p) => `${p}/..`],
  ['dot-dot to models', () => '/v1/chat/../models'],
  ['encoded dot-dot', () => '/v1/%2e%2e/v1/models'],
  ['absolute form', (p) => `http://127.0.0.1${p}`],
  ['absolute form other host', (p) => `http://example.invalid${p}`],
  ['asterisk', () => '*'],
  ['matrix parameter', (p) => `${p};x=1`],
  ['backslash', (p) => p.replaceAll('/', '\\')],
  ['encoded slash', (p) => p.replaceAll('/', '%2F')],
  ['unicode', (p) => `${p}\u00e9`],
  ['very long path', (p) => `${p}/{{20000×x}}`],
];

const headerChanges: [string, (string | string[] | null)[]][] = [
  [
    'authorization',
    [
      null,
      '',
      'Bearer',
      'Bearer ',
      `Bearer ${FUZZ_KEY} extra`,
      `bearer ${FUZZ_KEY}`,
      `BEARER   ${FUZZ_KEY}  `,
      'Basic c2s6eA==',
      `Bearer ${FUZZ_KEY}\t`,
      'Bearer {{8000×x}}',
      'Bearer \u00ff\u00fe',
      [`Bearer ${FUZZ_KEY}`, 'Bearer other'],
      `Bearer ${FUZZ_KEY}, Bearer other`,
      'Bearer sk-fuzz-other',
    ],
  ],
  ['x-api-key', [null, '', ' ', 'wrong', FUZZ_KEY.toUpperCase(), [FUZZ_KEY, 'other'], '{{8000×x}}', '\u00ff']],
  ['x-goog-api-key', [null, '', ' ', 'wrong', [FUZZ_KEY, 'other'], '{{8000×x}}', '\u00ff']],
  [
    'anthropic-version',
    [null, '', 'latest', '2023-06-01 ', '2023-6-1', '9999-99-99', '2023-06-01T00:00:00Z', '{{5000×x}}', ['2023-06-01', '2024-01-01'], '\u00e9'],
  ],
  [
    'content-type',
    [
      null,
      '',
      'text/plain',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'application/json;;;',
      'application/json; boundary=x',
      'application/json; charset',
      'multipart/form-data',
      'multipart/form-data; boundary=x',
      'application/x-www-form-urlencoded',
      'APPLICATION/JSON',
      ' application/json ',
      'application/+json',
      'a/b+json',
      'application/json, text/plain',
      ['application/json', 'text/plain'],
      'application/json; {{2000×p=1;}}',
    ],
  ],
  ['content-encoding', ['gzip', 'deflate', 'br', 'zstd', 'identity', 'x-unknown', 'gzip, gzip']],
  ['transfer-encoding', ['gzip', 'identity', 'x', 'chunked, chunked']],
  ['expect', ['100-continue', 'weird']],
  ['host', [null, '', 'a b', '[::1', 'example.invalid:99999', '%', '127.0.0.1:0', '{{2000×x}}']],
  ['accept', ['text/event-stream', 'application/xml', '*/*;q=x', 'application/json', 'text/event-stream, application/json', '']],
  ['mcp-session-id', [null, '', '{foreignMcpSession}', 'not-a-session', '{{300×s}}', '\u00e9', ['{mcpSession}', '{mcpSession}'], '{mcpSession} ']],
  ['mcp-protocol-version', [null, '', '2026-07-28', '2025-06-18', '2024-10-07', '{{2000×v}}', '\u00e9', ['2025-03-26', '2025-06-18']]],
  ['range', ['bytes=0-0', 'bytes=-1', 'bytes=5-1', 'bytes=0-0,1-1', 'bytes=99999999999999999999-', 'items=0-1', 'bytes=-0']],
  ['x-request-id', ['', '{{4000×x}}', '\u00e9']],
  ['connection', ['close', 'upgrade', 'keep-alive, Upgrade']],
  ['upgrade', ['websocket', 'h2c']],
  ['x-huge', ['{{20000×v}}']],
];

const lengths: [string, (actual: number) => number | string | null][] = [
  ['none', () => null],
  ['zero', () => 0],
  ['one short', (n) => Math.max(0, n - 1)],
  ['half', (n) => Math.floor(n / 2)],
  ['one long', (n) => n + 1],
  ['much longer', (n) => n + 100_000],
  ['non-numeric', () => 'abc'],
  ['negative', () => '-1'],
  ['huge', () => '99999999999999999999'],
  ['hex', () => '0x10'],
  ['with spaces', (n) => ` ${n} `],
  ['two values', (n) => `${n}, ${n + 1}`],
];

const headChange: fc.Arbitrary<HeadChange> = fc.oneof(
  method.map((m): HeadChange => ({ kind: 'method', method: m })),
  fc.constantFrom(...targets).map(([label, target]): HeadChange => ({ kind: 'target', target, label })),
  {
    weight: 4,
    arbitrary: fc
      .constantFrom(...headerChanges)
      .chain(([name, values]) => fc.constantFrom(...values).map((value): HeadChange => ({ kind: 'header', name, value }))),
  },
  { weight: 2, arbitrary: fc.constantFrom(...lengths).map(([label, length]): HeadChange => ({ kind: 'length', length, label })) },
  fc.integer({ min: 1, max: 64 }).map((size): HeadChange => ({ kind: 'chunked', size })),
  fc.integer({ min: 50, max: 3_000 }).map((count): HeadChange => ({ kind: 'many-headers', count })),
);

function describe(change: HeadChange): string {
  switch (change.kind) {
    case 'method':
      return `method ${change.method}`;
    case 'target':
    case 'length':
      return `${change.kind} ${change.label}`;
    case 'header': {
      const value = JSON.stringify(change.value) ?? 'null';
      return `${change.name}: ${value.length > 40 ? `${value.slice(0, 40)}…(${value.length})` : value}`;
    }
    case 'chunked':
      return `chunked by ${change.size}`;
    case 'many-headers':
      return `${change.count} extra headers`;
  }
}

/**
 * Cases whose request head is at fault — method, target, authentication, content type and length,
 * encodings, absurd headers — on every route, each with the route's valid body.
 */
export function wireCases(): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(fc.constantFrom(...fuzzRoutes.map((route) => route.name)), fc.array(headChange, { minLength: 1, maxLength: 3 }))
    .map(([route, changes]): FuzzCase => {
      const body = validBody(route);
      const testCase: FuzzCase = { name: `${route}: ${changes.map(describe).join('; ')}`, route, ...(body ? { body } : {}) };
      const path = fuzzRoutes.find((candidate) => candidate.name === route)!.path;
      const headers: Record<string, string | string[] | null> = {};
      for (const change of changes) {
        if (change.kind === 'method') testCase.method = change.method;
        if (change.kind === 'target') testCase.target = change.target(testCase.target ?? path);
        if (change.kind === 'header') headers[change.name] = change.value;
        if (change.kind === 'length') testCase.contentLength = change.length(bodyBytes(body).byteLength);
        if (change.kind === 'chunked') testCase.chunked = change.size;
        if (change.kind === 'many-headers') testCase.extraHeaders = change.count;
      }
      if (Object.keys(headers).length > 0) testCase.headers = headers;
      return testCase;
    });
}
