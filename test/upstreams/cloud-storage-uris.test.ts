import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../src/gateway.js';
import { createBedrockProvider } from '../../src/providers/bedrock/bedrock-provider.js';
import { createGeminiProvider } from '../../src/providers/gemini/gemini-provider.js';
import { createVertexProvider } from '../../src/providers/vertex/vertex-provider.js';
import { CLAUDE, type FakeBedrock, NOVA, startFakeBedrock } from '../fakes/fake-bedrock.js';
import { startFakeGemini } from '../fakes/fake-gemini.js';
import { type FakeVertex, startFakeVertex, VERTEX_LOCATION } from '../fakes/fake-vertex.js';
import { serve, type Served } from '../helpers/serve.js';
import { SIGNED_BY } from './bedrock-harness.js';

type Json = Record<string, any>;

/**
 * Cloud-storage URIs a client names are read by the upstream with the OPERATOR's identity
 * (Bedrock `s3://` with the gateway's IAM principal, Vertex `gs://` with the project's service
 * agent, Gemini Files-API names in the API key's project): refused by default with a 400 naming
 * the client's field, on every client protocol and on Gemini passthrough; passed on within the
 * provider's `storageUris`, narrowed by the key's.
 */
let bedrock: FakeBedrock;
let vertex: FakeVertex;
let gemini: Awaited<ReturnType<typeof startFakeGemini>>;
let gateway: Gateway;
let served: Served;

beforeAll(async () => {
  [bedrock, vertex, gemini] = await Promise.all([startFakeBedrock(), startFakeVertex(), startFakeGemini()]);
  gateway = createGateway({
    keys: [{ key: 'sk-any' }, { key: 'sk-tenant-a', storageUris: ['s3://uploads/tenant-a', 'gs://uploads/tenant-a', 'files/'] }],
    providers: {
      aws: createBedrockProvider({ ...SIGNED_BY, baseURL: bedrock.url }),
      'aws-uploads': createBedrockProvider({ ...SIGNED_BY, baseURL: bedrock.url, storageUris: ['s3://uploads/'] }),
      vtx: createVertexProvider({ credentials: vertex.serviceAccount, location: VERTEX_LOCATION, baseURL: vertex.url }),
      'vtx-uploads': createVertexProvider({
        credentials: vertex.serviceAccount,
        location: VERTEX_LOCATION,
        baseURL: vertex.url,
        storageUris: ['gs://uploads/'],
      }),
      google: createGeminiProvider({ baseURL: gemini.url, apiKey: 'up-key' }),
      'google-uploads': createGeminiProvider({ baseURL: gemini.url, apiKey: 'up-key', storageUris: ['gs://uploads/', 'files/'] }),
    },
    models: [
      { id: 'nova', provider: 'aws', upstreamModel: NOVA },
      { id: 'nova-uploads', provider: 'aws-uploads', upstreamModel: NOVA },
      { id: 'claude-bedrock', provider: 'aws', upstreamModel: CLAUDE },
      { id: 'claude-bedrock-uploads', provider: 'aws-uploads', upstreamModel: CLAUDE },
      { id: 'gemini-vx', provider: 'vtx', upstreamModel: 'gemini-2.5-flash' },
      { id: 'gemini-vx-uploads', provider: 'vtx-uploads', upstreamModel: 'gemini-2.5-flash' },
      { id: 'gem', provider: 'google', upstreamModel: 'gemini-2.5-flash' },
      { id: 'gem-uploads', provider: 'google-uploads', upstreamModel: 'gemini-2.5-flash' },
    ],
    logger: false,
  });
  served = await serve(gateway);
});
afterAll(async () => {
  await served.close();
  await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
  await Promise.all([bedrock.close(), vertex.close(), gemini.close()]);
});
beforeEach(() => {
  bedrock.reset();
  vertex.reset();
  gemini.reset();
});

const openai = (key = 'sk-any') => new OpenAI({ baseURL: `${served.url}/v1`, apiKey: key, maxRetries: 0 });
const anthropic = (key = 'sk-any') => new Anthropic({ baseURL: served.url, apiKey: key, maxRetries: 0 });
const genai = (key = 'sk-any') => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: served.url } });

/** A Chat request whose second message shows an image by URL, after a system message. */
const lookAt = (model: string, url: string) =>
  ({
    model,
    messages: [
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Repeat this document verbatim.' },
          { type: 'image_url', image_url: { url } },
        ],
      },
    ],
  }) as OpenAI.ChatCompletionCreateParamsNonStreaming;

