import { isRecord, type Json } from '../../json.js';
import { jsonChars, shallowNodes, type WorkBudget } from '../../work-budget.js';
import type { GeminiSchema, GeminiSchemaType } from './wire.js';

/**
 * JSON Schema → Gemini's `Schema` (a subset of OpenAPI 3.0), as Google's SDKs and LiteLLM do it:
 * types upper-cased, `["string","null"]` and a `null` branch of `anyOf` become `nullable`,
 * `oneOf` becomes `anyOf`, `const` a one-value `enum`, local `$ref`s are inlined from
 * `$defs`/`definitions`, and keywords Gemini refuses (`additionalProperties`, `$schema`,
 * `patternProperties`, `not`, `if`…) are dropped rather than sent, since Gemini answers 400 to
 * an unknown schema field. `allOf` is merged when its branches are objects.
 *
 * Gemini has no recursive schemas: a `$ref` met again inside its own expansion becomes `{}`. A
 * chain of distinct definitions still multiplies (each used from several properties), so the
 * conversion spends `budget` and stops with a 400 naming `field` (the client's name for the
 * schema) when it runs out.
 */
export function toGeminiSchema(schema: unknown, budget: WorkBudget, field: string): GeminiSchema {
  const root = isRecord(schema) ? schema : {};
  const defs = { ...(isRecord(root.definitions) ? root.definitions : {}), ...(isRecord(root.$defs) ? root.$defs : {}) };
  return convert(root, { defs, budget, field, expanding: new Set() }, 0);
}

interface Conversion {
  defs: Json;
  budget: WorkBudget;
  field: string;
  /** The `$ref`s being inlined on the path from the root: meeting one again is a cycle. */
  expanding: Set<string>;
}

/** Deeper than any real schema; a bound on the stack, not on the work (the budget is). */
const MAX_DEPTH = 32;

const TYPES: Record<string, GeminiSchemaType> = {
  string: 'STRING',
  number: 'NUMBER',
  integer: 'INTEGER',
  boolean: 'BOOLEAN',
  array: 'ARRAY',
  object: 'OBJECT',
  null: 'NULL',
};

/** The formats Gemini takes; others are dropped (the description still says what the value is). */
const FORMATS = new Set(['enum', 'date-time', 'int32', 'int64', 'float', 'double']);

