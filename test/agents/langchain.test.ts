import { ChatAnthropic } from '@langchain/anthropic';
import { HumanMessage, SystemMessage, ToolMessage, type AIMessage, type AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import type { Runnable } from '@langchain/core/runnables';
import { ChatOpenAI } from '@langchain/openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { UpstreamKind } from '../upstreams/harness.js';
import {
  CLAUDE_MODEL,
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
 * LangChain's chat models run a tool loop through the gateway: the model calls a tool the test
 * defines, the loop sends its result back, and the model answers with what only the tool knew.
 * Each model class is configured as a user would for a current model (reasoning, prompt caching,
 * zero data retention, thinking, betas), so whatever it sends for that must pass and be served.
 */

let rig: FrameworkRig;
beforeAll(async () => {
  rig = await startFrameworkRig();
});
afterAll(async () => rig?.close());
beforeEach(() => rig.reset());

const KINDS: readonly UpstreamKind[] = ['chat', 'responses', 'anthropic'];
const BETA = 'token-efficient-tools-2025-02-19';

/** A chat model with tools bound, as `bindTools` returns it. */
type ToolModel = Runnable<BaseMessage[], AIMessageChunk>;

interface ModelClass {
  name: string;
  protocol: 'chat' | 'responses' | 'messages';
  /** The model with the secret tool bound, talking to the gateway at `baseURL` (no `/v1`). */
  create(baseURL: string): ToolModel;
}

const OPENAI_TOOL = { type: 'function' as const, function: SECRET_TOOL };
const OPENAI_BINDING = { tool_choice: 'auto', parallel_tool_calls: false, strict: true } as const;

const MODEL_CLASSES: readonly ModelClass[] = [
  {
    name: 'ChatOpenAI (Chat Completions)',
    protocol: 'chat',
    create: (baseURL) =>
      new ChatOpenAI({
        model: OPENAI_MODEL,
        apiKey: 'sk-test',
        configuration: { baseURL: baseURL + '/v1' },
        maxRetries: 0,
        maxTokens: 1024,
        reasoning: { effort: 'low' },
        promptCacheKey: 'vault-agent',
      }).bindTools([OPENAI_TOOL], OPENAI_BINDING),
  },
  {
    name: 'ChatOpenAI (useResponsesApi)',
    protocol: 'responses',
    create: (baseURL) =>
      new ChatOpenAI({
        model: OPENAI_MODEL,
        apiKey: 'sk-test',
        configuration: { baseURL: baseURL + '/v1' },
        maxRetries: 0,
        useResponsesApi: true,
        // store: false with the encrypted reasoning included, replayed on the next turn.
        zdrEnabled: true,
        reasoning: { effort: 'low', summary: 'auto' },
        verbosity: 'low',
        promptCacheKey: 'vault-agent',
      }).bindTools([OPENAI_TOOL], OPENAI_BINDING),
  },
  {
    name: 'ChatAnthropic',
    protocol: 'messages',
    create: (baseURL) =>
      new ChatAnthropic({
        model: CLAUDE_MODEL,
        apiKey: 'sk-test',
        anthropicApiUrl: baseURL,
        maxRetries: 0,
        maxTokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        betas: [BETA],
        invocationKwargs: { metadata: { user_id: 'user-42' } },
      }).bindTools([OPENAI_TOOL], { tool_choice: 'auto' }),
  },
];

/** The system prompt as a cached block, as prompt-caching LangChain apps write it. */
const SYSTEM = new SystemMessage({
  content: [{ type: 'text', text: 'Answer with the secret; look it up with get_secret.', cache_control: { type: 'ephemeral' } }],
});

/** One model turn: `.invoke`, or `.stream` with the chunks concatenated as LangChain apps do. */
async function turn(model: ToolModel, messages: BaseMessage[], stream: boolean): Promise<AIMessage> {
  if (!stream) return model.invoke(messages);
  let message: AIMessageChunk | undefined;
  for await (const chunk of await model.stream(messages)) message = message ? message.concat(chunk) : chunk;
  expect(message, 'a streamed message').toBeDefined();
  return message!;
}

/** A manual tool loop: call the model, run the tools it asks for, until it answers. */
async function runToolLoop(model: ToolModel, token: string, stream: boolean): Promise<AIMessage> {
  const messages: BaseMessage[] = [SYSTEM, new HumanMessage('What is the secret stored under "vault"?')];
  for (let turns = 0; turns < 4; turns += 1) {
    const reply = await turn(model, messages, stream);
    messages.push(reply);
    if (!reply.tool_calls?.length) return reply;
    for (const call of reply.tool_calls) {
      expect(call.name).toBe(SECRET_TOOL.name);
      messages.push(new ToolMessage({ tool_call_id: call.id!, content: token }));
    }
  }
  throw new Error('the model never answered');
}

for (const modelClass of MODEL_CLASSES) {
  describe(`LangChain ${modelClass.name}`, () => {
    for (const kind of KINDS) {
      const cell = kind === PASSTHROUGH[modelClass.protocol] ? `${kind} upstream (passthrough)` : `${kind} upstream (translated)`;
      for (const stream of [false, true]) {
        it(`${cell}, ${stream ? '.stream' : '.invoke'}: a tool loop answers with the tool's result`, async () => {
          const token = secretToken();
          scriptSecretLoop(rig.upstream[kind], token);

          const answer = await runToolLoop(modelClass.create(rig.gateway[kind]), token, stream);

          expect(answer.text).toContain(token);
          const [first] = expectSecretLoop(kind, rig.upstream[kind], token);
          // Betas are Anthropic's: forwarded to Anthropic, never to an OpenAI upstream.
          if (modelClass.protocol === 'messages') expect(first.headers['anthropic-beta']).toBe(kind === 'anthropic' ? BETA : undefined);
        });
      }
    }
  });
}
