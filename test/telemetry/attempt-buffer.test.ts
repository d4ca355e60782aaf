import { describe, expect, it } from 'vitest';
import { AttemptBuffer } from '../../src/telemetry/attempt-buffer.js';
import { attemptEvent } from './events.js';

describe('AttemptBuffer', () => {
  it('hands back a request’s attempts in order, once', () => {
    const buffer = new AttemptBuffer();
    buffer.add(attemptEvent({ attempt: 1 }));
    buffer.add(attemptEvent({ attempt: 2 }));
    buffer.add(attemptEvent({ requestId: 'other' }));
    expect(buffer.take('req_1').map((event) => event.attempt)).toEqual([1, 2]);
    expect(buffer.take('req_1')).toEqual([]);
    expect(buffer.size).toBe(1);
  });

  it('drops requests whose usage event never came within the TTL', () => {
    const buffer = new AttemptBuffer({ ttlMs: 1000, maxRequests: 100, maxAttemptsPerRequest: 8 });
    buffer.add(attemptEvent({ requestId: 'old' }), 0);
    buffer.add(attemptEvent({ requestId: 'young' }), 500);
    buffer.add(attemptEvent({ requestId: 'new' }), 1200);
    expect(buffer.take('old')).toEqual([]);
    expect(buffer.take('young')).toHaveLength(1);
    expect(buffer.take('new')).toHaveLength(1);
  });

  it('holds at most maxRequests requests and maxAttemptsPerRequest attempts each', () => {
    const buffer = new AttemptBuffer({ ttlMs: 60_000, maxRequests: 3, maxAttemptsPerRequest: 2 });
    for (let index = 0; index < 10; index++) buffer.add(attemptEvent({ requestId: `req_${index}` }), index);
    expect(buffer.size).toBe(3);
    expect(buffer.take('req_0')).toEqual([]);
    expect(buffer.take('req_9')).toHaveLength(1);

    for (let attempt = 1; attempt <= 5; attempt++) buffer.add(attemptEvent({ requestId: 'retries', attempt }), 20);
    expect(buffer.take('retries').map((event) => event.attempt)).toEqual([1, 2]);
  });
});
