/**
 * Sets `key` in a map that holds at most `max` entries: a new key past that drops the oldest
 * first. For maps keyed by what clients choose (model ids under a wildcard entry), which must
 * not grow without end.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  if (map.size >= max && !map.has(key)) map.delete(map.keys().next().value as K);
  map.set(key, value);
}
