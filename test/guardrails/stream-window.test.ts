import { describe, expect, it } from 'vitest';
import { piiDetector } from '../../src/guardrails/detectors/pii.js';
import { maskText } from '../../src/guardrails/mask.js';
import type { IRStreamEvent } from '../../src/protocols/ir.js';
import { type WindowOptions, windowedStream } from '../../src/guardrails/stream-window.js';

/** A source of batches that records whether it was closed early. */
function source(batches: readonly (readonly IRStreamEvent[])[]) {
  const state = { pulled: 0, closed: false };
  const iterable: AsyncIterable<readonly IRStreamEvent[]> = {
    [Symbol.asyncIterator]() {
      let index = 0;
      return {
        next: async () => {
          state.pulled++;
          return index < batches.length ? { value: batches[index++]!, done: false } : { value: undefined, done: true };
        },
        return: async () => {
          state.closed = true;
          return { value: undefined, done: true };
        },
      };
    },
  };
  return { iterable, state };
}

const text = (value: string): IRStreamEvent => ({ type: 'text_delta', text: value });
const start: IRStreamEvent = { type: 'start', id: 'r1', model: 'm', created: 1 };
const finish: IRStreamEvent = { type: 'finish', reason: 'stop' };

async function collect(stream: AsyncIterable<readonly IRStreamEvent[]>): Promise<IRStreamEvent[][]> {
  const out: IRStreamEvent[][] = [];
  for await (const batch of stream) out.push([...batch]);
  return out;
}

const options = (overrides: Partial<WindowOptions> = {}): WindowOptions & { windows: string[] } => {
  const windows: string[] = [];
  const release = (window: string): string => {
    windows.push(window);
    return window.toUpperCase();
  };
  return { holdChars: 0, windowChars: 0, sentences: false, release, windows, ...overrides };
};

