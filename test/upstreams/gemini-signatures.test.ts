import Anthropic from '@anthropic-ai/sdk';
import { type Content, type FunctionDeclaration, GoogleGenAI, type Part, Type } from '@google/genai';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { FunctionTool, ResponseInputItem } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createGeminiProvider } from '../../src/providers/gemini/gemini-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { createVertexProvider } from '../../src/providers/vertex/vertex-provider.js';
import type { Deployment } from '../../src/routing/deployments.js';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeGemini } from '../fakes/fake-gemini.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { type FakeVertex, startFakeVertex, VERTEX_LOCATION } from '../fakes/fake-vertex.js';
import { serve, type Served } from '../helpers/serve.js';
import { TIME_SCHEMA, WEATHER_SCHEMA } from './harness.js';

type Json = Record<string, any>;

/**
 * Gemini 3 tool loops through every client protocol, with the real SDKs, on the strict fakes of
 * the Gemini API and Vertex AI, which refuse (as Google does) a step of the current turn whose
 * first function call comes back without a signature, or with one they did not issue:
 * - verbatim: the client sends back everything it got;
 * - dropped: it keeps only text and tool calls (no thinking blocks, no reasoning items; a Gemini
 *   client without thought parts and signatures);
 * - from Anthropic / OpenAI: the conversation's first step was another model's, then the client
 *   names the Gemini model;
 * - fallback: a model with two deployments, Claude first: Claude makes the first step, then fails
 *   and Gemini carries the loop on (and a last question goes back to Claude).
 * Each loop has three steps (two parallel calls, one call, the answer), JSON and streamed in turn.
 */
type ClientKind = 'chat' | 'responses' | 'messages' | 'gemini';
type History = 'verbatim' | 'dropped' | 'from Anthropic' | 'from OpenAI' | 'fallback';
type Target = 'gemini' | 'vertex';

const CLIENTS: ClientKind[] = ['chat', 'responses', 'messages', 'gemini'];
const HISTORIES: History[] = ['verbatim', 'dropped', 'from Anthropic', 'from OpenAI', 'fallback'];
const SKIP = 'skip_thought_signature_validator';
const GEMINI_3 = 'gemini-3-pro-preview';

let gemini: Awaited<ReturnType<typeof startFakeGemini>>;
let vertex: FakeVertex;
let claude: FakeUpstream;
let gpt: FakeUpstream;
let gateway: Gateway;
let served: Served;

beforeAll(async () => {
  [gemini, vertex, claude, gpt] = await Promise.all([startFakeGemini(), startFakeVertex(), startFakeAnthropic(), startFakeOpenAI()]);
  const fallback = (id: string, provider: string) => ({
    id,
    deployments: [
      { id: 'claude-first', provider: 'claude', upstreamModel: 'claude-sonnet-4-5' },
      { id: `${provider}-second`, provider, upstreamModel: GEMINI_3 },
    ],
  });
  gateway = createGateway({
    keys: [{ key: 'sk-test' }],
    providers: {
      gem: createGeminiProvider({ baseURL: gemini.url, apiKey: 'up-key' }),
      vx: createVertexProvider({ credentials: vertex.serviceAccount, location: VERTEX_LOCATION, baseURL: vertex.url }),
      claude: createAnthropicProvider({ baseURL: claude.url, apiKey: 'up-key' }),
      gpt: createOpenAIProvider({ baseURL: `${gpt.url}/v1`, apiKey: 'up-key' }),
    },
    models: [
      { id: 'gemini-target', provider: 'gem', upstreamModel: GEMINI_3 },
      { id: 'vertex-target', provider: 'vx', upstreamModel: GEMINI_3 },
      { id: 'claude', provider: 'claude', upstreamModel: 'claude-sonnet-4-5' },
      { id: 'gpt', provider: 'gpt', upstreamModel: 'gpt-5' },
      fallback('gemini-fallback', 'gem'),
      fallback('vertex-fallback', 'vx'),
    ],
    policies: { retry: { backoffMs: 1 } },
    logger: false,
  });
  served = await serve(gateway);
});
afterAll(async () => {
  await served.close();
  await Promise.all([gemini, vertex, claude, gpt].map((fake) => fake.close()));
  await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
});
beforeEach(() => {
  for (const fake of [gemini, vertex, claude, gpt]) fake.reset();
  gateway.options.policies.health.clear();
});

// ---- the clients ------------------------------------------------------------------------------

interface Step {
  calls: { id: string; name: string }[];
  text: string;
}

/** One conversation of one client: its history as its SDK keeps it, and the moves of a tool loop. */
interface Conversation {
  /** Sends the history to `model` and keeps the answer in it. */
  ask(model: string, stream: boolean): Promise<Step>;
  /** The results of the step's calls, as the client sends them. */
  answer(calls: Step['calls']): void;
  say(text: string): void;
  /** Keeps only text and tool calls of the answers so far. */
  dropThinking(): void;
}

const QUESTION = 'Weather and time in Paris?';
const RESULTS: Record<string, string> = { get_weather: '18°C', get_time: '14:05' };