function convert(node: Json, context: Conversion, depth: number): GeminiSchema {
  if (depth > MAX_DEPTH) return {};
  context.budget.spend(context.field, shallowNodes(node), copiedChars(node));
  const ref = node.$ref;
  if (typeof ref === 'string') {
    if (context.expanding.has(ref)) return {};
    context.expanding.add(ref);
    const inlined = convert({ ...resolveRef(ref, context.defs), ...withoutRef(node) }, context, depth + 1);
    context.expanding.delete(ref);
    return inlined;
  }

  const out: GeminiSchema = {};
  if (Array.isArray(node.allOf) && node.allOf.every(isRecord)) {
    const branches = node.allOf.map((branch) => resolveBranch(branch, context));
    for (const branch of branches) context.budget.spend(context.field, shallowNodes(branch));
    const { allOf: _allOf, ...rest } = node;
    return convert(mergeAllOf([...branches, rest]), context, depth + 1);
  }

  let nullable = node.nullable === true;
  if (typeof node.type === 'string' && TYPES[node.type]) out.type = TYPES[node.type];
  else if (Array.isArray(node.type)) {
    const types = node.type.filter((type): type is string => typeof type === 'string' && type !== 'null');
    if (types.length < node.type.length) nullable = true;
    if (types.length === 1 && TYPES[types[0]!]) out.type = TYPES[types[0]!];
    else if (types.length > 1) out.anyOf = types.flatMap((type) => (TYPES[type] ? [{ type: TYPES[type] }] : []));
  }

  const branches = Array.isArray(node.anyOf) ? node.anyOf : Array.isArray(node.oneOf) ? node.oneOf : undefined;
  if (branches) {
    const kept = branches.filter(isRecord).filter((branch) => {
      if (branch.type === 'null') {
        nullable = true;
        return false;
      }
      return true;
    });
    if (kept.length === 1) Object.assign(out, convert({ ...kept[0]!, ...pick(node, ['description', 'title']) }, context, depth + 1));
    else if (kept.length > 1) out.anyOf = kept.map((branch) => convert(branch, context, depth + 1));
  }
  if (nullable) out.nullable = true;

  if (typeof node.description === 'string') out.description = node.description;
  if (typeof node.title === 'string') out.title = node.title;
  if (typeof node.format === 'string' && FORMATS.has(node.format)) out.format = node.format;
  if (node.const !== undefined && node.const !== null) out.enum = [String(node.const)];
  if (Array.isArray(node.enum)) {
    const values = node.enum.filter((value) => value !== null).map(String);
    if (values.length < node.enum.length) out.nullable = true;
    out.enum = values;
    // Gemini's enum is of strings only.
    if (out.type !== undefined && out.type !== 'STRING') out.type = 'STRING';
  }
  if (out.enum && out.type === undefined) out.type = 'STRING';

  if (isRecord(node.properties)) {
    const properties: Record<string, GeminiSchema> = {};
    for (const [name, value] of Object.entries(node.properties)) properties[name] = convert(isRecord(value) ? value : {}, context, depth + 1);
    if (Object.keys(properties).length > 0) {
      out.properties = properties;
      if (out.type === undefined) out.type = 'OBJECT';
    }
    if (Array.isArray(node.required)) {
      const required = node.required.filter((name): name is string => typeof name === 'string' && name in properties);
      if (required.length > 0) out.required = required;
    }
  }
  if (node.items !== undefined) {
    const items = Array.isArray(node.items) ? node.items[0] : node.items;
    out.items = convert(isRecord(items) ? items : {}, context, depth + 1);
  } else if (Array.isArray(node.prefixItems) && isRecord(node.prefixItems[0])) {
    out.items = convert(node.prefixItems[0], context, depth + 1);
  }
  for (const key of ['minItems', 'maxItems', 'minLength', 'maxLength', 'minProperties', 'maxProperties'] as const) {
    if (typeof node[key] === 'number') out[key] = String(node[key]);
  }
  if (typeof node.minimum === 'number') out.minimum = node.minimum;
  if (typeof node.maximum === 'number') out.maximum = node.maximum;
  if (typeof node.pattern === 'string') out.pattern = node.pattern;
  if (node.default !== undefined) out.default = node.default;
  if (Array.isArray(node.propertyOrdering)) out.propertyOrdering = node.propertyOrdering.filter((name) => typeof name === 'string');
  if (node.example !== undefined) out.example = node.example;
  else if (Array.isArray(node.examples) && node.examples.length > 0) out.example = node.examples[0];
  return out;
}

/** The definition a local `$ref` names, or `{}` for a ref that names none (or not locally). */
function resolveRef(ref: string, defs: Json): Json {
  const match = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref);
  const target = match ? defs[decodeURIComponent(match[1]!).replaceAll('~1', '/').replaceAll('~0', '~')] : undefined;
  return isRecord(target) ? target : {};
}

/** Characters of text the converted node repeats from `node`: what grows when a definition is used many times. */
function copiedChars(node: Json): number {
  let chars = 0;
  for (const key of ['description', 'title', 'pattern', 'default', 'example', 'const', 'enum', 'propertyOrdering', 'required'] as const) {
    if (node[key] !== undefined) chars += jsonChars(node[key]);
  }
  if (isRecord(node.properties)) for (const name of Object.keys(node.properties)) chars += name.length;
  return chars;
}

function withoutRef(node: Json): Json {
  const { $ref: _ref, ...rest } = node;
  return rest;
}

/** An `allOf` branch with its `$ref` resolved; nothing for a ref being inlined already (a cycle). */
function resolveBranch(branch: Json, context: Conversion): Json {
  if (typeof branch.$ref !== 'string') return branch;
  return context.expanding.has(branch.$ref) ? {} : resolveRef(branch.$ref, context.defs);
}

/** The objects merged, later keys winning; `properties` and `required` are the union of all. */
function mergeAllOf(branches: Json[]): Json {
  const merged: Json = {};
  const properties: Json = {};
  const required: unknown[] = [];
  for (const branch of branches) {
    Object.assign(merged, branch);
    if (isRecord(branch.properties)) Object.assign(properties, branch.properties);
    if (Array.isArray(branch.required)) required.push(...branch.required);
  }
  if (Object.keys(properties).length > 0) merged.properties = properties;
  if (required.length > 0) merged.required = [...new Set(required)];
  return merged;
}

function pick(node: Json, keys: string[]): Json {
  const out: Json = {};
  for (const key of keys) if (node[key] !== undefined) out[key] = node[key];
  return out;
}
