import { createHash } from 'node:crypto';
import type { Message } from '@anthropic-ai/sdk/resources/messages';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.js';
import { createLocalProvider } from '../../src/providers/local/local-provider.js';
import { anthropicWith, sseBody } from '../protocols/helpers.js';
import { startHarness, type Harness, type UpstreamKind } from '../upstreams/harness.js';

/**
 * The request shapes Claude Code 2.1.330 sends on `POST /v1/messages?beta=true` (captured from the
 * CLI, trimmed to what matters), sent as the CLI sends them to every kind of upstream through
 * the strict fakes, with what each upstream received checked: kept on Anthropic passthrough,
 * translated or dropped elsewhere, never leaked.
 */

type Json = Record<string, any>;

const BETAS = [
  'claude-code-20250219',
  'interleaved-thinking-2025-05-14',
  'context-management-2025-06-27',
  'mid-conversation-tool-changes-2026-07-01',
  'thinking-token-count-2026-05-13',
  'advanced-tool-use-2025-11-20',
  'effort-2025-11-24',
];
const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json',
  'anthropic-version': '2023-06-01',
  'anthropic-beta': BETAS.join(','),
  'anthropic-dangerous-direct-browser-access': 'true',
  'user-agent': 'claude-cli/2.1.330 (external, sdk-cli)',
  'x-app': 'cli',
  'x-api-key': 'sk-test',
};
const USER_ID = JSON.stringify({
  device_id: '50f0009a03225639415dd61714eb6a90c151b0b963b160bad90b208fca9580b8',
  account_uuid: '',
  session_id: 'af68da0f-1b25-4148-aa44-f5b6835e59eb',
});
const ephemeral = { type: 'ephemeral' };
const objectSchema = (properties: Json = {}, required: string[] = []) => ({
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

const READ = {
  name: 'Read',
  description: 'Reads a file from the local filesystem.',
  input_schema: objectSchema({ file_path: { type: 'string' } }, ['file_path']),
};
const TOOL_SEARCH = {
  name: 'ToolSearch',
  description: 'Fetches full schema definitions for deferred tools so they can be called.',
  input_schema: objectSchema({ query: { type: 'string' }, max_results: { type: 'number', default: 5 } }, ['query', 'max_results']),
};
const PLACEHOLDER = {
  name: 'DeferredToolPlaceholder',
  description: 'Reserved placeholder that keeps deferred tool loading active; never call this tool.',
  input_schema: { type: 'object', properties: {} },
  defer_loading: true,
};
const CRON_CREATE = {
  name: 'CronCreate',
  description: 'Schedules a prompt.',
  input_schema: objectSchema({ cron: { type: 'string' } }, ['cron']),
  defer_loading: true,
};

const FIRST_TURN = [
  {
    role: 'user',
    content: [
      { type: 'text', text: '<system-reminder>\nAttribution for git commits.\n</system-reminder>' },
      { type: 'text', text: 'Read secret.txt and tell me the token' },
    ],
  },
  {
    role: 'system',
    content: [
      {
        type: 'text',
        text: '# Environment\n - Primary working directory: /tmp/work\n\nThe following deferred tools are now available via ToolSearch:\nCronCreate',
        cache_control: ephemeral,
      },
    ],
  },
];

/** A Claude Code request body as the CLI builds it (system blocks, tools, fields), for `model`. */
function claudeCodeBody(model: string, overrides: Json = {}): Json {
  return {
    model,
    messages: FIRST_TURN,
    system: [
      { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.330.c62; cc_entrypoint=sdk-cli;' },
      { type: 'text', text: "You are a Claude agent, built on Anthropic's Claude Agent SDK.", cache_control: ephemeral },
      { type: 'text', text: '\nYou are an agent working with the user toward their goals.', cache_control: ephemeral },
    ],
    tools: [READ, TOOL_SEARCH, PLACEHOLDER],
    metadata: { user_id: USER_ID },
    max_tokens: 32000,
    thinking: { type: 'adaptive', display: 'omitted' },
    context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
    output_config: { effort: 'high' },
    stream: true,
    ...overrides,
  };
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    providers: (urls) => ({
      // An Anthropic-compatible server that takes only some betas.
      'claude-betas': createAnthropicProvider({ baseURL: urls.anthropic, apiKey: 'up-key', betas: ['claude-code-20250219', 'effort-2025-11-24'] }),
      // A gateway whose keys all belong to the operator: every beta forwarded.
      'claude-all-betas': createAnthropicProvider({ baseURL: urls.anthropic, apiKey: 'up-key', betas: 'all' }),
      local: createLocalProvider({ chunkDelayMs: 0 }),
    }),
    models: [
      { id: 'claude-betas', provider: 'claude-betas', upstreamModel: 'claude-sonnet-4-5' },
      { id: 'claude-all-betas', provider: 'claude-all-betas', upstreamModel: 'claude-sonnet-4-5' },
      { id: 'local-chat', provider: 'local', upstreamModel: 'local-chat' },
      { id: 'local-reasoner', provider: 'local', upstreamModel: 'local-reasoner' },
    ],
  });
});
afterAll(() => h.close());
beforeEach(() => h.reset());

