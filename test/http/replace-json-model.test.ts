import { describe, expect, it } from 'vitest';
import { replaceTopLevelFields, replaceTopLevelModel, replaceTopLevelModelPieces } from '../../src/http/replace-json-model.js';

const M = 'gpt-4.1';

describe('replaceTopLevelModel', () => {
  it('replaces the value and keeps every other byte', () => {
    expect(replaceTopLevelModel('{"model":"mine","stream":true}', M)).toBe('{"model":"gpt-4.1","stream":true}');
    expect(replaceTopLevelModel('{"stream":true,"model":"mine"}', M)).toBe('{"stream":true,"model":"gpt-4.1"}');
  });

  it('keeps the whitespace around keys, colons and values', () => {
    const text = '\n {\r\n\t"a" : 1 ,\n  "model"\t:\n  "mine"  ,\n  "b" : [ 1 , 2 ]\n}\n';
    expect(replaceTopLevelModel(text, M)).toBe('\n {\r\n\t"a" : 1 ,\n  "model"\t:\n  "gpt-4.1"  ,\n  "b" : [ 1 , 2 ]\n}\n');
  });

  it('leaves `model` keys inside nested values alone, and text that looks like one inside strings', () => {
    const body = {
      metadata: { model: 'nested' },
      messages: [{ role: 'user', content: 'say "model":"x", then {"model": "y"}' }, { model: ['a', { model: 'b' }] }],
      tools: [{ name: 'model', parameters: { properties: { model: { type: 'string' } } } }],
      model: 'mine',
      after: { model: 'nested-after' },
    };
    const out = JSON.parse(replaceTopLevelModel(JSON.stringify(body), M));
    expect(out).toEqual({ ...body, model: M });
  });

  it('skips strings with escaped quotes and backslashes before the key', () => {
    const body = { a: 'quote \\" inside', b: 'ends with a backslash \\', c: '\\\\\\"', d: '"model":"no"', model: 'mine', e: '\\' };
    const text = JSON.stringify(body);
    expect(text).toContain('\\\\\\"'); // the walker really meets escaped quotes after backslashes
    expect(JSON.parse(replaceTopLevelModel(text, M))).toEqual({ ...body, model: M });
  });

  it('replaces every top-level duplicate, whichever a parser would keep', () => {
    const out = replaceTopLevelModel('{"model":"first","x":1,"model":"second"}', M);
    expect(out).toBe('{"model":"gpt-4.1","x":1,"model":"gpt-4.1"}');
  });

  it('recognizes a key written with escapes', () => {
    expect(replaceTopLevelModel('{"mod\\u0065l":"mine","x":"\\u006dodel"}', M)).toBe('{"mod\\u0065l":"gpt-4.1","x":"\\u006dodel"}');
    expect(replaceTopLevelModel('{"\\u006d\\u006f\\u0064\\u0065\\u006c":"mine"}', M)).toBe('{"\\u006d\\u006f\\u0064\\u0065\\u006c":"gpt-4.1"}');
    // Only the spelling differs: a different key with an escape is not `model`.
    expect(JSON.parse(replaceTopLevelModel('{"model\\n":"mine","model":"m"}', M))).toEqual({ 'model\n': 'mine', model: M });
  });

  it('replaces a value of any type, nested containers included', () => {
    for (const value of ['123', '-1.5e3', 'true', 'false', 'null', '{"model":"x","a":[1,{"b":"}"}]}', '["]",[[]],{}]', '""']) {
      const text = `{"a":0,"model":${value},"b":"z"}`;
      expect(replaceTopLevelModel(text, M), value).toBe('{"a":0,"model":"gpt-4.1","b":"z"}');
    }
    expect(replaceTopLevelModel('{"model":7}', M)).toBe('{"model":"gpt-4.1"}');
  });

  it('escapes the new model id as JSON', () => {
    const id = 'we"ird\\id\n\u2028é😀';
    expect(JSON.parse(replaceTopLevelModel('{"model":"mine"}', id)).model).toBe(id);
  });

  it('keeps non-ASCII text and surrogate pairs as they were', () => {
    const text = '{"messages":[{"content":"héllo 😀 \\ud83d\\ude00 日本"}],"model":"mine"}';
    expect(replaceTopLevelModel(text, M)).toBe('{"messages":[{"content":"héllo 😀 \\ud83d\\ude00 日本"}],"model":"gpt-4.1"}');
  });

  it('inserts the model first when the body has none', () => {
    expect(replaceTopLevelModel('{"stream":true}', M)).toBe('{"model":"gpt-4.1","stream":true}');
    expect(replaceTopLevelModel(' { } ', M)).toBe(' {"model":"gpt-4.1" } ');
    expect(JSON.parse(replaceTopLevelModel('{"metadata":{"model":"nested"}}', M))).toEqual({ model: M, metadata: { model: 'nested' } });
  });

  it('drops a byte order mark', () => {
    expect(replaceTopLevelModel('\ufeff{"model":"mine"}', M)).toBe('{"model":"gpt-4.1"}');
    expect(replaceTopLevelModel('\ufeff{}', M)).toBe('{"model":"gpt-4.1"}');
  });

  it('throws on a text that is not a JSON object', () => {
    for (const text of ['[]', '"model"', '', '   ', '{"model":"open', '{"model" "x"}', '{"a":1 "model":2}', '{"model":}', '{"a":[1,2}']) {
      expect(() => replaceTopLevelModel(text, M), JSON.stringify(text)).toThrow(SyntaxError);
    }
  });

  it('returns slices of the original text as pieces', () => {
    const pieces = replaceTopLevelModelPieces('{"messages":[],"model":"mine","stream":true}', M);
    expect(pieces).toEqual(['{"messages":[],"model":', '"gpt-4.1"', ',"stream":true}']);
  });

  it('agrees with JSON.parse on random bodies, whatever the layout', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const strings = ['', 'model', '"model":', '\\', '\\"', '"', '}', ']', '{', '[', ',', ':', 'é', '😀', '\n', '\u0000', 'a b'];
    const value = (depth: number): unknown => {
      const kind = depth > 3 ? pick(['s', 'n', 'b']) : pick(['s', 'n', 'b', 'o', 'a', 'z']);
      if (kind === 's') return Array.from({ length: Math.floor(random() * 4) }, () => pick(strings)).join('');
      if (kind === 'n') return Math.floor(random() * 1e6) / 100;
      if (kind === 'b') return random() < 0.5;
      if (kind === 'z') return null;
      if (kind === 'a') return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, () => [pick(['model', 'x', 'role', '"', 'mod']), value(depth + 1)]));
    };
    for (let round = 0; round < 500; round++) {
      const body = Object.fromEntries(Array.from({ length: Math.floor(random() * 5) }, () => [pick(['x', 'messages', 'model', 'stream', '\\']), value(0)]));
      const text = JSON.stringify(body, null, pick([undefined, 0, 1, '\t', ' \n ' as string]));
      expect(JSON.parse(replaceTopLevelModel(text, M))).toEqual({ ...body, model: M });
    }
  });

  it('skips a 20 MB string value in about a millisecond (no re-serialization)', () => {
    const text = JSON.stringify({
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(20 * 1024 * 1024)}` } }] }],
      model: 'mine',
    });
    // JSON.stringify builds a rope; the first search flattens it. The gateway's text is flat
    // already (JSON.parse flattened it), so time a call on a flat string.
    text.indexOf('"', 1);
    const started = performance.now();
    const pieces = replaceTopLevelModelPieces(text, M);
    const elapsed = performance.now() - started;
    console.log(`[replace-json-model] 20 MB body, model last: ${elapsed.toFixed(2)} ms`);
    expect(pieces.join('').endsWith('"model":"gpt-4.1"}')).toBe(true);
  });
});

describe('replaceTopLevelFields', () => {
  it('replaces several keys, each wherever it occurs at the top level', () => {
    const text = '{"stream_options":{"include_usage":false},"model":"mine","stream":true,"model":"again"}';
    const out = replaceTopLevelFields(text, { model: M, stream_options: { include_usage: true } }).join('');
    expect(out).toBe('{"stream_options":{"include_usage":true},"model":"gpt-4.1","stream":true,"model":"gpt-4.1"}');
  });

  it('inserts the keys the body lacks, first, in the order given', () => {
    const out = replaceTopLevelFields('{"model":"mine","stream":true}', { model: M, stream_options: { include_usage: true }, n: 1 }).join('');
    expect(out).toBe('{"stream_options":{"include_usage":true},"n":1,"model":"gpt-4.1","stream":true}');
    expect(replaceTopLevelFields('{}', { model: M, x: null }).join('')).toBe('{"model":"gpt-4.1","x":null}');
  });

  it('refuses undefined, which has no JSON text', () => {
    expect(() => replaceTopLevelFields('{"model":"m"}', { model: M, stream_options: undefined })).toThrow(TypeError);
  });

  it('leaves nested keys of the same names alone', () => {
    const body = { messages: [{ stream_options: 1, model: 2 }], model: 'mine', stream: true };
    const out = JSON.parse(replaceTopLevelFields(JSON.stringify(body), { model: M, stream_options: { include_usage: true } }).join(''));
    expect(out).toEqual({ stream_options: { include_usage: true }, ...body, model: M });
  });
});
