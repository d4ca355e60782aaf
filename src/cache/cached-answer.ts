import { DROPPED_PARAMS, DROPPED_TOOLS } from '../api/dropped-notes.js';
import type { IRResponse } from '../protocols/ir.js';

/**
 * What the cache keeps of an answer: the protocol-neutral IR response (content, finish reason,
 * the original call's usage), so one entry answers a JSON or a streamed request in the client's
 * protocol, whichever path (passthrough or translation) produced it; and the headers that said
 * what the upstream could not take (`x-infergate-dropped-*`), still true of the replayed answer.
 */
interface StoredEntry {
  v: 1;
  response: IRResponse;
  notes?: Record<string, string>;
}

/** A stored answer and its notes. */
export interface CachedAnswer {
  response: IRResponse;
  notes: Record<string, string>;
}

/** The headers kept with an answer. */
const NOTE_HEADERS = [DROPPED_TOOLS, DROPPED_PARAMS];

export function serializeAnswer(response: IRResponse, headers: Headers): string {
  const notes: Record<string, string> = {};
  for (const name of NOTE_HEADERS) {
    const value = headers.get(name);
    if (value !== null) notes[name] = value;
  }
  const entry: StoredEntry = { v: 1, response, ...(Object.keys(notes).length > 0 ? { notes } : {}) };
  return JSON.stringify(entry);
}

/** The stored answer, or undefined for an entry this version cannot read (treated as a miss). */
export function parseAnswer(text: string): CachedAnswer | undefined {
  try {
    const entry = JSON.parse(text) as Partial<StoredEntry> | null;
    const response = entry?.v === 1 ? entry.response : undefined;
    if (!response || !Array.isArray(response.content) || typeof response.finishReason !== 'string' || typeof response.usage !== 'object') return undefined;
    return { response, notes: noteHeaders(entry?.notes) };
  } catch {
    return undefined;
  }
}

/** Only the known headers, with string values: an entry is data, not a list of headers to set. */
function noteHeaders(notes: unknown): Record<string, string> {
  const kept: Record<string, string> = {};
  if (typeof notes !== 'object' || notes === null) return kept;
  for (const name of NOTE_HEADERS) {
    const value = (notes as Record<string, unknown>)[name];
    if (typeof value === 'string') kept[name] = value;
  }
  return kept;
}