function conversation(kind: ClientKind): Conversation {
  switch (kind) {
    case 'chat':
      return chatConversation();
    case 'responses':
      return responsesConversation();
    case 'messages':
      return messagesConversation();
    case 'gemini':
      return geminiConversation();
  }
}

function chatConversation(): Conversation {
  const openai = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  const tools: ChatCompletionTool[] = [
    { type: 'function', function: { name: 'get_weather', parameters: WEATHER_SCHEMA } },
    { type: 'function', function: { name: 'get_time', parameters: TIME_SCHEMA } },
  ];
  const history: ChatCompletionMessageParam[] = [{ role: 'user', content: QUESTION }];
  return {
    async ask(model, stream) {
      const body = { model, messages: history, tools };
      const completion = stream ? await openai.chat.completions.stream(body).finalChatCompletion() : await openai.chat.completions.create(body);
      const message = completion.choices[0]!.message as OpenAI.ChatCompletionMessage & { reasoning_content?: string };
      const calls = (message.tool_calls ?? []).flatMap((call) => (call.type === 'function' ? [call] : []));
      history.push({
        role: 'assistant',
        content: message.content,
        ...(calls.length > 0 ? { tool_calls: calls.map(({ id, type, function: fn }) => ({ id, type, function: fn })) } : {}),
        ...(message.reasoning_content ? { reasoning_content: message.reasoning_content } : {}),
      } as ChatCompletionMessageParam);
      return { calls: calls.map((call) => ({ id: call.id, name: call.function.name })), text: message.content ?? '' };
    },
    answer(calls) {
      for (const call of calls) history.push({ role: 'tool', tool_call_id: call.id, content: RESULTS[call.name]! });
    },
    say(text) {
      history.push({ role: 'user', content: text });
    },
    dropThinking() {
      for (const message of history) delete (message as Json).reasoning_content;
    },
  };
}

function responsesConversation(): Conversation {
  const openai = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  const tools: FunctionTool[] = [
    { type: 'function', name: 'get_weather', parameters: WEATHER_SCHEMA, strict: false },
    { type: 'function', name: 'get_time', parameters: TIME_SCHEMA, strict: false },
  ];
  let history: ResponseInputItem[] = [{ role: 'user', content: QUESTION }];
  return {
    async ask(model, stream) {
      const body = { model, input: history, tools, store: false };
      const response = stream ? await openai.responses.stream(body).finalResponse() : await openai.responses.create(body);
      history.push(...(response.output as ResponseInputItem[]));
      const calls = response.output.flatMap((item) => (item.type === 'function_call' ? [{ id: item.call_id, name: item.name }] : []));
      return { calls, text: response.output_text };
    },
    answer(calls) {
      for (const call of calls) history.push({ type: 'function_call_output', call_id: call.id, output: RESULTS[call.name]! });
    },
    say(text) {
      history.push({ role: 'user', content: text });
    },
    dropThinking() {
      history = history.filter((item) => item.type !== 'reasoning');
    },
  };
}

function messagesConversation(): Conversation {
  const anthropic = new Anthropic({ baseURL: served.url, apiKey: 'sk-test', maxRetries: 0 });
  const tools: Anthropic.Tool[] = [
    { name: 'get_weather', input_schema: WEATHER_SCHEMA as Anthropic.Tool.InputSchema },
    { name: 'get_time', input_schema: TIME_SCHEMA as Anthropic.Tool.InputSchema },
  ];
  const history: Anthropic.MessageParam[] = [{ role: 'user', content: QUESTION }];
  return {
    async ask(model, stream) {
      const body = { model, max_tokens: 1024, messages: history, tools };
      const message = stream ? await anthropic.messages.stream(body).finalMessage() : await anthropic.messages.create(body);
      history.push({ role: 'assistant', content: message.content });
      const calls = message.content.flatMap((block) => (block.type === 'tool_use' ? [{ id: block.id, name: block.name }] : []));
      const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
      return { calls, text };
    },
    answer(calls) {
      history.push({ role: 'user', content: calls.map((call) => ({ type: 'tool_result' as const, tool_use_id: call.id, content: RESULTS[call.name]! })) });
    },
    say(text) {
      history.push({ role: 'user', content: text });
    },
    dropThinking() {
      for (const message of history) {
        if (message.role === 'assistant' && Array.isArray(message.content)) {
          message.content = message.content.filter((block) => block.type !== 'thinking' && block.type !== 'redacted_thinking');
        }
      }
    },
  };
}

