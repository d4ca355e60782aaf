import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { isGatewayError } from '../../src/errors.js';
import { REFRESH_BEFORE_EXPIRY_MS } from '../../src/providers/http/access-tokens.js';
import { azureEndpoint, createAzureProvider } from '../../src/providers/azure/azure-provider.js';
import { entraTokens } from '../../src/providers/azure/entra-tokens.js';
import { AZURE_DEPLOYMENTS, startFakeAzure } from '../fakes/fake-azure.js';
import { FAKE_AZURE_SPEECH, startFakeAzureMedia } from '../fakes/fake-azure-media.js';
import { FAKE_PNG_B64 } from '../fakes/fake-openai-media.js';
import { FAKE_TRANSCRIPT } from '../fakes/fake-openai-transcriptions.js';
import type { MediaServer } from '../fakes/media-server.js';
import { recordingLogger } from '../helpers/recording-logger.js';
import { COGNITIVE_SERVICES_SCOPE, type FakeEntra, startFakeEntra } from '../fakes/fake-azure-entra.js';
import { fakeVector } from '../fakes/fake-openai-embeddings.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { API_VERSION, AZURE_MODELS, AZURE_STYLES, type AzureHarness, azurePath, type ServedGateway, serveGateway, startAzureHarness } from './azure-harness.js';
import { rawRequest } from './harness.js';

type Json = Record<string, any>;

/**
 * The azure provider beyond the client matrix: what the fake resource refuses as Azure does,
 * Azure's stream and error quirks, embeddings through both URL styles, Entra ID tokens (client
 * credentials: fetched once, reused, refreshed after a 401; or the host's callback), and the
 * config file.
 */
let h: AzureHarness;
beforeAll(async () => {
  h = await startAzureHarness();
});
afterAll(() => h.close());
beforeEach(() => h.fake.reset());

const chatBody = JSON.stringify({ model: AZURE_DEPLOYMENTS.chat, messages: [{ role: 'user', content: 'Hi' }] });
const post = (path: string, headers: Record<string, string>) =>
  fetch(h.fake.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: chatBody });

describe('the fake resource is as strict as Azure', () => {
  it('refuses a deployment URL without api-version (404), a Bearer token where api-key is the auth (401), a dated api-version on v1 (400)', async () => {
    const noVersion = await post(`/openai/deployments/${AZURE_DEPLOYMENTS.chat}/chat/completions`, { 'api-key': 'az-key' });
    expect(noVersion.status).toBe(404);
    expect(await noVersion.json()).toEqual({ error: { code: '404', message: 'Resource not found' } });

    const bearer = await post(`/openai/deployments/${AZURE_DEPLOYMENTS.chat}/chat/completions?api-version=${API_VERSION}`, { authorization: 'Bearer az-key' });
    expect(bearer.status).toBe(401);
    expect(((await bearer.json()) as Json).error.code).toBe('401');

    const versioned = await post(`/openai/v1/chat/completions?api-version=${API_VERSION}`, { 'api-key': 'az-key' });
    expect(versioned.status).toBe(400);

    const unknown = await post('/openai/deployments/nope/chat/completions?api-version=2024-10-21', { 'api-key': 'az-key' });
    expect(((await unknown.json()) as Json).error.code).toBe('DeploymentNotFound');
    expect(h.fake.accepted()).toHaveLength(0);
  });

  it('an Entra resource refuses an api-key and a token its tenant did not issue', async () => {
    const entra = await startFakeEntra();
    const fake = await startFakeAzure({ auth: 'entra', entra });
    try {
      const url = `${fake.url}/openai/v1/chat/completions`;
      const init = (headers: Record<string, string>) => ({ method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: chatBody });
      expect((await fetch(url, init({ 'api-key': 'az-key' }))).status).toBe(401);
      expect((await fetch(url, init({ authorization: 'Bearer forged' }))).status).toBe(401);
    } finally {
      await Promise.all([fake.close(), entra.close()]);
    }
  });
});

