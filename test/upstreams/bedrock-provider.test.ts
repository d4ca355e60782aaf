import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import * as v from 'valibot';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createBedrockProvider, type BedrockProviderOptions } from '../../src/providers/bedrock/bedrock-provider.js';
import { ProviderConfigSchema } from '../../src/providers/provider-config.js';
import { createProvider } from '../../src/providers/registry.js';
import { fakeTokenCount } from '../fakes/fake-anthropic.js';
import { startRawUpstream } from '../fakes/raw-upstream.js';
import { BEDROCK_CREDENTIALS, BEDROCK_REGION, CLAUDE, type FakeBedrock, NOVA, startFakeBedrock } from '../fakes/fake-bedrock.js';
import { type BedrockGateway, SIGNED_BY, serveBedrockGateway } from './bedrock-harness.js';
import { THROUGH_SECOND_DELTA } from './harness.js';

type Json = Record<string, any>;

/**
 * What the Bedrock provider does besides answering: SigV4 (the fake recomputes every signature;
 * a wrong secret, an unknown key or a stale clock are refused), credentials from the config, a
 * provider function or the environment, model ids with `:` encoded in the path, `anthropic-beta`
 * filtering on Claude, Claude on Converse when asked, and the config file's `type: "bedrock"`.
 */
let fake: FakeBedrock;
let opened: BedrockGateway[] = [];

beforeAll(async () => {
  fake = await startFakeBedrock();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());
afterEach(async () => {
  await Promise.all(opened.map((gateway) => gateway.close()));
  opened = [];
});

/** A gateway on the fake with these provider options: its URL, closed after the test. */
async function gatewayUrl(options: BedrockProviderOptions): Promise<string> {
  const gateway = await serveBedrockGateway(fake, options);
  opened.push(gateway);
  return gateway.url;
}

async function clients(options: BedrockProviderOptions): Promise<{ openai: OpenAI; anthropic: Anthropic }> {
  const url = await gatewayUrl(options);
  return {
    openai: new OpenAI({ baseURL: `${url}/v1`, apiKey: 'sk-test', maxRetries: 0 }),
    anthropic: new Anthropic({ baseURL: url, apiKey: 'sk-test', maxRetries: 0 }),
  };
}

const ask = (openai: OpenAI) => openai.chat.completions.create({ model: 'nova', messages: [{ role: 'user', content: 'Hi' }] });

describe('SigV4', () => {
  it('signs the path as sent, the model id’s colon encoded once in it and twice in the canonical request', async () => {
    const { openai } = await clients(SIGNED_BY);
    const answer = await ask(openai);
    expect(answer.choices[0]!.message.content).toBe('Hello from Bedrock.');
    const received = fake.last();
    expect(received.url).toBe('/model/amazon.nova-pro-v1%3A0/converse');
    expect(received.headers.authorization).toMatch(/SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date,/);
    expect(received.headers['x-amz-content-sha256']).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a body with a long inline image (sent in pieces, never joined) is signed over the exact bytes sent', async () => {
    const { openai } = await clients(SIGNED_BY);
    // A PNG signature, then 600 KB: well past the size at which strings are outlined and sent as pieces.
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(600_000, 7)]).toString('base64');
    await openai.chat.completions.create({
      model: 'nova',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is it?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
          ],
        },
      ],
    });
    const received = fake.last();
    expect(received.raw.byteLength).toBeGreaterThan(800_000);
    expect(received.body.messages[0].content[1]).toEqual({ image: { format: 'png', source: { bytes: png } } });
  });

  it('a wrong secret is refused by Bedrock, and the client gets the gateway’s 502, not a 403 about its own key', async () => {
    const { openai } = await clients({ ...SIGNED_BY, secretAccessKey: 'wrong/secret/KEY/000000000000000000000000' });
    const error = (await ask(openai).catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(502);
    expect(error.message).toContain('rejected the gateway');
    expect(fake.requests[0]!.rejected?.message).toContain('signature we calculated does not match');
  });

  it('an unknown access key is UnrecognizedClientException, a 502 too', async () => {
    const { openai } = await clients({ ...SIGNED_BY, accessKeyId: 'AKIAUNKNOWN000000000' });
    const error = (await ask(openai).catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(502);
    expect(fake.requests[0]!.rejected?.message).toBe('The security token included in the request is invalid.');
  });

  it('a signature from a clock 10 minutes off is expired', async () => {
    fake.useClock(() => Date.now() + 10 * 60_000);
    const { openai } = await clients(SIGNED_BY);
    const error = (await ask(openai).catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(502);
    expect(fake.requests[0]!.rejected?.message).toMatch(/^Signature expired/);
  });

  it('a session token is sent and signed', async () => {
    const { openai } = await clients({ ...SIGNED_BY, sessionToken: 'FwoGZXIvYXdzEFAKESESSIONTOKEN' });
    await ask(openai);
    const received = fake.last();
    expect(received.headers['x-amz-security-token']).toBe('FwoGZXIvYXdzEFAKESESSIONTOKEN');
    expect(received.headers.authorization).toContain('x-amz-security-token');
  });

  it('a host’s credentials provider is asked on every call', async () => {
    let asked = 0;
    const { openai } = await clients({
      region: BEDROCK_REGION,
      credentials: async () => {
        asked++;
        return BEDROCK_CREDENTIALS;
      },
    });
    await ask(openai);
    await ask(openai);
    expect(asked).toBe(2);
    expect(fake.accepted()).toHaveLength(2);
  });

  it('credentials and region from the standard AWS environment variables', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: BEDROCK_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: BEDROCK_CREDENTIALS.secretAccessKey,
      AWS_REGION: BEDROCK_REGION,
    });
    delete process.env.AWS_SESSION_TOKEN;
    try {
      const { openai } = await clients({});
      await ask(openai);
      expect(fake.last().headers.authorization).toContain(`Credential=${BEDROCK_CREDENTIALS.accessKeyId}/`);
    } finally {
      for (const key of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_REGION']) {
        if (saved[key] === undefined) delete process.env[key];
        else process.env[key] = saved[key];
      }
    }
  });

  it('without a region or credentials the provider fails at construction with a clear message', () => {
    const saved = { ...process.env };
    for (const key of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']) delete process.env[key];
    try {
      expect(() => createBedrockProvider({ ...BEDROCK_CREDENTIALS })).toThrow(/region is required/);
      expect(() => createBedrockProvider({ region: BEDROCK_REGION })).toThrow(/no credentials/);
      expect(() => createBedrockProvider({ region: BEDROCK_REGION, accessKeyId: 'AKIA' })).toThrow(/go together/);
    } finally {
      Object.assign(process.env, saved);
    }
  });
});