function geminiConversation(): Conversation {
  const genai = new GoogleGenAI({ apiKey: 'sk-test', httpOptions: { baseUrl: served.url } });
  const declarations: FunctionDeclaration[] = [
    { name: 'get_weather', parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] } },
    { name: 'get_time', parameters: { type: Type.OBJECT, properties: { tz: { type: Type.STRING } }, required: ['tz'] } },
  ];
  const config = { tools: [{ functionDeclarations: declarations }] };
  const history: Content[] = [{ role: 'user', parts: [{ text: QUESTION }] }];
  return {
    async ask(model, stream) {
      const parts: Part[] = [];
      if (stream) {
        for await (const chunk of await genai.models.generateContentStream({ model, contents: history, config })) {
          parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
        }
      } else {
        const response = await genai.models.generateContent({ model, contents: history, config });
        parts.push(...(response.candidates?.[0]?.content?.parts ?? []));
      }
      history.push({ role: 'model', parts });
      const calls = parts.flatMap((part) => (part.functionCall ? [{ id: part.functionCall.id ?? '', name: part.functionCall.name ?? '' }] : []));
      const text = parts.flatMap((part) => (part.text !== undefined && !part.thought ? [part.text] : [])).join('');
      return { calls, text };
    },
    answer(calls) {
      history.push({
        role: 'user',
        parts: calls.map((call) => ({ functionResponse: { id: call.id, name: call.name, response: { output: RESULTS[call.name] } } })),
      });
    },
    say(text) {
      history.push({ role: 'user', parts: [{ text }] });
    },
    dropThinking() {
      for (const content of history) {
        if (content.role !== 'model') continue;
        content.parts = (content.parts ?? []).filter((part) => !part.thought).map(({ thoughtSignature: _dropped, ...part }) => part);
      }
    },
  };
}

// ---- the loops ----------------------------------------------------------------------------------

const WEATHER_AND_TIME = [
  { name: 'get_weather', args: ['{"city":"Paris"}'] },
  { name: 'get_time', args: ['{"tz":"Europe/Paris"}'] },
];
const TIME = [{ name: 'get_time', args: ['{"tz":"Europe/Paris"}'] }];

/** The first function call of each model step of a Gemini request, by its signature: issued, skip, or missing. */
function stepSignatures(body: Json, issued: Set<string>): string[] {
  return (body.contents as Json[])
    .filter((content) => content.role === 'model' && content.parts.some((part: Json) => part.functionCall))
    .map((content) => {
      const signature = content.parts.find((part: Json) => part.functionCall).thoughtSignature;
      return signature === undefined ? 'missing' : signature === SKIP ? 'skip' : issued.has(signature) ? 'issued' : `unknown ${signature}`;
    });
}

describe.each(['gemini', 'vertex'] as Target[])('Gemini 3 on %s', (target) => {
  const fake = () => (target === 'gemini' ? gemini : vertex);
  const cool = (id: string) => gateway.options.policies.health.failed({ id } as Deployment, 60_000);

  describe.each(CLIENTS)('%s client', (client) => {
    it.each(HISTORIES)('%s history: a three-step tool loop', async (history) => {
      const chat = conversation(client);
      const model = history === 'fallback' ? `${target}-fallback` : `${target}-target`;
      const other = history === 'from OpenAI' ? gpt : claude;
      // The first step: Gemini's, or the other model's (Claude then tries first, as the deployment the policy picked).
      const geminiFirst = history === 'verbatim' || history === 'dropped';
      if (history === 'fallback') cool(`${target === 'gemini' ? 'gem' : 'vx'}-second`);
      (geminiFirst ? fake() : other).reply({ ...(other === claude && !geminiFirst ? { reasoning: ['Claude thinks.'] } : {}), toolCalls: WEATHER_AND_TIME });
      const first = await chat.ask(geminiFirst || history === 'fallback' ? model : other === claude ? 'claude' : 'gpt', false);
      expect(first.calls.map((call) => call.name)).toEqual(['get_weather', 'get_time']);
      chat.answer(first.calls);
      if (history === 'dropped') chat.dropThinking();

      // The second and third steps on Gemini 3 (after Claude fails, on the fallback model).
      for (const [step, reply] of [{ toolCalls: TIME }, { text: ['18°C at 14:05.'] }].entries()) {
        if (history === 'fallback') claude.reply({ error: { status: 529, message: 'Overloaded', type: 'overloaded_error' } });
        fake().reply(reply);
        const next = await chat.ask(model, step === 0);
        if (step === 0) {
          expect(next.calls.map((call) => call.name)).toEqual(['get_time']);
          chat.answer(next.calls);
          if (history === 'dropped') chat.dropThinking();
        } else {
          expect(next.text).toBe('18°C at 14:05.');
        }
      }

      // What Gemini got on the last step: each step's first call signed as Google allows, never another vendor's value.
      const last = fake().last();
      expect(last.rejected).toBeUndefined();
      const lostSignatures = history === 'dropped' && client === 'gemini';
      expect(stepSignatures(last.body, fake().signatures)).toEqual([geminiFirst && !lostSignatures ? 'issued' : 'skip', lostSignatures ? 'skip' : 'issued']);
      expect(JSON.stringify(last.body)).not.toContain('infergate');

      if (history === 'fallback') {
        // Back on Claude, which gets the calls' own ids and no Gemini signature.
        chat.say('Thanks. And tomorrow?');
        claude.reply({ text: ['Sunny.'] });
        expect((await chat.ask(model, true)).text).toBe('Sunny.');
        expect(claude.last().rejected).toBeUndefined();
        expect(JSON.stringify(claude.last().body)).not.toContain('infergate');
      }
    });
  });
});
