import { Agent, Runner, tool, type AgentOutputType, type ModelSettings } from '@openai/agents';
import { OpenAIProvider } from '@openai/agents-openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { UpstreamKind } from '../upstreams/harness.js';
import {
  expectSecretLoop,
  OPENAI_MODEL,
  PASSTHROUGH,
  scriptSecretLoop,
  secretToken,
  SECRET_TOOL,
  startFrameworkRig,
  type FrameworkRig,
} from './framework-rig.js';

/**
 * The OpenAI Agents SDK runs a whole agent loop through the gateway: the model calls a tool the
 * test defines, the SDK runs it and sends the result back, and the model answers with what only
 * the tool knew. Both of the SDK's model APIs, against every upstream protocol, streamed and not.
 */

let rig: FrameworkRig;
beforeAll(async () => {
  rig = await startFrameworkRig();
});
afterAll(async () => rig?.close());
beforeEach(() => rig.reset());

const KINDS: readonly UpstreamKind[] = ['responses', 'chat', 'anthropic'];
const MODEL_APIS = [
  { name: 'Responses model (the default)', useResponses: true, protocol: 'responses' },
  { name: 'Chat Completions model', useResponses: false, protocol: 'chat' },
] as const;

/** Settings a production agent sets on top of the defaults the SDK picks for `gpt-5.5`. */
function productionSettings(useResponses: boolean): ModelSettings {
  return {
    maxTokens: 2048,
    parallelToolCalls: true,
    toolChoice: 'auto',
    store: false,
    promptCacheRetention: '24h',
    reasoning: { effort: 'low', summary: 'auto' },
    text: { verbosity: 'low' },
    // Responses only: the SDK's chat model does not send it.
    ...(useResponses ? { truncation: 'auto' as const } : {}),
  };
}

const SECRET_SCHEMA = { type: 'object' as const, properties: { secret: { type: 'string' } }, required: ['secret'], additionalProperties: false as const };
const SECRET_OUTPUT: AgentOutputType = { type: 'json_schema', name: 'secret_answer', strict: true, schema: SECRET_SCHEMA };

/** The structured-output schema of a request, however its protocol words it. */
function outputSchemaOf(kind: UpstreamKind, body: Record<string, any>): unknown {
  if (kind === 'chat') return body.response_format?.json_schema?.schema;
  if (kind === 'responses') return body.text?.format?.schema;
  return body.output_config?.format?.schema;
}

/**
 * Runs the agent through the gateway of that upstream, to completion (consuming every streamed
 * event when streaming), and returns its final output.
 */
async function runAgent(kind: UpstreamKind, useResponses: boolean, agent: Agent<any, any>, stream: boolean): Promise<unknown> {
  // The provider a user configures for an OpenAI-compatible base URL (what `setDefaultOpenAIClient` sets globally).
  const modelProvider = new OpenAIProvider({ apiKey: 'sk-test', baseURL: rig.gateway[kind] + '/v1', useResponses });
  const runner = new Runner({ modelProvider, tracingDisabled: true });
  const input = 'What is the secret stored under "vault"?';
  if (!stream) return (await runner.run(agent, input)).finalOutput;
  const result = await runner.run(agent, input, { stream: true });
  let events = 0;
  for await (const _event of result) events += 1;
  await result.completed;
  expect(result.error).toBeNull();
  expect(events).toBeGreaterThan(0);
  return result.finalOutput;
}

for (const api of MODEL_APIS) {
  describe(`Agents SDK, ${api.name}`, () => {
    for (const kind of KINDS) {
      const cell = kind === PASSTHROUGH[api.protocol] ? `${kind} upstream (passthrough)` : `${kind} upstream (translated)`;
      for (const stream of [false, true]) {
        const mode = stream ? 'streamed' : 'not streamed';

        it(`${cell}, ${mode}: a tool-calling agent with the SDK's defaults answers with the tool's result`, async () => {
          const token = secretToken();
          scriptSecretLoop(rig.upstream[kind], token);
          const agent = new Agent({
            name: 'Vault keeper',
            instructions: 'Answer with the secret; look it up with get_secret.',
            model: OPENAI_MODEL,
            tools: [tool({ ...SECRET_TOOL, execute: async () => token })],
          });

          const output = await runAgent(kind, api.useResponses, agent, stream);

          expect(output).toContain(token);
          expectSecretLoop(kind, rig.upstream[kind], token);
        });

        it(`${cell}, ${mode}: an agent with production settings and structured output`, async () => {
          const token = secretToken();
          scriptSecretLoop(rig.upstream[kind], token, ['{"secret": "', token, '"}']);
          const agent = new Agent({
            name: 'Vault keeper',
            instructions: 'Answer with the secret; look it up with get_secret.',
            model: OPENAI_MODEL,
            modelSettings: productionSettings(api.useResponses),
            outputType: SECRET_OUTPUT,
            tools: [tool({ ...SECRET_TOOL, execute: async () => token })],
          });

          const output = await runAgent(kind, api.useResponses, agent, stream);

          expect(output).toEqual({ secret: token });
          const [first] = expectSecretLoop(kind, rig.upstream[kind], token);
          expect(outputSchemaOf(kind, first.body), 'the output schema in the upstream protocol').toEqual(SECRET_SCHEMA);
        });
      }
    }
  });
}
