import type { ModelEntry } from '../../routing/model.js';

/** What a metric says of the model: the public id and the upstream model, from a bounded set. */
export interface ModelLabels {
  request: string;
  response: string;
}

/**
 * Model labels from a bounded set, so clients cannot grow the metrics without end: a listed id
 * as it is, with its upstream model; a name a wildcard entry served (`openai/<anything>`) as the
 * entry's pattern (`openai/*`), for both; anything else (never seen: the catalog resolves every
 * request's model before an event) `_OTHER`, the conventions' catch-all.
 */
export function modelLabeler(entries: Iterable<ModelEntry>): (model: string, upstreamModel: string) => ModelLabels {
  const listed = new Set<string>();
  const patterns: string[] = [];
  for (const entry of entries) {
    if (entry.id.endsWith('*')) patterns.push(entry.id);
    else listed.add(entry.id);
  }
  // Longest prefix first, as the catalog matches them.
  patterns.sort((a, b) => b.length - a.length);
  return (model, upstreamModel) => {
    if (listed.has(model)) return { request: model, response: upstreamModel };
    const pattern = patterns.find((candidate) => model.startsWith(candidate.slice(0, -1))) ?? '_OTHER';
    return { request: pattern, response: pattern };
  };
}
