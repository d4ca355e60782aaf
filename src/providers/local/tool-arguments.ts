import { posix } from 'node:path';
import { isRecord, type Json as Schema } from '../../json.js';
import { jsonChars, shallowNodes, WorkBudget } from '../../work-budget.js';

/**
 * Builds a value that satisfies a JSON Schema, deterministically, for the local model's tool calls
 * and structured outputs. Strings come from the prompt where the property's name says what it
 * wants (a city, a query, a file path, a `command`), else the schema's `default` or a placeholder naming the property;
 * numbers are 1 (within bounds), booleans true, enums and `const` their first value. Only what the local model needs: local
 * `$ref`s, `anyOf`/`oneOf` (first branch), nested objects and arrays.
 *
 * A `$ref` met again inside its own expansion is `null` (the value would be infinite), and the
 * filling spends a `WorkBudget`: a chain of definitions each used from several properties
 * multiplies, and past the budget the request is refused with a 400 naming the schema's field.
 */

/** Deeper than a tool's arguments need; a bound on the nesting, not on the work (the budget is). */
const MAX_DEPTH = 8;
const LOCATION_NAME = /city|location|place|town|country|region|address|destination|where/i;
const TEXT_NAME = /^(q|query|question|prompt|text|input|message|content|search|term|keywords?|topic|subject)$|query/i;
/** A file or directory: Claude Code's `file_path`, `path`, `notebook_path`, a `filename`. */
export const PATH_NAME = /(^|_)(path|file|filename|dir|directory)$/i;
/** A shell command: Codex's `cmd`, Claude Code's Bash `command`. */
export const COMMAND_NAME = /^(cmd|command|script)$/i;

/**
 * A value for `schema`, taking strings from `prompt` where sensible. `field` is where the client
 * wrote the schema (`tools[0].function.parameters`), named by the 400 when `budget` runs out.
 * A relative path in the prompt is resolved against `workingDirectory` when the agent stated one.
 */
export function valueFromSchema(schema: unknown, prompt: string, field: string, budget = new WorkBudget(), workingDirectory?: string): unknown {
  const root = isRecord(schema) ? schema : {};
  return buildValue(root, { root, hints: hintsIn(prompt, workingDirectory), budget, field, expanding: new Set() }, { depth: 0, name: 'value' });
}

/** The JSON text of a tool call's arguments: always an object, as every protocol requires. */
export function toolArguments(parameters: Record<string, unknown> | undefined, prompt: string, field: string, workingDirectory?: string): string {
  const value = valueFromSchema(parameters ?? { type: 'object' }, prompt, field, new WorkBudget(), workingDirectory);
  return JSON.stringify(isRecord(value) ? value : {});
}

/** What one filling shares from its root down. */
interface Filling {
  root: Schema;
  hints: PromptHints;
  budget: WorkBudget;
  field: string;
  /** The `$ref`s being expanded on the path from the root: meeting one again is a cycle. */
  expanding: Set<string>;
}

/** Where a value goes. */
interface Slot {
  depth: number;
  /** The property the value is for, which hints at what a string should hold. */
  name: string;
  description?: string | undefined;
}

function buildValue(schema: Schema, filling: Filling, slot: Slot): unknown {
  if (slot.depth > MAX_DEPTH) return null;
  filling.budget.spend(filling.field, shallowNodes(schema), slot.name.length);
  const ref = schema.$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    if (filling.expanding.has(ref)) return null;
    filling.expanding.add(ref);
    // The same depth: a ref is a name for the schema, not a level of the value.
    const value = buildValue(resolveRef(ref, filling.root), filling, slot);
    filling.expanding.delete(ref);
    return value;
  }
  if ('const' in schema) return repeated(schema.const, filling);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return repeated(schema.enum[0], filling);
  const branches = (schema.anyOf ?? schema.oneOf ?? schema.allOf) as unknown;
  if (Array.isArray(branches)) {
    const branch = branches.find((entry) => isRecord(entry) && entry.type !== 'null') ?? branches[0];
    if (isRecord(branch)) return buildValue(branch, filling, { ...slot, depth: slot.depth + 1 });
  }
  switch (schemaType(schema)) {
    case 'object':
      return buildObject(schema, filling, slot.depth);
    case 'array': {
      if (schema.maxItems === 0) return [];
      const items = isRecord(schema.items) ? schema.items : {};
      return [buildValue(items, filling, { ...slot, depth: slot.depth + 1 })];
    }
    case 'integer':
    case 'number':
      return typeof schema.default === 'number' ? schema.default : numberWithin(schema);
    case 'boolean':
      return typeof schema.default === 'boolean' ? schema.default : true;
    case 'null':
      return null;
    default: {
      const description = typeof schema.description === 'string' ? schema.description : slot.description;
      return repeated(stringFor(schema, filling, slot.name, description), filling);
    }
  }
}

