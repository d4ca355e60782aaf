import { createHash } from 'node:crypto';
import { invalidRequest } from '../../errors.js';
import { isRecord, type Json } from '../../json.js';
import { expectArray, expectRecord, expectString, optBoolean, optRecord, optString } from '../decode-helpers.js';
import type { IRTool } from '../ir.js';

/**
 * The tools of a Responses request as an upstream without Responses' tool kinds sees them.
 *
 * Chat and Messages only know flat function tools, so:
 * - `namespace` tools become their functions, named `namespace__name`;
 * - `custom` (freeform, grammar) tools become a function with one string argument, `input`;
 * - `tool_search` run by the client becomes a function `tool_search` with the client's schema,
 *   and the tools its earlier outputs (`tool_search_output` items) loaded join the request;
 * - `local_shell` becomes a function taking the command as an argv array;
 * - hosted tools (`web_search`, …) are dropped when merely offered: no such upstream can run them.
 *
 * The encoders build the same catalogue from the request to map a call back to the item the
 * client expects (`function_call` with its `namespace`, `custom_tool_call`, `tool_search_call`,
 * `local_shell_call`). Flat names are at most 64 characters (Chat's limit) and never collide:
 * a joined name that is too long or taken gets a hash of the pair instead of its tail.
 */

export type ClientToolKind = 'function' | 'custom' | 'tool_search' | 'local_shell';

export interface ClientTool {
  kind: ClientToolKind;
  /** The name the client knows (within its namespace). */
  name: string;
  namespace?: string;
}

/** The argument a custom tool's raw text travels in. */
export const CUSTOM_INPUT = 'input';
export const TOOL_SEARCH = 'tool_search';
export const LOCAL_SHELL = 'local_shell';

/** Tool types the provider runs itself; an upstream reached through the IR cannot. */
const HOSTED = new Set([
  'web_search',
  'web_search_preview',
  'web_search_preview_2025_03_11',
  'web_search_2025_08_26',
  'file_search',
  'code_interpreter',
  'image_generation',
  'computer_use_preview',
  'computer_use',
  'mcp',
  'shell',
  'apply_patch',
]);

const MAX_NAME = 64;

export function isHostedTool(type: unknown): boolean {
  return typeof type === 'string' && HOSTED.has(type);
}

export class ClientTools {
  /** The flat function tools to offer upstream, in the client's order. */
  readonly irTools: IRTool[] = [];
  /** Hosted tool types the client offered and the upstream cannot run (dropped). */
  readonly dropped: string[] = [];
  private readonly byFlat = new Map<string, ClientTool>();
  private readonly flatByKey = new Map<string, string>();

  /** The catalogue of a request body (memoised: the decoder and the encoders share it). */
  static of(body: Json): ClientTools {
    let tools = cache.get(body);
    if (!tools) {
      tools = new ClientTools(body);
      cache.set(body, tools);
    }
    return tools;
  }

  private constructor(body: Json) {
    const tools = body.tools === undefined || body.tools === null ? [] : expectArray(body.tools, 'tools');
    const loaded = loadedTools(body.input);
    const all = [...tools.map((tool, i) => ({ tool, param: `tools[${i}]` })), ...loaded];
    // The client's own names first, so a namespaced or built-in tool never takes one of them.
    for (const { tool, param } of all) this.reserveTopLevel(tool, param);
    for (const { tool, param } of all) this.decode(tool, param);
  }

  /** The flat name of a function or custom tool (or of a call to one this request no longer offers). */
  flatName(name: string, namespace?: string): string {
    const known = this.flatByKey.get(key({ kind: 'function', name, ...ns(namespace) }));
    if (known !== undefined) return known;
    if (namespace === undefined) return name;
    return this.assign({ kind: 'function', name, namespace });
  }

  /** The flat name of the client's tool search or local shell tool. */
  builtinName(kind: 'tool_search' | 'local_shell'): string {
    const name = kind === 'tool_search' ? TOOL_SEARCH : LOCAL_SHELL;
    return this.flatByKey.get(key({ kind, name })) ?? name;
  }

