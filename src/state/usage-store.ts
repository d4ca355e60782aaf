/**
 * Spend and tokens per key, day and model: what `GET /v1/usage` answers. Fed by the usage events
 * (`usageRecorder`), so the numbers are the ones `onUsage` hands to hosts that embed the gateway.
 */

export interface UsageTotals {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export interface UsageRow extends UsageTotals {
  /** UTC day, `YYYY-MM-DD`. */
  date: string;
  /** Public model id. */
  model: string;
}

export interface UsageStore {
  /** Adds one request's totals to its key's day and model. */
  add(keyId: string, date: string, model: string, totals: UsageTotals): Promise<void>;
  /** The key's rows from `start` to `end` (UTC days, both included), by date then model. */
  list(keyId: string, start: string, end: string): Promise<UsageRow[]>;
}

/**
 * Most models one key's day keeps apart; the usage of any more is added to `OTHER_MODELS`. Model
 * ids come from clients under wildcard entries (`openai/<anything>`), so without a cap a key
 * could grow the store by sending made-up names.
 */
export const MAX_MODELS_PER_DAY = 1000;
export const OTHER_MODELS = '(other models)';

/** How long a day's usage is kept by the built-in stores: a bit over a year, so a year's spend can be read back. */
export const USAGE_RETENTION_DAYS = 400;

const DAY_MS = 86_400_000;

/** The UTC day of a time, `YYYY-MM-DD`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * `utcDay` for a stream of times that mostly fall on one day (every usage event's start): the
 * day's text is made once a day instead of a `Date` and an ISO string per request.
 */
export function utcDayCache(): (ms: number) => string {
  let start = 0;
  let end = 0;
  let day = '';
  return (ms) => {
    if (ms < start || ms >= end) {
      start = ms - (ms % DAY_MS);
      end = start + DAY_MS;
      day = utcDay(start);
    }
    return day;
  };
}

/** Whether `text` is a real calendar day written `YYYY-MM-DD` (no 2026-02-30). */
export function isDay(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(`${text}T00:00:00Z`)) && utcDay(Date.parse(`${text}T00:00:00Z`)) === text;
}

/** The days from `start` to `end`, both included. */
export function daysBetween(start: string, end: string): string[] {
  const days: string[] = [];
  for (let at = Date.parse(`${start}T00:00:00Z`), last = Date.parse(`${end}T00:00:00Z`); at <= last; at += DAY_MS) days.push(utcDay(at));
  return days;
}

/** `day` moved by a number of days. */
export function addDays(day: string, count: number): string {
  return utcDay(Date.parse(`${day}T00:00:00Z`) + count * DAY_MS);
}

/** The rows in the order `list` promises. */
export function sortRows(rows: UsageRow[]): UsageRow[] {
  return rows.sort((a, b) => (a.date === b.date ? (a.model < b.model ? -1 : a.model > b.model ? 1 : 0) : a.date < b.date ? -1 : 1));
}

/**
 * In this process's memory: the default. Lost on restart and not shared between instances
 * (`RedisUsageStore` from `infergate/redis` is both). Days older than `USAGE_RETENTION_DAYS` are
 * dropped as new days arrive.
 */
export class MemoryUsageStore implements UsageStore {
  /** key id → day → model → totals. */
  private readonly keys = new Map<string, Map<string, Map<string, UsageTotals>>>();
  private newestDay = '';

  private readonly maxModelsPerDay: number;

  constructor(options: { maxModelsPerDay?: number | undefined } = {}) {
    this.maxModelsPerDay = options.maxModelsPerDay ?? MAX_MODELS_PER_DAY;
    if (!Number.isInteger(this.maxModelsPerDay) || this.maxModelsPerDay < 1)
      throw new TypeError('MemoryUsageStore: maxModelsPerDay must be a positive integer');
  }

  async add(keyId: string, date: string, model: string, totals: UsageTotals): Promise<void> {
    let days = this.keys.get(keyId);
    if (!days) this.keys.set(keyId, (days = new Map()));
    let models = days.get(date);
    if (!models) days.set(date, (models = new Map()));
    let sum = models.get(model) ?? (models.size >= this.maxModelsPerDay ? models.get(OTHER_MODELS) : undefined);
    if (!sum) models.set(models.size >= this.maxModelsPerDay ? OTHER_MODELS : model, (sum = { requests: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 }));
    sum.requests += totals.requests;
    sum.inputTokens += totals.inputTokens;
    sum.outputTokens += totals.outputTokens;
    sum.costUsd += totals.costUsd;
    if (date > this.newestDay) {
      this.newestDay = date;
      this.forget(addDays(date, -USAGE_RETENTION_DAYS));
    }
  }

  async list(keyId: string, start: string, end: string): Promise<UsageRow[]> {
    const rows: UsageRow[] = [];
    for (const [date, models] of this.keys.get(keyId) ?? []) {
      if (date < start || date > end) continue;
      for (const [model, totals] of models) rows.push({ date, model, ...totals });
    }
    return sortRows(rows);
  }

  /** Drops the days before `oldestKept`. */
  private forget(oldestKept: string): void {
    for (const [keyId, days] of this.keys) {
      for (const date of days.keys()) if (date < oldestKept) days.delete(date);
      if (days.size === 0) this.keys.delete(keyId);
    }
  }
}
