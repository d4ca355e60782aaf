import type { Piece } from '../cases.js';
import { RawJson } from './values.js';

/** A key or index on the way to a field, as in valibot's issue paths. */
export type PathKey = string | number;

/** Every path in `value`, containers and leaves, root excluded. */
export function pathsOf(value: unknown, prefix: PathKey[] = []): PathKey[][] {
  const out: PathKey[][] = [];
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      out.push([...prefix, index], ...pathsOf(item, [...prefix, index]));
    });
  } else if (isObject(value)) {
    for (const [key, item] of Object.entries(value)) out.push([...prefix, key], ...pathsOf(item, [...prefix, key]));
  }
  return out;
}

/** Paths of the objects in `value`, root included: where a key may be added. */
export function objectPathsOf(value: unknown): PathKey[][] {
  return [[], ...pathsOf(value).filter((path) => isObject(getAt(value, path)))];
}

export function getAt(root: unknown, path: readonly PathKey[]): unknown {
  let at = root;
  for (const key of path) at = (at as Record<PathKey, unknown>)[key];
  return at;
}

/**
 * Writes `value` at `path`, as an own property even for `__proto__` (what `JSON.parse` makes of
 * such a key, and what `JSON.stringify` writes back).
 */
export function setAt(root: unknown, path: readonly PathKey[], value: unknown): void {
  const parent = getAt(root, path.slice(0, -1)) as Record<PathKey, unknown>;
  Object.defineProperty(parent, path.at(-1)!, { value, enumerable: true, writable: true, configurable: true });
}

export function deleteAt(root: unknown, path: readonly PathKey[]): void {
  const parent = getAt(root, path.slice(0, -1));
  const key = path.at(-1)!;
  if (Array.isArray(parent) && typeof key === 'number') parent.splice(key, 1);
  else delete (parent as Record<PathKey, unknown>)[key];
}

/** `['messages', 0, 'role']` → `messages[0].role`, as the gateway writes `param`. */
export function formatPath(path: readonly PathKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(key)}]`;
  }
  return out;
}

/** A deep copy that keeps own `__proto__` keys and `RawJson` values as they are. */
export function cloneJson<T>(value: T): T {
  if (value instanceof RawJson) return value;
  if (Array.isArray(value)) return value.map(cloneJson) as T;
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(out, key, { value: cloneJson(item), enumerable: true, writable: true, configurable: true });
    }
    return out as T;
  }
  return value;
}

/** JSON text of `value` as pieces: `RawJson` values are spliced in where they stand. */
export function jsonPieces(value: unknown): Piece[] {
  const raws: RawJson[] = [];
  const text = JSON.stringify(value, (_key, item: unknown) => {
    if (item instanceof RawJson) {
      raws.push(item);
      return `\u0000raw${raws.length - 1}\u0000`;
    }
    return item;
  });
  if (text === undefined) return [];
  const pieces: Piece[] = [];
  let last = 0;
  for (const match of text.matchAll(/"\\u0000raw(\d+)\\u0000"/g)) {
    if (match.index > last) pieces.push(text.slice(last, match.index));
    pieces.push(...raws[Number(match[1])]!.pieces);
    last = match.index + match[0].length;
  }
  if (last < text.length) pieces.push(text.slice(last));
  return pieces;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof RawJson);
}