  /** What the client calls a flat name; undefined for a name no tool of the request has. */
  lookup(flat: string): ClientTool | undefined {
    return this.byFlat.get(flat);
  }

  private reserveTopLevel(raw: unknown, param: string): void {
    const tool = expectRecord(raw, param);
    if (tool.type !== 'function' && tool.type !== 'custom') return;
    const name = expectString(tool, 'name', `${param}.name`);
    if (!this.byFlat.has(name)) this.register({ kind: tool.type, name }, name);
  }

  private decode(raw: unknown, param: string, namespace?: string): void {
    const tool = expectRecord(raw, param);
    const type = tool.type;
    if (type === 'namespace' && namespace === undefined) {
      const name = expectString(tool, 'name', `${param}.name`);
      expectArray(tool.tools, `${param}.tools`).forEach((inner, j) => {
        this.decode(inner, `${param}.tools[${j}]`, name);
      });
      return;
    }
    if (isHostedTool(type) && namespace === undefined) {
      if (!this.dropped.includes(type as string)) this.dropped.push(type as string);
      return;
    }
    switch (type) {
      case 'function': {
        const name = expectString(tool, 'name', `${param}.name`);
        const out: IRTool = { name: this.flatOf({ kind: 'function', name, ...ns(namespace) }) };
        const description = optString(tool, 'description', `${param}.description`);
        if (description !== undefined) out.description = description;
        const parameters = optRecord(tool, 'parameters', `${param}.parameters`);
        if (parameters) {
          out.parameters = parameters;
          out.schemaField = `${param}.parameters`;
        }
        const strict = optBoolean(tool, 'strict', `${param}.strict`);
        if (strict !== undefined) out.strict = strict;
        this.add(out);
        return;
      }
      case 'custom': {
        const name = expectString(tool, 'name', `${param}.name`);
        const description = joinDescription(
          optString(tool, 'description', `${param}.description`),
          formatDescription(optRecord(tool, 'format', `${param}.format`), `${param}.format`),
        );
        this.add({
          name: this.flatOf({ kind: 'custom', name, ...ns(namespace) }),
          description,
          parameters: {
            type: 'object',
            properties: { [CUSTOM_INPUT]: { type: 'string', description: 'The raw input text of the tool (not JSON).' } },
            required: [CUSTOM_INPUT],
            additionalProperties: false,
          },
        });
        return;
      }
      case 'tool_search':
        if (namespace === undefined) this.decodeToolSearch(tool, param);
        else throw invalidRequest(`A namespace holds only 'function' and 'custom' tools.`, `${param}.type`);
        return;
      case 'local_shell':
        if (namespace !== undefined) throw invalidRequest(`A namespace holds only 'function' and 'custom' tools.`, `${param}.type`);
        this.add({
          name: this.flatOf({ kind: 'local_shell', name: LOCAL_SHELL }),
          description: 'Runs a command on the local machine and returns its output.',
          parameters: LOCAL_SHELL_SCHEMA,
        });
        return;
      default:
        throw invalidRequest(
          `Tool type '${String(type)}' is not supported by this gateway; only 'function', 'custom', 'namespace', 'tool_search' and 'local_shell' tools are, and hosted tools are dropped.`,
          `${param}.type`,
        );
    }
  }

  /**
   * Client-executed search is a function whose calls go back as `tool_search_call`. A search the
   * provider runs over deferred tools cannot run here; those tools are offered directly instead
   * (`defer_loading` only hides them until a search), so the search tool is dropped.
   */
  private decodeToolSearch(tool: Json, param: string): void {
    const execution = optString(tool, 'execution', `${param}.execution`) ?? 'server';
    if (execution !== 'client') {
      if (!this.dropped.includes(TOOL_SEARCH)) this.dropped.push(TOOL_SEARCH);
      return;
    }
    const description = optString(tool, 'description', `${param}.description`);
    this.add({
      name: this.flatOf({ kind: 'tool_search', name: TOOL_SEARCH }),
      description,
      parameters: optRecord(tool, 'parameters', `${param}.parameters`) ?? { type: 'object', properties: {} },
      schemaField: `${param}.parameters`,
    });
  }

