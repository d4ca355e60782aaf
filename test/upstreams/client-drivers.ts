import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { type ClientProtocol, TIME_SCHEMA, WEATHER_SCHEMA } from './harness.js';

type Json = Record<string, any>;

export interface ToolCallSeen {
  id: string;
  name: string;
  input: unknown;
}

/** The same steps through each client's SDK, for the client × upstream matrices. */
export interface ClientDriver {
  /** A JSON request ("Hi"), with a system prompt when one is given. */
  ask(model: string, system?: string): Promise<{ text: string; usage: unknown }>;
  /** Streams through the SDK helper and resolves with the final answer's text and usage. */
  stream(model: string, onText: (delta: string) => void): Promise<{ text: string; usage: unknown }>;
  /** First turn (streamed through the helper): the calls the client saw, its usage, and the next turn given the results. */
  toolTurn(model: string): Promise<{ calls: ToolCallSeen[]; usage: unknown; answer: (results: string[]) => Promise<string> }>;
  errorClass: typeof OpenAI.APIError | typeof Anthropic.APIError;
}

export const WEATHER_AND_TIME_QUESTION = 'Weather and time in Paris?';

/** The weather and time tools of the parallel tool loop, as each SDK declares them. */
export const CHAT_TOOLS: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: WEATHER_SCHEMA } },
  { type: 'function', function: { name: 'get_time', parameters: TIME_SCHEMA } },
];
export const RESPONSES_TOOLS: OpenAI.Responses.FunctionTool[] = [
  { type: 'function', name: 'get_weather', description: 'Weather of a city', parameters: WEATHER_SCHEMA, strict: false },
  { type: 'function', name: 'get_time', parameters: TIME_SCHEMA, strict: false },
];
export const MESSAGES_TOOLS: Anthropic.Tool[] = [
  { name: 'get_weather', description: 'Weather of a city', input_schema: WEATHER_SCHEMA as Anthropic.Tool.InputSchema },
  { name: 'get_time', input_schema: TIME_SCHEMA as Anthropic.Tool.InputSchema },
];

const textOf = (content: Anthropic.ContentBlock[]) => content.map((block) => (block.type === 'text' ? block.text : '')).join('');

/** The drivers of the `openai` (Chat, Responses) and `@anthropic-ai/sdk` clients of the gateway under test. */
export function clientDrivers(openai: OpenAI, anthropic: Anthropic): Record<ClientProtocol, ClientDriver> {
  return {
    chat: {
      errorClass: OpenAI.APIError,
      async ask(model, system) {
        const answer = await openai.chat.completions.create({
          model,
          messages: [...(system ? [{ role: 'system' as const, content: system }] : []), { role: 'user', content: 'Hi' }],
        });
        return { text: answer.choices[0]!.message.content ?? '', usage: answer.usage };
      },
      async stream(model, onText) {
        const run = openai.chat.completions.stream({ model, messages: [{ role: 'user', content: 'A story' }], stream_options: { include_usage: true } });
        run.on('content', onText);
        const final = await run.finalChatCompletion();
        return { text: final.choices[0]!.message.content ?? '', usage: final.usage };
      },
      async toolTurn(model) {
        const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: WEATHER_AND_TIME_QUESTION }];
        const first = await openai.chat.completions
          .stream({ model, messages, tools: CHAT_TOOLS, stream_options: { include_usage: true } })
          .finalChatCompletion();
        const message = first.choices[0]!.message;
        const calls = (message.tool_calls ?? []).flatMap((call) => (call.type === 'function' ? [call] : []));
        return {
          calls: calls.map((call) => ({ id: call.id, name: call.function.name, input: JSON.parse(call.function.arguments) })),
          usage: first.usage,
          async answer(results) {
            const second = await openai.chat.completions.create({
              model,
              tools: CHAT_TOOLS,
              messages: [
                ...messages,
                { role: 'assistant', content: message.content, tool_calls: message.tool_calls! },
                ...calls.map((call, i): OpenAI.ChatCompletionMessageParam => ({ role: 'tool', tool_call_id: call.id, content: results[i]! })),
              ],
            });
            return second.choices[0]!.message.content ?? '';
          },
        };
      },
    },
    responses: {
      errorClass: OpenAI.APIError,
      async ask(model, system) {
        const answer = await openai.responses.create({ model, ...(system ? { instructions: system } : {}), input: 'Hi', store: false });
        return { text: answer.output_text, usage: answer.usage };
      },
      async stream(model, onText) {
        const run = openai.responses.stream({ model, input: 'A story', store: false });
        run.on('response.output_text.delta', (event) => onText(event.delta));
        const final = await run.finalResponse();
        return { text: final.output_text, usage: final.usage };
      },
      async toolTurn(model) {
        const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: WEATHER_AND_TIME_QUESTION }];
        const first = await openai.responses.stream({ model, input, tools: RESPONSES_TOOLS, store: false }).finalResponse();
        const output: OpenAI.Responses.ResponseOutputItem[] = first.output;
        const calls = output.filter((item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === 'function_call');
        return {
          calls: calls.map((call) => ({ id: call.call_id, name: call.name, input: JSON.parse(call.arguments) })),
          usage: first.usage,
          async answer(results) {
            const second = await openai.responses.create({
              model,
              tools: RESPONSES_TOOLS,
              store: false,
              input: [
                ...input,
                ...(first.output as OpenAI.Responses.ResponseInputItem[]),
                ...calls.map((call, i): OpenAI.Responses.ResponseInputItem => ({ type: 'function_call_output', call_id: call.call_id, output: results[i]! })),
              ],
            });
            return second.output_text;
          },
        };
      },
    },
    messages: {
      errorClass: Anthropic.APIError,
      async ask(model, system) {
        const answer = await anthropic.messages.create({ model, max_tokens: 64, ...(system ? { system } : {}), messages: [{ role: 'user', content: 'Hi' }] });
        return { text: textOf(answer.content), usage: answer.usage };
      },
      async stream(model, onText) {
        const run = anthropic.messages.stream({ model, max_tokens: 256, messages: [{ role: 'user', content: 'A story' }] });
        run.on('text', onText);
        const final = await run.finalMessage();
        return { text: textOf(final.content), usage: final.usage };
      },
      async toolTurn(model) {
        const messages: Anthropic.MessageParam[] = [{ role: 'user', content: WEATHER_AND_TIME_QUESTION }];
        const first = await anthropic.messages.stream({ model, max_tokens: 1024, messages, tools: MESSAGES_TOOLS }).finalMessage();
        const uses = first.content.filter((block) => block.type === 'tool_use');
        return {
          calls: uses.map((block) => ({ id: block.id, name: block.name, input: block.input })),
          usage: first.usage,
          async answer(results) {
            const second = await anthropic.messages.create({
              model,
              max_tokens: 1024,
              tools: MESSAGES_TOOLS,
              messages: [
                ...messages,
                { role: 'assistant', content: first.content },
                { role: 'user', content: uses.map((block, i) => ({ type: 'tool_result' as const, tool_use_id: block.id, content: results[i]! })) },
              ],
            });
            return textOf(second.content);
          },
        };
      },
    },
  };
}

/** The error's message as the client reads it (the Anthropic SDK's own message is the raw body). */
export function messageOf(error: unknown): string {
  if (error instanceof Anthropic.APIError) return String((error.error as Json | undefined)?.error?.message);
  return (error as Error).message;
}
