import { describe, expect, it } from 'vitest';
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
    // 13 - 5 = 8 is just after a space; then "three four" has none within reach of 10 - 5.
    expect(opts.windows).toEqual(['one two ', 'three', ' four']);
    expect(batches).toEqual([[text('ONE TWO ')], [text('THREE')], [text(' FOUR'), finish]]);
  });

  it('never cuts inside a finding of scan: the cut moves past it', async () => {
    const scan = (pending: string) => {
      const start = pending.indexOf('SECRET');
      return start < 0 ? [] : [{ start, end: start + 'SECRET'.length }];
    };
    const opts = options({ holdChars: 6, scan });
    opts.release = (window) => {
      opts.windows.push(window);
      return window;
    };
    // Without scan the planned cut (14 - 6 = 8) falls inside "SECRET" (5..11).
    const { iterable } = source([[text('abcdeSECRETxyz')], [finish]]);
    await collect(windowedStream(iterable, opts));
    expect(opts.windows).toEqual(['abcdeSECRET', 'xyz']);
  });

  it('never cuts inside a JSON escape or a surrogate pair', async () => {
    const escaped = options({ holdChars: 5 });
    // The planned cut (10 - 5 = 5) would split `\n`.
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
    const emoji = options({ holdChars: 1 });
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
});
