import fc from 'fast-check';
import type { Piece } from '../cases.js';

/**
 * JSON text that `JSON.stringify` cannot produce, or should not have to hold in memory as a value:
 * number tokens like `1e999`, 10 000-deep arrays, 300 000-character strings. Kept as pieces
 * (`{ repeat, times }`), so a case stays small when printed or committed.
 */
export class RawJson {
  constructor(readonly pieces: readonly Piece[]) {}
}

/** A value a mutation writes: plain JSON, or raw JSON text. */
export type FuzzValue = unknown;

/** Numbers at the edges: negative, zero, fractions, past 2^53, near the double range. */
const edgeNumbers = [
  0,
  -0,
  -1,
  1,
  2,
  1.5,
  0.1,
  129,
  3601,
  2 ** 31,
  2 ** 32 + 1,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  1e21,
  1e308,
  -1e308,
  5e-324,
  Number.MAX_VALUE,
];

/** Number tokens that parse to Infinity, lose precision or underflow. */
const rawNumberTokens = ['1e999', '-1e999', '1E400', '-0.0', '1e-400', '123456789012345678901234567890', '0.30000000000000004440892098500626', '1.0'];

/** Strings that read as something else, or carry characters that break naive code. */
const oddStrings = [
  '',
  ' ',
  'NaN',
  'Infinity',
  '-Infinity',
  'null',
  'undefined',
  'true',
  '0',
  '-1',
  '1e999',
  '0x10',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  '\ufeff',
  '\u202e',
  '\u{1f600}',
  'é',
  '%00',
  '%zz',
  '../../etc/passwd',
  '__proto__',
  'constructor',
  'toString',
  '{"a":1}',
  '[]',
  '<script>alert(1)</script>',
  'data:image/png;base64,!!!!',
  'data:;base64,',
  'data:,',
  'local-chat',
  'local-image',
  'local-video',
  'local-speech',
  'auto',
  'none',
  'required',
  'function',
  'tool',
  'text',
  'message',
  'user',
  'assistant',
  'system',
  'developer',
  'tool_result',
  'json_schema',
  'enabled',
  'disabled',
  'base64',
  'url',
  'mp3',
  'wav',
  'opus',
  '16x16',
  '0x0',
  '99999x99999',
  'en_female_anna_v1',
];

const oddContainers: unknown[] = [[], {}, [null], [[]], { '': null }, [{}], [1, 'a', null, true, {}], { a: { b: { c: [] } } }];

/** Deep nesting: `[[[…]]]` or `{"a":{"a":…}}`, up to 20 000 levels. */
export const deepNesting = fc.oneof(
  fc.integer({ min: 100, max: 20_000 }).map(
    (depth) =>
      new RawJson([
        { repeat: '[', times: depth },
        { repeat: ']', times: depth },
      ]),
  ),
  fc.integer({ min: 100, max: 20_000 }).map((depth) => new RawJson([{ repeat: '{"a":', times: depth }, '1', { repeat: '}', times: depth }])),
  fc
    .integer({ min: 100, max: 5_000 })
    .map((depth) => new RawJson([{ repeat: '[{"type":"text","text":', times: depth }, '"x"', { repeat: '}]', times: depth }])),
);

/**
 * Long strings without spaces (a long string with spaces would be a legitimately long speech or
 * prompt, not malformed input). Some pass the 512 KiB body limit of the fuzz gateway: 413.
 */
export const longString = fc
  .tuple(fc.constantFrom('a', 'é', '\u{1f600}', '\\u0000', '\\"'), fc.integer({ min: 1_000, max: 600_000 }))
  .map(([unit, length]) => new RawJson(['"', { repeat: unit, times: Math.ceil(length / Math.max(1, unit.length)) }, '"']));

/** Arrays and objects with very many members. */
export const wideContainer = fc.oneof(
  fc.integer({ min: 1_000, max: 100_000 }).map((count) => new RawJson(['[', { repeat: '0,', times: count }, '0]'])),
  fc.integer({ min: 1_000, max: 50_000 }).map((count) => new RawJson(['{', { repeat: '"k":1,', times: count }, '"k":2}'])),
  fc
    .integer({ min: 100, max: 20_000 })
    .map((count) => new RawJson(['[', { repeat: '{"role":"user","content":"x"},', times: count }, '{"role":"user","content":"x"}]'])),
);

/** Any value a corrupted field may hold. */
export const weirdValue: fc.Arbitrary<FuzzValue> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(null, true, false, ...edgeNumbers) },
  { weight: 3, arbitrary: fc.constantFrom(...oddStrings) },
  { weight: 2, arbitrary: fc.constantFrom(...oddContainers) },
  { weight: 1, arbitrary: fc.constantFrom(...rawNumberTokens).map((token) => new RawJson([token])) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: deepNesting },
  { weight: 1, arbitrary: longString },
  { weight: 1, arbitrary: wideContainer },
);

/** Keys a mutation adds: prototype names, empty, odd characters, and real field names out of place. */
export const weirdKey = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'hasOwnProperty',
    'valueOf',
    '',
    ' ',
    '\u0000',
    '\ud800',
    'model',
    'stream',
    'n',
    'logprobs',
    'top_logprobs',
    'audio',
    'modalities',
    'functions',
    'function_call',
    'web_search_options',
    'previous_response_id',
    'conversation',
    'prompt',
    'background',
    'truncation',
    'container',
    'mcp_servers',
    'cache_control',
    'output_config',
    'include',
    'text',
    'stop',
    'response_format',
    'type',
    'role',
    'content',
    'image',
    'images',
    'mask',
    'service_tier',
  ),
  fc.string({ unit: 'binary', maxLength: 12 }),
);
