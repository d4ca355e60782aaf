import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import type { Provider } from '../../src/providers/provider.js';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream, RecordedRequest } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';
import { toolExchange, type UpstreamKind } from '../upstreams/harness.js';

type Json = Record<string, any>;

/**
 * The model names the frameworks are given. They are real names on purpose: the Agents SDK and
 * LangChain pick their request fields by model name (reasoning settings for `gpt-5*`), so a made-up
 * name would hide what they send for the models users actually route.
 */
export const OPENAI_MODEL = 'gpt-5.5';
export const CLAUDE_MODEL = 'claude-sonnet-4-5';

/** The upstream protocol a framework's own protocol reaches without translation. */
export const PASSTHROUGH: Record<'chat' | 'responses' | 'messages', UpstreamKind> = { chat: 'chat', responses: 'responses', messages: 'anthropic' };

export interface FrameworkRig {
  /** Base URL (no `/v1`) of a gateway whose models all route to that upstream. */
  gateway: Record<UpstreamKind, string>;
  upstream: Record<UpstreamKind, FakeUpstream>;
  reset(): void;
  close(): Promise<void>;
}

/**
 * Three strict fake upstreams (Chat-only OpenAI, Responses-only OpenAI, Anthropic) and one gateway
 * per upstream, each routing both model names to it: a framework keeps its model name and only
 * its base URL says which cell it runs in.
 */
export async function startFrameworkRig(): Promise<FrameworkRig> {
  const [chat, responses, anthropic] = await Promise.all([
    startFakeOpenAI({ endpoints: ['chat'] }),
    startFakeOpenAI({ endpoints: ['responses'] }),
    startFakeAnthropic(),
  ]);
  const upstream: Record<UpstreamKind, FakeUpstream> = { chat, responses, anthropic };
  const providers: Record<UpstreamKind, { provider: Provider; upstreamModel: string }> = {
    chat: { provider: createOpenAIProvider({ baseURL: chat.url + '/v1', apiKey: 'up-key', responses: false }), upstreamModel: 'gpt-5' },
    responses: { provider: createOpenAIProvider({ baseURL: responses.url + '/v1', apiKey: 'up-key', responses: true, chat: false }), upstreamModel: 'gpt-5' },
    anthropic: { provider: createAnthropicProvider({ baseURL: anthropic.url, apiKey: 'up-key' }), upstreamModel: 'claude-sonnet-4-5' },
  };
  const served = {} as Record<UpstreamKind, Served>;
  for (const kind of ['chat', 'responses', 'anthropic'] as const) {
    const { provider, upstreamModel } = providers[kind];
    const gateway = createGateway({
      keys: [{ key: 'sk-test' }],
      providers: { [kind]: provider },
      models: [OPENAI_MODEL, CLAUDE_MODEL].map((id) => ({ id, provider: kind, upstreamModel })),
      logger: false,
    });
    served[kind] = await serve(gateway);
  }
  return {
    gateway: { chat: served.chat.url, responses: served.responses.url, anthropic: served.anthropic.url },
    upstream,
    reset() {
      for (const fake of Object.values(upstream)) fake.reset();
    },
    async close() {
      await Promise.all(Object.values(served).map((server) => server.close()));
      await Promise.all(Object.values(upstream).map((fake) => fake.close()));
      await Promise.all(Object.values(providers).map(({ provider }) => provider.close?.()));
    },
  };
}

/** A value only the test's tool knows: the model can repeat it only after the tool ran. */
export function secretToken(): string {
  return `tok_${randomBytes(8).toString('hex')}`;
}

export const SECRET_TOOL = {
  name: 'get_secret',
  description: 'Returns the secret stored under a label.',
  parameters: { type: 'object' as const, properties: { label: { type: 'string' } }, required: ['label' as const], additionalProperties: false as const },
};

/**
 * Scripts one agent loop on the upstream: the model (thinking first, where the upstream has
 * thinking) calls `get_secret`, then, given the result, answers with the token.
 */
export function scriptSecretLoop(fake: FakeUpstream, token: string, answer: string[] = ['The secret is ', token, '.']): void {
  fake.reply(
    { reasoning: ['The user wants the secret; ', 'I will look it up.'], toolCalls: [{ name: SECRET_TOOL.name, args: ['{"label":', ' "vault"}'] }] },
    { text: answer },
  );
}

/**
 * The whole loop went through the gateway: the upstream accepted every request (it rejects what
 * the real API rejects), was asked twice, saw the tool declared, and saw the second time the call
 * and its result carrying the token. Returns the two requests for cell-specific checks.
 */
export function expectSecretLoop(kind: UpstreamKind, fake: FakeUpstream, token: string): [RecordedRequest, RecordedRequest] {
  const rejected = fake.requests
    .filter((request) => request.rejected)
    .map((request) => `${request.path}: ${request.rejected!.status} ${request.rejected!.message}`);
  expect(rejected, 'requests the upstream rejected').toEqual([]);
  const [first, second, ...more] = fake.accepted();
  expect(more, 'requests after the answer').toEqual([]);
  expect(second, 'the request carrying the tool result').toBeDefined();
  expect(toolNames(kind, first!.body)).toContain(SECRET_TOOL.name);
  expect(toolExchange(kind, first!.body).results).toEqual([]);
  const exchange = toolExchange(kind, second!.body);
  expect(exchange.calls).toEqual([{ id: expect.any(String), name: SECRET_TOOL.name, input: { label: 'vault' } }]);
  expect(exchange.results).toEqual([{ id: exchange.calls[0]!.id, output: expect.stringContaining(token) }]);
  if (kind === 'anthropic') for (const request of [first!, second!]) expectThinkingBeforeToolUse(request.body);
  return [first!, second!];
}

/**
 * A rule of the Messages API the fake does not check: with thinking on, the assistant turn whose
 * tool calls the last user turn answers must start with its (signed) thinking block. The real API
 * answers 400 "Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking`
 * is enabled, a final `assistant` message must start with a thinking block".
 */
function expectThinkingBeforeToolUse(body: Json): void {
  if (body.thinking === undefined || body.thinking.type === 'disabled') return;
  const messages: Json[] = body.messages;
  const blocks = (message: Json | undefined): Json[] => (Array.isArray(message?.content) ? message!.content : []);
  const answersTools = blocks(messages.at(-1)).some((block) => block.type === 'tool_result');
  if (!answersTools) return;
  const first = blocks(messages.at(-2))[0];
  expect(first?.type, 'with thinking enabled, the tool-calling assistant turn must start with a thinking block').toMatch(/^(thinking|redacted_thinking)$/);
}

/** Names of the tools a request declares, however its protocol words them. */
export function toolNames(kind: UpstreamKind, body: Json): string[] {
  return (body.tools ?? []).map((tool: Json) => (kind === 'chat' ? tool.function?.name : tool.name));
}