/** POSTs as Claude Code does, to `/v1/messages?beta=true`; a stream is read into the SDK's final Message. */
async function send(body: Json, headers: Record<string, string> = HEADERS): Promise<{ status: number; message: Message; raw: string }> {
  const response = await fetch(`${h.url}/v1/messages?beta=true`, { method: 'POST', headers, body: JSON.stringify(body) });
  const raw = await response.text();
  if (response.status !== 200) return { status: response.status, message: JSON.parse(raw), raw };
  const message =
    body.stream === true
      ? await anthropicWith(sseBody(raw))
          .messages.stream({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] })
          .finalMessage()
      : (JSON.parse(raw) as Message);
  return { status: 200, message, raw };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const TRANSLATED: UpstreamKind[] = ['chat', 'responses'];

describe('Claude Code on an Anthropic upstream (passthrough)', () => {
  it('forwards the body as sent: system message, thinking, context management, effort, user id, deferred tools, cache marks', async () => {
    h.upstreams.anthropic.fake.reply({ text: ['The token is 42.'], usage: { input: 900, cachedRead: 800, output: 7 } });
    const body = claudeCodeBody('claude');
    const { status, message } = await send(body);
    expect(status).toBe(200);
    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'The token is 42.' })]);
    expect(message.usage).toMatchObject({ input_tokens: 100, cache_read_input_tokens: 800, output_tokens: 7 });

    const received = h.upstreams.anthropic.fake.last();
    expect(received.body).toEqual({ ...body, model: 'claude-sonnet-4-5' });
    expect(received.headers['anthropic-beta']).toBe(BETAS.join(','));
  });

  it("by default, drops the betas that reach the operator's account (files, skills, code-execution containers, MCP connector)", async () => {
    const account = ['files-api-2025-04-14', 'skills-2025-10-02', 'code-execution-2025-08-25', 'mcp-client-2025-11-20'];
    const headers = { ...HEADERS, 'anthropic-beta': [...BETAS, ...account].join(',') };
    h.upstreams.anthropic.fake.reply({ text: ['ok'] }, { text: ['ok'] });
    expect((await send(claudeCodeBody('claude'), headers)).status).toBe(200);
    expect(h.upstreams.anthropic.fake.last().headers['anthropic-beta']).toBe(BETAS.join(','));

    expect((await send(claudeCodeBody('claude-all-betas'), headers)).status).toBe(200);
    expect(h.upstreams.anthropic.fake.last().headers['anthropic-beta']).toBe([...BETAS, ...account].join(','));
  });

  it('forwards only the allowed betas to a server configured with an allowlist', async () => {
    h.upstreams.anthropic.fake.reply({ text: ['ok'] });
    const { status } = await send(claudeCodeBody('claude-betas'));
    expect(status).toBe(200);
    expect(h.upstreams.anthropic.fake.last().headers['anthropic-beta']).toBe('claude-code-20250219,effort-2025-11-24');
  });

  it('keeps a tool search result (tool_reference) and the deferred tool it loads', async () => {
    h.upstreams.anthropic.fake.reply({ text: ['Scheduled.'] });
    const body = claudeCodeBody('claude', { messages: toolSearchTurns(), tools: [READ, TOOL_SEARCH, PLACEHOLDER, CRON_CREATE] });
    expect((await send(body)).status).toBe(200);
    expect(h.upstreams.anthropic.fake.last().body.messages).toEqual(body.messages);
  });

  it('leaves out the thinking another upstream answered earlier, which Anthropic never signed', async () => {
    // What the gateway answered Claude Code from an OpenAI upstream: reasoning text with no
    // signature, and encrypted reasoning carried in the signature behind the gateway's prefix.
    const foreign = [
      { type: 'thinking', thinking: 'Reading the file first.', signature: '' },
      { type: 'thinking', thinking: '', signature: 'infergate-encrypted:gAAAAABencrypted' },
    ];
    const signed = { type: 'thinking', thinking: 'Claude thought.', signature: 'EqQBCgIYAhIMsig' };
    const history = [
      ...FIRST_TURN,
      { role: 'assistant', content: [...foreign, { type: 'text', text: 'The token is 42.' }] },
      { role: 'assistant', content: foreign },
      { role: 'user', content: 'Thanks. And again?' },
      { role: 'assistant', content: [signed, { type: 'text', text: 'Still 42.' }] },
      { role: 'user', content: 'Sure?' },
    ];
    h.upstreams.anthropic.fake.reply({ text: ['Yes.'] });
    const { status } = await send(claudeCodeBody('claude', { messages: history }));
    expect(status).toBe(200);
    expect(h.upstreams.anthropic.fake.last().body.messages).toEqual([
      ...FIRST_TURN,
      { role: 'assistant', content: [{ type: 'text', text: 'The token is 42.' }] },
      { role: 'user', content: 'Thanks. And again?' },
      { role: 'assistant', content: [signed, { type: 'text', text: 'Still 42.' }] },
      { role: 'user', content: 'Sure?' },
    ]);
  });
});

