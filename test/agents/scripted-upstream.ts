import { expect } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createLocalProvider } from '../../src/providers/local/local-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { valueFromSchema } from '../../src/providers/local/tool-arguments.js';
import { createAzureProvider } from '../../src/providers/azure/azure-provider.js';
import { createBedrockProvider } from '../../src/providers/bedrock/bedrock-provider.js';
import { createGeminiProvider } from '../../src/providers/gemini/gemini-provider.js';
import type { Provider } from '../../src/providers/provider.js';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { AZURE_DEPLOYMENTS, startFakeAzure } from '../fakes/fake-azure.js';
import { CLAUDE, NOVA, startFakeBedrock } from '../fakes/fake-bedrock.js';
import { startFakeGemini } from '../fakes/fake-gemini.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream, RecordedRequest, Reply } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';
import { API_VERSION } from '../upstreams/azure-harness.js';
import { SIGNED_BY } from '../upstreams/bedrock-harness.js';
import type { UpstreamKind } from '../upstreams/harness.js';

type Json = Record<string, any>;

/**
 * Where a cell's gateway sends the model: a strict fake of one vendor's API and wire, or the
 * built-in local provider. The clouds of issue 16: Claude on Bedrock's `invoke` (Anthropic's
 * body, passed through), Nova on Bedrock's Converse (translated), the Azure v1 API's Responses
 * (passed through, the deployment as model), an Azure deployment URL with a dated api-version
 * (chat only: Responses translated). Gemini 3 on Google's Gemini API (`generateContent`, passed
 * through to a Gemini client, translated for the others).
 */
export type UpstreamCell = UpstreamKind | 'bedrock-invoke' | 'bedrock-converse' | 'azure-v1' | 'azure-dated' | 'gemini';
export type Cell = UpstreamCell | 'local';

/** The body a request to the upstream carries: one of the three OpenAI/Anthropic wires, Bedrock's Converse, or Gemini's `contents`. */
type Wire = UpstreamKind | 'converse' | 'gemini';
const WIRE: Record<UpstreamCell, Wire> = {
  chat: 'chat',
  responses: 'responses',
  anthropic: 'anthropic',
  'bedrock-invoke': 'anthropic',
  'bedrock-converse': 'converse',
  'azure-v1': 'responses',
  'azure-dated': 'chat',
  gemini: 'gemini',
};
const UPSTREAM_CELLS = Object.keys(WIRE) as UpstreamCell[];

/** The key the CLIs present to the gateway. */
export const GATEWAY_KEY = 'sk-agent-test';

const TOKEN = /tok_[0-9a-f]{16}/;
/** The file the prompt names: an absolute path ending in `secret.txt`. */
const SECRET_PATH = /\/[\w./-]*\/secret\.txt/;

/**
 * The MCP tool the model calls when the prompt names it: the gateway's `vault__reveal`, as each
 * client names it (`mcp__gw__vault__reveal`, `mcp_gw_vault__reveal`).
 */
const MCP_TOOL = 'vault__reveal';

/**
 * How the model reads a file with each client's own tool: Claude Code's `Read` takes an absolute
 * `file_path`; Codex's `exec_command` runs a shell command; Gemini CLI's `read_file` takes a
 * `file_path` (absolute, or relative to its workspace).
 */
const FILE_READERS: { name: string; args: (path: string) => Json }[] = [
  { name: 'Read', args: (path) => ({ file_path: path }) },
  { name: 'exec_command', args: (path) => ({ cmd: `cat ${path}` }) },
  { name: 'read_file', args: (path) => ({ file_path: path }) },
];

/**
 * The scripted model, deciding from the request alone (so a client's retries and side requests
 * get the same answer as the first try):
 * - the request asks for JSON of a schema (Gemini CLI's routing classifier and next-speaker
 *   check) → a value of that schema, as the local model makes one;
 * - the request carries tool results → an answer quoting the token found in them (or saying that
 *   none was, which the test then shows);
 * - the request names the vault's MCP tool and offers it → a call of it;
 * - the request offers the client's file-reading tool and names the secret file → a call of that
 *   tool on the file, after a short thought (a signed thinking block, an encrypted reasoning
 *   item), which the client must send back;
 * - anything else (title generation, a quota probe) → a short text.
 */
