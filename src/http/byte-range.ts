/** A satisfiable single byte range, inclusive bounds. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Reads a `Range` header against a body of `size` bytes (RFC 9110 section 14): one range
 * (`bytes=0-99`, `bytes=100-`, `bytes=-500`) → that range; a syntactically valid range that
 * starts past the end → `unsatisfiable` (416); no header, another unit, several ranges or bad
 * syntax → undefined, and the whole body is sent (a server may ignore Range).
 */
export function parseRange(header: string | null | undefined, size: number): ByteRange | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