describe('Azure’s quirks through the gateway', () => {
  it('dated versions speak chat only (Responses clients translated); v1 passes Responses through', () => {
    expect(h.gateway.options.providers.az!.text?.nativeProtocols).toEqual(['chat']);
    expect(h.gateway.options.providers.azv1!.text?.nativeProtocols).toEqual(['chat', 'responses']);
    expect(azureEndpoint('https://res.openai.azure.com', undefined)).toEqual({ style: 'v1', url: 'https://res.openai.azure.com/openai/v1' });
    expect(azureEndpoint('https://res.openai.azure.com/', '2024-10-21')).toEqual({ style: 'deployments', url: 'https://res.openai.azure.com/openai' });
    expect(azureEndpoint('https://res.openai.azure.com/openai/v1/', undefined)).toEqual({ style: 'v1', url: 'https://res.openai.azure.com/openai/v1' });
  });

  it('a translated stream takes its id and time from the answer, not from Azure’s prompt-filter chunk (id "", created 0)', async () => {
    h.fake.reply({ text: ['Hello'] });
    const response = await rawRequest(h.url, 'responses', AZURE_MODELS.dated.chat, { stream: true });
    const text = await response.text();
    expect(h.fake.last().path).toBe(azurePath('dated', 'chat'));
    const created = text
      .split('\n\n')
      .map((frame) => /^data: (.*)$/m.exec(frame)?.[1])
      .filter((data): data is string => data !== undefined)
      .map((data) => JSON.parse(data) as Json)
      .find((event) => event.type === 'response.created')!;
    // The fake's answers are stamped 1753120000 (2025-07-21).
    expect(created.response.created_at).toBe(1753120000);
    expect(text).toContain('"delta":"Hello"');
  });

  it('v1: a response Azure stored is retrieved and deleted there, with the resource’s key', async () => {
    h.fake.reply({ text: ['Kept at Azure'] });
    const created = await h.openai.responses.create({ model: AZURE_MODELS.v1.chat, input: 'Hi' });
    const retrieved = await h.openai.responses.retrieve(created.id);
    expect(retrieved.output_text).toBe('Kept at Azure');
    const got = h.fake.requests.at(-1)!;
    expect(got).toMatchObject({ method: 'GET', path: `/openai/v1/responses/${created.id}` });
    expect(got.headers['api-key']).toBe('az-key');
    expect(await h.openai.responses.delete(created.id)).toMatchObject({ id: created.id, deleted: true });
    expect(h.fake.requests.at(-1)).toMatchObject({ method: 'DELETE', path: `/openai/v1/responses/${created.id}` });
  });

  it('a wildcard entry serves any deployment by name, passed through and translated', async () => {
    h.fake.reply({ text: ['Via chat'] }, { text: ['Via messages'] });
    const model = `azure/${AZURE_DEPLOYMENTS.chat}`;
    const chat = await h.openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] });
    expect(chat.choices[0]!.message.content).toBe('Via chat');
    const messages = await h.anthropic.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    expect(messages.content).toEqual([expect.objectContaining({ type: 'text', text: 'Via messages' })]);
    expect(h.fake.accepted().map((request) => request.url)).toEqual([
      `/openai/deployments/${AZURE_DEPLOYMENTS.chat}/chat/completions?api-version=${API_VERSION}`,
      `/openai/deployments/${AZURE_DEPLOYMENTS.chat}/chat/completions?api-version=${API_VERSION}`,
    ]);
  });

  it('asynchronous content filtering: annotation chunks (id "", no delta) in a translated stream are left out', async () => {
    const safe = { hate: { filtered: false, severity: 'safe' } };
    const chunk = (fields: Json) =>
      `data: ${JSON.stringify({ id: 'chatcmpl-Az1', object: 'chat.completion.chunk', created: 1753120000, model: 'gpt-4o', ...fields })}`;
    const annotation = (offset: number) =>
      `data: ${JSON.stringify({ id: '', object: '', created: 0, model: '', choices: [{ index: 0, finish_reason: null, content_filter_results: safe, content_filter_offsets: { check_offset: offset, start_offset: offset, end_offset: offset + 5 } }] })}`;
    h.fake.reply({
      raw: [
        annotation(0),
        chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }] }),
        annotation(3),
        chunk({ choices: [{ index: 0, delta: { content: 'lo' }, finish_reason: null }] }),
        chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
        annotation(5),
        'data: [DONE]',
      ].join('\n\n'),
    });
    const run = h.openai.responses.stream({ model: AZURE_MODELS.dated.chat, input: 'Hi', store: false });
    const deltas: string[] = [];
    run.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const final = await run.finalResponse();
    expect(deltas).toEqual(['Hel', 'lo']);
    expect(final.output_text).toBe('Hello');
    expect(final.status).toBe('completed');
    // Read as chunks, the annotations would have opened the answer at created 0.
    expect(final.created_at).toBe(1753120000);
  });

  it('the content filter’s refusal is a 400 with code content_filter and param prompt', async () => {
    h.fake.reply({
      error: {
        status: 400,
        code: 'content_filter',
        message: 'The response was filtered due to the prompt triggering Azure OpenAI’s content management policy.',
      },
    });
    const error = await h.openai.chat.completions
      .create({ model: AZURE_MODELS.dated.chat, messages: [{ role: 'user', content: 'Hi' }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('content_filter');
    expect((error as InstanceType<typeof OpenAI.APIError>).param).toBe('prompt');
    expect((error as Error).message).toContain('content management policy');
  });
});

describe.each(AZURE_STYLES)('client.embeddings.create × Azure %s', (style) => {
  it('floats and base64 of every input, shortened on request, at the deployment’s embeddings URL', async () => {
    const model = AZURE_MODELS[style].embedding;
    const floats = await h.openai.embeddings.create({ model, input: ['the cat', 'sat'], encoding_format: 'float' });
    expect(floats.data.map((item) => item.embedding)).toEqual([fakeVector('the cat', 1536), fakeVector('sat', 1536)]);
    expect(floats.model).toBe(model);
    expect(floats.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });

    const received = h.fake.last();
    expect(received.path).toBe(azurePath(style, 'embeddings'));
    expect(new URL(received.url, 'http://x').searchParams.get('api-version')).toBe(style === 'dated' ? API_VERSION : null);
    expect(received.headers['api-key']).toBe('az-key');
    expect(received.body).toMatchObject({ model: AZURE_DEPLOYMENTS.embedding, input: ['the cat', 'sat'] });

    // The SDK asks for base64 by default and decodes it itself.
    const short = await h.openai.embeddings.create({ model, input: 'the cat', dimensions: 256 });
    expect(short.data[0]!.embedding).toEqual(fakeVector('the cat', 256));
    expect(h.fake.last().body.dimensions).toBe(256);
  });
});

