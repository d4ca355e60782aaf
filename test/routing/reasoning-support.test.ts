import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { takesReasoning } from '../../src/routing/reasoning-support.js';
import { startHarness, type Harness } from '../upstreams/harness.js';

describe('takesReasoning', () => {
  it.each([
    ['gpt-4.1', false],
    ['gpt-4o-mini', false],
    ['openai/gpt-4.1', false],
    ['gpt-3.5-turbo', false],
    ['claude-3-5-sonnet-20241022', false],
    ['claude-3-7-sonnet-20250219', true],
    ['claude-sonnet-4-5', true],
    ['gpt-5', true],
    ['o4-mini', true],
    ['deepseek-reasoner', true],
  ])('guesses from the name %s: %s', (upstreamModel, expected) => {
    expect(takesReasoning({}, upstreamModel)).toBe(expected);
  });

  it("lets the model's config decide", () => {
    expect(takesReasoning({ reasoning: true }, 'gpt-4.1')).toBe(true);
    expect(takesReasoning({ reasoning: false }, 'gpt-5')).toBe(false);
  });
});

describe('reasoning options on a translated path', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      models: [
        { id: 'gpt5-chat', provider: 'oai-chat', upstreamModel: 'gpt-5' },
        { id: 'gpt41-forced', provider: 'oai-chat', upstreamModel: 'gpt-4.1', reasoning: true },
      ],
    });
  });
  afterAll(() => h.close());
  beforeEach(() => h.reset());

  // Claude Code asks for an effort on every request, whatever model it is routed to.
  const claudeCodeTurn = (model: string) =>
    h.anthropic.messages.create({
      model,
      max_tokens: 1024,
      thinking: { type: 'adaptive' } as never,
      output_config: { effort: 'high' },
      messages: [{ role: 'user', content: 'hi' }],
    } as never);

  it('reach a reasoning model on a chat upstream', async () => {
    h.upstreams.chat.fake.reply({ text: ['ok'] });
    await claudeCodeTurn('gpt5-chat');
    expect(h.upstreams.chat.fake.last().body.reasoning_effort).toBe('high');
  });

  it('are left out for a model that cannot reason, which would refuse them', async () => {
    h.upstreams.chat.fake.reply({ text: ['ok'] });
    const message = await claudeCodeTurn('gpt-chat');
    expect(message).toMatchObject({ content: [{ type: 'text', text: 'ok' }] });
    expect(h.upstreams.chat.fake.last().body).not.toHaveProperty('reasoning_effort');
  });

  it("are sent when the model's config says it reasons (here the upstream refuses, as the real one would)", async () => {
    h.upstreams.chat.fake.reply({ text: ['ok'] });
    await expect(claudeCodeTurn('gpt41-forced')).rejects.toMatchObject({ status: 400 });
    const refused = h.upstreams.chat.fake.requests.at(-1)!;
    expect(refused.rejected?.message).toMatch(/reasoning_effort/);
    expect(refused.body.reasoning_effort).toBe('high');
  });
});