/** `value`, taken from the schema or the prompt, after spending its characters: a shared definition repeats it each time. */
function repeated(value: unknown, filling: Filling): unknown {
  filling.budget.spend(filling.field, 0, jsonChars(value));
  return value;
}

function buildObject(schema: Schema, filling: Filling, depth: number): Record<string, unknown> {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  // Without a `required` list every property is optional; filling them all still validates and
  // shows more of the schema at work.
  const names = Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : Object.keys(properties);
  const value: Record<string, unknown> = {};
  for (const name of names) {
    const property = properties[name];
    value[name] = buildValue(isRecord(property) ? property : {}, filling, { depth: depth + 1, name });
  }
  return value;
}

function stringFor(schema: Schema, filling: Filling, name: string, description: string | undefined): string {
  const hint = `${name} ${description ?? ''}`;
  // The hint is matched once per value: its length is work a shared definition repeats.
  filling.budget.spend(filling.field, 0, hint.length);
  const { hints } = filling;
  if (LOCATION_NAME.test(hint) && hints.place) return hints.place;
  if (PATH_NAME.test(name) && hints.path) return hints.path;
  if (COMMAND_NAME.test(name) && hints.command) return hints.command;
  if (TEXT_NAME.test(name) && hints.text) return hints.text;
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
      return `example_${name}`;
  }
}

/** What the prompt offers for strings, found once per schema rather than once per property (the prompt may be long). */
interface PromptHints {
  place: string | undefined;
  path: string | undefined;
  command: string | undefined;
  /** The prompt itself, for a query or a message. */
  text: string | undefined;
}

function hintsIn(prompt: string, workingDirectory: string | undefined): PromptHints {
  const text = prompt.trim();
  const path = pathIn(prompt, workingDirectory);
  // A file named without a command ("read notes.txt") is read by a shell tool with `cat`.
  const command = codeSpanIn(prompt) ?? (path === undefined ? undefined : `cat ${shellWord(path)}`);
  return { place: placeIn(prompt), path, command, text: text ? truncate(text, 200) : undefined };
}

/** The place a prompt names: "weather in New York" → "New York", "forecast for paris" → "paris". */
export function placeIn(prompt: string): string | undefined {
  const capitalized = /\b(?:in|for|at|near|of)\s+(?:the\s+)?(\p{Lu}[\p{L}'-]*(?:\s+\p{Lu}[\p{L}'-]*)*)/u.exec(prompt);
  if (capitalized?.[1]) return capitalized[1];
  const word = /\b(?:in|for|at|near)\s+(?:the\s+)?(\p{L}[\p{L}'-]*)/u.exec(prompt);
  return word?.[1];
}

/**
 * The file a prompt names: its first path ("read /tmp/work/notes.txt." → "/tmp/work/notes.txt",
 * `./notes.txt`, `~/notes.txt`), else its first file name ("read notes.txt", "open src/app.ts").
 * A relative one is resolved against the agent's working directory when it stated one: Claude
 * Code's `Read` and Gemini CLI's `read_file` want an absolute path.
 */
export function pathIn(prompt: string, workingDirectory?: string): string | undefined {
  const rooted = /(?:^|[\s`'"(])((?:~|\.{1,2})?\/[^\s`'"()]+)/.exec(prompt)?.[1];
  const path = rooted === undefined ? fileNameIn(prompt) : withoutTrailingPunctuation(rooted);
  if (path === undefined || workingDirectory === undefined || path.startsWith('/') || path.startsWith('~')) return path;
  return posix.resolve(workingDirectory, path);
}

/** The first word shaped like a relative file name (`notes.txt`, `src/app.ts`): a name, a dot, an extension of letters and digits. */
function fileNameIn(prompt: string): string | undefined {
  for (const match of prompt.matchAll(/[^\s`'"()]+/g)) {
    const word = withoutTrailingPunctuation(match[0]);
    if (isFileName(word)) return word;
  }
  return undefined;
}

function isFileName(word: string): boolean {
  if (!/^[\w./-]+$/.test(word) || word.startsWith('/') || word.includes('//')) return false;
  const name = word.slice(word.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  // Two characters before the extension at least: "e.g" and "i.e" are no files.
  return dot >= 2 && /^[A-Za-z][A-Za-z0-9]{0,7}$/.test(name.slice(dot + 1));
}

/** `path` as one word of a POSIX shell command: quoted when it holds anything but plain path characters. */
function shellWord(path: string): string {
  return /^[\w./~-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}

/** "notes.txt." → "notes.txt", scanning back from the end (a regex `[.,;:!?]+$` retries at every dot: quadratic). */
function withoutTrailingPunctuation(text: string): string {
  let end = text.length;
  while (end > 0 && '.,;:!?'.includes(text[end - 1]!)) end -= 1;
  return text.slice(0, end);
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

/** Resolves `#/$defs/…`, `#/definitions/…` (any `#/` pointer) against the root schema; `{}` when it names nothing. */
function resolveRef(ref: string, root: Schema): Schema {
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
