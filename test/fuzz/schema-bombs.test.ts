import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createAzureProvider } from '../../src/providers/azure/azure-provider.js';
import { createBedrockProvider } from '../../src/providers/bedrock/bedrock-provider.js';
import { createGeminiProvider } from '../../src/providers/gemini/gemini-provider.js';
import { createLocalProvider } from '../../src/providers/local/local-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { createVertexProvider } from '../../src/providers/vertex/vertex-provider.js';
import { SCHEMA_WORK, WorkBudget } from '../../src/work-budget.js';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { AZURE_DEPLOYMENTS, startFakeAzure } from '../fakes/fake-azure.js';
import { BEDROCK_CREDENTIALS, BEDROCK_REGION, type FakeBedrock, NOVA, startFakeBedrock } from '../fakes/fake-bedrock.js';
import { startFakeGemini } from '../fakes/fake-gemini.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { type FakeVertex, startFakeVertex, VERTEX_LOCATION } from '../fakes/fake-vertex.js';
import { serve, type Served } from '../helpers/serve.js';
import { hostileSchemas } from './arbitraries/hostile-schemas.js';
import { budget, share } from './budget.js';
import { CASE_DEADLINE_MS } from './settings.js';

type Json = Record<string, any>;

/**
 * Issue 22, item 2: generated hostile schemas (cycles, chains and graphs of `$ref`s, long texts a
 * shared definition repeats, deep and wide schemas, many tools at once) as tools and as response
 * formats, on every tool-carrying route (Chat, Responses, Messages, Gemini generateContent) to
 * every upstream kind. Each answer is a 200, or a 4xx that names the schema's field when the
 * gateway refused it as too complex; never a 5xx, never a hang. Every work budget spent in the
 * process stays within its limits, and the answer and what reached the upstream stay small.
 * 1 run in 50 of the fuzz budget (42 by default, 400 under `npm run fuzz`).
 */
const RUNS = share(budget.runs, 1, 50);

/** What an answer or an upstream's body may weigh: the text a budget lets through, plus the JSON around it. */
const MAX_BYTES = SCHEMA_WORK.chars + 8 * SCHEMA_WORK.nodes + 1024 * 1024;

type Route = 'chat' | 'responses' | 'messages' | 'gemini';
const ROUTES: readonly Route[] = ['chat', 'responses', 'messages', 'gemini'];
/** The public model of each upstream kind. */
const UPSTREAMS = { local: 'local-chat', openai: 'gpt', anthropic: 'claude', gemini: 'gem', vertex: 'vtx-gem', bedrock: 'nova', azure: 'az-gpt' } as const;
type Upstream = keyof typeof UPSTREAMS;

let served: Served;
let gateway: Gateway;
let fakes: { openai: FakeUpstream; anthropic: FakeUpstream; gemini: FakeUpstream; vertex: FakeVertex; bedrock: FakeBedrock; azure: FakeUpstream };
/** The most any one `WorkBudget` had spent when it was asked for more, by limit. */
const peak = { nodes: 0, chars: 0 };