async function refusal(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

/** Gemini's generateContent as a client sends it by hand (fields the SDK would not send). */
async function generateContent(model: string, body: Json, key = 'sk-any'): Promise<{ status: number; json: Json }> {
  const response = await fetch(`${served.url}/v1beta/models/${model}:generateContent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': key },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Json };
}

const fileDataTurn = (fileUri: string) => [
  { role: 'user', parts: [{ text: 'Repeat this document verbatim.' }, { fileData: { mimeType: 'application/pdf', fileUri } }] },
];

describe('Bedrock Converse (s3://)', () => {
  it('refuses an s3:// image by default with a 400 naming the client’s field, and calls nothing', async () => {
    const error = await refusal(openai().chat.completions.create(lookAt('nova', 's3://acme-finance-private/payroll.png')));
    expect(error.status).toBe(400);
    expect(error.code).toBe('storage_uri_not_allowed');
    expect(error.param).toBe('messages[1].content[1].image_url.url');
    expect(bedrock.requests).toHaveLength(0);
  });

  it('passes an s3:// URI under the provider’s prefix on as s3Location, and the key’s prefixes narrow it', async () => {
    await openai().chat.completions.create(lookAt('nova-uploads', 's3://uploads/tenant-b/cat.png'));
    expect(bedrock.last().body.messages[0].content[1]).toEqual({ image: { format: 'png', source: { s3Location: { uri: 's3://uploads/tenant-b/cat.png' } } } });

    await openai('sk-tenant-a').chat.completions.create(lookAt('nova-uploads', 's3://uploads/tenant-a/cat.png'));
    expect(bedrock.last().body.messages[0].content[1].image.source).toEqual({ s3Location: { uri: 's3://uploads/tenant-a/cat.png' } });

    bedrock.reset();
    const outside = await refusal(openai('sk-tenant-a').chat.completions.create(lookAt('nova-uploads', 's3://uploads/tenant-b/cat.png')));
    expect(outside.status).toBe(400);
    // The key's prefix does not widen the provider's.
    const notProviders = await refusal(openai('sk-tenant-a').chat.completions.create(lookAt('nova', 's3://uploads/tenant-a/cat.png')));
    expect(notProviders.status).toBe(400);
    expect(bedrock.requests).toHaveLength(0);
  });

  it('refuses an s3:// document of a Responses client, naming its input item', async () => {
    const error = await refusal(
      openai().responses.create({
        model: 'nova',
        input: [{ role: 'user', content: [{ type: 'input_file', file_url: 's3://acme-finance-private/payroll.pdf' }] }],
      }),
    );
    expect(error.status).toBe(400);
    expect(error.param).toBe('input[0].content[0].file_url');
    expect(bedrock.requests).toHaveLength(0);
  });
});

describe('Bedrock Claude on invoke (Messages passthrough)', () => {
  const withImage = (model: string, url: string): Anthropic.MessageCreateParamsNonStreaming => ({
    model,
    max_tokens: 64,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Repeat this document verbatim.' },
          { type: 'image', source: { type: 'url', url } },
        ],
      },
    ],
  });

  it('refuses an s3:// source URL by default, naming it, and passes one within the prefixes', async () => {
    const error = (await anthropic()
      .messages.create(withImage('claude-bedrock', 's3://acme-finance-private/payroll.png'))
      .catch((caught: unknown) => caught)) as InstanceType<typeof Anthropic.APIError>;
    expect(error.status).toBe(400);
    expect((error.error as Json).error.message).toMatch(/messages\[0\]\.content\[1\]\.source\.url/);
    expect(bedrock.requests).toHaveLength(0);

    await anthropic('sk-tenant-a').messages.create(withImage('claude-bedrock-uploads', 's3://uploads/tenant-a/cat.png'));
    expect(bedrock.last().body.messages[0].content[1].source).toEqual({ type: 'url', url: 's3://uploads/tenant-a/cat.png' });
  });
});

describe('Vertex Gemini (gs://)', () => {
  it('refuses a gs:// file by default, from a Gemini client and from a Chat client, and calls nothing', async () => {
    const { status, json } = await generateContent('gemini-vx', { contents: fileDataTurn('gs://acme-finance-private/payroll.pdf') });
    expect(status).toBe(400);
    expect(json.error.message).toMatch(/contents\[0\]\.parts\[1\]\.fileData\.fileUri/);

    const error = await refusal(openai().chat.completions.create(lookAt('gemini-vx', 'gs://acme-finance-private/payroll.png')));
    expect(error.param).toBe('messages[1].content[1].image_url.url');
    // A stream is refused before it starts, with the same 400.
    const streamed = await refusal(openai().chat.completions.create({ ...lookAt('gemini-vx', 'gs://acme-finance-private/payroll.png'), stream: true }));
    expect(streamed.status).toBe(400);
    expect(streamed.param).toBe('messages[1].content[1].image_url.url');
    expect(vertex.requests.filter((request) => request.path.includes(':generateContent'))).toHaveLength(0);
  });

  it('passes a gs:// URI under the provider’s prefix on as fileData', async () => {
    await genai().models.generateContent({ model: 'gemini-vx-uploads', contents: fileDataTurn('gs://uploads/tenant-a/q3.pdf') });
    const sent = vertex.requests.find((request) => request.path.includes(':generateContent'))!;
    expect(sent.body.contents[0].parts[1]).toEqual({ fileData: { mimeType: 'application/pdf', fileUri: 'gs://uploads/tenant-a/q3.pdf' } });
  });
});

describe('Gemini API passthrough', () => {
  it('refuses gs:// and Files-API URIs of the operator’s project by default, naming the part', async () => {
    for (const uri of [
      'gs://acme-finance-private/payroll.pdf',
      'https://generativelanguage.googleapis.com/v1beta/files/operator-file-1',
      'files/operator-file-1',
    ]) {
      const { status, json } = await generateContent('gem', { contents: fileDataTurn(uri) });
      expect(status).toBe(400);
      expect(json.error.message).toMatch(/contents\[0\]\.parts\[1\]\.fileData\.fileUri/);
    }
    // A snake_case twin of the field is read (and refused) as Google reads it.
    const snake = await generateContent('gem', {
      contents: [{ role: 'user', parts: [{ file_data: { mime_type: 'application/pdf', file_uri: 'gs://acme-finance-private/payroll.pdf' } }] }],
    });
    expect(snake.status).toBe(400);
    expect(gemini.requests).toHaveLength(0);
  });

  it('refuses a gs:// file inside a function response’s parts, as the translated path does', async () => {
    const spellings: [string, string][] = [
      ['functionResponse', 'fileData'],
      ['function_response', 'file_data'],
    ];
    for (const [functionResponse, fileData] of spellings) {
      const fileUri = fileData === 'fileData' ? 'fileUri' : 'file_uri';
      const { status, json } = await generateContent('gem', {
        contents: [
          { role: 'user', parts: [{ text: 'Read it.' }] },
          { role: 'model', parts: [{ functionCall: { name: 'fetch', args: {} } }] },
          {
            role: 'user',
            parts: [
              {
                [functionResponse]: {
                  name: 'fetch',
                  response: {},
                  parts: [{ [fileData]: { mimeType: 'application/pdf', [fileUri]: 'gs://acme-finance-private/payroll.pdf' } }],
                },
              },
            ],
          },
        ],
      });
      expect(status).toBe(400);
      expect(json.error.message).toMatch(/contents\[2\]\.parts\[0\]\.functionResponse\.parts\[0\]\.fileData\.fileUri/);
    }
    expect(gemini.requests).toHaveLength(0);
  });

  it('passes URIs within the provider’s and the key’s prefixes', async () => {
    const allowed = await generateContent('gem-uploads', { contents: fileDataTurn('files/abc') }, 'sk-tenant-a');
    expect(allowed.status).toBe(200);
    expect(gemini.last().body.contents[0].parts[1].fileData.fileUri).toBe('files/abc');
    const outside = await generateContent('gem-uploads', { contents: fileDataTurn('gs://uploads/tenant-b/q3.pdf') }, 'sk-tenant-a');
    expect(outside.status).toBe(400);
  });

  it('refuses cachedContent (a cache of the operator’s project), as the translated path does', async () => {
    for (const field of ['cachedContent', 'cached_content']) {
      const { status, json } = await generateContent('gem', {
        [field]: 'cachedContents/operator-cache-123',
        contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
      });
      expect(status).toBe(400);
      expect(json.error.message).toMatch(/cachedContent/);
    }
    expect(gemini.requests).toHaveLength(0);
  });

  it('sends no body `model`: the upstream reads only the path’s', async () => {
    const { status } = await generateContent('gem', { model: 'models/gemini-2.5-pro', contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] });
    expect(status).toBe(200);
    const sent = gemini.last();
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(sent.body).not.toHaveProperty('model');
  });
});
