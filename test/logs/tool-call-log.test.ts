import { describe, expect, it } from 'vitest';
import { CUT_MARKER, DEFAULT_CONTENT_BYTES } from '../../src/logs/content-capture.js';
import { toolCallRowOf } from '../../src/logs/tool-call-log.js';
import type { McpToolCallEvent } from '../../src/mcp/tool-call-event.js';

const event = (overrides: Partial<McpToolCallEvent> = {}): McpToolCallEvent => ({
  requestId: 'req_1',
  keyId: 'key-a',
  keyGroup: 'default',
  sessionId: 'session-1',
  protocolVersion: '2025-06-18',
  startedAt: 1_767_225_600_000.4,
  server: 'vault',
  tool: 'reveal',
  outcome: 'ok',
  durationMs: 3.2,
  requestBytes: 10,
  responseBytes: 20,
  ...overrides,
});

describe('toolCallRowOf', () => {
  it('has the event’s fields, a fresh id, a whole-ms start, and no arguments unless the event carries them', () => {
    const row = toolCallRowOf(event());
    expect(row).toEqual({ ...event(), id: expect.stringMatching(/^tcall_[0-9a-f]{24}$/), startedAt: 1_767_225_600_000, error: null });
    expect(row).not.toHaveProperty('arguments');
    expect(toolCallRowOf(event()).id).not.toBe(row.id);
    expect(toolCallRowOf(event({ arguments: { label: 'x' } })).arguments).toEqual({ label: 'x' });
  });

  it('cuts the error at 500 characters', () => {
    expect(toolCallRowOf(event({ outcome: 'upstream_error', error: 'e'.repeat(600) })).error).toBe('e'.repeat(500));
  });

  it('keeps arguments past 32 KiB of JSON as that JSON cut at the cap, never splitting a character', () => {
    const big = { text: 'é'.repeat(DEFAULT_CONTENT_BYTES) };
    const kept = toolCallRowOf(event({ arguments: big })).arguments as string;
    expect(typeof kept).toBe('string');
    expect(kept.endsWith(CUT_MARKER)).toBe(true);
    expect(kept.startsWith('{"text":"éé')).toBe(true);
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(DEFAULT_CONTENT_BYTES);
    expect(kept).not.toContain('\uFFFD');
  });
});
