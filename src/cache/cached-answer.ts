import type { IRResponse } from '../protocols/ir.js';

/**
 * What the cache keeps of an answer: the protocol-neutral IR response (content, finish reason,
 * the original call's usage), so one entry answers a JSON or a streamed request in the client's
 * protocol, whichever path (passthrough or translation) produced it.
 */
interface StoredEntry {
  v: 1;
  response: IRResponse;
}

export function serializeAnswer(response: IRResponse): string {
  const entry: StoredEntry = { v: 1, response };
  return JSON.stringify(entry);
}

/** The stored answer, or undefined for an entry this version cannot read (treated as a miss). */
export function parseAnswer(text: string): IRResponse | undefined {
  try {
    const entry = JSON.parse(text) as Partial<StoredEntry> | null;
    const response = entry?.v === 1 ? entry.response : undefined;
    if (!response || !Array.isArray(response.content) || typeof response.finishReason !== 'string' || typeof response.usage !== 'object') return undefined;
    return response;
  } catch {
    return undefined;
  }
}
