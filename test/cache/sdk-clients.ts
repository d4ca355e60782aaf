import type { CacheHarness } from './cache-harness.js';

type Json = Record<string, any>;
export type ClientProtocol = 'chat' | 'responses' | 'messages';

/** What a client made of an answer, in neutral terms, to compare a miss with its hit. */
export interface Answer {
  text: string;
  toolCalls: { name: string; arguments: unknown }[];
  finish: string;
  usage: { input: number; output: number };
}

const TOOLS: Record<ClientProtocol, Json[]> = {
  chat: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
  responses: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }],
  messages: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
};

/**
 * Asks through the official SDK: `create` for JSON, the SDK's stream helper for a stream
 * (`chat.completions.stream().finalChatCompletion()`, `responses.stream().finalResponse()`,
 * `messages.stream().finalMessage()`), which throw on a stream they cannot assemble.
 */
export async function ask(
  harness: CacheHarness,
  protocol: ClientProtocol,
  model: string,
  prompt: string,
  options: { stream: boolean; tools?: boolean; key?: string },
): Promise<Answer> {
  const tools = options.tools ? { tools: TOOLS[protocol] } : {};
  if (protocol === 'chat') {
    const body = { model, messages: [{ role: 'user' as const, content: prompt }], temperature: 0, ...tools } as Json;
    const completion: Json = options.stream
      ? await harness
          .openai(options.key)
          .chat.completions.stream({ ...body, stream_options: { include_usage: true } } as never)
          .finalChatCompletion()
      : await harness.openai(options.key).chat.completions.create(body as never);
    const message = completion.choices[0].message;
    return {
      text: message.content ?? '',
      toolCalls: (message.tool_calls ?? []).map((call: Json) => ({ name: call.function.name, arguments: JSON.parse(call.function.arguments) })),
      finish: completion.choices[0].finish_reason,
      usage: { input: completion.usage.prompt_tokens, output: completion.usage.completion_tokens },
    };
  }
  if (protocol === 'responses') {
    const body = { model, input: prompt, temperature: 0, store: false, ...tools } as Json;
    const response: Json = options.stream
      ? await harness
          .openai(options.key)
          .responses.stream(body as never)
          .finalResponse()
      : await harness.openai(options.key).responses.create(body as never);
    const calls = response.output.filter((item: Json) => item.type === 'function_call');
    return {
      text: response.output_text,
      toolCalls: calls.map((call: Json) => ({ name: call.name, arguments: JSON.parse(call.arguments) })),
      finish: response.status,
      usage: { input: response.usage.input_tokens, output: response.usage.output_tokens },
    };
  }
  const body = { model, max_tokens: 256, messages: [{ role: 'user' as const, content: prompt }], temperature: 0, ...tools } as Json;
  const message: Json = options.stream
    ? await harness
        .anthropic(options.key)
        .messages.stream(body as never)
        .finalMessage()
    : await harness.anthropic(options.key).messages.create(body as never);
  return {
    text: message.content
      .filter((block: Json) => block.type === 'text')
      .map((block: Json) => block.text)
      .join(''),
    toolCalls: message.content.filter((block: Json) => block.type === 'tool_use').map((block: Json) => ({ name: block.name, arguments: block.input })),
    finish: message.stop_reason,
    // Anthropic's input tokens leave out cache reads and writes; none here.
    usage: { input: message.usage.input_tokens, output: message.usage.output_tokens },
  };
}
