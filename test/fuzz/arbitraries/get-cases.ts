import fc from 'fast-check';
import type { FuzzCase } from '../cases.js';

/** Task ids as a client might mangle them, written into the path as they are. */
const oddId = fc.oneof(
  fc.constantFrom(
    '{completed}',
    '{queued}',
    '{foreign}',
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

const query = fc.constantFrom('', '?', '?a=b', '?%zz', '?id=../x', '?{{3000×q}}', '?range=bytes=0-1', '#x');

const range = fc.constantFrom<string | null>(null, 'bytes=0-0', 'bytes=0-', 'bytes=-1', 'bytes=-0', 'bytes=5-1', 'bytes=0-0,2-3', 'bytes=99999999-', 'bytes=99999999999999999999999-', 'bytes=-99999999999999999999999', 'items=0-1', 'bytes=a-b', 'bytes=', '', 'bytes=1e3-', '{{1000×bytes=0-1}}');

/** Cases for the GET routes: odd task ids, queries and `Range` headers. */
export function getCases(): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(fc.constantFrom('video-status' as const, 'video-content' as const, 'models' as const), oddId, query, range)
    .map(([route, id, suffix, rangeValue]): FuzzCase => {
      const path = route === 'models' ? `/v1/models/${id}` : route === 'video-status' ? `/v1/video/generations/${id}` : `/v1/videos/${id}/content`;
      // `/v1/models/{id}` is no route (404); plain `/v1/models` with the query is.
      const target = route === 'models' && id === '{completed}' ? `/v1/models${suffix}` : `${path}${suffix}`;
      return {
        name: `${route}: GET ${target}${rangeValue !== null ? ` range ${rangeValue}` : ''}`,
        route,
        target,
        ...(rangeValue !== null ? { headers: { range: rangeValue } } : {}),
      };
    });
}
