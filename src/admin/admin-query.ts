import { invalidRequest } from '../errors.js';
import { echo } from '../http/echo.js';

/**
 * The admin API's query parameters, each checked with a 400 naming it. An empty value counts as
 * absent (a dashboard's empty filter field); a parameter the route does not take is refused, so a
 * typo (`?keyid=`) is loud rather than a silently unfiltered list.
 */

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

/** Longest value of a free-text parameter (a key id, a model, a cursor). */
const MAX_TEXT = 1000;

export class AdminQuery {
  constructor(
    private readonly query: URLSearchParams,
    allowed: readonly string[],
  ) {
    for (const name of new Set(query.keys())) {
      if (!allowed.includes(name)) {
        const takes = allowed.length === 0 ? 'takes no query parameters' : `takes ${allowed.map((each) => `'${each}'`).join(', ')}`;
        throw invalidRequest(`Unknown query parameter '${echo(name)}': this route ${takes}.`, echo(name), 'unknown_parameter');
      }
    }
  }

  text(name: string): string | undefined {
    const value = this.value(name);
    if (value !== undefined && value.length > MAX_TEXT) throw invalid(name, `at most ${MAX_TEXT} characters`, value);
    return value;
  }

  /** `limit`: 1–500, default 50. */
  limit(): number {
    const value = this.value('limit');
    if (value === undefined) return DEFAULT_PAGE_SIZE;
    const limit = /^\d{1,4}$/.test(value) ? Number(value) : Number.NaN;
    if (!(limit >= 1 && limit <= MAX_PAGE_SIZE)) throw invalid('limit', `an integer from 1 to ${MAX_PAGE_SIZE}`, value);
    return limit;
  }

  flag(name: string): boolean | undefined {
    const value = this.value(name);
    if (value === undefined || value === 'true' || value === 'false') return value === undefined ? undefined : value === 'true';
    throw invalid(name, 'true or false', value);
  }

  choice<const C extends string>(name: string, choices: readonly C[]): C | undefined {
    const value = this.value(name);
    if (value === undefined || (choices as readonly string[]).includes(value)) return value as C | undefined;
    throw invalid(name, `one of ${choices.join(', ')}`, value);
  }

  /** A time: ms since the epoch (`1767225600000`) or an ISO 8601 date or date-time (`2026-01-01T00:00:00Z`). */
  time(name: string): number | undefined {
    const value = this.value(name);
    if (value === undefined) return undefined;
    const ms = /^\d{1,15}$/.test(value) ? Number(value) : /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(ms)) throw invalid(name, 'a time in ms since the epoch or ISO 8601 (2026-01-01T00:00:00Z)', value);
    return ms;
  }

  /** `status`: `ok`, `error`, or one HTTP status (100–599). */
  status(): 'ok' | 'error' | number | undefined {
    const value = this.value('status');
    if (value === undefined || value === 'ok' || value === 'error') return value;
    const status = /^\d{3}$/.test(value) ? Number(value) : Number.NaN;
    if (!(status >= 100 && status <= 599)) throw invalid('status', 'ok, error or an HTTP status (100-599)', value);
    return status;
  }

  private value(name: string): string | undefined {
    const values = this.query.getAll(name);
    if (values.length > 1) throw invalidRequest(`Query parameter '${name}' is given ${values.length} times; give it once.`, name, 'duplicate_parameter');
    return values[0] === '' ? undefined : values[0];
  }
}

function invalid(name: string, expected: string, value: string) {
  return invalidRequest(`Invalid '${name}': expected ${expected}, got '${echo(value)}'.`, name, 'invalid_value');
}
