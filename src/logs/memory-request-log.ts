import { compareLogOrder, decodeCursor, pageOf, statusMatches } from './log-cursor.js';
import type { LogPage, LogQuery, RequestLog, RequestLogRow, SinkStats, Stats, StatsQuery } from './request-log.js';
import { bucketOf, bucketRange, buildSeries, percentiles, type StatsCell } from './stats-series.js';
import type { ToolCallPage, ToolCallQuery, ToolCallRow } from './tool-call-log.js';

export interface MemoryRequestLogOptions {
  /** Most rows kept; the oldest written is forgotten first. Default 10,000. */
  size?: number | undefined;
  /**
   * Most bytes of captured prompts and answers (`captureContent`) held across the ring: past it the
   * oldest rows lose their texts (the rows stay). Default 64 MiB.
   */
  contentBytes?: number | undefined;
}

/**
 * The request log in this process's memory: the default, so the dashboard works without a
 * database. A ring of the most recent rows (lost on restart, not shared between instances); every
 * query, lookup and chart reads at most the ring, so its work is bounded by `size`. A request id
 * already in the ring is not written twice. MCP tool calls have a ring of their own, as large.
 */
export class MemoryRequestLog implements RequestLog {
  readonly kind = 'memory';
  private readonly ring: (RequestLogRow | undefined)[];
  /** Where the next row goes. */
  private next = 0;
  private readonly byId = new Map<string, RequestLogRow>();
  private written = 0;
  private readonly toolCalls: (ToolCallRow | undefined)[];
  private nextToolCall = 0;
  /** Rows holding texts, oldest first, with their sizes: what to strip when over `contentBytes`. */
  private readonly withContent: { row: RequestLogRow; bytes: number }[] = [];
  private contentHeld = 0;
  private readonly contentBytes: number;

  constructor(options: MemoryRequestLogOptions = {}) {
    const size = options.size ?? 10_000;
    if (!Number.isInteger(size) || size < 1) throw new TypeError('MemoryRequestLog: size must be a positive integer');
    this.contentBytes = options.contentBytes ?? 64 * 1024 * 1024;
    if (!Number.isInteger(this.contentBytes) || this.contentBytes < 0) throw new TypeError('MemoryRequestLog: contentBytes must be an integer >= 0');
    this.ring = new Array(size).fill(undefined);
    this.toolCalls = new Array(size).fill(undefined);
  }

  /** Keeps a tool call in a ring of its own (`size` too), without its arguments: those only PostgreSQL keeps. */
  writeToolCall(row: ToolCallRow): void {
    const { arguments: _arguments, ...kept } = row;
    this.toolCalls[this.nextToolCall] = kept;
    this.nextToolCall = (this.nextToolCall + 1) % this.toolCalls.length;
  }

  async queryToolCalls(query: ToolCallQuery): Promise<ToolCallPage> {
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const position = (row: ToolCallRow) => ({ startedAt: row.startedAt, requestId: row.id });
    const matches = this.toolCalls.filter(
      (row): row is ToolCallRow =>
        row !== undefined &&
        (query.keyId === undefined || row.keyId === query.keyId) &&
        (query.server === undefined || row.server === query.server) &&
        (query.tool === undefined || row.tool === query.tool) &&
        (query.outcome === undefined || row.outcome === query.outcome) &&
        (query.from === undefined || row.startedAt >= query.from) &&
        (query.to === undefined || row.startedAt < query.to) &&
        (after === undefined || compareLogOrder(position(row), after) > 0),
    );
    matches.sort((a, b) => compareLogOrder(position(a), position(b)));
    return pageOf(matches, query.limit, position);
  }

  write(row: RequestLogRow): void {
    if (this.byId.has(row.requestId)) return;
    const evicted = this.ring[this.next];
    if (evicted) this.byId.delete(evicted.requestId);
    // The log keeps its own copy: stripping a row's texts later must not touch the caller's object.
    const kept = row.content ? { ...row } : row;
    this.ring[this.next] = kept;
    this.byId.set(row.requestId, kept);
    this.next = (this.next + 1) % this.ring.length;
    this.written++;
    if (kept.content) this.holdContent(kept);
  }

  /** Counts a row's texts (UTF-16: 2 bytes a character) and strips the oldest ones past the budget. */
  private holdContent(row: RequestLogRow): void {
    const bytes = 2 * ((row.content?.request?.length ?? 0) + (row.content?.response?.length ?? 0));
    this.withContent.push({ row, bytes });
    this.contentHeld += bytes;
    let stripped = 0;
    while (this.contentHeld > this.contentBytes && stripped < this.withContent.length) {
      const oldest = this.withContent[stripped++]!;
      delete oldest.row.content;
      this.contentHeld -= oldest.bytes;
    }
    if (stripped > 0) this.withContent.splice(0, stripped);
    // Rows the ring forgot still count here until stripped: bounded by the ring's size all the same.
    if (this.withContent.length > 2 * this.ring.length) this.forgetEvicted();
  }

  private forgetEvicted(): void {
    const live = this.withContent.filter((entry) => this.byId.get(entry.row.requestId) === entry.row);
    this.contentHeld = live.reduce((sum, entry) => sum + entry.bytes, 0);
    this.withContent.splice(0, this.withContent.length, ...live);
  }

  async flush(): Promise<void> {}

  async close(): Promise<void> {}

  sinkStats(): SinkStats {
    return { written: this.written, queued: 0, dropped: 0, failedBatches: 0, failedRows: 0 };
  }

  async query(query: LogQuery): Promise<LogPage> {
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const matches = this.rows().filter(
      (row) =>
        (query.keyId === undefined || row.keyId === query.keyId) &&
        (query.model === undefined || row.model === query.model) &&
        statusMatches(row, query.status) &&
        (query.from === undefined || row.startedAt >= query.from) &&
        (query.to === undefined || row.startedAt < query.to) &&
        (after === undefined || compareLogOrder(row, after) > 0),
    );
    matches.sort(compareLogOrder);
    return pageOf(matches, query.limit, (row) => row);
  }

  async get(requestId: string): Promise<RequestLogRow | undefined> {
    return this.byId.get(requestId);
  }

  async stats(query: StatsQuery): Promise<Stats> {
    const range = bucketRange(query);
    const cells = new Map<string, StatsCell>();
    const latencies: number[] = [];
    const ttfts: number[] = [];
    for (const row of this.rows()) {
      if (row.startedAt < range.from || row.startedAt >= range.to) continue;
      if ((query.keyId !== undefined && row.keyId !== query.keyId) || (query.model !== undefined && row.model !== query.model)) continue;
      const at = bucketOf(row.startedAt, range.width);
      const name = query.by === 'key' ? row.keyId : row.model;
      const id = `${at}\u0000${name}`;
      let cell = cells.get(id);
      if (!cell) cells.set(id, (cell = { at, name, requests: 0, errors: 0, costUsd: 0, inputTokens: 0, outputTokens: 0 }));
      cell.requests++;
      if (row.status === 'error') cell.errors++;
      cell.costUsd += row.costUsd;
      cell.inputTokens += row.inputTokens;
      cell.outputTokens += row.outputTokens;
      latencies.push(row.latencyMs);
      if (row.ttftMs !== null) ttfts.push(row.ttftMs);
    }
    return { ...buildSeries([...cells.values()], range), latency: percentiles(latencies), ttft: percentiles(ttfts) };
  }

  private rows(): RequestLogRow[] {
    return this.ring.filter((row): row is RequestLogRow => row !== undefined);
  }
}