describe('windowedStream', () => {
  it('passes other events at once, in order, and releases a run before the event that ends it', async () => {
    const opts = options({ holdChars: 100 });
    const { iterable } = source([
      [start, text('hello '), text('world')],
      [{ type: 'reasoning_delta', text: 'hmm' }, text('again')],
      [
        { type: 'tool_call_start', id: 'c1', name: 'f' },
        { type: 'tool_call_delta', arguments: '{"a":' },
      ],
      [
        { type: 'tool_call_delta', arguments: '1}' },
        { type: 'tool_call_start', id: 'c2', name: 'g' },
        { type: 'tool_call_delta', arguments: '{}' },
      ],
      [{ type: 'refusal_delta', text: 'no' }, finish],
    ]);
    expect(await collect(windowedStream(iterable, opts))).toEqual([
      [start],
      [text('HELLO WORLD'), { type: 'reasoning_delta', text: 'hmm' }],
      [text('AGAIN'), { type: 'tool_call_start', id: 'c1', name: 'f' }],
      [
        { type: 'tool_call_delta', arguments: '{"A":1}' },
        { type: 'tool_call_start', id: 'c2', name: 'g' },
      ],
      [{ type: 'tool_call_delta', arguments: '{}' }, { type: 'refusal_delta', text: 'NO' }, finish],
    ]);
  });

  it('tells release which part of the answer a window is', async () => {
    const kinds: string[] = [];
    const { iterable } = source([
      [text('t'), { type: 'refusal_delta', text: 'r' }, { type: 'tool_call_start', id: 'c', name: 'f' }, { type: 'tool_call_delta', arguments: '{}' }, finish],
    ]);
    await collect(
      windowedStream(iterable, {
        ...options({ holdChars: 10 }),
        release: (window, kind) => {
          kinds.push(`${kind}:${window}`);
          return window;
        },
      }),
    );
    expect(kinds).toEqual(['text:t', 'refusal:r', 'arguments:{}']);
  });

  it('releases everything pending at the end of the source', async () => {
    const opts = options({ holdChars: 100 });
    const { iterable } = source([[text('abc')], [text('def')]]);
    expect(await collect(windowedStream(iterable, opts))).toEqual([[text('ABCDEF')]]);
    expect(opts.windows).toEqual(['abcdef']);
  });

  it('lets usage pass without ending the run, so a value split around it is still checked whole', async () => {
    const opts = options({ holdChars: 100 });
    const usage: IRStreamEvent = { type: 'usage', usage: { output: 3 } };
    const { iterable } = source([[text('sk-'), usage, text('secret')], [finish]]);
    expect(await collect(windowedStream(iterable, opts))).toEqual([[usage], [text('SK-SECRET'), finish]]);
  });

  it('holds back holdChars and releases the rest, cut after a space when one is near', async () => {
    const opts = options({ holdChars: 5 });
    const { iterable } = source([[text('one two three')], [text(' four')], [finish]]);
    const batches = await collect(windowedStream(iterable, opts));
    // 13 - 5 = 8 is just after a space; "three four" has none within 10 - 5: it waits for one, to the end.
    expect(opts.windows).toEqual(['one two ', 'three four']);
    expect(batches).toEqual([[text('ONE TWO ')], [text('THREE FOUR'), finish]]);
  });

  it('cuts a window with no space near once the text beyond the hold is long enough', async () => {
    const opts = options({ holdChars: 8 });
    const blob = 'x'.repeat(2000);
    await collect(windowedStream(source([[text(blob)], [finish]]).iterable, opts));
    expect(opts.windows).toEqual(['x'.repeat(1992), 'x'.repeat(8)]);
  });

  it('never cuts inside a finding of scan: the cut moves past it', async () => {
    const scan = (pending: string) => {
      const start = pending.indexOf('SECRET KEY');
      return start < 0 ? [] : [{ start, end: start + 'SECRET KEY'.length }];
    };
    // The planned cut (18 - 7 = 11, after "SECRET ") falls inside "SECRET KEY" (4..14).
    const opts = options({ holdChars: 7, scan });
    opts.release = (window) => {
      opts.windows.push(window);
      return window;
    };
    await collect(windowedStream(source([[text('aaa SECRET KEY xyz')], [finish]]).iterable, opts));
    expect(opts.windows).toEqual(['aaa SECRET KEY', ' xyz']);
  });

  it('does not start a window after a space that follows a digit, where a number goes on', async () => {
    // In the whole text "+12345678901" follows "5 ", so it is no phone number of its own; a window
    // starting at it would read one. 26 - 16 = 10 is right after "5 ": the cut goes back before "5".
    const pii = piiDetector({});
    const whole = 'aaaaaa 5 +12345678901 bbb';
    const opts = options({ holdChars: whole.length - 9, scan: pii.scan });
    opts.release = (window) => {
      opts.windows.push(window);
      return maskText(window, pii.scan(window));
    };
    const batches = await collect(windowedStream(source([[text(whole)], [finish]]).iterable, opts));
    expect(opts.windows).toEqual(['aaaaaa ', '5 +12345678901 bbb']);
    expect(batches.flat()).toEqual([text('aaaaaa '), text('5 +12345678901 bbb'), finish]);
    expect(maskText(whole, pii.scan(whole))).toBe(whole);
  });

  it('never cuts inside a JSON escape or a surrogate pair', async () => {
    const escaped = options({ windowChars: 5 });
    // The planned cut (5, no space in the text) would split `\n`.
    await collect(
      windowedStream(
        source([
          [
            { type: 'tool_call_start', id: 'c', name: 'f' },
            { type: 'tool_call_delta', arguments: '["ab\\ncd"]' },
          ],
        ]).iterable,
        escaped,
      ),
    );
    expect(escaped.windows).toEqual(['["ab\\n', 'cd"]']);
    const emoji = options({ windowChars: 3 });
    await collect(windowedStream(source([[text('ab😀')]]).iterable, emoji));
    expect(emoji.windows).toEqual(['ab😀']);
  });

  it('releases windows of windowChars, preferring a sentence end near the end of each', async () => {
    const opts = options({ windowChars: 20, sentences: true });
    const long = 'First one here. Second sentence is longer. Third.';
    await collect(windowedStream(source([[text(long)], [finish]]).iterable, opts));
    expect(opts.windows).toEqual(['First one here. ', 'Second sentence is ', 'longer. Third.']);
  });

  it('sends nothing for an empty release', async () => {
    const opts = options({ holdChars: 0, release: () => '' });
    expect(await collect(windowedStream(source([[text('drop me'), finish]]).iterable, opts))).toEqual([[finish]]);
  });

  it('awaits an async release and keeps the order', async () => {
    const opts = options({ holdChars: 0, release: async (window) => `<${window}>` });
    expect(
      await collect(
        windowedStream(
          source([
            [start, text('a')],
            [text('b'), finish],
          ]).iterable,
          opts,
        ),
      ),
    ).toEqual([
      [start, text('<a>')],
      [text('<b>'), finish],
    ]);
  });

  it('awaits nothing for a synchronous release: the microtasks a batch takes do not grow with its windows', async () => {
    /** Microtask turns until the first batch comes out. */
    const turns = async (length: number): Promise<number> => {
      const stream = windowedStream(source([[text('x'.repeat(length))]]).iterable, options({ windowChars: 10 }));
      let done = false;
      void stream[Symbol.asyncIterator]()
        .next()
        .then(() => (done = true));
      let count = 0;
      while (!done) {
        await Promise.resolve();
        count++;
      }
      return count;
    };
    expect(await turns(500)).toBe(await turns(10));
  });

  it('yields the events before a failing release, then throws its error and closes the source', async () => {
    for (const release of [
      (window: string) => {
        if (window.includes('bad')) throw new Error('blocked');
        return window;
      },
      async (window: string) => {
        if (window.includes('bad')) throw new Error('blocked');
        return window;
      },
    ]) {
      const { iterable, state } = source([[start, text('good')], [{ type: 'reasoning_delta', text: 'r' }, text('bad')], [finish], [finish]]);
      const stream = windowedStream(iterable, { holdChars: 10, windowChars: 0, sentences: false, release });
      const seen: IRStreamEvent[][] = [];
      await expect(
        (async () => {
          for await (const batch of stream) seen.push([...batch]);
        })(),
      ).rejects.toThrow('blocked');
      expect(seen).toEqual([[start], [text('good'), { type: 'reasoning_delta', text: 'r' }]]);
      expect(state.closed).toBe(true);
    }
  });

  it('throws a failing release at the end of the source after the events before it', async () => {
    const { iterable } = source([[text('x'), finish]]);
    const stream = windowedStream(iterable, { holdChars: 10, windowChars: 0, sentences: false, release: () => Promise.reject(new Error('late')) });
    const iterator = stream[Symbol.asyncIterator]();
    await expect(iterator.next()).rejects.toThrow('late');
  });

  it('closes the source when the consumer returns early', async () => {
    const { iterable, state } = source([[start, text('a')], [text('b')], [finish]]);
    for await (const batch of windowedStream(iterable, options())) {
      expect(batch[0]).toEqual(start);
      break;
    }
    expect(state.closed).toBe(true);
    expect(state.pulled).toBe(1);
  });

  it('passes on a failure of the source, without releasing the text it holds', async () => {
    const opts = options({ holdChars: 100 });
    async function* failing(): AsyncGenerator<readonly IRStreamEvent[]> {
      yield [start, text('held')];
      throw new Error('upstream broke');
    }
    const seen: IRStreamEvent[][] = [];
    await expect(
      (async () => {
        for await (const batch of windowedStream(failing(), opts)) seen.push([...batch]);
      })(),
    ).rejects.toThrow('upstream broke');
    expect(seen).toEqual([[start]]);
    expect(opts.windows).toEqual([]);
  });

  it('closes the source when the consumer throws into it', async () => {
    const { iterable, state } = source([[start, text('a')], [text('b')], [finish]]);
    const iterator = windowedStream(iterable, options())[Symbol.asyncIterator]() as AsyncGenerator<readonly IRStreamEvent[]>;
    await iterator.next();
    await expect(iterator.throw(new Error('client left'))).rejects.toThrow('client left');
    expect(state.closed).toBe(true);
  });
});