export function scriptedReply(kind: Wire, body: Json): Reply {
  const schema = requestedSchema(kind, body);
  if (schema !== undefined) return { text: [JSON.stringify(valueFromSchema(schema, '', 'schema'))] };
  const outputs = toolOutputs(kind, body);
  if (outputs.length > 0) {
    const token = outputs.join('\n').match(TOKEN)?.[0];
    if (token) return { text: ['The token in the file is ', token, '.'] };
    return { text: [`The tool result held no token: ${JSON.stringify(outputs).slice(0, 300)}`] };
  }
  const conversation = JSON.stringify(body.messages ?? body.input ?? body.contents ?? '');
  const mcpTool = conversation.includes(MCP_TOOL) ? toolNames(kind, body).find((name) => name.endsWith(MCP_TOOL)) : undefined;
  if (mcpTool) {
    const call = { name: mcpTool, args: ['{"purpose":', '"the user asked"}'] };
    return thinks(kind, body) ? { reasoning: ['The user wants the token; ', 'I will ask the vault.'], toolCalls: [call] } : { toolCalls: [call] };
  }
  const path = conversation.match(SECRET_PATH)?.[0];
  const reader = FILE_READERS.find((tool) => toolNames(kind, body).includes(tool.name));
  if (path && reader) {
    const args = JSON.stringify(reader.args(path));
    const call = { name: reader.name, args: [args.slice(0, 10), args.slice(10)] };
    return thinks(kind, body) ? { reasoning: ['The user wants the token; ', 'I will read the file.'], toolCalls: [call] } : { toolCalls: [call] };
  }
  return { text: ['OK.'] };
}

/**
 * The JSON Schema a request wants its answer to follow, however its protocol words it: Chat's
 * `response_format`, Responses' `text.format`, Anthropic's `output_config.format`, Converse's
 * `outputConfig.textFormat` (the schema as JSON text), Gemini's `responseJsonSchema` or
 * `responseSchema` (whose types are upper case: `OBJECT`).
 */
function requestedSchema(kind: Wire, body: Json): Json | undefined {
  const format = kind === 'chat' ? body.response_format : kind === 'responses' ? body.text?.format : body.output_config?.format;
  if (kind === 'converse') {
    const text = body.outputConfig?.textFormat?.structure?.jsonSchema?.schema;
    return typeof text === 'string' ? JSON.parse(text) : undefined;
  }
  if (kind === 'gemini') {
    const config = body.generationConfig ?? {};
    if (config.responseMimeType !== 'application/json') return undefined;
    const schema = config.responseJsonSchema ?? config.responseSchema ?? {};
    return JSON.parse(JSON.stringify(schema), (key, value) => (key === 'type' && typeof value === 'string' ? value.toLowerCase() : value));
  }
  if (format?.type !== 'json_schema') return undefined;
  return kind === 'chat' ? format.json_schema?.schema : format.schema;
}

/**
 * Whether the real API would return reasoning the client must hand back: Anthropic with thinking
 * on (a signed thinking block), Responses when encrypted reasoning is asked for (the only kind a
 * `store: false` client can send back), Gemini when thoughts are asked for (a Gemini 3 model signs
 * its function calls either way). Chat Completions returns none.
 */
function thinks(kind: Wire, body: Json): boolean {
  if (kind === 'anthropic') return body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive';
  if (kind === 'responses') return Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content');
  if (kind === 'gemini') return body.generationConfig?.thinkingConfig?.includeThoughts === true;
  return false; // Chat, and Converse to a model without reasoning (Nova)
}

/** Names of the tools a request declares, however its protocol words them. */
export function toolNames(kind: Wire, body: Json): string[] {
  if (kind === 'converse') {
    const specs: Json[] = Array.isArray(body.toolConfig?.tools) ? body.toolConfig.tools : [];
    return specs.map((tool) => tool.toolSpec?.name).filter((name): name is string => typeof name === 'string');
  }
  if (kind === 'gemini') {
    const tools: Json[] = Array.isArray(body.tools) ? body.tools : [];
    return tools.flatMap((tool) => (Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations : [])).map((declaration: Json) => declaration.name);
  }
  const tools: Json[] = Array.isArray(body.tools) ? body.tools : [];
  return tools.map((tool) => (kind === 'chat' ? tool.function?.name : tool.name)).filter((name): name is string => typeof name === 'string');
}