describe('media × Azure deployments and v1: transcriptions, speech, images', () => {
  let audio: MediaServer;
  let served: ServedGateway;
  let openai: OpenAI;

  beforeAll(async () => {
    audio = await startFakeAzureMedia();
    served = await serveGateway({
      providers: {
        az: createAzureProvider({ baseURL: `${audio.url}/openai`, apiKey: 'az-key', apiVersion: API_VERSION }),
        azv1: createAzureProvider({ baseURL: `${audio.url}/openai/v1`, apiKey: 'az-key' }),
      },
      models: [
        { id: 'az-whisper', provider: 'az', upstreamModel: 'whisper-prod', kind: 'transcription' },
        { id: 'azv1-transcribe', provider: 'azv1', upstreamModel: 'transcribe-prod', kind: 'transcription' },
        { id: 'az-tts', provider: 'az', upstreamModel: 'tts-prod', kind: 'speech' },
        { id: 'azv1-image', provider: 'azv1', upstreamModel: 'image-prod', kind: 'image' },
      ],
    });
    openai = served.openai;
  });
  afterAll(async () => {
    await served.close();
    await audio.close();
  });

  const wav = () => toFile(Buffer.from('RIFF....WAVEfmt fake audio bytes'), 'hello.wav', { type: 'audio/wav' });

  it('a deployment URL with api-version: the form passed on, srt as Whisper wrote it', async () => {
    const json = await openai.audio.transcriptions.create({ model: 'az-whisper', file: await wav(), language: 'en' });
    expect(json.text).toBe(FAKE_TRANSCRIPT);
    const srt = await openai.audio.transcriptions.create({ model: 'az-whisper', file: await wav(), response_format: 'srt' });
    expect(srt).toContain('00:00:00,000 --> 00:00:01,200');

    const received = audio.requests.at(-1)!;
    expect(received.path).toBe('/openai/deployments/whisper-prod/audio/transcriptions');
    expect(new URL(received.url, 'http://x').searchParams.get('api-version')).toBe(API_VERSION);
    expect(received.headers['api-key']).toBe('az-key');
    expect(received.headers.authorization).toBeUndefined();
    expect(received.parts!.find((part) => part.name === 'file')).toMatchObject({
      filename: 'hello.wav',
      data: Buffer.from('RIFF....WAVEfmt fake audio bytes'),
    });
  });

  it('the v1 API: the deployment in the form’s model, a streamed transcript passed through', async () => {
    const stream = await openai.audio.transcriptions.create({ model: 'azv1-transcribe', file: await wav(), stream: true });
    const deltas: string[] = [];
    let done: string | undefined;
    for await (const event of stream) {
      if (event.type === 'transcript.text.delta') deltas.push(event.delta);
      if (event.type === 'transcript.text.done') done = event.text;
    }
    expect(deltas.join('')).toBe(FAKE_TRANSCRIPT);
    expect(done).toBe(FAKE_TRANSCRIPT);

    const received = audio.requests.at(-1)!;
    expect(received.url).toBe('/openai/v1/audio/transcriptions');
    expect(received.parts!.find((part) => part.name === 'model')?.value).toBe('transcribe-prod');
  });
  it('speech on a deployment URL and images on v1, each at its deployment', async () => {
    const speech = await openai.audio.speech.create({ model: 'az-tts', input: 'Hello', voice: 'en_female_anna_v1' });
    expect(Buffer.from(await speech.arrayBuffer())).toEqual(FAKE_AZURE_SPEECH);
    expect(audio.requests.at(-1)!.url).toBe(`/openai/deployments/tts-prod/audio/speech?api-version=${API_VERSION}`);

    const image = await openai.images.generate({ model: 'azv1-image', prompt: 'A red square' });
    expect(image.data![0]!.b64_json).toBe(FAKE_PNG_B64);
    const received = audio.requests.at(-1)!;
    expect(received.url).toBe('/openai/v1/images/generations');
    expect(received.json).toMatchObject({ model: 'image-prod', prompt: 'A red square' });
  });
});

