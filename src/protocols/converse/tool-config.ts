import { invalidRequest } from '../../errors.js';
import type { Json } from '../../json.js';
import type { IRRequest, IRToolChoice } from '../ir.js';
import { clientName } from '../upstream-params.js';

/**
 * `toolConfig`: the tools and the choice. Converse refuses `toolUse` / `toolResult` blocks
 * without a `toolConfig`, so a conversation that replays calls with no tools offered declares the
 * tools it used (their names, any input). Converse has no "none": `tool_choice: none` is sent as
 * no tools when the conversation has no tool blocks, and refused otherwise.
 */
export function encodeToolConfig(ir: IRRequest, used: Map<string, string>): Json | undefined {
  const tools = (ir.tools ?? []).map((tool) => ({
    toolSpec: {
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      inputSchema: { json: tool.parameters ?? { type: 'object', properties: {} } },
    },
  }));
  if (ir.toolChoice?.type === 'none') {
    if (used.size === 0) return undefined;
    const name = clientName(ir, 'toolChoice');
    throw invalidRequest(`'${name}' cannot say "none" to this model once the conversation has tool calls.`, name);
  }
  const declared = new Set(tools.map((tool) => tool.toolSpec.name));
  for (const name of new Set(used.values())) {
    if (!declared.has(name)) tools.push({ toolSpec: { name, inputSchema: { json: { type: 'object' } } } });
  }
  if (tools.length === 0) return undefined;
  const choice = encodeToolChoice(ir.toolChoice);
  return choice ? { tools, toolChoice: choice } : { tools };
}

function encodeToolChoice(choice: IRToolChoice | undefined): Json | undefined {
  switch (choice?.type) {
    case 'auto':
      return { auto: {} };
    case 'required':
      return { any: {} };
    case 'tool':
      return { tool: { name: choice.name } };
    default:
      return undefined;
  }
}