beforeAll(async () => {
  const [openai, anthropic, gemini, vertex, bedrock, azure] = await Promise.all([
    startFakeOpenAI({ endpoints: ['chat'] }),
    startFakeAnthropic(),
    startFakeGemini(),
    startFakeVertex(),
    startFakeBedrock(),
    startFakeAzure(),
  ]);
  fakes = { openai, anthropic, gemini, vertex, bedrock, azure };
  gateway = createGateway({
    keys: [{ key: 'sk-test' }],
    providers: {
      local: createLocalProvider({ chunkDelayMs: 0 }),
      openai: createOpenAIProvider({ baseURL: `${openai.url}/v1`, apiKey: 'up-key', responses: false }),
      anthropic: createAnthropicProvider({ baseURL: anthropic.url, apiKey: 'up-key' }),
      gemini: createGeminiProvider({ baseURL: gemini.url, apiKey: 'up-key' }),
      vertex: createVertexProvider({ credentials: vertex.serviceAccount, location: VERTEX_LOCATION, baseURL: vertex.url }),
      bedrock: createBedrockProvider({ baseURL: bedrock.url, region: BEDROCK_REGION, ...BEDROCK_CREDENTIALS }),
      azure: createAzureProvider({ baseURL: `${azure.url}/openai`, apiKey: 'az-key', apiVersion: '2024-10-21' }),
    },
    models: [
      { id: UPSTREAMS.local, provider: 'local' },
      { id: UPSTREAMS.openai, provider: 'openai', upstreamModel: 'gpt-4.1' },
      { id: UPSTREAMS.anthropic, provider: 'anthropic', upstreamModel: 'claude-sonnet-4-5' },
      { id: UPSTREAMS.gemini, provider: 'gemini', upstreamModel: 'gemini-2.5-flash' },
      { id: UPSTREAMS.vertex, provider: 'vertex', upstreamModel: 'gemini-2.5-flash' },
      { id: UPSTREAMS.bedrock, provider: 'bedrock', upstreamModel: NOVA },
      { id: UPSTREAMS.azure, provider: 'azure', upstreamModel: AZURE_DEPLOYMENTS.chat },
    ],
    logger: false,
  });
  served = await serve(gateway);
  const spend = WorkBudget.prototype.spend;
  vi.spyOn(WorkBudget.prototype, 'spend').mockImplementation(function (this: WorkBudget, ...args: Parameters<typeof spend>) {
    // Work done before this spend: a budget refuses at the spend that crosses its limit.
    if (Number.isFinite(this.limits.chars)) {
      peak.nodes = Math.max(peak.nodes, this.nodes);
      peak.chars = Math.max(peak.chars, this.chars);
    }
    return spend.apply(this, args);
  });
});

afterAll(async () => {
  vi.restoreAllMocks();
  await served?.close();
  await Promise.all(Object.values(gateway?.options.providers ?? {}).map((provider) => provider.close?.()));
  await Promise.all(Object.values(fakes ?? {}).map((fake) => fake.close()));
});

/** Where each route's client writes a tool's schema and a response format's. */
const FIELDS: Record<Route, { tool: RegExp; format: string }> = {
  chat: { tool: /^tools\[\d+\]\.function\.parameters$/, format: 'response_format.json_schema.schema' },
  responses: { tool: /^tools\[\d+\]\.parameters$/, format: 'text.format.schema' },
  messages: { tool: /^tools\[\d+\]\.input_schema$/, format: 'output_config.format.schema' },
  gemini: { tool: /^tools\[0\]\.functionDeclarations\[\d+\]\.parametersJsonSchema$/, format: 'generationConfig.responseJsonSchema' },
};

function requestOf(route: Route, model: string, schemas: Json[], asFormat: boolean): { path: string; body: Json } {
  const prompt = 'Call the first tool, please.';
  switch (route) {
    case 'chat':
      return {
        path: '/v1/chat/completions',
        body: asFormat
          ? { model, messages: [{ role: 'user', content: prompt }], response_format: { type: 'json_schema', json_schema: { name: 'out', schema: schemas[0] } } }
          : {
              model,
              messages: [{ role: 'user', content: prompt }],
              tools: schemas.map((parameters, i) => ({ type: 'function', function: { name: `f${i}`, parameters } })),
              tool_choice: 'required',
            },
      };
    case 'responses':
      return {
        path: '/v1/responses',
        body: asFormat
          ? { model, input: prompt, text: { format: { type: 'json_schema', name: 'out', schema: schemas[0] } } }
          : { model, input: prompt, tools: schemas.map((parameters, i) => ({ type: 'function', name: `f${i}`, parameters })), tool_choice: 'required' },
      };
    case 'messages':
      return {
        path: '/v1/messages',
        body: asFormat
          ? { model, max_tokens: 100, messages: [{ role: 'user', content: prompt }], output_config: { format: { type: 'json_schema', schema: schemas[0] } } }
          : {
              model,
              max_tokens: 100,
              messages: [{ role: 'user', content: prompt }],
              tools: schemas.map((input_schema, i) => ({ name: `f${i}`, input_schema })),
              tool_choice: { type: 'any' },
            },
      };
    case 'gemini':
      return {
        path: `/v1beta/models/${model}:generateContent`,
        body: asFormat
          ? {
              contents: [{ role: 'user', parts: [{ text: prompt }] }],
              generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schemas[0] },
            }
          : {
              contents: [{ role: 'user', parts: [{ text: prompt }] }],
              tools: [{ functionDeclarations: schemas.map((parametersJsonSchema, i) => ({ name: `f${i}`, parametersJsonSchema })) }],
              toolConfig: { functionCallingConfig: { mode: 'ANY' } },
            },
      };
  }
}