/** The conversation after the model searched for CronCreate: the result is a `tool_reference`. */
function toolSearchTurns(): Json[] {
  return [
    ...FIRST_TURN,
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_search', name: 'ToolSearch', input: { query: 'select:CronCreate', max_results: 5 } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_search', content: [{ type: 'tool_reference', tool_name: 'CronCreate' }] }] },
  ];
}

/** The OpenAI-side tool names, whichever protocol. */
const toolNames = (kind: UpstreamKind, body: Json): string[] => body.tools.map((tool: Json) => (kind === 'chat' ? tool.function.name : tool.name));

describe.each(TRANSLATED)('Claude Code on a %s upstream (translated)', (kind) => {
  const up = () => h.upstreams[kind];

  it('maps the system message in place, effort and user id; drops what the upstream cannot take', async () => {
    up().fake.reply({ text: ['The token is 42.'], usage: { input: 900, cachedRead: 800, output: 7 } });
    const { status, message } = await send(claudeCodeBody(up().model));
    expect(status).toBe(200);
    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'The token is 42.' })]);
    // Claude Code reads input, cache and output counters from the stream.
    expect(message.usage).toMatchObject({ input_tokens: 100, cache_read_input_tokens: 800, output_tokens: 7 });

    const received = up().fake.last();
    for (const field of ['context_management', 'thinking', 'output_config', 'metadata', 'system']) expect(received.body).not.toHaveProperty(field);
    const text = JSON.stringify(received.body);
    for (const leaked of ['cache_control', 'defer_loading', 'DeferredToolPlaceholder']) expect(text).not.toContain(leaked);
    expect(received.headers['anthropic-beta']).toBeUndefined();
    expect(toolNames(kind, received.body)).toEqual(['Read', 'ToolSearch']);
    expect(received.body.user).toBe(sha256(USER_ID));
    if (kind === 'chat') {
      expect(received.body.messages.map((m: Json) => m.role)).toEqual(['system', 'user', 'system']);
      expect(received.body.messages[2].content).toMatch(/^# Environment/);
      // The chat upstream's model is gpt-4.1, which refuses reasoning options: the effort is left out.
      expect(received.body).not.toHaveProperty('reasoning_effort');
    } else {
      expect(received.body.instructions).toMatch(/Claude Agent SDK/);
      expect(received.body.input.map((item: Json) => item.role)).toEqual(['user', 'system']);
      expect(received.body.input[1].content[0].text).toMatch(/^# Environment/);
      expect(received.body.reasoning).toEqual({ effort: 'high' });
    }
  });

  it('sends a deferred tool once a tool search loaded it, with the reference as text', async () => {
    up().fake.reply({ text: ['Scheduled.'] });
    const body = claudeCodeBody(up().model, { messages: toolSearchTurns(), tools: [READ, TOOL_SEARCH, PLACEHOLDER, CRON_CREATE] });
    expect((await send(body)).status).toBe(200);
    const received = up().fake.last().body;
    expect(toolNames(kind, received)).toEqual(['Read', 'ToolSearch', 'CronCreate']);
    const result =
      kind === 'chat'
        ? received.messages.find((m: Json) => m.role === 'tool').content
        : received.input.find((i: Json) => i.type === 'function_call_output').output;
    expect(result).toBe('Tool loaded: CronCreate');
  });

  it('drops Claude-signed thinking from the history, never forwarding a signature', async () => {
    up().fake.reply({ text: ['Done.'] });
    const messages = [
      ...FIRST_TURN,
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: '', signature: 'EqQBCgIYAhIMclaudesig' },
          { type: 'redacted_thinking', data: 'EmwKAhgBclauderedacted' },
          { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: '/tmp/work/secret.txt' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_read', content: 'TOKEN-42', cache_control: ephemeral }] },
    ];
    expect((await send(claudeCodeBody(up().model, { messages }))).status).toBe(200);
    const text = JSON.stringify(up().fake.last().body);
    expect(text).not.toMatch(/claudesig|clauderedacted/);
    expect(text).toContain('TOKEN-42');
  });

  it('answers a clear 400 for a server tool it cannot run, naming the tool', async () => {
    const body = claudeCodeBody(up().model, { tools: [READ, { type: 'web_search_20250305', name: 'web_search', max_uses: 5 }] });
    const { status, message } = await send(body);
    expect(status).toBe(400);
    expect(message).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining("Tool type 'web_search_20250305' runs on Anthropic's servers") },
    });
    expect(up().fake.accepted()).toHaveLength(0);
  });
});

