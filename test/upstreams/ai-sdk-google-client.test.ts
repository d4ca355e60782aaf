import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { type FakeGemini, useGoogleHarness } from './google-harness.js';
import { generateText, type LanguageModel, stepCountIs, streamText } from 'ai';
import { drain, weatherAndTimeTools } from './ai-sdk-tools.js';
import { describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { USAGE, parallelCalls, promptOf, type Harness, weatherAndTimeByName, toolExchangeByName } from './harness.js';

type Json = Record<string, any>;

/**
 * `@ai-sdk/google` (the Vercel AI SDK's Gemini model) pointed at the gateway's Gemini endpoint,
 * over the Gemini API, an OpenAI Chat upstream, the Messages API and the local provider:
 * generateText, streamText read to the end, a two-turn parallel tool loop run by the SDK, and the
 * usage the SDK reads back.
 */
let h: Harness;
let gemini: FakeGemini;
useGoogleHarness((started) => ({ h, gemini } = started));

const google = (model: string): LanguageModel => createGoogleGenerativeAI({ baseURL: `${h.url}/v1beta`, apiKey: 'sk-test' })(model);

type Scripted = 'gemini' | 'chat' | 'anthropic';
const SCRIPTED: Record<Scripted, { model: string; fake: () => FakeUpstream; gemini: boolean }> = {
  gemini: { model: 'gem-3', fake: () => gemini, gemini: true },
  chat: { model: 'gpt-chat', fake: () => h.upstreams.chat.fake, gemini: false },
  anthropic: { model: 'claude', fake: () => h.upstreams.anthropic.fake, gemini: false },
};

/**
 * The usage the SDK reads: the prompt with its cached part, the answer with its thinking part.
 * Claude reports no thinking counter (thinking is inside its output tokens).
 */
function expectedUsage(upstream: Scripted): Json {
  return {
    inputTokens: USAGE.input,
    outputTokens: USAGE.output,
    totalTokens: USAGE.input + USAGE.output,
    inputTokenDetails: expect.objectContaining({ cacheReadTokens: USAGE.cachedRead }),
    outputTokenDetails: expect.objectContaining({ reasoningTokens: upstream === 'anthropic' ? 0 : USAGE.reasoning }),
  };
}

/** What the upstream received: its system text and user texts, however its protocol words them. */
function promptReceived(upstream: Scripted, body: Json): { system: string; user: string[] } {
  if (upstream !== 'gemini') return promptOf(upstream, body);
  const text = (content: Json) => content.parts.map((part: Json) => part.text ?? '').join('');
  return {
    system: body.systemInstruction ? text(body.systemInstruction) : '',
    user: body.contents.filter((content: Json) => content.role === 'user').map(text),
  };
}

describe.each(Object.keys(SCRIPTED) as Scripted[])('@ai-sdk/google → %s upstream', (upstream) => {
  const up = SCRIPTED[upstream];

  it('generateText: the answer, the prompt as sent, the usage with cached and thinking tokens', async () => {
    up.fake().reply({ text: ['Bonjour', ' le monde'], usage: USAGE });
    const result = await generateText({ model: google(up.model), system: 'Be brief.', prompt: 'Hello in French', maxRetries: 0 });

    expect(result.text).toBe('Bonjour le monde');
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toMatchObject(expectedUsage(upstream));
    const received = up.fake().last();
    expect(received.body.stream ?? false).toBe(false);
    if (up.gemini) expect(received.url).toBe('/v1beta/models/gemini-3-pro-preview:generateContent');
    expect(promptReceived(upstream, received.body)).toEqual({ system: 'Be brief.', user: ['Hello in French'] });
    expect(JSON.stringify(received.headers)).not.toContain('sk-test');
  });

  it('streamText read to the end: every delta, the finish and the usage', async () => {
    up.fake().reply({ text: ['Un', ' deux', ' trois'], usage: USAGE });
    const result = streamText({ model: google(up.model), prompt: 'Count to three', maxRetries: 0 });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);

    expect(deltas.join('')).toBe('Un deux trois');
    expect(await result.finishReason).toBe('stop');
    expect(await result.usage).toMatchObject(expectedUsage(upstream));
    const received = up.fake().last();
    if (up.gemini) expect(received.url).toBe('/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse');
    else expect(received.body.stream).toBe(true);
  });

  it('a two-turn tool loop with parallel calls: both results reach the upstream, then the answer', async () => {
    // The Gemini fake makes its own call ids (and signs the first call, as Gemini 3 does).
    const calls = up.gemini ? parallelCalls('chat').map(({ name, args }) => ({ name, args })) : parallelCalls(upstream as 'chat' | 'anthropic');
    up.fake().reply({ toolCalls: calls, usage: USAGE }, { text: ['It is 18°C', ' at 14:05.'], usage: USAGE });
    const executed: unknown[] = [];
    const result = streamText({
      model: google(up.model),
      prompt: 'Weather and time in Paris?',
      maxRetries: 0,
      stopWhen: stepCountIs(3),
      tools: weatherAndTimeTools(executed),
    });

    expect(await drain(result)).toBe('It is 18°C at 14:05.');
    expect(executed).toEqual([{ city: 'Paris' }, { tz: 'Europe/Paris' }]);
    const steps = await result.steps;
    expect(steps.map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
    expect((await result.totalUsage).inputTokens).toBe(2 * USAGE.input);

    const [, turn2] = up.fake().accepted();
    expect(toolExchangeByName(upstream, turn2!.body)).toEqual(weatherAndTimeByName());
    if (up.gemini) {
      // Gemini 3 refuses a replayed call without the signature it issued: it came back.
      const replayed = (turn2!.body.contents as Json[]).find((content) => content.role === 'model')!;
      expect(gemini.signatures.has(replayed.parts[0].thoughtSignature)).toBe(true);
    }
  });
});

describe('@ai-sdk/google → local upstream', () => {
  it('generateText and streamText give the same answer, with usage', async () => {
    const json = await generateText({ model: google('local-chat'), prompt: 'Hello there', maxRetries: 0 });
    expect(json.text).toMatch(/\S/);
    expect(json.usage.inputTokens).toBeGreaterThan(0);
    expect(json.usage.outputTokens).toBeGreaterThan(0);

    const streamed = streamText({ model: google('local-chat'), prompt: 'Hello there', maxRetries: 0 });
    expect(await drain(streamed)).toBe(json.text);
    expect(await streamed.finishReason).toBe('stop');
    expect((await streamed.usage).inputTokens).toBe(json.usage.inputTokens);
  });

  it('runs a tool loop: the local model calls the tool, then reports its result', async () => {
    const executed: unknown[] = [];
    const result = await generateText({
      model: google('local-chat'),
      prompt: 'Use the get_weather tool for Paris',
      maxRetries: 0,
      stopWhen: stepCountIs(3),
      tools: weatherAndTimeTools(executed),
    });
    expect(executed).toHaveLength(1);
    expect(result.steps.map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
    expect(result.text).toContain('18°C');
  });
});
