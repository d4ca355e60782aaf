import { invalidRequest } from '../../errors.js';
import type { Json } from '../../json.js';
import { expectRecord, expectString, optBoolean, optRecord, optString, withCache } from '../decode-helpers.js';
import type { IRTool, IRToolChoice } from '../ir.js';

/** A Messages request's tools: `tools`, `tool_choice`, and the tool changes its system messages make. */

/** What decoding the messages learns about the tool set. */
export interface ToolSet {
  /** Tools named by `tool_reference` blocks (tool search results): deferred ones are now loaded. */
  referencedTools: Set<string>;
  /** `tool_addition` / `tool_removal` blocks of system messages, in conversation order. */
  toolChanges: ToolChange[];
}

export type ToolChange = { kind: 'define'; tool: IRTool } | { kind: 'add'; name: string } | { kind: 'remove'; name: string };

/** `tool_addition` (a definition, or a reference to a `tools` entry) or `tool_removal` (a reference). */
export function decodeToolChange(block: Json, param: string): ToolChange {
  const tool = expectRecord(block.tool, `${param}.tool`);
  if (block.type === 'tool_addition' && tool.type === 'tool_definition') {
    return { kind: 'define', tool: decodeTool(expectRecord(tool.definition, `${param}.tool.definition`), `${param}.tool.definition`) };
  }
  if (tool.type !== 'tool_reference') {
    // MCP tool and toolset references name tools that only Anthropic's MCP client can run.
    throw invalidRequest(`Tool reference type '${String(tool.type)}' cannot be served by this model.`, `${param}.tool.type`, 'unsupported_parameter');
  }
  const name = expectString(tool, 'name', `${param}.tool.name`);
  return block.type === 'tool_addition' ? { kind: 'add', name } : { kind: 'remove', name };
}

/**
 * The tools the upstream gets: every custom tool but deferred ones (`defer_loading: true`), which
 * the model must not see until a tool search loads them (a `tool_reference` to them), then the
 * conversation's tool changes applied in order.
 */
export function decodeTools(raw: unknown[], context: ToolSet): IRTool[] {
  const declared = new Map<string, IRTool>();
  const active = new Map<string, IRTool>();
  raw.forEach((rawTool, i) => {
    const param = `tools[${i}]`;
    const tool = expectRecord(rawTool, param);
    const decoded = decodeTool(tool, param);
    declared.set(decoded.name, decoded);
    const deferred = optBoolean(tool, 'defer_loading', `${param}.defer_loading`) === true;
    if (!deferred || context.referencedTools.has(decoded.name)) active.set(decoded.name, decoded);
  });
  for (const change of context.toolChanges) {
    if (change.kind === 'define') active.set(change.tool.name, change.tool);
    else if (change.kind === 'remove') active.delete(change.name);
    else {
      const tool = declared.get(change.name);
      if (tool) active.set(change.name, tool);
    }
  }
  return [...active.values()];
}

/** Anthropic's own tools: they run on Anthropic's servers. */
const SERVER_TOOL = /^(web_search|web_fetch|code_execution|tool_search_tool|mcp_toolset|advisor)_/;

/**
 * A custom tool → IR. Anthropic-defined tools (`type` set) cannot be translated: server tools run
 * on Anthropic's side, and client tools such as `bash_*`, `text_editor_*` or `computer_*` have a
 * schema built into Claude that no other model knows. `eager_input_streaming`, `input_examples`
 * and `allowed_callers` tune Claude's handling of the tool and are dropped.
 */
function decodeTool(tool: Json, param: string): IRTool {
  const type = tool.type;
  if (type !== undefined && type !== null && type !== 'custom') {
    const name = String(type);
    const why = SERVER_TOOL.test(name)
      ? `runs on Anthropic's servers, which this model's upstream cannot do`
      : `is an Anthropic-defined tool whose schema only Claude knows`;
    throw invalidRequest(
      `Tool type '${name}' ${why}; give it as a custom tool (a name and an input_schema) instead.`,
      `${param}.type`,
      'unsupported_parameter',
    );
  }
  const out: IRTool = { name: expectString(tool, 'name', `${param}.name`) };
  const description = optString(tool, 'description', `${param}.description`);
  if (description !== undefined) out.description = description;
  const schema = optRecord(tool, 'input_schema', `${param}.input_schema`);
  if (schema) {
    out.parameters = schema;
    out.schemaField = `${param}.input_schema`;
  }
  const strict = optBoolean(tool, 'strict', `${param}.strict`);
  if (strict !== undefined) out.strict = strict;
  return withCache(out, tool, param);
}

export function decodeToolChoice(raw: unknown): { choice: IRToolChoice; parallel?: boolean } | undefined {
  if (raw === undefined || raw === null) return undefined;
  const choice = expectRecord(raw, 'tool_choice');
  const disable = optBoolean(choice, 'disable_parallel_tool_use', 'tool_choice.disable_parallel_tool_use');
  const parallel = disable === undefined ? {} : { parallel: !disable };
  switch (choice.type) {
    case 'auto':
      return { choice: { type: 'auto', ...parallel }, ...parallel };
    case 'any':
      return { choice: { type: 'required', ...parallel }, ...parallel };
    case 'tool':
      return { choice: { type: 'tool', name: expectString(choice, 'name', 'tool_choice.name'), ...parallel }, ...parallel };
    case 'none':
      return { choice: { type: 'none' } };
    default:
      throw invalidRequest(`Invalid 'tool_choice.type' '${String(choice.type)}'.`, 'tool_choice.type');
  }
}