describe('Claude Code thinking on a Responses upstream', () => {
  const up = () => h.upstreams.responses;

  it('with display "omitted" gets no thinking text, and its encrypted reasoning goes back to the upstream unchanged', async () => {
    up().fake.reply({
      reasoning: ['Need to read ', 'the file.'],
      toolCalls: [{ id: 'call_read', name: 'Read', args: ['{"file_path":"/tmp/work/secret.txt"}'] }],
    });
    const first = await send(claudeCodeBody(up().model));
    expect(first.status).toBe(200);
    expect(first.raw).not.toContain('Need to read');
    const thinking = first.message.content.find((block) => block.type === 'thinking');
    expect(thinking).toMatchObject({ type: 'thinking', thinking: '' });

    up().fake.reply({ text: ['The token is 42.'] });
    const messages = [
      ...FIRST_TURN,
      { role: 'assistant', content: first.message.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_read', content: 'TOKEN-42' }] },
    ];
    const second = await send(claudeCodeBody(up().model, { messages }));
    expect(second.status).toBe(200);
    const replayed = up()
      .fake.last()
      .body.input.find((item: Json) => item.type === 'reasoning');
    expect(replayed.encrypted_content).toMatch(/^gAAAAA/);
    expect(thinking && 'signature' in thinking && thinking.signature).toBe(`infergate-encrypted:${replayed.encrypted_content}`);
  });

  it('with display "summarized" gets the reasoning summary as thinking text', async () => {
    up().fake.reply({ reasoning: ['Need to read the file.'], text: ['ok'] });
    const { message } = await send(claudeCodeBody(up().model, { thinking: { type: 'adaptive', display: 'summarized' } }));
    expect(message.content[0]).toMatchObject({ type: 'thinking', thinking: 'Need to read the file.' });
  });
});

describe('Claude Code on the local provider', () => {
  it('answers the captured request shape, streamed, with usage', async () => {
    const { status, message } = await send(claudeCodeBody('local-chat'));
    expect(status).toBe(200);
    expect(message.role).toBe('assistant');
    expect(message.content.length).toBeGreaterThan(0);
    expect(message.stop_reason === 'end_turn' || message.stop_reason === 'tool_use').toBe(true);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it('answers the same request without streaming', async () => {
    const { status, message } = await send(claudeCodeBody('local-chat', { stream: false }));
    expect(status).toBe(200);
    expect(message.type).toBe('message');
  });

  it('keeps a reasoning model\'s unsigned thinking out of the answer when display is "omitted"', async () => {
    const omitted = await send(claudeCodeBody('local-reasoner'));
    expect(omitted.status).toBe(200);
    expect(omitted.raw).not.toContain('thinking_delta');
    expect(omitted.message.content.some((block) => block.type === 'thinking')).toBe(false);
    // The thinking still happened: Claude Code reads its token count.
    expect(omitted.message.usage.output_tokens_details?.thinking_tokens).toBeGreaterThan(0);
    const shown = await send(claudeCodeBody('local-reasoner', { thinking: { type: 'adaptive' } }));
    expect(shown.message.content[0]).toMatchObject({ type: 'thinking', thinking: expect.stringMatching(/\S/) });
  });
});

describe('cache breakpoints from a Chat client', () => {
  /** Six marked parts, as clients of OpenAI-compatible gateways send them for Claude models. */
  const marked = (text: string) => ({ type: 'text', text, cache_control: ephemeral });
  const messages = [
    { role: 'system', content: [marked('rule 1'), marked('rule 2')] },
    { role: 'user', content: [marked('doc 1'), marked('doc 2')] },
    { role: 'assistant', content: 'noted' },
    { role: 'user', content: [marked('doc 3'), marked('question')] },
  ];

  it('reach an Anthropic upstream as at most 4, the last ones', async () => {
    h.upstreams.anthropic.fake.reply({ text: ['ok'] });
    await h.openai.chat.completions.create({ model: 'claude', messages } as never);
    const received = h.upstreams.anthropic.fake.last().body;
    const kept = [...received.system, ...received.messages.flatMap((m: Json) => m.content)].filter((b: Json) => b.cache_control).map((b: Json) => b.text);
    expect(kept).toEqual(['doc 1', 'doc 2', 'doc 3', 'question']);
  });

  it('never reach an OpenAI upstream', async () => {
    h.upstreams.responses.fake.reply({ text: ['ok'] });
    await h.openai.chat.completions.create({ model: 'gpt-resp', messages } as never);
    expect(JSON.stringify(h.upstreams.responses.fake.last().body)).not.toContain('cache_control');
  });
});
