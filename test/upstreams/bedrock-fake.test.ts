import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BedrockSigner } from '../../src/providers/bedrock/sigv4.js';
import { BEDROCK_CREDENTIALS, BEDROCK_REGION, CLAUDE, type FakeBedrock, NOVA, startFakeBedrock } from '../fakes/fake-bedrock.js';

type Json = Record<string, any>;

/**
 * The fake Bedrock itself: strict where the real service is, so the provider tests prove
 * something. Requests here are signed by hand (the provider's signer) or not at all.
 */
let fake: FakeBedrock;
const signer = new BedrockSigner(BEDROCK_REGION, BEDROCK_CREDENTIALS);

beforeAll(async () => {
  fake = await startFakeBedrock();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

async function send(
  model: string,
  action: string,
  body: Json,
  tamper?: (headers: Record<string, string>) => string | undefined,
): Promise<{ status: number; type: string; message: string }> {
  const route = `/model/${encodeURIComponent(model)}/${action}`;
  const text = JSON.stringify(body);
  const headers = await signer.headers(new URL(fake.url + route), createHash('sha256').update(text).digest('hex'));
  const sent = tamper?.(headers) ?? text;
  const response = await fetch(fake.url + route, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: sent });
  const json = (await response.json()) as Json;
  return { status: response.status, type: String(response.headers.get('x-amzn-errortype') ?? '').split(':')[0]!, message: String(json.message ?? '') };
}

const user = (text: string) => ({ role: 'user', content: [{ text }] });

describe('the fake Bedrock’s signature checks', () => {
  it('accepts a request the provider’s signer signed', async () => {
    const answer = await send(NOVA, 'converse', { messages: [user('Hi')] });
    expect(answer.status).toBe(200);
  });

  it('refuses an unsigned request, a changed body and a signature over another path', async () => {
    const route = `/model/${encodeURIComponent(NOVA)}/converse`;
    const unsigned = await fetch(fake.url + route, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(unsigned.status).toBe(403);
    expect(unsigned.headers.get('x-amzn-errortype')).toMatch(/^MissingAuthenticationTokenException/);

    const changed = await send(NOVA, 'converse', { messages: [user('Hi')] }, () => JSON.stringify({ messages: [user('Bye')] }));
    expect(changed).toMatchObject({ status: 403, type: 'InvalidSignatureException' });

    // Signed with the path decoded (`:` as is): the canonical request differs from the one sent.
    const text = JSON.stringify({ messages: [user('Hi')] });
    const wrongPath = await signer.headers(new URL(`${fake.url}/model/${NOVA}/converse`), createHash('sha256').update(text).digest('hex'));
    const refused = await fetch(fake.url + route, { method: 'POST', headers: { ...wrongPath, 'content-type': 'application/json' }, body: text });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as Json).message).toContain('signature we calculated does not match');
  });
});

describe('the fake Bedrock’s Converse validation', () => {
  const cases: [string, Json, RegExp][] = [
    ['an unknown field', { messages: [user('Hi')], temperature: 0.5 }, /extraneous key \[temperature\]/],
    ['an empty text block', { messages: [user('')] }, /at messages\.0\.content\.0 is blank/],
    ['a conversation that starts with the assistant', { messages: [{ role: 'assistant', content: [{ text: 'Hi' }] }] }, /must start with a user message/],
    ['two user turns in a row', { messages: [user('Hi'), user('again')] }, /must alternate/],
    [
      'tool blocks without toolConfig',
      {
        messages: [
          user('Hi'),
          { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: 'f', input: {} } }] },
          { role: 'user', content: [{ toolResult: { toolUseId: 't1', content: [{ text: 'ok' }] } }] },
        ],
      },
      /toolConfig field must be defined/,
    ],
    [
      'a toolResult that answers no toolUse of the previous turn',
      {
        messages: [
          user('Hi'),
          { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: 'f', input: {} } }] },
          { role: 'user', content: [{ toolResult: { toolUseId: 't2', content: [{ text: 'ok' }] } }] },
        ],
        toolConfig: { tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object' } } } }] },
      },
      /Expected toolResult blocks at messages\.2\.content for the following Ids: t1/,
    ],
    ['a temperature above 1', { messages: [user('Hi')], inferenceConfig: { temperature: 1.5 } }, /at 'inferenceConfig\.temperature'/],
    [
      'a document name with a dot',
      { messages: [{ role: 'user', content: [{ document: { format: 'pdf', name: 'a.pdf', source: { bytes: 'JVBERi0=' } } }] }] },
      /file name/,
    ],
    [
      'reasoning without a signature',
      { messages: [user('Hi'), { role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: 'x' } } }] }] },
      /no signature/,
    ],
  ];

  it.each(cases)('refuses %s with a ValidationException naming it', async (_name, body, message) => {
    const answer = await send(NOVA, 'converse', body);
    expect(answer).toMatchObject({ status: 400, type: 'ValidationException' });
    expect(answer.message).toMatch(message);
  });

  it('refuses an unknown model id', async () => {
    expect(await send('amazon.nova-ultra-v9:0', 'converse', { messages: [user('Hi')] })).toMatchObject({
      status: 400,
      message: 'The provided model identifier is invalid.',
    });
  });
});

describe('the fake Bedrock’s Claude invoke validation', () => {
  const body = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] };

  it('accepts Anthropic’s body with the Bedrock version, and refuses model, stream, another version and unknown betas', async () => {
    expect((await send(CLAUDE, 'invoke', body)).status).toBe(200);
    expect((await send(CLAUDE, 'invoke', { ...body, model: CLAUDE })).message).toMatch(/extraneous key \[model\]/);
    expect((await send(CLAUDE, 'invoke', { ...body, stream: true })).message).toMatch(/extraneous key \[stream\]/);
    expect((await send(CLAUDE, 'invoke', { ...body, anthropic_version: '2023-06-01' })).status).toBe(400);
    expect((await send(CLAUDE, 'invoke', { ...body, anthropic_beta: ['mcp-servers-2025-12-04'] })).message).toBe('invalid beta flag');
    expect((await send(CLAUDE, 'invoke', { ...body, anthropic_beta: ['context-1m-2025-08-07'] })).status).toBe(200);
  });
});