/** The text of every tool result a request carries back to the model. */
export function toolOutputs(kind: Wire, body: Json): string[] {
  const text = (content: unknown): string =>
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((part: Json) => (typeof part?.text === 'string' ? part.text : '')).join('')
        : '';
  const outputs: string[] = [];
  if (kind === 'chat') {
    for (const message of body.messages ?? []) if (message?.role === 'tool') outputs.push(text(message.content));
  } else if (kind === 'responses') {
    for (const item of Array.isArray(body.input) ? body.input : []) {
      if (item?.type === 'function_call_output' || item?.type === 'custom_tool_call_output') outputs.push(text(item.output));
    }
  } else if (kind === 'gemini') {
    // A function response's `response` is any object; Gemini CLI puts a tool's text in `output`.
    for (const content of Array.isArray(body.contents) ? body.contents : []) {
      if (!Array.isArray(content?.parts)) continue;
      for (const part of content.parts) {
        const response = part?.functionResponse?.response;
        if (response !== undefined) outputs.push(typeof response?.output === 'string' ? response.output : JSON.stringify(response));
      }
    }
  } else if (kind === 'converse') {
    for (const message of body.messages ?? []) {
      if (!Array.isArray(message?.content)) continue;
      for (const block of message.content) if (block?.toolResult) outputs.push(text(block.toolResult.content));
    }
  } else {
    for (const message of body.messages ?? []) {
      if (!Array.isArray(message?.content)) continue;
      for (const block of message.content) if (block?.type === 'tool_result') outputs.push(text(block.content));
    }
  }
  return outputs;
}

export interface AgentRig {
  /** Base URL (no `/v1`) of the gateway for each cell; every gateway routes the public model to its cell's upstream. */
  gateway: Record<Cell, string>;
  upstream: Record<UpstreamCell, FakeUpstream>;
  close(): Promise<void>;
}

/** The upstream model (or Azure deployment) each fake knows, behind the public model name the CLI asks for. */
const UPSTREAM_MODEL: Record<Cell, string> = {
  chat: 'gpt-4.1',
  responses: 'gpt-5',
  anthropic: 'claude-sonnet-4-5',
  'bedrock-invoke': CLAUDE,
  'bedrock-converse': NOVA,
  'azure-v1': AZURE_DEPLOYMENTS.chat,
  'azure-dated': AZURE_DEPLOYMENTS.chat,
  gemini: 'gemini-3-pro-preview',
  local: 'local-chat',
};

/**
 * Eight strict scripted fakes (Chat-only OpenAI, Responses-only OpenAI, Anthropic, Bedrock twice
 * — SigV4 and the binary event stream —, Azure twice, Gemini) and one gateway per cell, each serving
 * `publicModels` from its upstream: the CLI keeps its model name, and only its base URL says
 * which cell it runs in.
 */
export async function startAgentRig(publicModels: readonly string[]): Promise<AgentRig> {
  const [chat, responses, anthropic, bedrockInvoke, bedrockConverse, azureV1, azureDated, gemini] = await Promise.all([
    startFakeOpenAI({ endpoints: ['chat'] }),
    startFakeOpenAI({ endpoints: ['responses'] }),
    startFakeAnthropic(),
    startFakeBedrock(),
    startFakeBedrock(),
    startFakeAzure(),
    startFakeAzure(),
    startFakeGemini(),
  ]);
  const upstream: Record<UpstreamCell, FakeUpstream> = {
    chat,
    responses,
    anthropic,
    'bedrock-invoke': bedrockInvoke,
    'bedrock-converse': bedrockConverse,
    'azure-v1': azureV1,
    'azure-dated': azureDated,
    gemini,
  };
  for (const cell of UPSTREAM_CELLS) {
    upstream[cell].answerWith((request: RecordedRequest) => scriptedReply(WIRE[cell], request.body));
  }
  const providers: Record<Cell, Provider> = {
    chat: createOpenAIProvider({ baseURL: chat.url + '/v1', apiKey: 'up-key', responses: false }),
    responses: createOpenAIProvider({ baseURL: responses.url + '/v1', apiKey: 'up-key', responses: true, chat: false }),
    anthropic: createAnthropicProvider({ baseURL: anthropic.url, apiKey: 'up-key' }),
    'bedrock-invoke': createBedrockProvider({ baseURL: bedrockInvoke.url, ...SIGNED_BY }),
    'bedrock-converse': createBedrockProvider({ baseURL: bedrockConverse.url, ...SIGNED_BY }),
    'azure-v1': createAzureProvider({ baseURL: `${azureV1.url}/openai/v1`, apiKey: 'az-key' }),
    'azure-dated': createAzureProvider({ baseURL: `${azureDated.url}/openai`, apiKey: 'az-key', apiVersion: API_VERSION }),
    gemini: createGeminiProvider({ baseURL: gemini.url, apiKey: 'up-key' }),
    local: createLocalProvider({ chunkDelayMs: 0 }),
  };
  const served = {} as Record<Cell, Served>;
  for (const cell of [...UPSTREAM_CELLS, 'local'] as const) {
    const gateway = createGateway({
      keys: [{ key: GATEWAY_KEY }],
      providers: { [cell]: providers[cell] },
      models: publicModels.map((id) => ({ id, provider: cell, upstreamModel: UPSTREAM_MODEL[cell] })),
      logger: false,
    });
    served[cell] = await serve(gateway);
  }
  return {
    gateway: Object.fromEntries(Object.entries(served).map(([cell, server]) => [cell, server.url])) as Record<Cell, string>,
    upstream,
    async close() {
      await Promise.all(Object.values(served).map((server) => server.close()));
      await Promise.all(Object.values(upstream).map((fake) => fake.close()));
      await Promise.all(Object.values(providers).map((provider) => provider.close?.()));
    },
  };
}

