import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI, type Part } from '@google/genai';
import OpenAI from 'openai';

type Json = Record<string, any>;

export type GuardedClient = 'chat' | 'responses' | 'messages' | 'gemini';

/** What the client's SDK made of an answer. */
export interface SeenAnswer {
  /** The answer's text as the SDK assembled it (a stream: the helper's final message). */
  text: string;
  /** The tool calls as the SDK assembled them, arguments parsed (a call whose arguments are not JSON throws). */
  calls: { name: string; input: unknown }[];
  /** Every text and argument fragment the SDK yielded on the way (none for a JSON answer). */
  deltas: string[];
}

export interface ToolLoop {
  system: string;
  input: Json;
  result: string;
}

/** The same request through each client's official SDK, JSON or streamed. */
export interface GuardedDriver {
  /**
   * The prompt as the user's message, with the `send_mail` tool declared and `extra` added. The
   * fragments the SDK yields go into `deltas` as they come, so a stream that fails shows them too.
   */
  send(apiKey: string, model: string, prompt: string, stream: boolean, deltas?: string[]): Promise<SeenAnswer>;
  /**
   * The second turn of a tool loop (JSON): `loop.system` as the system prompt, the user's
   * `prompt`, the model's `send_mail` call with `loop.input` as its arguments, and `loop.result`
   * as the tool's result.
   */
  sendToolLoop(apiKey: string, model: string, prompt: string, loop: ToolLoop): Promise<SeenAnswer>;
  /** A field of this client's body the IR does not carry: a passthrough upstream gets it unchanged. */
  extra: Json;
  /**
   * The SDK's error as the client reads it: the HTTP status, the message, and the code its
   * protocol has (OpenAI's `code`, Anthropic's error `type`, Google's `status`).
   */
  errorOf(error: unknown): { status: number | undefined; message: string; code: unknown };
  /** The code of a request refused by a guardrail, in this protocol's words. */
  blockedCode: string;
}

/** The tool the answers call with an e-mail address in their arguments. */
const MAIL_SCHEMA = { type: 'object', properties: { to: { type: 'string' }, body: { type: 'string' } }, required: ['to', 'body'] };
const MAIL_TOOL = { name: 'send_mail', description: 'Sends an e-mail' };
const CHAT_TOOLS = [{ type: 'function' as const, function: { ...MAIL_TOOL, parameters: MAIL_SCHEMA } }];
const RESPONSES_TOOLS = [{ type: 'function' as const, ...MAIL_TOOL, parameters: MAIL_SCHEMA, strict: false }];
const MESSAGES_TOOLS = [{ ...MAIL_TOOL, input_schema: MAIL_SCHEMA as Anthropic.Tool.InputSchema }];
const GEMINI_TOOLS = [{ functionDeclarations: [{ ...MAIL_TOOL, parametersJsonSchema: MAIL_SCHEMA }] }];

/** A field no protocol defines: a passthrough upstream gets it unchanged. */
const UNKNOWN_FIELD = { x_custom_field: { nested: [1, 'two'] } };

const parsed = (args: string): unknown => JSON.parse(args);