// ---- Entra ID ------------------------------------------------------------------------------

describe('Entra ID', () => {
  let entra: FakeEntra;
  let fake: FakeUpstream;
  let served: ServedGateway;
  let openai: OpenAI;
  let callbackCalls = 0;
  const log = recordingLogger();

  /** A token from the fake tenant, fetched as a host's own credential library would. */
  const hostToken = async (): Promise<string> => {
    callbackCalls++;
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: entra.clientId,
      client_secret: entra.clientSecret,
      scope: COGNITIVE_SERVICES_SCOPE,
    });
    const response = await fetch(`${entra.url}/${entra.tenantId}/oauth2/v2.0/token`, { method: 'POST', body: form });
    return ((await response.json()) as Json).access_token;
  };

  beforeAll(async () => {
    entra = await startFakeEntra();
    fake = await startFakeAzure({ auth: 'entra', entra });
    const credentials = { tenantId: entra.tenantId, clientId: entra.clientId, authorityHost: entra.url };
    served = await serveGateway({
      providers: {
        secret: createAzureProvider({ baseURL: `${fake.url}/openai`, apiVersion: API_VERSION, entra: { ...credentials, clientSecret: entra.clientSecret } }),
        wrong: createAzureProvider({ baseURL: `${fake.url}/openai/v1`, entra: { ...credentials, clientSecret: 'not-the-secret' } }),
        host: createAzureProvider({ baseURL: `${fake.url}/openai/v1`, getAccessToken: hostToken }),
      },
      models: [
        { id: 'entra', provider: 'secret', upstreamModel: AZURE_DEPLOYMENTS.chat },
        { id: 'entra-wrong', provider: 'wrong', upstreamModel: AZURE_DEPLOYMENTS.chat },
        { id: 'entra-host', provider: 'host', upstreamModel: AZURE_DEPLOYMENTS.chat },
        { id: 'entra-embed', provider: 'secret', upstreamModel: AZURE_DEPLOYMENTS.embedding, kind: 'embedding' },
      ],
      logger: log.logger,
    });
    openai = served.openai;
  });
  afterAll(async () => {
    await served.close();
    await Promise.all([fake.close(), entra.close()]);
  });

  const ask = (model: string) => openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] });

  it('client credentials: one token for concurrent calls, reused, dropped after a 401 and fetched again', async () => {
    const answers = await Promise.all([ask('entra'), ask('entra'), openai.embeddings.create({ model: 'entra-embed', input: 'x' })]);
    expect(answers).toHaveLength(3);
    expect(entra.requests).toHaveLength(1);
    expect(entra.requests[0]).toMatchObject({
      tenant: entra.tenantId,
      contentType: expect.stringContaining('application/x-www-form-urlencoded'),
      form: { grant_type: 'client_credentials', client_id: entra.clientId, client_secret: entra.clientSecret, scope: COGNITIVE_SERVICES_SCOPE },
    });
    const first = entra.issued[0]!;
    for (const request of fake.accepted()) {
      expect(request.headers.authorization).toBe(`Bearer ${first}`);
      expect(request.headers['api-key']).toBeUndefined();
    }

    await ask('entra');
    expect(entra.requests).toHaveLength(1);

    // Azure stops taking the token: that call fails as the gateway's credentials' fault, and
    // the next one gets a fresh token.
    entra.revoke(first);
    const refused = await ask('entra').catch((caught: unknown) => caught);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((refused as Error).message).toContain('rejected the gateway');
    expect((await ask('entra')).choices[0]!.message.content).toBe('Hello from upstream.');
    expect(entra.requests).toHaveLength(2);
    expect(fake.last().headers.authorization).toBe(`Bearer ${entra.issued[1]}`);
  });

  it('a secret the tenant refuses is a 502 naming no app; the reason, with the AADSTS code, is the operator’s log line', async () => {
    const refused = (await ask('entra-wrong').catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;
    expect(refused.status).toBe(502);
    expect(refused.error).toMatchObject({ message: 'The gateway could not authenticate to Azure OpenAI (Entra ID).', code: 'upstream_token_failed' });
    expect(JSON.stringify(refused)).not.toMatch(/not-the-secret|AADSTS|invalid_client/);
    expect(JSON.stringify(refused)).not.toContain(entra.clientId);
    const line = log.lines.find((entry) => entry.fields?.requestId === refused.headers?.get('x-request-id'));
    expect(line?.fields?.detail).toContain('the token endpoint answered 401 (invalid_client: AADSTS7000215: Invalid client secret provided');

    const tokens = entraTokens({ tenantId: entra.tenantId, clientId: entra.clientId, clientSecret: 'not-the-secret', authorityHost: entra.url });
    const error = await tokens.get().catch((caught: unknown) => caught);
    expect(isGatewayError(error) && error.status).toBe(502);
    expect(isGatewayError(error) && error.detail).not.toContain('Trace ID');
  });

  it('a token is replaced 5 minutes before it expires (Entra grants 3599 s), in the background', async () => {
    let now = 1_800_000_000_000;
    const tokens = entraTokens(
      { tenantId: entra.tenantId, clientId: entra.clientId, clientSecret: entra.clientSecret, authorityHost: entra.url },
      { now: () => now },
    );
    const before = entra.requests.length;
    const first = await tokens.get();
    now += 3599_000 - REFRESH_BEFORE_EXPIRY_MS - 1000;
    expect(await tokens.get()).toBe(first);
    now += 2000;
    // Still valid: served while the new one is fetched.
    expect(await tokens.get()).toBe(first);
    await expect.poll(() => tokens.get()).not.toBe(first);
    expect(entra.requests.length - before).toBe(2);
  });

  it('the host’s getAccessToken is asked on every call and its token sent as a bearer', async () => {
    fake.reset();
    callbackCalls = 0;
    await ask('entra-host');
    await ask('entra-host');
    expect(callbackCalls).toBe(2);
    expect(fake.accepted().map((request) => request.path)).toEqual(['/openai/v1/chat/completions', '/openai/v1/chat/completions']);
    expect(fake.last().headers.authorization).toBe(`Bearer ${entra.issued.at(-1)}`);
  });
});

