/**
 * JSON Schemas that cost far more to expand than to send (code-review findings 1 and 2): the
 * unit tests, the routes' tests and the fuzz corpus build their cases from these.
 */
type Json = Record<string, unknown>;

/** A definition that refers to itself from `width` properties: the 369-byte bomb of the review at width 3. */
export function selfReference(width: number): Json {
  const node = { type: 'object', properties: Object.fromEntries(Array.from({ length: width }, (_, i) => [`p${i}`, { $ref: '#/$defs/n' }])) };
  return { ...node, $defs: { n: node } };
}

/** `d0` uses `d1` from `width` properties, `d1` uses `d2`…: width^depth nodes once inlined, and no cycle to cut. */
export function definitionChain(depth: number, width: number): Json {
  const $defs: Json = {};
  for (let level = 0; level < depth; level++) {
    const next = level + 1 < depth ? { $ref: `#/$defs/d${level + 1}` } : { type: 'string' };
    $defs[`d${level}`] = { type: 'object', properties: Object.fromEntries(Array.from({ length: width }, (_, i) => [`p${i}`, next])) };
  }
  return { type: 'object', properties: { root: { $ref: '#/$defs/d0' } }, required: ['root'], $defs };
}
