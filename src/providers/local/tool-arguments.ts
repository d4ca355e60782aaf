import { isRecord, type Json as Schema } from '../../json.js';

/**
 * Builds a value that satisfies a JSON Schema, deterministically, for the local model's tool calls
 * and structured outputs. Strings come from the prompt where the property's name says what it
 * wants (a city, a query, a file path, a `command`), else the schema's `default` or a placeholder naming the property;
 * numbers are 1 (within bounds), booleans true, enums and `const` their first value. Only what the local model needs: local
 * `$ref`s, `anyOf`/`oneOf` (first branch), nested objects and arrays.
 */

const MAX_DEPTH = 8;
const LOCATION_NAME = /city|location|place|town|country|region|address|destination|where/i;
const TEXT_NAME = /^(q|query|question|prompt|text|input|message|content|search|term|keywords?|topic|subject)$|query/i;
/** A file or directory: Claude Code's `file_path`, `path`, `notebook_path`, a `filename`. */
const PATH_NAME = /(^|_)(path|file|filename|dir|directory)$/i;
/** A shell command: Codex's `cmd`, Claude Code's Bash `command`. */
const COMMAND_NAME = /^(cmd|command|script)$/i;

/** A value for `schema`, taking strings from `prompt` where sensible. */
export function valueFromSchema(schema: unknown, prompt: string): unknown {
  const root = isRecord(schema) ? schema : {};
  return buildValue(root, { root, prompt, depth: 0, name: 'value' });
}

/** The JSON text of a tool call's arguments: always an object, as every protocol requires. */
export function toolArguments(parameters: Record<string, unknown> | undefined, prompt: string): string {
  const value = valueFromSchema(parameters ?? { type: 'object' }, prompt);
  return JSON.stringify(isRecord(value) ? value : {});
}

interface BuildContext {
  root: Schema;
  prompt: string;
  depth: number;
  /** The property the value is for, which hints at what a string should hold. */
  name: string;
  description?: string | undefined;
}

function buildValue(schema: Schema, context: BuildContext): unknown {
  if (context.depth > MAX_DEPTH) return null;
  const resolved = resolveRef(schema, context.root);
  if ('const' in resolved) return resolved.const;
  if (Array.isArray(resolved.enum) && resolved.enum.length > 0) return resolved.enum[0];
  const branches = (resolved.anyOf ?? resolved.oneOf ?? resolved.allOf) as unknown;
  if (Array.isArray(branches)) {
    const branch = branches.find((entry) => isRecord(entry) && entry.type !== 'null') ?? branches[0];
    if (isRecord(branch)) return buildValue(branch, { ...context, depth: context.depth + 1 });
  }
  const description = typeof resolved.description === 'string' ? resolved.description : context.description;
  switch (schemaType(resolved)) {
    case 'object':
      return buildObject(resolved, context);
    case 'array': {
      if (resolved.maxItems === 0) return [];
      const items = isRecord(resolved.items) ? resolved.items : {};
      return [buildValue(items, { ...context, depth: context.depth + 1 })];
    }
    case 'integer':
    case 'number':
      return typeof resolved.default === 'number' ? resolved.default : numberWithin(resolved);
    case 'boolean':
      return typeof resolved.default === 'boolean' ? resolved.default : true;
    case 'null':
      return null;
    default:
      return stringFor({ ...context, ...(description === undefined ? {} : { description }) }, resolved);
  }
}

function buildObject(schema: Schema, context: BuildContext): Record<string, unknown> {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  // Without a `required` list every property is optional; filling them all still validates and
  // shows more of the schema at work.
  const names = Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : Object.keys(properties);
  const value: Record<string, unknown> = {};
  for (const name of names) {
    const property = properties[name];
    value[name] = buildValue(isRecord(property) ? property : {}, { ...context, name, depth: context.depth + 1, description: undefined });
  }
  return value;
}

function stringFor(context: BuildContext, schema: Schema): string {
  const hint = `${context.name} ${context.description ?? ''}`;
  if (LOCATION_NAME.test(hint)) {
    const place = placeIn(context.prompt);
    if (place) return place;
  }
  if (PATH_NAME.test(context.name)) {
    const path = pathIn(context.prompt);
    if (path) return path;
  }
  if (COMMAND_NAME.test(context.name)) {
    const command = codeSpanIn(context.prompt);
    if (command) return command;
  }
  if (TEXT_NAME.test(context.name) && context.prompt.trim()) return truncate(context.prompt.trim(), 200);
  if (typeof schema.default === 'string') return schema.default;
  switch (schema.format) {
    case 'date':
      return '1970-01-01';
    case 'date-time':
      return '1970-01-01T00:00:00Z';
    case 'email':
      return 'user@example.com';
    case 'uri':
    case 'url':
      return 'https://example.com';
    default:
      return `example_${context.name}`;
  }
}

/** The place a prompt names: "weather in New York" → "New York", "forecast for paris" → "paris". */
export function placeIn(prompt: string): string | undefined {
  const capitalized = /\b(?:in|for|at|near|of)\s+(?:the\s+)?(\p{Lu}[\p{L}'-]*(?:\s+\p{Lu}[\p{L}'-]*)*)/u.exec(prompt);
  if (capitalized?.[1]) return capitalized[1];
  const word = /\b(?:in|for|at|near)\s+(?:the\s+)?(\p{L}[\p{L}'-]*)/u.exec(prompt);
  return word?.[1];
}

/** The first absolute path a prompt names: "read /tmp/work/notes.txt." → "/tmp/work/notes.txt". */
export function pathIn(prompt: string): string | undefined {
  const path = /(?:^|[\s`'"(])((?:~|\.{1,2})?\/[^\s`'"()]+)/.exec(prompt)?.[1];
  return path?.replace(/[.,;:!?]+$/, '');
}

/** The first `code span` of a prompt: "run `ls -la` in it" → "ls -la". */
export function codeSpanIn(prompt: string): string | undefined {
  const span = /`([^`\n]+)`/.exec(prompt)?.[1]?.trim();
  return span || undefined;
}

function numberWithin(schema: Schema): number {
  let value = 1;
  if (typeof schema.minimum === 'number' && value < schema.minimum) value = schema.minimum;
  if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) value = schema.exclusiveMinimum + 1;
  if (typeof schema.maximum === 'number' && value > schema.maximum) value = schema.maximum;
  if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum) value = schema.exclusiveMaximum - 1;
  return schema.type === 'integer' ? Math.ceil(value) : value;
}

function schemaType(schema: Schema): string | undefined {
  const type = schema.type;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.find((entry) => entry !== 'null') ?? type[0];
  if (isRecord(schema.properties)) return 'object';
  if (schema.items !== undefined) return 'array';
  return undefined;
}

/** Resolves `#/$defs/…` and `#/definitions/…` against the root schema; other refs stay as they are. */
function resolveRef(schema: Schema, root: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return schema;
  let target: unknown = root;
  for (const segment of ref.slice(2).split('/')) {
    target = isRecord(target) ? target[segment.replaceAll('~1', '/').replaceAll('~0', '~')] : undefined;
  }
  return isRecord(target) ? target : {};
}

/** `text` cut to `length` characters with an ellipsis, never splitting a surrogate pair. */
export function truncate(text: string, length: number): string {
  if (text.length <= length) return text;
  return (
    text
      .slice(0, length - 1)
      .replace(/[\uD800-\uDBFF]$/, '')
      .trimEnd() + '…'
  );
}
