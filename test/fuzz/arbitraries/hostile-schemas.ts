import fc from 'fast-check';
import { definitionChain, selfReference } from '../../helpers/hostile-schemas.js';

/**
 * JSON Schemas that cost more to expand than to send (issue 22, item 2): self-references, cycles
 * through several definitions, chains of definitions used from several places (a DAG: no cycle
 * to cut, still exponential), reached through `properties`, `items`, `anyOf` and `allOf`; and
 * schemas that are simply large (deep, wide, long texts a shared definition repeats).
 */
type Json = Record<string, unknown>;

/** How a definition uses another: the keywords a converter follows. */
const USES = ['properties', 'items', 'anyOf', 'allOf'] as const;
type Use = (typeof USES)[number];

function using(use: Use, refs: Json[], description: string | undefined): Json {
  const base: Json = description === undefined ? {} : { description };
  switch (use) {
    case 'properties':
      return { ...base, type: 'object', properties: Object.fromEntries(refs.map((ref, i) => [`p${i}`, ref])) };
    case 'items':
      return { ...base, type: 'object', properties: Object.fromEntries(refs.map((ref, i) => [`p${i}`, { type: 'array', items: ref }])) };
    case 'anyOf':
      return { ...base, anyOf: [...refs, { type: 'null' }] };
    case 'allOf':
      return { ...base, allOf: refs.map((ref, i) => ({ type: 'object', properties: { [`p${i}`]: ref } })) };
  }
}

/** A random graph of definitions: each uses some others (itself included) through one keyword. */
const definitionGraph: fc.Arbitrary<Json> = fc.integer({ min: 1, max: 8 }).chain((count) =>
  fc
    .array(
      fc.record({
        use: fc.constantFrom(...USES),
        targets: fc.array(fc.integer({ min: 0, max: count - 1 }), { minLength: 1, maxLength: 6 }),
        description: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
      }),
      { minLength: count, maxLength: count },
    )
    .map((defs) => {
      const $defs = Object.fromEntries(
        defs.map((def, i) => [
          `d${i}`,
          using(
            def.use,
            def.targets.map((target) => ({ $ref: `#/$defs/d${target}` })),
            def.description,
          ),
        ]),
      );
      return { type: 'object', properties: { root: { $ref: '#/$defs/d0' } }, $defs };
    }),
);

/** One definition with a long description, used from many properties: the text it repeats. */
const repeatedText = fc.record({ uses: fc.integer({ min: 1, max: 400 }), chars: fc.integer({ min: 1, max: 40_000 }) }).map(({ uses, chars }) => ({
  type: 'object',
  properties: Object.fromEntries(Array.from({ length: uses }, (_, i) => [`p${i}`, { $ref: '#/$defs/long' }])),
  $defs: { long: { type: 'string', description: 'x'.repeat(chars) } },
}));

/** Properties nested `depth` levels (the body's own limit is 256 levels of JSON). */
const deep = fc.integer({ min: 1, max: 110 }).map((depth) => {
  let schema: Json = { type: 'string' };
  for (let i = 0; i < depth; i++) schema = { type: 'object', properties: { next: schema } };
  return schema;
});

/** Many properties, no refs: large but linear. */
const wide = fc.integer({ min: 1, max: 5_000 }).map((count) => ({
  type: 'object',
  properties: Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, { type: 'integer', description: `field ${i}` }])),
}));

/** A few hundred bytes that expand: cycles, chains and graphs of definitions. */
const expanding: fc.Arbitrary<Json> = fc.oneof(
  fc.integer({ min: 1, max: 8 }).map(selfReference),
  fc.record({ depth: fc.integer({ min: 2, max: 14 }), width: fc.integer({ min: 1, max: 6 }) }).map(({ depth, width }) => definitionChain(depth, width)),
  definitionGraph,
);

export const hostileSchema: fc.Arbitrary<Json> = fc.oneof(expanding, repeatedText, deep, wide);

/** One to a few schemas in a request: a budget is per request, not per schema. */
export const hostileSchemas: fc.Arbitrary<Json[]> = fc.oneof(
  { weight: 4, arbitrary: hostileSchema.map((schema) => [schema]) },
  { weight: 1, arbitrary: fc.array(hostileSchema, { minLength: 2, maxLength: 4 }) },
  // Many tools sharing one schema: each small, together past the budget.
  { weight: 1, arbitrary: fc.tuple(expanding, fc.integer({ min: 2, max: 60 })).map(([schema, count]) => Array.from({ length: count }, () => schema)) },
);
