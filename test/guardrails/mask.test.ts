import { describe, expect, it } from 'vitest';
import { maskText } from '../../src/guardrails/mask.js';

const at = (category: string, start: number, end: number) => ({ category, start, end });

describe('maskText', () => {
  it('replaces each span with [REDACTED:<category>] and keeps the rest', () => {
    expect(maskText('mail bob@x.io or call 555-123-4567', [at('email', 5, 13), at('phone', 22, 34)])).toBe('mail [REDACTED:email] or call [REDACTED:phone]');
    expect(maskText('nothing', [])).toBe('nothing');
  });

  it('takes findings in any order and merges overlapping and touching ones (named after the first)', () => {
    expect(maskText('0123456789', [at('b', 4, 8), at('a', 2, 6)])).toBe('01[REDACTED:a]89');
    expect(maskText('0123456789', [at('a', 2, 4), at('b', 4, 6)])).toBe('01[REDACTED:a]6789');
    expect(maskText('0123456789', [at('a', 1, 9), at('b', 3, 4)])).toBe('0[REDACTED:a]9');
    expect(maskText('0123456789', [at('a', 1, 3), at('b', 5, 7)])).toBe('0[REDACTED:a]34[REDACTED:b]789');
  });

  it('ignores empty spans and clamps spans to the text', () => {
    expect(maskText('abc', [at('x', 1, 1), at('y', 2, 10)])).toBe('ab[REDACTED:y]');
  });

  it('never leaves a dangling backslash in JSON text: a span widens over the escape it cuts', () => {
    // The span starts on the `n` of `\n`: the mask takes the backslash too.
    const json = JSON.stringify({ note: 'line\nbob@x.io' });
    const start = json.indexOf('nbob');
    const masked = maskText(json, [at('email', start, start + 'nbob@x.io'.length)]);
    expect(masked).toBe('{"note":"line[REDACTED:email]"}');
    expect(() => JSON.parse(masked)).not.toThrow();
    // The span ends on a backslash: the escaped character goes too.
    const quoted = JSON.stringify({ note: 'key: abc"def' });
    const backslash = quoted.indexOf('\\');
    expect(JSON.parse(maskText(quoted, [at('secret', quoted.indexOf('abc'), backslash + 1)]))).toEqual({ note: 'key: [REDACTED:secret]def' });
    // Inside a \u escape, on either side.
    const unicode = '{"a":"x\\u00e9y"}';
    expect(JSON.parse(maskText(unicode, [at('s', unicode.indexOf('00e9'), unicode.indexOf('y'))]))).toEqual({ a: 'x[REDACTED:s]y' });
    expect(JSON.parse(maskText(unicode, [at('s', unicode.indexOf('x'), unicode.indexOf('e9'))]))).toEqual({ a: '[REDACTED:s]y' });
    // An escaped backslash before the span is a whole escape: nothing widens.
    expect(maskText('a\\\\bob', [at('s', 3, 6)])).toBe('a\\\\[REDACTED:s]');
  });

  it('never splits a surrogate pair', () => {
    const text = 'x😀y';
    expect(maskText(text, [at('s', 2, 3)])).toBe('x[REDACTED:s]y');
    expect(maskText(text, [at('s', 0, 2)])).toBe('[REDACTED:s]y');
  });
});
