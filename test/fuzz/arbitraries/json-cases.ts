import fc from 'fast-check';
import type { FuzzCase, Piece, RouteName } from '../cases.js';
import { keptFields, validBodies } from '../routes.js';
import { cloneJson, deleteAt, formatPath, getAt, jsonPieces, objectPathsOf, pathsOf, setAt, type PathKey } from './json-text.js';
import { piecesLength, splitPieces } from './pieces.js';
import { RawJson, weirdKey, weirdValue } from './values.js';

/** One structural change to a valid body. */
type Mutation =
  | { kind: 'drop'; path: PathKey[] }
  | { kind: 'set'; path: PathKey[]; value: unknown }
  | { kind: 'add'; path: PathKey[]; key: string; value: unknown };

/** One change to the body's bytes after serialization. */
type ByteMutation =
  | { kind: 'truncate'; fraction: number }
  | { kind: 'insert'; fraction: number; hex: string; why: string }
  | { kind: 'bom' }
  | { kind: 'duplicate-key'; first: boolean; key: string; value: unknown }
  | { kind: 'wrap'; before: string; after: string }
  | { kind: 'replace'; text: string }
  | { kind: 'pad'; unit: string; times: number };

function mutation(base: Record<string, unknown>, kept: readonly string[]): fc.Arbitrary<Mutation> {
  const paths = pathsOf(base);
  const droppable = paths.filter((path) => !kept.includes(formatPath(path)));
  const objectPaths = objectPathsOf(base);
  return fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(...droppable).map((path): Mutation => ({ kind: 'drop', path })) },
    { weight: 5, arbitrary: fc.tuple(fc.constantFrom(...paths), weirdValue).map(([path, value]): Mutation => ({ kind: 'set', path, value })) },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.constantFrom(...objectPaths), weirdKey, weirdValue).map(([path, key, value]): Mutation => ({ kind: 'add', path, key, value })),
    },
  );
}

/** Bytes that are not UTF-8: lone continuation, truncated sequences, overlong forms, encoded surrogates. */
const invalidUtf8 = fc.constantFrom(
  { hex: 'ff', why: '0xFF' },
  { hex: '80', why: 'lone continuation byte' },
  { hex: 'c3', why: 'truncated 2-byte sequence' },
  { hex: 'c328', why: 'bad continuation' },
  { hex: 'e282', why: 'truncated 3-byte sequence' },
  { hex: 'f0288cbc', why: 'bad 4-byte sequence' },
  { hex: 'c0af', why: 'overlong slash' },
  { hex: 'eda080', why: 'UTF-8 encoded surrogate' },
  { hex: 'f4908080', why: 'past U+10FFFF' },
  { hex: '00', why: 'NUL byte' },
  { hex: 'efbbbf', why: 'BOM in the middle' },
);

const byteMutation: fc.Arbitrary<ByteMutation> = fc.oneof(
  fc.double({ min: 0, max: 1, noNaN: true }).map((fraction): ByteMutation => ({ kind: 'truncate', fraction })),
  fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), invalidUtf8).map(([fraction, bytes]): ByteMutation => ({ kind: 'insert', fraction, ...bytes })),
  fc.constant<ByteMutation>({ kind: 'bom' }),
  fc.tuple(fc.boolean(), weirdKey, weirdValue).map(([first, key, value]): ByteMutation => ({ kind: 'duplicate-key', first, key, value })),
  fc
    .constantFrom(['[', ']'], ['', ' garbage'], ['', '}'], ['', '{}'], ['', ','], ['/* c */', ''], ['{"a":', '}'], ['"', '"'], ['', '\u0000'])
    .map(([before, after]): ByteMutation => ({ kind: 'wrap', before: before!, after: after! })),
  fc
    .constantFrom('', ' ', '\n\t ', 'null', '0', '-1', '1e999', '"text"', '[]', '[{}]', 'true', '{', '}', '{"', "{'model':'x'}", '{"model"}', 'NaN')
    .map((text): ByteMutation => ({ kind: 'replace', text })),
  fc.tuple(fc.constantFrom(' ', '\n', '\t', '\r\n'), fc.integer({ min: 1, max: 600_000 })).map(([unit, times]): ByteMutation => ({ kind: 'pad', unit, times })),
);

function applyMutation(body: Record<string, unknown>, change: Mutation): void {
  // An earlier change may have removed or replaced the way to this path: then this one does nothing.
  if (!isContainer(parentOf(body, change.path))) return;
  // Values are copied in: the pool's containers are shared, and a later change may write inside.
  if (change.kind === 'drop') deleteAt(body, change.path);
  else if (change.kind === 'set') setAt(body, change.path, cloneJson(change.value));
  else {
    const target = getAt(body, change.path);
    if (isContainer(target) && !Array.isArray(target)) setAt(body, [...change.path, change.key], cloneJson(change.value));
  }
}

