import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway, type UsageEvent } from '../../src/index.js';
import { createBedrockProvider } from '../../src/providers/bedrock/bedrock-provider.js';
import {
  BEDROCK_CREDENTIALS,
  BEDROCK_REGION,
  COHERE_EN,
  COHERE_MULTI,
  COHERE_V4,
  type FakeBedrock,
  startFakeBedrock,
  TITAN_V1,
  TITAN_V2,
} from '../fakes/fake-bedrock.js';
import { serve, type Served } from '../helpers/serve.js';

/**
 * `client.embeddings.create` through Bedrock: Titan Text Embeddings v2 (one input per signed
 * `invoke`, `dimensions` 256/512/1024, normalized) and v1 (fixed length), Cohere Embed v3 (up to
 * 96 texts a call, `input_type`), float and base64, usage from Titan's `inputTextTokenCount` and
 * Cohere's `x-amzn-bedrock-input-token-count` header.
 */
let fake: FakeBedrock;
let gateway: Gateway;
let served: Served;
let openai: OpenAI;
const events: UsageEvent[] = [];

beforeAll(async () => {
  fake = await startFakeBedrock();
  gateway = createGateway({
    keys: [{ key: 'sk-test' }],
    providers: { aws: createBedrockProvider({ region: BEDROCK_REGION, ...BEDROCK_CREDENTIALS, baseURL: fake.url }) },
    models: [
      { id: 'titan', provider: 'aws', upstreamModel: TITAN_V2, kind: 'embedding' },
      { id: 'titan-v1', provider: 'aws', upstreamModel: TITAN_V1, kind: 'embedding' },
      { id: 'cohere', provider: 'aws', upstreamModel: COHERE_EN, kind: 'embedding' },
      { id: 'cohere-multi', provider: 'aws', upstreamModel: COHERE_MULTI, kind: 'embedding' },
      { id: 'cohere-v4', provider: 'aws', upstreamModel: COHERE_V4, kind: 'embedding' },
    ],
    hooks: { onUsage: (event) => void events.push(event) },
    logger: false,
  });
  served = await serve(gateway);
  openai = new OpenAI({ baseURL: `${served.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
});
afterAll(async () => {
  await served.close();
  await gateway.dispose();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  events.length = 0;
});

const norm = (vector: number[]) => Math.hypot(...vector);

describe('Bedrock Titan embeddings', () => {
  it('one signed invoke per input, float vectors in order, tokens summed', async () => {
    const answer = await openai.embeddings.create({ model: 'titan', input: ['the first text', 'a second one here'], encoding_format: 'float' });
    expect(answer.model).toBe('titan');
    expect(answer.data.map((item) => item.index)).toEqual([0, 1]);
    expect(answer.data[0]!.embedding).toHaveLength(1024);
    expect(norm(answer.data[0]!.embedding)).toBeCloseTo(1, 6);
    expect(answer.usage).toEqual({ prompt_tokens: 7, total_tokens: 7 });

    const calls = fake.accepted();
    expect(calls.map((call) => call.url)).toEqual(['/model/amazon.titan-embed-text-v2%3A0/invoke', '/model/amazon.titan-embed-text-v2%3A0/invoke']);
    expect(calls.map((call) => call.body.inputText).sort()).toEqual(['a second one here', 'the first text']);
    expect(calls[0]!.body.normalize).toBe(true);
    expect(calls[0]!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
  });

  it('many inputs: at most 8 Titan calls in flight, the vectors still in input order', async () => {
    const input = Array.from({ length: 30 }, (_, i) => `input number ${i}`);
    fake.holdUntilQuiet(true);
    const answer = await openai.embeddings.create({ model: 'titan', input, encoding_format: 'float', dimensions: 256 });
    expect(answer.data.map((item) => item.index)).toEqual(input.map((_, i) => i));
    // Each vector is the one of its own input (the fake's vectors are a function of the text).
    const single = await openai.embeddings.create({ model: 'titan', input: 'input number 17', encoding_format: 'float', dimensions: 256 });
    expect(answer.data[17]!.embedding).toEqual(single.data[0]!.embedding);
    expect(fake.accepted()).toHaveLength(31);
    // The fake answers only once the calls stop coming, so the gateway's limit is what it saw.
    expect(fake.peakConcurrency).toBeLessThanOrEqual(8);
  });

  it('the first failed call ends the request: the calls in flight are aborted and no more are made', async () => {
    // Every call Bedrock accepts hangs: only the gateway can end it, by aborting.
    fake.reply(...Array.from({ length: 2048 }, () => ({ hang: true })));
    const input = ['x'.repeat(60_000), ...Array.from({ length: 2047 }, (_, i) => `short text ${i}`)];
    const error = (await openai.embeddings.create({ model: 'titan', input, encoding_format: 'float' }).catch((caught: unknown) => caught)) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(error.status).toBe(400);
    expect(error.message).toContain('expected maxLength: 50000');
    // The refused text and the 7 calls in flight with it, each cut by the gateway; nothing after them.
    await expect.poll(() => fake.requests.filter((call) => !call.rejected && !call.closedEarly)).toEqual([]);
    expect(fake.requests.length).toBeGreaterThan(1);
    expect(fake.requests.length).toBeLessThanOrEqual(8);
  });

  it('dimensions and base64: the shortened vector as little-endian float32', async () => {
    const answer = await openai.embeddings.create({ model: 'titan', input: 'short', dimensions: 256, encoding_format: 'base64' });
    const base64 = answer.data[0]!.embedding as unknown as string;
    expect(typeof base64).toBe('string');
    expect(Buffer.from(base64, 'base64').byteLength).toBe(256 * 4);
    expect(fake.last().body).toEqual({ inputText: 'short', dimensions: 256, normalize: true });
  });

  it('the SDK’s default (base64) decodes to the same floats as a float request', async () => {
    const [floats, decoded] = await Promise.all([
      openai.embeddings.create({ model: 'titan', input: 'same text', encoding_format: 'float' }),
      openai.embeddings.create({ model: 'titan', input: 'same text' }),
    ]);
    const expected = floats.data[0]!.embedding.map((value) => Math.fround(value));
    expect(decoded.data[0]!.embedding).toEqual(expected);
  });

  it('dimensions Titan v2 does not offer are a 400 naming dimensions, before any call', async () => {
    const error = (await openai.embeddings.create({ model: 'titan', input: 'x', dimensions: 300 }).catch((caught: unknown) => caught)) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(error.status).toBe(400);
    expect(error.param).toBe('dimensions');
    expect(fake.requests).toHaveLength(0);
  });

  it('Titan v1 has a fixed length: dimensions is a 400; without them its body has inputText only', async () => {
    const error = (await openai.embeddings.create({ model: 'titan-v1', input: 'x', dimensions: 256 }).catch((caught: unknown) => caught)) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(error.status).toBe(400);
    expect(error.param).toBe('dimensions');
    const answer = await openai.embeddings.create({ model: 'titan-v1', input: 'plain', encoding_format: 'float' });
    expect(answer.data[0]!.embedding).toHaveLength(1536);
    expect(fake.last().body).toEqual({ inputText: 'plain' });
  });

  it('token arrays are a 400 naming input: Bedrock embeds text', async () => {
    const error = (await openai.embeddings.create({ model: 'titan', input: [[1, 2, 3]] }).catch((caught: unknown) => caught)) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(error.status).toBe(400);
    expect(error.param).toBe('input');
  });
});

describe('Bedrock Cohere embeddings', () => {
  it('texts in batches of 96 with input_type search_document, tokens from the header, a usage event', async () => {
    const input = Array.from({ length: 100 }, (_, i) => `text number ${i}`);
    const answer = await openai.embeddings.create({ model: 'cohere', input, encoding_format: 'float' });
    expect(answer.data).toHaveLength(100);
    expect(answer.data.map((item) => item.index)).toEqual(input.map((_, i) => i));
    expect(answer.data[0]!.embedding).toHaveLength(1024);
    expect(answer.usage.prompt_tokens).toBe(300);

    const calls = fake.accepted();
    expect(calls.map((call) => call.body.texts.length).sort((a: number, b: number) => a - b)).toEqual([4, 96]);
    expect(calls[0]!.body).toMatchObject({ input_type: 'search_document', embedding_types: ['float'] });
    expect(calls[0]!.url).toBe('/model/cohere.embed-english-v3/invoke');
    await expect.poll(() => events.length).toBe(1);
    expect(events[0]).toMatchObject({ model: 'cohere', usage: expect.objectContaining({ input: 300 }) });
  });

  it('base64 on the multilingual model; dimensions is a 400 (fixed length)', async () => {
    const answer = await openai.embeddings.create({ model: 'cohere-multi', input: ['hola', 'bonjour'], encoding_format: 'base64' });
    expect(answer.data.map((item) => Buffer.from(item.embedding as unknown as string, 'base64').byteLength)).toEqual([4096, 4096]);
    const error = (await openai.embeddings.create({ model: 'cohere', input: 'x', dimensions: 256 }).catch((caught: unknown) => caught)) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(error.status).toBe(400);
    expect(error.param).toBe('dimensions');
  });

  it('Embed v4 shortens its vectors: dimensions as output_dimension', async () => {
    const answer = await openai.embeddings.create({ model: 'cohere-v4', input: ['a', 'b'], dimensions: 512, encoding_format: 'float' });
    expect(answer.data.map((item) => item.embedding.length)).toEqual([512, 512]);
    expect(fake.last().body).toMatchObject({ output_dimension: 512, input_type: 'search_document' });
    const error = (await openai.embeddings.create({ model: 'cohere-v4', input: 'x', dimensions: 300 }).catch((caught: unknown) => caught)) as InstanceType<
      typeof OpenAI.APIError
    >;
    expect(error.param).toBe('dimensions');
  });
});