/** The upstream's requests as one line each, for an assertion message: path, rejection, tool results. */
export function describeUpstream(cell: UpstreamCell, fake: FakeUpstream): string {
  if (fake.requests.length === 0) return 'the upstream received no request';
  return fake.requests
    .map((request, i) => {
      const verdict = request.rejected ? `REJECTED ${request.rejected.status} ${request.rejected.message}` : 'accepted';
      const outputs = request.body ? toolOutputs(WIRE[cell], request.body) : [];
      return `#${i + 1} ${request.method} ${request.path} model=${request.body?.model} ${verdict}; tool results: ${JSON.stringify(outputs).slice(0, 200)}`;
    })
    .join('\n');
}

/**
 * Where each cell's generations must arrive: the path also says which wire the gateway chose
 * (Claude passed through on Bedrock's `invoke`, Nova translated to Converse, Responses passed
 * through on Azure's v1 API, translated to chat on a dated deployment URL).
 */
const GENERATION_PATH: Record<UpstreamCell, RegExp> = {
  chat: /^\/v1\/chat\/completions$/,
  responses: /^\/v1\/responses$/,
  anthropic: /^\/v1\/messages$/,
  'bedrock-invoke': /^\/model\/[^/]+\/invoke-with-response-stream$/,
  'bedrock-converse': /^\/model\/[^/]+\/converse-stream$/,
  'azure-v1': /^\/openai\/v1\/responses$/,
  'azure-dated': /^\/openai\/deployments\/[^/]+\/chat\/completions$/,
  gemini: /^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent)$/,
};

/**
 * The strict upstream took part in the whole loop: it rejected nothing (it rejects what the real
 * API would) and received the token in a tool result, so the client's tool really ran.
 */
export function expectUpstreamSawToolResult(cell: UpstreamCell, fake: FakeUpstream, token: string): void {
  const kind = WIRE[cell];
  const upstream = describeUpstream(cell, fake);
  expect(
    fake.requests.filter((request) => request.rejected),
    `requests the upstream rejected\n${upstream}`,
  ).toEqual([]);
  // In a generation request: a token count or a compaction carrying it would not prove the model got it.
  const generations = fake.accepted().filter((request) => GENERATION_PATH[cell].test(request.path));
  const carried = generations.some((request) => toolOutputs(kind, request.body).some((output) => output.includes(token)));
  expect(carried, `the upstream never received the file's token in a tool result\n${upstream}`).toBe(true);
  if (kind === 'anthropic') for (const request of generations) expectThinkingBeforeToolUse(request.body);
}

/**
 * A rule of the Messages API: with thinking on, the assistant turn whose tool calls the last user
 * turn answers must start with its signed thinking block (the real API answers 400 "a final
 * `assistant` message must start with a thinking block" otherwise). The fake checks it for
 * `enabled` thinking only; Claude Code sends `adaptive`, with system messages between the turns.
 */
function expectThinkingBeforeToolUse(body: Json): void {
  if (body.thinking?.type !== 'enabled' && body.thinking?.type !== 'adaptive') return;
  const turns: Json[] = body.messages.filter((message: Json) => message.role !== 'system');
  const blocks = (message: Json | undefined): Json[] => (Array.isArray(message?.content) ? message!.content : []);
  if (!blocks(turns.at(-1)).some((block) => block.type === 'tool_result')) return;
  const first = blocks(turns.at(-2))[0];
  expect(first?.type, 'with thinking on, the tool-calling assistant turn must start with its thinking block').toMatch(/^(thinking|redacted_thinking)$/);
}