  /** A tool offered twice (a later search loading it again) is offered once. */
  private add(tool: IRTool): void {
    if (!this.irTools.some((existing) => existing.name === tool.name)) this.irTools.push(tool);
  }

  private flatOf(tool: ClientTool): string {
    return this.flatByKey.get(key(tool)) ?? this.assign(tool);
  }

  private assign(tool: ClientTool): string {
    const joined = tool.namespace === undefined ? tool.name : `${tool.namespace}__${tool.name}`;
    const flat = joined.length <= MAX_NAME && !this.byFlat.has(joined) ? joined : hashedName(joined, tool);
    this.register(tool, flat);
    return flat;
  }

  private register(tool: ClientTool, flat: string): void {
    this.byFlat.set(flat, tool);
    this.flatByKey.set(key(tool), flat);
  }
}

const cache = new WeakMap<Json, ClientTools>();

/** Tools a client-side search loaded earlier (`tool_search_output.tools`), with their param paths. */
function loadedTools(input: unknown): { tool: unknown; param: string }[] {
  if (!Array.isArray(input)) return [];
  const out: { tool: unknown; param: string }[] = [];
  input.forEach((item, i) => {
    if (!isRecord(item) || item.type !== 'tool_search_output' || !Array.isArray(item.tools)) return;
    item.tools.forEach((tool, j) => {
      out.push({ tool, param: `input[${i}].tools[${j}]` });
    });
  });
  return out;
}

/** Functions and custom tools share one name space; a tool search or local shell has its own. */
function key(tool: ClientTool): string {
  if (tool.kind === 'tool_search' || tool.kind === 'local_shell') return `\u0001${tool.kind}`;
  return tool.namespace === undefined ? tool.name : `${tool.namespace}\u0000${tool.name}`;
}

function ns(namespace: string | undefined): { namespace?: string } {
  return namespace === undefined ? {} : { namespace };
}

/** The joined name cut to fit, plus a hash of the pair: stable across turns, distinct per pair. */
function hashedName(joined: string, tool: ClientTool): string {
  const hash = createHash('sha256').update(key(tool)).digest('hex').slice(0, 10);
  return `${joined.slice(0, MAX_NAME - hash.length - 2)}__${hash}`;
}

function joinDescription(...parts: (string | undefined)[]): string {
  const present = parts.filter((part): part is string => part !== undefined && part !== '');
  return present.join('\n\n');
}

/** A custom tool's `format`, told to the model since the upstream cannot enforce it. */
function formatDescription(format: Json | undefined, param: string): string {
  const plain = `Call it with the raw text in the \`${CUSTOM_INPUT}\` argument, exactly as the tool reads it (not JSON-encoded content).`;
  if (!format || format.type === 'text') return plain;
  if (format.type !== 'grammar') throw invalidRequest(`Unsupported custom tool format type '${String(format.type)}'.`, `${param}.type`);
  const syntax = expectString(format, 'syntax', `${param}.syntax`);
  const definition = expectString(format, 'definition', `${param}.definition`);
  const what = syntax === 'regex' ? 'match this regular expression' : `follow this ${syntax} grammar`;
  return `${plain} The text must ${what}:\n\n${definition}`;
}

const LOCAL_SHELL_SCHEMA = {
  type: 'object',
  properties: {
    command: { type: 'array', items: { type: 'string' }, description: 'The command and its arguments, e.g. ["bash", "-lc", "ls"].' },
    workdir: { type: 'string', description: 'The working directory.' },
    timeout_ms: { type: 'integer', description: 'Time limit in milliseconds.' },
  },
  required: ['command'],
  additionalProperties: false,
};