/** The field an error names: `param` (OpenAI), the Gemini field violation, or quoted in Anthropic's message. */
function namedField(route: Route, body: Json): string | undefined {
  if (route === 'messages') return /'([^']+)'/.exec(body.error?.message ?? '')?.[1];
  if (route === 'gemini') return body.error?.details?.find((detail: Json) => detail.fieldViolations)?.fieldViolations[0]?.field;
  return body.error?.param ?? undefined;
}

function upstreamBytes(): number {
  let bytes = 0;
  for (const fake of Object.values(fakes)) for (const request of fake.requests) bytes += JSON.stringify(request.body ?? null).length;
  return bytes;
}

describe('hostile schemas on every tool-carrying route × every upstream kind', () => {
  it(`answers 200 or a 4xx naming the field, within the work budget (${RUNS} cases)`, { timeout: 600_000 }, async () => {
    const outcomes = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.constantFrom(...(Object.keys(UPSTREAMS) as Upstream[])),
        hostileSchemas,
        fc.boolean(),
        async (route, upstream, schemas, asFormat) => {
          for (const fake of Object.values(fakes)) fake.reset();
          peak.nodes = 0;
          peak.chars = 0;
          const { path, body } = requestOf(route, UPSTREAMS[upstream], schemas, asFormat);
          const response = await fetch(`${served.url}${path}`, {
            method: 'POST',
            headers: { authorization: 'Bearer sk-test', 'x-goog-api-key': 'sk-test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
            body: JSON.stringify(body),
            signal: AbortSignal.timeout(CASE_DEADLINE_MS * 2),
          });
          const text = await response.text();
          const outcome = `${response.status}${/schema_too_complex|too large once/.test(text) ? ' too complex' : ''}`;
          outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
          expect(response.status, text.slice(0, 500)).toBeLessThan(500);
          expect(response.status === 200 || (response.status >= 400 && response.status < 500), text.slice(0, 500)).toBe(true);
          expect(text.length).toBeLessThanOrEqual(MAX_BYTES);
          expect(upstreamBytes()).toBeLessThanOrEqual(2 * JSON.stringify(body).length + MAX_BYTES);
          expect(peak.nodes).toBeLessThanOrEqual(SCHEMA_WORK.nodes);
          expect(peak.chars).toBeLessThanOrEqual(SCHEMA_WORK.chars);
          const answer = JSON.parse(text) as Json;
          const error = route === 'gemini' ? answer.error?.status : (answer.error?.code ?? answer.error?.type);
          if (
            response.status === 400 &&
            (answer.error?.code === 'schema_too_complex' || /too large once its \$refs are expanded/.test(answer.error?.message ?? ''))
          ) {
            const field = namedField(route, answer);
            if (asFormat) expect(field).toBe(FIELDS[route].format);
            else expect(field).toMatch(FIELDS[route].tool);
          }
          expect(error === undefined || response.status !== 200).toBe(true);
        },
      ),
      { numRuns: RUNS, seed: budget.seed, endOnFailure: true },
    );
    console.log(`hostile schemas: ${[...outcomes].map(([outcome, count]) => `${outcome} ×${count}`).join(', ')}`);
    // Both outcomes were seen: the corpus reaches the budget and passes under it.
    expect(outcomes.get('200') ?? 0).toBeGreaterThan(0);
    expect(outcomes.get('400 too complex') ?? 0).toBeGreaterThan(0);
  });
});
