import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway } from '../../src/gateway.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createBedrockProvider } from '../../src/providers/bedrock/bedrock-provider.js';
import { createGeminiProvider } from '../../src/providers/gemini/gemini-provider.js';
import { createOpenAIProvider } from '../../src/providers/openai/openai-provider.js';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { type FakeBedrock, LLAMA, startFakeBedrock } from '../fakes/fake-bedrock.js';
import { startFakeGemini } from '../fakes/fake-gemini.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';
import { SIGNED_BY } from './bedrock-harness.js';

type Json = Record<string, any>;

/**
 * The rule of docs/providers.md, "Parameters an upstream lacks", on every translated pair of a
 * client protocol (each with its official SDK) and an upstream wire (each a strict fake): a
 * sampling hint the wire lacks does not reach the upstream and `x-infergate-dropped-params` names
 * it as the client sent it (JSON and SSE answers); a field whose loss would change the answer is
 * a 400 in the client's error shape naming the client's field; `strictParams` on the key (or the
 * model) turns the drop into that 400.
 */

type Client = 'chat' | 'responses' | 'messages' | 'gemini';
type Wire = 'chat' | 'responses' | 'anthropic' | 'gemini' | 'converse';

const MODELS: Record<Wire, string> = { chat: 'gpt-chat', responses: 'gpt-resp', anthropic: 'claude', gemini: 'gem', converse: 'llama' };
const HEADER = 'x-infergate-dropped-params';

interface Cell {
  /** Fields the client adds (Gemini: `config`), that the wire lacks; `names` as the header says them. */
  hint?: { fields: Json; names: string; leak: RegExp };
  /** Where the wire has every hint the client can send: one that goes through, and no header. */
  kept?: { fields: Json; seen: RegExp };
  /** A field whose loss would change the answer, and its name as the client sent it. */
  meaning?: { fields: Json; param: string };
}

const SIX_STOPS = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'];
const JSON_MODE: Record<Client, Json> = {
  chat: { response_format: { type: 'json_object' } },
  responses: { text: { format: { type: 'json_object' } } },
  messages: {},
  gemini: { responseMimeType: 'application/json' },
};
const WEATHER_TOOL = { name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } };

/** Pairs whose client speaks the wire natively are passed through, not translated: not listed. */
const CELLS: Record<Client, Partial<Record<Wire, Cell>>> = {
  chat: {
    responses: { hint: { fields: { seed: 7 }, names: 'seed', leak: /seed/ }, meaning: { fields: { stop: ['END'] }, param: 'stop' } },
    anthropic: { hint: { fields: { seed: 7 }, names: 'seed', leak: /seed/ }, meaning: { fields: JSON_MODE.chat, param: 'response_format' } },
    gemini: {
      hint: { fields: { logit_bias: { '50256': -100 } }, names: 'logit_bias', leak: /logit|50256/i },
      meaning: { fields: { stop: SIX_STOPS }, param: 'stop' },
    },
    converse: {
      hint: { fields: { frequency_penalty: 0.5, presence_penalty: 0.2 }, names: 'frequency_penalty, presence_penalty', leak: /penalty/i },
      meaning: { fields: JSON_MODE.chat, param: 'response_format' },
    },
  },
  responses: {
    // Chat has every hint and every field of meaning a Responses client can send.
    chat: { kept: { fields: { text: { verbosity: 'low' } }, seen: /"verbosity":"low"/ } },
    anthropic: {
      hint: { fields: { text: { verbosity: 'low' } }, names: 'text.verbosity', leak: /verbosity/ },
      meaning: { fields: JSON_MODE.responses, param: 'text.format' },
    },
    // Gemini takes JSON mode: nothing of meaning to refuse.
    gemini: { hint: { fields: { text: { verbosity: 'low' } }, names: 'text.verbosity', leak: /verbosity/ } },
    converse: {
      hint: { fields: { text: { verbosity: 'low' } }, names: 'text.verbosity', leak: /verbosity/ },
      meaning: { fields: JSON_MODE.responses, param: 'text.format' },
    },
  },
  messages: {
    chat: { hint: { fields: { top_k: 5 }, names: 'top_k', leak: /top_k/ } },
    responses: { hint: { fields: { top_k: 5 }, names: 'top_k', leak: /top_k/ }, meaning: { fields: { stop_sequences: ['END'] }, param: 'stop_sequences' } },
    gemini: {
      hint: {
        fields: { tools: [WEATHER_TOOL], tool_choice: { type: 'auto', disable_parallel_tool_use: true } },
        names: 'tool_choice.disable_parallel_tool_use',
        leak: /parallel/i,
      },
      meaning: { fields: { stop_sequences: SIX_STOPS }, param: 'stop_sequences' },
    },
    converse: {
      hint: { fields: { top_k: 5 }, names: 'top_k', leak: /top_?k/i },
      // Converse has no "none" once the conversation holds tool calls.
      meaning: {
        fields: {
          tools: [WEATHER_TOOL],
          tool_choice: { type: 'none' },
          messages: [
            { role: 'user', content: 'Weather in Paris?' },
            { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '21 C' }] },
          ],
        },
        param: 'tool_choice',
      },
    },
  },
  gemini: {
    chat: { hint: { fields: { topK: 40 }, names: 'generationConfig.topK', leak: /top_?k/i } },
    responses: {
      hint: { fields: { topK: 40, seed: 1 }, names: 'generationConfig.topK, generationConfig.seed', leak: /top_?k|seed/i },
      meaning: { fields: { stopSequences: ['END'] }, param: 'generationConfig.stopSequences' },
    },
    anthropic: {
      hint: { fields: { frequencyPenalty: 0.5 }, names: 'generationConfig.frequencyPenalty', leak: /penalty/i },
      meaning: { fields: JSON_MODE.gemini, param: 'generationConfig.responseMimeType' },
    },
    converse: {
      hint: { fields: { topK: 40 }, names: 'generationConfig.topK', leak: /top_?k/i },
      meaning: { fields: JSON_MODE.gemini, param: 'generationConfig.responseMimeType' },
    },
  },
};