describe('Claude on Bedrock', () => {
  it('forwards the betas Bedrock takes in the body and drops the rest', async () => {
    const { anthropic } = await clients(SIGNED_BY);
    await anthropic.messages.create(
      { model: 'claude-bedrock', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] },
      { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14,mcp-servers-2025-12-04, context-1m-2025-08-07' } },
    );
    const received = fake.last();
    expect(received.body.anthropic_beta).toEqual(['interleaved-thinking-2025-05-14', 'context-1m-2025-08-07']);
    expect(received.headers['anthropic-beta']).toBeUndefined();
  });

  it("a client's own `anthropic_beta` body field goes through the same allowlist as the header", async () => {
    const { anthropic } = await clients({ ...SIGNED_BY, betas: ['interleaved-thinking-2025-05-14'] });
    const body = { model: 'claude-bedrock', max_tokens: 10, messages: [{ role: 'user' as const, content: 'Hi' }] };
    await anthropic.messages.create({ ...body, anthropic_beta: ['context-1m-2025-08-07', 'interleaved-thinking-2025-05-14'] } as typeof body, {
      headers: { 'anthropic-beta': 'context-1m-2025-08-07' },
    });
    expect(fake.last().body.anthropic_beta).toEqual(['interleaved-thinking-2025-05-14']);

    await anthropic.messages.create({ ...body, anthropic_beta: ['context-1m-2025-08-07'] } as typeof body);
    expect(fake.last().body).not.toHaveProperty('anthropic_beta');

    const error = (await anthropic.messages
      .create({ ...body, anthropic_beta: 'context-1m-2025-08-07' } as typeof body)
      .catch((caught: unknown) => caught)) as InstanceType<typeof Anthropic.APIError>;
    expect(error.status).toBe(400);
    expect((error.error as Json).error.message).toMatch(/anthropic_beta/);
  });

  it('with betas "all", a beta Bedrock lacks reaches it, and its 400 reaches the client', async () => {
    const { anthropic } = await clients({ ...SIGNED_BY, betas: 'all' });
    const error = (await anthropic.messages
      .create(
        { model: 'claude-bedrock', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] },
        { headers: { 'anthropic-beta': 'mcp-servers-2025-12-04' } },
      )
      .catch((caught: unknown) => caught)) as InstanceType<typeof Anthropic.APIError>;
    expect(error.status).toBe(400);
    expect((error.error as Json).error.message).toBe('invalid beta flag');
  });

  it('claudeVia "converse": Claude on Converse, its signed thinking back on the next turn', async () => {
    const { anthropic } = await clients({ ...SIGNED_BY, claudeVia: 'converse' });
    fake.reply({ reasoning: ['Let me', ' think.'], text: ['Four.'] }, { text: ['Yes.'] });
    const first = await anthropic.messages.create({
      model: 'claude-bedrock',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: '2 + 2?' }],
    });
    expect(first.content[0]).toEqual({ type: 'thinking', thinking: 'Let me think.', signature: 'sig-bedrock-fake' });
    const firstBody = fake.last().body;
    expect(fake.last().path).toBe(`/model/${encodeURIComponent(CLAUDE)}/converse`);
    expect(firstBody.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 1024 } });
    expect(firstBody.inferenceConfig.maxTokens).toBe(2048);

    await anthropic.messages.create({
      model: 'claude-bedrock',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [
        { role: 'user', content: '2 + 2?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: 'Sure?' },
      ],
    });
    expect(fake.last().body.messages[1]).toEqual({
      role: 'assistant',
      content: [{ reasoningContent: { reasoningText: { text: 'Let me think.', signature: 'sig-bedrock-fake' } } }, { text: 'Four.' }],
    });
  });
});

