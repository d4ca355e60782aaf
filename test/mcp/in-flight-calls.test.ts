import { describe, expect, it } from 'vitest';
import { InFlightCalls } from '../../src/mcp/in-flight-calls.js';

describe('InFlightCalls', () => {
  it('cancels a call by session and id (1 and "1" apart), and forgets it once it ended', () => {
    const calls = new InFlightCalls();
    const cancelled: unknown[] = [];
    const ended = calls.add('s', 1, (reason) => cancelled.push(reason));
    calls.cancel('s', '1', 'not this one');
    calls.cancel('other', 1, 'nor this');
    calls.cancel('s', 1, 'this one');
    expect(cancelled).toEqual(['this one']);
    ended();
    expect(calls.size).toBe(0);
  });

  it('holds at most its bound: a call past it runs without being cancellable by notification', () => {
    const calls = new InFlightCalls(2);
    const cancelled: string[] = [];
    for (const id of [1, 2, 3]) calls.add('s', id, () => cancelled.push(String(id)));
    expect(calls.size).toBe(2);
    calls.cancel('s', 3, 'late');
    expect(cancelled).toEqual([]);
  });

  it('an id already running in the session keeps its first call', () => {
    const calls = new InFlightCalls();
    const cancelled: string[] = [];
    calls.add('s', 7, () => cancelled.push('first'));
    const second = calls.add('s', 7, () => cancelled.push('second'));
    second();
    calls.cancel('s', 7, 'stop');
    expect(cancelled).toEqual(['first']);
  });
});