let served: Served;
let fakes: Record<Exclude<Wire, 'converse'>, FakeUpstream>;
let bedrock: FakeBedrock;

beforeAll(async () => {
  const [chat, responses, anthropic, gemini] = await Promise.all([
    startFakeOpenAI({ endpoints: ['chat'] }),
    startFakeOpenAI({ endpoints: ['responses'] }),
    startFakeAnthropic(),
    startFakeGemini(),
  ]);
  fakes = { chat, responses, anthropic, gemini };
  bedrock = await startFakeBedrock();
  const gateway = createGateway({
    keys: [{ key: 'sk-test' }, { key: 'sk-strict', strictParams: true }, { key: 'sk-lenient', strictParams: false }, { key: 'sk-cache', cache: true }],
    providers: {
      'oai-chat': createOpenAIProvider({ baseURL: `${chat.url}/v1`, apiKey: 'up-key', responses: false }),
      'oai-responses': createOpenAIProvider({ baseURL: `${responses.url}/v1`, apiKey: 'up-key', responses: true, chat: false }),
      claude: createAnthropicProvider({ baseURL: anthropic.url, apiKey: 'up-key' }),
      google: createGeminiProvider({ baseURL: gemini.url, apiKey: 'up-key' }),
      aws: createBedrockProvider({ baseURL: bedrock.url, ...SIGNED_BY }),
    },
    models: [
      { id: 'gpt-chat', provider: 'oai-chat', upstreamModel: 'gpt-4.1' },
      { id: 'gpt-chat-strict', provider: 'oai-chat', upstreamModel: 'gpt-4.1', strictParams: true },
      { id: 'gpt-resp', provider: 'oai-responses', upstreamModel: 'gpt-5' },
      { id: 'claude', provider: 'claude', upstreamModel: 'claude-sonnet-4-5' },
      { id: 'gem', provider: 'google', upstreamModel: 'gemini-2.5-flash' },
      { id: 'llama', provider: 'aws', upstreamModel: LLAMA },
    ],
    responseCache: true,
    logger: false,
  });
  served = await serve(gateway);
});
afterAll(async () => {
  await served.close();
  await Promise.all([...Object.values(fakes).map((fake) => fake.close()), bedrock.close()]);
});
beforeEach(() => {
  for (const fake of Object.values(fakes)) fake.reset();
  bedrock.reset();
});

/** The request body the wire's fake last accepted, as JSON text. */
function received(wire: Wire): string {
  return JSON.stringify(wire === 'converse' ? bedrock.last().body : fakes[wire].last().body);
}

function requestCount(wire: Wire): number {
  return wire === 'converse' ? bedrock.requests.length : fakes[wire].requests.length;
}

interface Sent {
  /** The answer header, or null. */
  dropped: string | null;
}

