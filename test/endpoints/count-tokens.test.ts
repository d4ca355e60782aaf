import { describe, expect, it } from 'vitest';
import { encodePng } from '../../src/providers/codecs/png.js';
import { fakeTokenCount } from '../fakes/fake-anthropic.js';
import { settle, type EndpointRig, useEndpointRig } from './rig.js';

let rig: EndpointRig;
useEndpointRig((started) => (rig = started));

const messages = [
  { role: 'user' as const, content: 'Read README.md and tell me what this project does.' },
  { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 'toolu_01', name: 'Read', input: { file_path: 'README.md' } }] },
  { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_01', content: 'infergate: an embeddable LLM gateway.' }] },
];
const tools = [
  {
    name: 'Read',
    description: 'Reads a file from the local filesystem.',
    input_schema: { type: 'object' as const, properties: { file_path: { type: 'string' } }, required: ['file_path'] },
  },
];

/** A solid PNG of this size, as base64: only its header matters to a count. */
function png(width: number, height: number): string {
  return Buffer.from(encodePng({ width, height, pixels: new Uint8Array(width * height * 4).fill(200) })).toString('base64');
}

describe('POST /v1/messages/count_tokens on an Anthropic upstream', () => {
  it("answers Anthropic's own count: the body as sent, model mapped, betas forwarded; nothing is charged", async () => {
    const counted = await rig
      .claude()
      .beta.messages.countTokens({ model: 'claude', system: 'You are Claude Code.', messages, tools, betas: ['context-management-2025-06-27'] });
    const upstream = rig.anthropic.last();
    expect(upstream.path).toBe('/v1/messages/count_tokens');
    expect(upstream.body).toEqual({ model: 'claude-sonnet-4-5', system: 'You are Claude Code.', messages, tools });
    // The SDK adds its own token-counting beta.
    expect(upstream.headers['anthropic-beta']?.split(',')).toContain('context-management-2025-06-27');
    expect(upstream.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(counted).toEqual({ input_tokens: fakeTokenCount(upstream.body) });
    await settle();
    expect(rig.usage).toEqual([]);
  });

  it("passes the upstream's refusal on, in Anthropic's shape", async () => {
    const wrong = [{ role: 'assistant' as const, content: 'I start.' }];
    const error = await rig
      .claude()
      .messages.countTokens({ model: 'claude', messages: wrong })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      status: 400,
      error: { type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('first message') } },
    });
  });

  it('leaves out thinking Anthropic never signed (answered earlier by another upstream), as a generation would', async () => {
    const replayed = [
      messages[0]!,
      {
        role: 'assistant' as const,
        content: [
          { type: 'thinking' as const, thinking: 'From an OpenAI upstream.', signature: 'infergate-encrypted:gAAAAB-opaque' },
          { type: 'thinking' as const, thinking: 'From a chat upstream, unsigned.', signature: '' },
          messages[1]!.content[0]!,
        ],
      },
      messages[2]!,
    ];
    await rig.claude().messages.countTokens({ model: 'claude', messages: replayed as never, tools });
    const sent = JSON.stringify(rig.anthropic.last().body);
    expect(sent).not.toContain('infergate-encrypted');
    expect(sent).not.toContain('unsigned');
    expect(rig.anthropic.last().body.messages[1].content).toEqual([messages[1]!.content[0]]);
  });

  it('counts with the tokenizer when the Anthropic upstream cannot be reached', async () => {
    const counted = await rig.claude().messages.countTokens({ model: 'claude-down', messages });
    expect(counted.input_tokens).toBeGreaterThan(20);
  });
});

describe('POST /v1/messages/count_tokens on other upstreams: a tokenizer count', () => {
  const count = (body: Record<string, unknown>) =>
    rig
      .claude()
      .messages.countTokens(body as never)
      .then((answer) => answer.input_tokens);

  it('counts system, messages and tools, never calling the upstream', async () => {
    const bare = await count({ model: 'gpt-chat', messages: [{ role: 'user', content: 'Hi' }] });
    // "Hi" is one token, its message framing 3, the reply's priming 3.
    expect(bare).toBe(7);
    const withSystem = await count({ model: 'gpt-chat', system: 'You are a helpful assistant.', messages: [{ role: 'user', content: 'Hi' }] });
    expect(withSystem).toBe(bare + 3 + 6);
    const conversation = await count({ model: 'gpt-chat', messages });
    const withTools = await count({ model: 'gpt-chat', messages, tools });
    expect(conversation).toBeGreaterThan(bare + 20);
    expect(withTools - conversation).toBeGreaterThan(30);
    expect(rig.chat.requests).toEqual([]);
  });

  it('counts a long prompt in proportion to its text, however it is written (a 200,000-letter word too, without stalling)', async () => {
    const words = await count({ model: 'gpt-chat', messages: [{ role: 'user', content: 'hello world '.repeat(10_000) }] });
    expect(words).toBeGreaterThanOrEqual(20_000);
    expect(words).toBeLessThan(20_100);
    const run = await count({ model: 'gpt-chat', messages: [{ role: 'user', content: 'a'.repeat(200_000) }] });
    expect(run).toBeGreaterThan(20_000);
    expect(run).toBeLessThan(30_000);
  });

  it("counts images by the vendor's formula when their size can be read, else a documented constant", async () => {
    const text = { type: 'text' as const, text: 'What is in this image?' };
    const withImage = (data: string) => [
      { role: 'user' as const, content: [text, { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data } }] },
    ];
    const withUrl = [
      { role: 'user' as const, content: [text, { type: 'image' as const, source: { type: 'url' as const, url: 'https://example.com/cat.jpg' } }] },
    ];
    const textOnly = await count({ model: 'gpt-chat', messages: [{ role: 'user', content: [text] }] });
    // OpenAI: 1024×1024 scaled to 768×768 is 4 tiles: 85 + 4 × 170.
    expect((await count({ model: 'gpt-chat', messages: withImage(png(1024, 1024)) })) - textOnly).toBe(765);
    // Anthropic's formula for a Claude model behind another server: 1000 × 1000 / 750.
    const claudeText = await count({ model: 'claude-on-chat', messages: [{ role: 'user', content: [text] }] });
    expect((await count({ model: 'claude-on-chat', messages: withImage(png(1000, 1000)) })) - claudeText).toBe(1334);
    expect((await count({ model: 'gpt-chat', messages: withUrl })) - textOnly).toBe(765);
  });

  it('refuses what the model could not serve, in Anthropic’s shape, and checks the key’s scope and headers', async () => {
    const unknown = await rig
      .claude()
      .messages.countTokens({ model: 'nope', messages })
      .catch((caught: unknown) => caught);
    expect(unknown).toMatchObject({
      status: 404,
      error: { type: 'error', error: { type: 'not_found_error', message: expect.stringContaining('nope') } },
    });
    const noVersion = await fetch(`${rig.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'x-api-key': 'sk-a', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-chat', messages }),
    });
    expect(noVersion.status).toBe(400);
    expect(await noVersion.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('anthropic-version') },
    });
    const noKey = await fetch(`${rig.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(noKey.status).toBe(401);
  });
});
