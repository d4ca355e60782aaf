import fc from 'fast-check';
import type { FuzzCase } from '../cases.js';
import { FUZZ_KEY } from '../settings.js';

/** Ids as a client might mangle them, written into the path as they are. */
const oddId = fc.oneof(
  fc.constantFrom(
    '{completed}',
    '{queued}',
    '{foreign}',
    '{response}',
    '{foreignResponse}',
    '{response}x',
    '{response}%2F..',
    'resp_',
    'resp_unknown',
    'local-chat',
    'local-chat%00',
    'local-chat%2Fx',
    'local-state',
    '%00',
    '%',
    '%zz',
    '%e9',
    '%C3%A9',
    '%ED%A0%80',
    '..',
    '.',
    '%2e%2e',
    '..%2f..%2fetc%2fpasswd',
    '%2F',
    '{completed}%2F..',
    '{completed}x',
    'x{completed}',
    '{completed}{completed}',
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    'null',
    'undefined',
    '0',
    '-1',
    'local-video-',
    'local-video-e30',
    'local-video-bm90IGpzb24',
    'local-video-eyJrIjoxfQ',
    'vtask_',
    '%20',
    '+',
    '\u00e9',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }).map(encodeURIComponent),
  fc.integer({ min: 100, max: 20_000 }).map((length) => `{{${length}×a}}`),
);

const query = fc.constantFrom('', '?', '?a=b', '?%zz', '?id=../x', '?{{3000×q}}', '?range=bytes=0-1', '#x', '?stream=true', '?include[]=x');

/** Values of the input-item list's paging parameters, good and bad. */
const pagingValues = {
  limit: ['1', '2', '20', '100', '0', '101', '-1', '1.5', 'x', '', '1e2', '0x10', ' 5', '99999999999999999999', 'NaN', 'Infinity', '%00'],
  order: ['asc', 'desc', 'ASC', 'sideways', '', '%00', 'asc,desc'],
  after: ['item_0', 'item_1', 'item_99', '', 'x', '__proto__', '%00', '{{3000×a}}'],
};

/** One to three paging parameters (a name may repeat), and the field a 400 must name when only one is bad. */
const pagingQuery = fc
  .array(
    fc
      .constantFrom(...(Object.keys(pagingValues) as (keyof typeof pagingValues)[]))
      .chain((name) => fc.constantFrom(...pagingValues[name]).map((value) => [name, value] as const)),
    { minLength: 1, maxLength: 3 },
  )
  .map((pairs) => ({ text: `?${pairs.map(([name, value]) => `${name}=${value}`).join('&')}`, field: pairs.length === 1 ? pairs[0]![0] : undefined }));

const range = fc.constantFrom<string | null>(
  null,
  'bytes=0-0',
  'bytes=0-',
  'bytes=-1',
  'bytes=-0',
  'bytes=5-1',
  'bytes=0-0,2-3',
  'bytes=99999999-',
  'bytes=99999999999999999999999-',
  'bytes=-99999999999999999999999',
  'items=0-1',
  'bytes=a-b',
  'bytes=',
  '',
  'bytes=1e3-',
  '{{1000×bytes=0-1}}',
);

/** Each route with an id in its path, and where the id goes. */
const idRoutes = {
  'video-status': (id: string) => `/v1/video/generations/${id}`,
  'video-content': (id: string) => `/v1/videos/${id}/content`,
  'model-get': (id: string) => `/v1/models/${id}`,
  'response-get': (id: string) => `/v1/responses/${id}`,
  'response-items': (id: string) => `/v1/responses/${id}/input_items`,
  'response-delete': (id: string) => `/v1/responses/${id}`,
} as const;

/** Cases for the routes with an id in the path: odd ids, queries and `Range` headers. */
function idCases(): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(fc.constantFrom(...(Object.keys(idRoutes) as (keyof typeof idRoutes)[])), oddId, query, range)
    .map(([route, id, suffix, rangeValue]): FuzzCase => {
      const target = `${idRoutes[route](id)}${suffix}`;
      return {
        name: `${route}: ${route === 'response-delete' ? 'DELETE' : 'GET'} ${target}${rangeValue !== null ? ` range ${rangeValue}` : ''}`,
        route,
        target,
        ...(rangeValue !== null ? { headers: { range: rangeValue } } : {}),
      };
    });
}

/** The model listing with a query (Anthropic's clients page it). */
const listingCases: fc.Arbitrary<FuzzCase> = fc
  .tuple(fc.constantFrom('', '?limit=1', '?limit=0', '?limit=x', '?after_id=local-chat', '?before_id=nope', '?after_id=', '?limit=1001'), query, fc.boolean())
  .map(([paging, suffix, anthropic]): FuzzCase => {
    const target = `/v1/models${paging}${paging && suffix.startsWith('?') ? `&${suffix.slice(1)}` : suffix}`;
    return {
      name: `models: GET ${target}${anthropic ? ' as an Anthropic client' : ''}`,
      route: 'models',
      target,
      // Claude Code asks with `x-api-key` and `anthropic-version`: the listing pages and errors the Anthropic way.
      ...(anthropic ? { headers: { authorization: null, 'x-api-key': FUZZ_KEY, 'anthropic-version': '2023-06-01' } } : {}),
    };
  });

/** The stored response's input items, paged with good and bad `limit`, `order` and `after`. */
const inputItemCases: fc.Arbitrary<FuzzCase> = fc
  .tuple(fc.constantFrom('{response}', '{foreignResponse}', 'resp_unknown'), pagingQuery)
  .map(([id, paging]): FuzzCase => {
    const target = `/v1/responses/${id}/input_items${paging.text}`;
    return {
      name: `response-items: GET ${target}`,
      route: 'response-items',
      target,
      ...(paging.field !== undefined && id === '{response}' ? { field: paging.field } : {}),
    };
  });

/** The caller's own spend, with good and bad `start` and `end` dates. */
const usageCases: fc.Arbitrary<FuzzCase> = fc
  .tuple(
    fc.constantFrom('', '2026-11-01', '2026-02-30', '26-11-01', '2026-11-01T00:00:00Z', '%00', '9999-12-31', 'x'),
    fc.constantFrom('', '2026-11-30', '2025-01-01', '2026-13-01', ' 2026-11-30'),
    query,
  )
  .map(([start, end, suffix]): FuzzCase => {
    const dates = [start && `start=${start}`, end && `end=${end}`].filter(Boolean).join('&');
    const target = `/v1/usage${dates ? `?${dates}` : ''}${dates && suffix.startsWith('?') ? `&${suffix.slice(1)}` : dates ? '' : suffix}`;
    return { name: `usage: GET ${target}`, route: 'usage', target };
  });

/** Cases for the GET (and DELETE) routes: odd ids, queries, `Range` headers, paging. */
export function getCases(): fc.Arbitrary<FuzzCase> {
  return fc.oneof(
    { weight: 3, arbitrary: idCases() },
    { weight: 1, arbitrary: listingCases },
    { weight: 2, arbitrary: inputItemCases },
    { weight: 1, arbitrary: usageCases },
  );
}
