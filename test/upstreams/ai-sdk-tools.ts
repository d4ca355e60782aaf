import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { jsonSchema, type LanguageModel, stepCountIs, streamText, tool } from 'ai';

/** The AI SDK's clients of the gateway: `@ai-sdk/openai` on Responses and on Chat, `@ai-sdk/anthropic`. */
export type AiSdkClient = 'openai responses' | 'openai chat' | 'anthropic';

/** A model of each AI SDK client, by its id on the gateway at `url` (read when a model is made). */
export function gatewayModels(url: () => string): Record<AiSdkClient, (model: string) => LanguageModel> {
  const openai = () => createOpenAI({ baseURL: `${url()}/v1`, apiKey: 'sk-test' });
  return {
    'openai responses': (model) => openai().responses(model),
    'openai chat': (model) => openai().chat(model),
    anthropic: (model) => createAnthropic({ baseURL: `${url()}/v1`, apiKey: 'sk-test' })(model),
  };
}

/** Reads the whole stream; an error part is thrown, as the SDK's consumers must see it. */
export async function drain(result: { fullStream: AsyncIterable<{ type: string; error?: unknown; text?: string }> }): Promise<string> {
  let text = '';
  for await (const part of result.fullStream) {
    if (part.type === 'error') throw part.error;
    if (part.type === 'text-delta') text += part.text;
  }
  return text;
}

/** What a test passes the SDK's calls besides the model (`{ openai: { store: false } }`). */
type ProviderOptions = NonNullable<Parameters<typeof streamText>[0]['providerOptions']>;

/**
 * The weather-and-time loop run by the SDK (at most three steps, the tools' schemas closed): the
 * stream to drain, and what the tools were called with.
 */
export function streamWeatherAndTimeLoop(model: LanguageModel, providerOptions: ProviderOptions) {
  const executed: unknown[] = [];
  const result = streamText({
    model,
    prompt: 'Weather and time in Paris?',
    maxRetries: 0,
    stopWhen: stepCountIs(3),
    providerOptions,
    tools: weatherAndTimeTools(executed, { closed: true }),
  });
  return { result, executed };
}

/** A story streamed by the SDK: the stream to drain, and the text deltas `onChunk` saw as they came. */
export function streamStory(model: LanguageModel, providerOptions: ProviderOptions) {
  const deltas: string[] = [];
  const result = streamText({
    model,
    prompt: 'A story',
    maxRetries: 0,
    providerOptions,
    onChunk: ({ chunk }) => {
      if (chunk.type === 'text-delta') deltas.push(chunk.text);
    },
  });
  return { result, deltas };
}

/**
 * The Vercel AI SDK's side of the weather-and-time tool loop: two tools answering fixed values
 * and recording what they were called with. `closed` adds `additionalProperties: false` to both
 * schemas (what OpenAI's strict mode asks for).
 */
export function weatherAndTimeTools(executed: unknown[], { closed = false } = {}) {
  const object = (properties: Record<string, unknown>, required: string[]) => ({
    type: 'object' as const,
    properties,
    required,
    ...(closed ? { additionalProperties: false } : {}),
  });
  return {
    get_weather: tool({
      description: 'Weather of a city',
      inputSchema: jsonSchema<{ city: string }>(object({ city: { type: 'string' } }, ['city'])),
      execute: async (input) => {
        executed.push(input);
        return '18°C';
      },
    }),
    get_time: tool({
      inputSchema: jsonSchema<{ tz: string }>(object({ tz: { type: 'string' } }, ['tz'])),
      execute: async (input) => {
        executed.push(input);
        return '14:05';
      },
    }),
  };
}