/** One request with the client's official SDK: a short prompt plus `fields`, JSON or streamed, to read what it answered. */
async function send(client: Client, model: string, fields: Json, options: { key?: string; stream?: boolean } = {}): Promise<Sent> {
  const apiKey = options.key ?? 'sk-test';
  const stream = options.stream ?? false;
  switch (client) {
    case 'chat': {
      const openai = new OpenAI({ baseURL: `${served.url}/v1`, apiKey, maxRetries: 0 });
      const body = { model, messages: [{ role: 'user', content: 'Hi' }], ...fields, stream } as any;
      const { data, response } = await openai.chat.completions.create(body).withResponse();
      if (stream) for await (const _ of data as unknown as AsyncIterable<unknown>);
      return { dropped: response.headers.get(HEADER) };
    }
    case 'responses': {
      const openai = new OpenAI({ baseURL: `${served.url}/v1`, apiKey, maxRetries: 0 });
      const { data, response } = await openai.responses.create({ model, input: 'Hi', ...fields, stream } as any).withResponse();
      if (stream) for await (const _ of data as unknown as AsyncIterable<unknown>);
      return { dropped: response.headers.get(HEADER) };
    }
    case 'messages': {
      const anthropic = new Anthropic({ baseURL: served.url, apiKey, maxRetries: 0 });
      const body = { model, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }], ...fields, stream } as any;
      const { data, response } = await anthropic.messages.create(body).withResponse();
      if (stream) for await (const _ of data as unknown as AsyncIterable<unknown>);
      return { dropped: response.headers.get(HEADER) };
    }
    case 'gemini': {
      const genai = new GoogleGenAI({ apiKey, httpOptions: { baseUrl: served.url } });
      const request = { model, contents: 'Hi', config: fields };
      if (!stream) return { dropped: (await genai.models.generateContent(request)).sdkHttpResponse?.headers?.[HEADER] ?? null };
      let dropped: string | null = null;
      for await (const chunk of await genai.models.generateContentStream(request)) dropped ??= chunk.sdkHttpResponse?.headers?.[HEADER] ?? null;
      return { dropped };
    }
  }
}

/** The 400 as each client's SDK shows it, naming `param` as the client sent it. */
async function expectRefusal(client: Client, sending: Promise<unknown>, param: string): Promise<void> {
  const error = await sending.then(
    () => expect.fail('expected a 400'),
    (caught: unknown) => caught,
  );
  switch (client) {
    case 'chat':
    case 'responses':
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe(param);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).type).toBe('invalid_request_error');
      return;
    case 'messages': {
      // Anthropic's error body has no field path: the message names it.
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      const body = (error as InstanceType<typeof Anthropic.BadRequestError>).error as Json;
      expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining(`'${param}'`) } });
      return;
    }
    case 'gemini': {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(400);
      const body = JSON.parse((error as ApiError).message);
      expect(body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining(`'${param}'`) });
      expect(body.error.details).toContainEqual(expect.objectContaining({ fieldViolations: [expect.objectContaining({ field: param })] }));
      return;
    }
  }
}

const PAIRS = (Object.entries(CELLS) as [Client, Partial<Record<Wire, Cell>>][]).flatMap(([client, cells]) =>
  (Object.entries(cells) as [Wire, Cell][]).map(([wire, cell]) => ({ client, wire, cell })),
);

describe.each(PAIRS)('$client client → $wire upstream', ({ client, wire, cell }) => {
  const { hint, kept, meaning } = cell;

  if (hint) {
    it.each([false, true])('drops the hint the upstream lacks and names it as the client sent it (stream: %s)', async (stream) => {
      const sent = await send(client, MODELS[wire], hint.fields, { stream });
      expect(sent.dropped).toBe(hint.names);
      expect(received(wire)).not.toMatch(hint.leak);
    });

    it('refuses the hint instead with the key’s strictParams, before any upstream call', async () => {
      const name = hint.names.split(', ')[0]!;
      await expectRefusal(client, send(client, MODELS[wire], hint.fields, { key: 'sk-strict' }), name);
      expect(requestCount(wire)).toBe(0);
    });
  }

  if (kept) {
    it('passes every hint on, and names none', async () => {
      const sent = await send(client, MODELS[wire], kept.fields);
      expect(sent.dropped).toBeNull();
      expect(received(wire)).toMatch(kept.seen);
    });
  }

  if (meaning) {
    it('refuses a field whose loss would change the answer, naming it as the client sent it', async () => {
      await expectRefusal(client, send(client, MODELS[wire], meaning.fields), meaning.param);
      expect(requestCount(wire)).toBe(0);
    });
  }
});