describe('config file', () => {
  const parse = (providers: Json) => parseConfig({ keys: [{ key: 'sk-test' }], providers, models: [{ id: 'm', provider: Object.keys(providers)[0] }] });

  it('builds both URL styles and Entra credentials, and names a bad field', () => {
    const config = parse({
      az: { type: 'azure', baseURL: 'https://res.openai.azure.com/openai', apiKey: 'k', apiVersion: '2024-10-21' },
      azv1: { type: 'azure', baseURL: 'https://res.openai.azure.com/openai/v1', apiKey: 'k' },
      aad: { type: 'azure', baseURL: 'https://res.openai.azure.com/openai/v1', entra: { tenantId: 't', clientId: 'c', clientSecret: 's' } },
    });
    expect(config.providers.az).toMatchObject({ type: 'azure', text: { nativeProtocols: ['chat'] } });
    expect(config.providers.azv1).toMatchObject({ type: 'azure', text: { nativeProtocols: ['chat', 'responses'] } });
    expect(config.providers.aad).toMatchObject({ type: 'azure' });

    expect(() => parse({ az: { type: 'azure', apiKey: 'k' } })).toThrow('providers.az.baseURL');
    expect(() => parse({ az: { type: 'azure', baseURL: 'https://res.openai.azure.com/openai', entra: { tenantId: 't', clientId: 'c' } } })).toThrow(
      'providers.az.entra.clientSecret',
    );
    expect(() =>
      parse({ az: { type: 'azure', baseURL: 'https://res.openai.azure.com/openai', apiKey: 'k', entra: { tenantId: 't', clientId: 'c', clientSecret: 's' } } }),
    ).toThrow('azure: give exactly one of apiKey, entra or getAccessToken');
  });
});