/** The drivers of `openai` (Chat Completions, Responses), `@anthropic-ai/sdk` and `@google/genai` against the gateway at `url`. */
export function guardedDrivers(url: string): Record<GuardedClient, GuardedDriver> {
  const openai = (apiKey: string) => new OpenAI({ baseURL: url + '/v1', apiKey, maxRetries: 0 });
  const openAIError = (error: unknown) => {
    if (!(error instanceof OpenAI.APIError)) throw error;
    return { status: error.status, message: error.message, code: error.code };
  };
  const openAIClient = { extra: UNKNOWN_FIELD, errorOf: openAIError, blockedCode: 'guardrail_blocked' };
  return {
    chat: {
      ...openAIClient,
      async send(apiKey, model, prompt, stream, deltas = []) {
        const body = {
          model,
          messages: [{ role: 'user' as const, content: prompt }],
          tools: CHAT_TOOLS,
          ...this.extra,
        };
        let message: OpenAI.ChatCompletionMessage;
        if (stream) {
          const run = openai(apiKey).chat.completions.stream({ ...body, stream_options: { include_usage: true } });
          run.on('chunk', (chunk) => {
            for (const choice of chunk.choices) {
              if (choice.delta.content) deltas.push(choice.delta.content);
              for (const call of choice.delta.tool_calls ?? []) if (call.function?.arguments) deltas.push(call.function.arguments);
            }
          });
          message = (await run.finalChatCompletion()).choices[0]!.message;
        } else {
          message = (await openai(apiKey).chat.completions.create(body)).choices[0]!.message;
        }
        const calls = (message.tool_calls ?? []).flatMap((call) => (call.type === 'function' ? [call.function] : []));
        return { text: message.content ?? '', calls: calls.map((call) => ({ name: call.name, input: parsed(call.arguments) })), deltas };
      },
      async sendToolLoop(apiKey, model, prompt, loop) {
        const call = { id: 'call_mail', type: 'function' as const, function: { name: MAIL_TOOL.name, arguments: JSON.stringify(loop.input) } };
        const answer = await openai(apiKey).chat.completions.create({
          model,
          tools: CHAT_TOOLS,
          messages: [
            { role: 'system', content: loop.system },
            { role: 'user', content: prompt },
            { role: 'assistant', content: null, tool_calls: [call] },
            { role: 'tool', tool_call_id: call.id, content: loop.result },
          ],
        });
        return { text: answer.choices[0]!.message.content ?? '', calls: [], deltas: [] };
      },
    },
    responses: {
      ...openAIClient,
      async send(apiKey, model, prompt, stream, deltas = []) {
        const body = {
          model,
          input: prompt,
          store: false,
          tools: RESPONSES_TOOLS,
          ...this.extra,
        };
        let response: OpenAI.Responses.Response;
        if (stream) {
          const run = openai(apiKey).responses.stream(body);
          run.on('event', (event) => {
            if (event.type === 'response.output_text.delta' || event.type === 'response.function_call_arguments.delta') deltas.push(event.delta);
          });
          response = await run.finalResponse();
        } else {
          response = await openai(apiKey).responses.create(body);
        }
        const calls = response.output.filter((item) => item.type === 'function_call');
        return { text: response.output_text, calls: calls.map((call) => ({ name: call.name, input: parsed(call.arguments) })), deltas };
      },
      async sendToolLoop(apiKey, model, prompt, loop) {
        const response = await openai(apiKey).responses.create({
          model,
          store: false,
          tools: RESPONSES_TOOLS,
          instructions: loop.system,
          input: [
            { role: 'user', content: prompt },
            { type: 'function_call', call_id: 'call_mail', name: MAIL_TOOL.name, arguments: JSON.stringify(loop.input) },
            { type: 'function_call_output', call_id: 'call_mail', output: loop.result },
          ],
        });
        return { text: response.output_text, calls: [], deltas: [] };
      },
    },
    messages: {
      extra: UNKNOWN_FIELD,
      errorOf(error) {
        if (!(error instanceof Anthropic.APIError)) throw error;
        const body = (error.error as Json | undefined)?.error;
        return { status: error.status, message: String(body?.message ?? error.message), code: body?.type };
      },
      blockedCode: 'invalid_request_error',
      async send(apiKey, model, prompt, stream, deltas = []) {
        const anthropic = new Anthropic({ baseURL: url, apiKey, maxRetries: 0 });
        const body = {
          model,
          max_tokens: 1024,
          messages: [{ role: 'user' as const, content: prompt }],
          tools: MESSAGES_TOOLS,
          ...this.extra,
        };
        /** The arguments as streamed, joined per block: the JSON text the SDK parsed. */
        const argumentTexts = new Map<number, string>();
        let message: Anthropic.Message;
        if (stream) {
          const run = anthropic.messages.stream(body);
          run.on('streamEvent', (event) => {
            if (event.type !== 'content_block_delta') return;
            if (event.delta.type === 'text_delta') deltas.push(event.delta.text);
            if (event.delta.type === 'input_json_delta') {
              deltas.push(event.delta.partial_json);
              argumentTexts.set(event.index, (argumentTexts.get(event.index) ?? '') + event.delta.partial_json);
            }
          });
          message = await run.finalMessage();
        } else {
          message = await anthropic.messages.create(body);
        }
        const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
        const calls = message.content.flatMap((block, index) =>
          // A streamed call's arguments must parse as the JSON text they came as, not only as the SDK's lenient partial parse.
          block.type === 'tool_use' ? [{ name: block.name, input: argumentTexts.has(index) ? parsed(argumentTexts.get(index)!) : block.input }] : [],
        );
        return { text, calls, deltas };
      },
      async sendToolLoop(apiKey, model, prompt, loop) {
        const anthropic = new Anthropic({ baseURL: url, apiKey, maxRetries: 0 });
        const message = await anthropic.messages.create({
          model,
          max_tokens: 1024,
          tools: MESSAGES_TOOLS,
          system: loop.system,
          messages: [
            { role: 'user', content: prompt },
            { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_mail', name: MAIL_TOOL.name, input: loop.input }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_mail', content: loop.result }] },
          ],
        });
        return { text: message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''), calls: [], deltas: [] };
      },
    },
    gemini: {
      // Google's own filters: a field no other protocol has, which the IR does not carry.
      extra: { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }] },
      errorOf(error) {
        if (!(error instanceof ApiError)) throw error;
        // The SDK's message holds the error body as JSON, after a prefix on a failed stream.
        const body = error.message.slice(error.message.indexOf('{'));
        let status: unknown;
        try {
          status = (JSON.parse(body) as Json).error?.status;
        } catch {
          status = undefined;
        }
        return { status: error.status, message: error.message, code: status };
      },
      blockedCode: 'INVALID_ARGUMENT',
      async send(apiKey, model, prompt, stream, deltas = []) {
        const genai = new GoogleGenAI({ apiKey, httpOptions: { baseUrl: url } });
        const params = {
          model,
          contents: prompt,
          config: { tools: GEMINI_TOOLS, ...this.extra },
        };
        const parts: Part[] = [];
        if (stream) {
          for await (const chunk of await genai.models.generateContentStream(params)) {
            for (const part of chunk.candidates?.[0]?.content?.parts ?? []) {
              parts.push(part);
              if (part.text) deltas.push(part.text);
              if (part.functionCall) deltas.push(JSON.stringify(part.functionCall.args));
            }
          }
        } else {
          parts.push(...((await genai.models.generateContent(params)).candidates?.[0]?.content?.parts ?? []));
        }
        return {
          text: parts.map((part) => (part.thought ? '' : (part.text ?? ''))).join(''),
          calls: parts.flatMap((part) => (part.functionCall ? [{ name: part.functionCall.name ?? '', input: part.functionCall.args }] : [])),
          deltas,
        };
      },
      async sendToolLoop(apiKey, model, prompt, loop) {
        const genai = new GoogleGenAI({ apiKey, httpOptions: { baseUrl: url } });
        const response = await genai.models.generateContent({
          model,
          config: { tools: GEMINI_TOOLS, systemInstruction: loop.system },
          contents: [
            { role: 'user', parts: [{ text: prompt }] },
            { role: 'model', parts: [{ functionCall: { name: MAIL_TOOL.name, args: loop.input } }] },
            { role: 'user', parts: [{ functionResponse: { name: MAIL_TOOL.name, response: { result: loop.result } } }] },
          ],
        });
        const parts = response.candidates?.[0]?.content?.parts ?? [];
        return { text: parts.map((part) => part.text ?? '').join(''), calls: [], deltas: [] };
      },
    },
  };
}