describe('Claude on Converse with thinking', () => {
  it('a Chat client’s tool loop with reasoning: the second turn, without the signed reasoning Chat cannot keep, goes without thinking', async () => {
    const { openai } = await clients({ ...SIGNED_BY, claudeVia: 'converse' });
    fake.reply({ reasoning: ['Need the weather.'], toolCalls: [{ name: 'get_weather', args: ['{"city":"Paris"}'] }] }, { text: ['Sunny.'] });
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    ];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await openai.chat.completions.create({ model: 'claude-bedrock', messages, tools, reasoning_effort: 'high' });
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(fake.last().body.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 16384 } });

    const second = await openai.chat.completions.create({
      model: 'claude-bedrock',
      tools,
      reasoning_effort: 'high',
      messages: [...messages, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: 'sunny' }],
    });
    expect(second.choices[0]!.message.content).toBe('Sunny.');
    // The fake refuses a thinking request whose tool turn lacks signed reasoning: it was accepted, without thinking.
    expect(fake.last().body.additionalModelRequestFields).toBeUndefined();
  });
});

describe('guardrails', () => {
  it('a configured guardrail is Converse’s guardrailConfig and the invoke headers', async () => {
    const { openai, anthropic } = await clients({ ...SIGNED_BY, guardrail: { identifier: 'gr-abc123', version: '2', trace: 'enabled' } });
    await ask(openai);
    expect(fake.last().body.guardrailConfig).toEqual({ guardrailIdentifier: 'gr-abc123', guardrailVersion: '2', trace: 'enabled' });
    await anthropic.messages.create({ model: 'claude-bedrock', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    expect(fake.last().headers).toMatchObject({
      'x-amzn-bedrock-guardrailidentifier': 'gr-abc123',
      'x-amzn-bedrock-guardrailversion': '2',
      'x-amzn-bedrock-trace': 'ENABLED',
    });
  });
});

describe('token counting', () => {
  it('a Messages client’s count on Claude is Bedrock’s CountTokens on the bare model id; on other models the gateway counts', async () => {
    const { anthropic } = await clients(SIGNED_BY);
    const params = { model: 'claude-bedrock', system: 'Be brief.', messages: [{ role: 'user' as const, content: 'How many tokens is this?' }] };
    const counted = await anthropic.messages.countTokens(params, { headers: { 'anthropic-beta': 'context-1m-2025-08-07,mcp-servers-2025-12-04' } });
    const received = fake.last();
    expect(received.url).toBe(`/model/${encodeURIComponent('anthropic.claude-sonnet-4-5-20250929-v1:0')}/count-tokens`);
    expect(received.body.decoded).toMatchObject({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['context-1m-2025-08-07'],
      max_tokens: 1,
      system: 'Be brief.',
    });
    expect(received.body.decoded).not.toHaveProperty('model');
    expect(counted.input_tokens).toBe(fakeTokenCount({ system: 'Be brief.', messages: params.messages }));

    fake.reset();
    const local = await anthropic.messages.countTokens({ ...params, model: 'nova' });
    expect(local.input_tokens).toBeGreaterThan(0);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('config file', () => {
  it('`type: "bedrock"` is a provider of the config file, its fields checked', () => {
    const config = v.parse(ProviderConfigSchema, {
      type: 'bedrock',
      region: BEDROCK_REGION,
      ...BEDROCK_CREDENTIALS,
      baseURL: fake.url,
      betas: ['context-1m-2025-08-07'],
      guardrail: { identifier: 'gr-abc123', version: 'DRAFT' },
      defaultMaxTokens: 1024,
    });
    const provider = createProvider('aws', config);
    expect(provider.type).toBe('bedrock');
    void provider.close?.();
    expect(() => v.parse(ProviderConfigSchema, { type: 'bedrock', region: 'us-east-1', apiKey: 'nope' })).toThrow();
  });
});

describe('streams', () => {
  it('a throttle as the stream’s first event is an HTTP 429 with a retry delay, nothing streamed', async () => {
    const { openai } = await clients(SIGNED_BY);
    fake.reply({ text: ['never'], streamError: { after: 0, type: 'throttlingException', message: 'Too many tokens, please wait before trying again.' } });
    const error = (await openai.chat.completions
      .create({ model: 'nova', messages: [{ role: 'user', content: 'Hi' }], stream: true })
      .then(async (stream) => {
        for await (const _chunk of stream);
      })
      .catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBe(429);
    expect(error.headers?.get('retry-after')).toBe('1');
  });

  it('a stream request answered with JSON (an error a proxy sent with a 200) is a 502 with its message, nothing streamed', async () => {
    const raw = await startRawUpstream();
    raw.script = (exchange) => exchange.json(200, { message: 'Proxy: the model is not available here.' });
    try {
      const { openai, anthropic } = await clients({ ...SIGNED_BY, baseURL: raw.url });
      const translated = await openai.chat.completions
        .create({ model: 'nova', messages: [{ role: 'user', content: 'Hi' }], stream: true })
        .catch((caught: unknown) => caught);
      const passedThrough = await anthropic.messages
        .create({ model: 'claude-bedrock', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }], stream: true })
        .catch((caught: unknown) => caught);
      expect(raw.requests.map((request) => request.path)).toEqual([
        `/model/${encodeURIComponent(NOVA)}/converse-stream`,
        `/model/${encodeURIComponent(CLAUDE)}/invoke-with-response-stream`,
      ]);
      for (const error of [translated, passedThrough]) {
        expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
        expect((error as Error).message).toContain('the model is not available here');
      }
    } finally {
      await raw.close();
    }
  });

  it('a client that leaves mid-stream closes the Bedrock stream too', async () => {
    const { anthropic } = await clients(SIGNED_BY);
    // Through the second text delta: messageStart and two deltas; Anthropic's events before its first delta and two deltas.
    for (const [model, stallAfter] of [
      ['nova', 3],
      ['claude-bedrock', THROUGH_SECOND_DELTA.anthropic],
    ] as const) {
      fake.reset();
      fake.reply({ text: ['Once', ' upon', ' a time'], stallAfter });
      const controller = new AbortController();
      const stream = await anthropic.messages.create(
        { model, max_tokens: 64, messages: [{ role: 'user', content: 'A story' }], stream: true },
        { signal: controller.signal },
      );
      const seen: string[] = [];
      const reading = (async () => {
        for await (const event of stream) {
          if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') {
            seen.push(event.delta.text);
            controller.abort();
          }
        }
      })().catch((error: unknown) => {
        if (!controller.signal.aborted) throw error;
      });
      await reading;
      const received = fake.requests[0]!;
      await received.closed;
      expect(seen).toEqual(['Once']);
      expect(received.closedEarly).toBe(true);
    }
  });
});

describe('a Gemini client', () => {
  it('generateContent and generateContentStream on Nova (Converse) and Claude (translated to Messages on invoke)', async () => {
    const genai = new GoogleGenAI({ apiKey: 'sk-test', httpOptions: { baseUrl: await gatewayUrl(SIGNED_BY) } });

    fake.reply({ text: ['Bonjour'] }, { text: ['Un', ' deux'] }, { text: ['Salut'] });
    const json = await genai.models.generateContent({ model: 'nova', contents: 'Hello in French', config: { systemInstruction: 'Be brief.' } });
    expect(json.text).toBe('Bonjour');
    expect(fake.last().body).toMatchObject({ system: [{ text: 'Be brief.' }], messages: [{ role: 'user', content: [{ text: 'Hello in French' }] }] });

    let streamed = '';
    for await (const chunk of await genai.models.generateContentStream({ model: 'nova', contents: 'Count' })) streamed += chunk.text ?? '';
    expect(streamed).toBe('Un deux');
    expect(fake.last().path).toBe(`/model/${encodeURIComponent(NOVA)}/converse-stream`);

    expect((await genai.models.generateContent({ model: 'claude-bedrock', contents: 'Hi' })).text).toBe('Salut');
    expect(fake.last().path).toBe(`/model/${encodeURIComponent(CLAUDE)}/invoke`);
    expect(fake.last().body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 4096 });
  });
});