describe('strictParams and the response cache', () => {
  it('a model’s strictParams refuses; a key’s strictParams: false wins over it', async () => {
    await expectRefusal('gemini', send('gemini', 'gpt-chat-strict', { topK: 40 }), 'generationConfig.topK');
    expect((await send('gemini', 'gpt-chat-strict', { topK: 40 }, { key: 'sk-lenient' })).dropped).toBe('generationConfig.topK');
  });

  it('a cached answer is replayed with the header its first answer had, JSON and streamed', async () => {
    const fields = { temperature: 0, topK: 40 };
    expect((await send('gemini', MODELS.chat, fields, { key: 'sk-cache' })).dropped).toBe('generationConfig.topK');
    expect((await send('gemini', MODELS.chat, fields, { key: 'sk-cache' })).dropped).toBe('generationConfig.topK');
    expect((await send('gemini', MODELS.chat, fields, { key: 'sk-cache', stream: true })).dropped).toBe('generationConfig.topK');
    expect(fakes.chat.accepted()).toHaveLength(1);
  });

  it('a model that does not reason: the client’s reasoning option is dropped and named', async () => {
    const sent = await send('messages', MODELS.chat, { thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(sent.dropped).toBe('thinking');
    expect(received('chat')).not.toMatch(/reasoning/);
  });
});

describe('400s about a part of the conversation name it where the client wrote it', () => {
  it('Responses: call arguments that are no JSON object, to Gemini and Converse, name input[i].arguments', async () => {
    const input = [
      { role: 'user', content: 'Weather in Paris?' },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '[1]' },
      { type: 'function_call_output', call_id: 'call_1', output: '21 C' },
    ];
    const tools = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } }];
    for (const wire of ['gemini', 'converse'] as const) {
      await expectRefusal('responses', send('responses', MODELS[wire], { input, tools }), 'input[1].arguments');
    }
  });

  it('Messages: a tool result that answers no call, to Gemini, names its tool_use_id', async () => {
    const messages = [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: 'Let me see.' },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: '21 C' }] },
    ];
    await expectRefusal('messages', send('messages', MODELS.gemini, { messages }), 'messages[2].content[0].tool_use_id');
  });
});

/**
 * Fields no decoder reads (`ignored-fields.ts`): on a translated path each is named in the header
 * as the client sent it, and refused under `strictParams`; a passthrough sends them on unnamed.
 */
/** `names` in the order the SDK writes them; strictParams refuses the first. */
const IGNORED: { client: Client; wire: Wire; fields: Json; names: string[]; leak: RegExp }[] = [
  // vLLM's `min_p`, sent by an OpenAI client to a gateway in front of Claude.
  { client: 'chat', wire: 'anthropic', fields: { min_p: 0.1 }, names: ['min_p'], leak: /min_p/ },
  {
    client: 'responses',
    wire: 'anthropic',
    fields: { truncation: 'auto', max_tool_calls: 3 },
    names: ['truncation', 'max_tool_calls'],
    leak: /truncation|max_tool/,
  },
  {
    client: 'messages',
    wire: 'chat',
    fields: { context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] }, inference_geo: 'us' },
    names: ['context_management', 'inference_geo'],
    leak: /context_management|inference_geo|clear_tool/,
  },
  {
    client: 'gemini',
    wire: 'chat',
    fields: {
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }],
      mediaResolution: 'MEDIA_RESOLUTION_LOW',
      temperature: 0.5,
    },
    names: ['safetySettings', 'generationConfig.mediaResolution'],
    leak: /safety|HARM|media/i,
  },
];

describe.each(IGNORED)('fields the $client decoder does not read, to a $wire upstream', ({ client, wire, fields, names, leak }) => {
  it.each([false, true])('are named as the client sent them, and reach no upstream (stream: %s)', async (stream) => {
    const sent = await send(client, MODELS[wire], fields, { stream });
    expect(sent.dropped).toBe(names.join(', '));
    expect(received(wire)).not.toMatch(leak);
  });

  it('are refused with strictParams, in the client’s error shape, before any upstream call', async () => {
    await expectRefusal(client, send(client, MODELS[wire], fields, { key: 'sk-strict' }), names[0]!);
    expect(requestCount(wire)).toBe(0);
  });
});

describe('fields no decoder reads, bounds and defaults', () => {
  it('passthrough sends them on as they came, naming none', async () => {
    const messages = await send('messages', MODELS.anthropic, { context_management: { edits: [] }, inference_geo: 'us' });
    expect(messages.dropped).toBeNull();
    expect(received('anthropic')).toMatch(/"context_management".*"inference_geo":"us"/);
    const gemini = await send('gemini', MODELS.gemini, { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }] });
    expect(gemini.dropped).toBeNull();
    expect(received('gemini')).toMatch(/BLOCK_ONLY_HIGH/);
  });

  it('a field at the vendor’s default is not named (Responses `truncation: "disabled"`)', async () => {
    expect((await send('responses', MODELS.anthropic, { truncation: 'disabled' }, { key: 'sk-strict' })).dropped).toBeNull();
  });

  it('the header names at most 16 fields, each cut to 100 characters, the list to 2000', async () => {
    const fields = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x_${String(i).padStart(2, '0')}_${'a'.repeat(300)}`, i]));
    const sent = await send('chat', MODELS.anthropic, fields);
    const listed = sent.dropped!.split(', ');
    expect(listed).toHaveLength(16);
    expect(listed[0]).toBe(`x_00_${'a'.repeat(95)}...`);
    expect(sent.dropped!.length).toBeLessThanOrEqual(2000);
  });
});