/** The value holding `path`'s last key, or undefined when the way there is gone. */
function parentOf(body: unknown, path: readonly PathKey[]): unknown {
  let at = body;
  for (const key of path.slice(0, -1)) {
    if (!isContainer(at)) return undefined;
    at = (at as Record<PathKey, unknown>)[key];
  }
  return at;
}

function isContainer(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !(value instanceof RawJson);
}

function applyBytes(pieces: Piece[], change: ByteMutation): { parts: Piece[]; truncateAt?: number } {
  const length = piecesLength(pieces);
  switch (change.kind) {
    case 'truncate':
      return { parts: pieces, truncateAt: Math.floor(change.fraction * length) };
    case 'insert': {
      const [left, right] = splitPieces(pieces, Math.floor(change.fraction * length));
      return { parts: [...left, { hex: change.hex }, ...right] };
    }
    case 'bom':
      return { parts: [{ hex: 'efbbbf' }, ...pieces] };
    case 'duplicate-key': {
      const member = [JSON.stringify(change.key), ':', ...jsonPieces(change.value)];
      // Only where the body is still an object: `{` first, `}` last.
      const [open, rest] = splitPieces(pieces, 1);
      if (change.first) return { parts: [...open, ...member, ',', ...rest] };
      const [head, close] = splitPieces(pieces, length - 1);
      return { parts: [...head, ',', ...member, ...close] };
    }
    case 'wrap':
      return { parts: [change.before, ...pieces, change.after] };
    case 'replace':
      return { parts: [change.text] };
    case 'pad':
      return { parts: [{ repeat: change.unit, times: change.times }, ...pieces] };
  }
}

function describeValue(value: unknown): string {
  if (value instanceof RawJson) {
    const text = value.pieces
      .map((piece) => (typeof piece === 'string' ? piece : 'repeat' in piece ? `${piece.repeat}×${piece.times}` : JSON.stringify(piece)))
      .join('');
    return text.length > 60 ? `${text.slice(0, 60)}…` : text;
  }
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

function describe(change: Mutation | ByteMutation): string {
  switch (change.kind) {
    case 'drop':
      return `drop ${formatPath(change.path)}`;
    case 'set':
      return `set ${formatPath(change.path)} = ${describeValue(change.value)}`;
    case 'add':
      return `add ${formatPath([...change.path, change.key])} = ${describeValue(change.value)}`;
    case 'truncate':
      return `truncate at ${Math.round(change.fraction * 100)}%`;
    case 'insert':
      return `insert ${change.why} at ${Math.round(change.fraction * 100)}%`;
    case 'duplicate-key':
      return `duplicate key ${JSON.stringify(change.key)} ${change.first ? 'first' : 'last'} = ${describeValue(change.value)}`;
    case 'wrap':
      return `wrap in ${JSON.stringify(change.before)} … ${JSON.stringify(change.after)}`;
    case 'replace':
      return `replace body by ${JSON.stringify(change.text)}`;
    default:
      return change.kind === 'pad' ? `pad with ${JSON.stringify(change.unit)}×${change.times}` : change.kind;
  }
}

/**
 * Cases for a JSON route: one of its valid bodies, one to three structural mutations (drop a field,
 * a wrong value at any field path, an added key), then, one time in four, damage to the bytes.
 * A case with a single structural change and intact bytes records the field, for the oracle's
 * `param` check.
 */
export function jsonRouteCases(route: RouteName): fc.Arbitrary<FuzzCase> {
  const bases = validBodies[route === 'responses-alias' ? 'responses' : route];
  if (!bases) throw new Error(`no valid body for ${route}`);
  return fc
    .constantFrom(...bases)
    .chain((base) =>
      fc.tuple(
        fc.constant(base),
        fc.array(mutation(base, keptFields[route] ?? []), { minLength: 1, maxLength: 3 }),
        fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: byteMutation }),
      ),
    )
    .map(([base, changes, bytes]): FuzzCase => {
      const body = cloneJson(base);
      for (const change of changes) applyMutation(body, change);
      const pieces = jsonPieces(body);
      const damaged = bytes ? applyBytes(pieces, bytes) : { parts: pieces };
      const [only] = changes;
      const field = changes.length === 1 && !bytes && only ? formatPath(only.kind === 'add' ? [...only.path, only.key] : only.path) : undefined;
      return {
        name: `${route}: ${[...changes, ...(bytes ? [bytes] : [])].map(describe).join('; ')}`,
        route,
        body: damaged,
        ...(field !== undefined ? { field } : {}),
      };
    });
}
