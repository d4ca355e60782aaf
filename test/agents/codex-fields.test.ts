import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLocalProvider } from '../../src/providers/local/local-provider.js';
import { checkResponsesStream } from '../protocols/helpers.js';
import { scopedCacheKey, startHarness, toolExchange, type Harness, type UpstreamKind } from '../upstreams/harness.js';

type Json = Record<string, any>;

/**
 * The request bodies Codex 0.169.0 sends on `POST /v1/responses` (captured, long texts trimmed),
 * through each kind of upstream: what the upstream receives, and what Codex reads back. Codex
 * parses each `response.output_item.done` item by its type, dispatches a function call by
 * `namespace` + `name`, a custom tool call by `name` with the raw `input`, runs a tool search
 * from `tool_search_call.arguments`, and needs `response.completed` with the usage counters.
 */
const fixture = (name: string): Json => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8'));
/** Unknown model name: function tools, the `multi_agent_v1` namespace, `web_search`, `reasoning.summary`. */
const FALLBACK = fixture('codex-0.169-fallback-model.json');
/** `gpt-5.5`: also the freeform `apply_patch`, client `tool_search`, `text.verbosity`, `reasoning.effort`. */
const GPT_55 = fixture('codex-0.169-gpt-5.5.json');

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    providers: () => ({ local: createLocalProvider({ chunkDelayMs: 0 }) }),
    models: [{ id: 'local-codex', provider: 'local', upstreamModel: 'local-reasoner' }],
  });
});
afterAll(() => h.close());
beforeEach(() => h.reset());

type Cell = UpstreamKind | 'local';
const modelOf = (cell: Cell): string => (cell === 'local' ? 'local-codex' : h.upstreams[cell].model);

interface CodexView {
  status: number;
  headers: Headers;
  events: Json[];
  /** The items of `response.output_item.done`, as Codex collects them. */
  items: Json[];
  completed?: Json;
  failed?: Json;
}

/** One Codex turn: the body with the model set, streamed as Codex asks for it. */
async function codexTurn(base: Json, cell: Cell, change: Json = {}): Promise<CodexView> {
  const response = await fetch(h.url + '/v1/responses', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: 'Bearer sk-test', originator: 'codex_exec' },
    body: JSON.stringify({ ...base, model: modelOf(cell), ...change }),
  });
  const text = await response.text();
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    return { status: response.status, headers: response.headers, events: [JSON.parse(text)], items: [] };
  }
  const events = checkResponsesStream(text);
  expect(events[0]!.type).toBe('response.created');
  return {
    status: response.status,
    headers: response.headers,
    events,
    items: events.filter((e) => e.type === 'response.output_item.done').map((e) => e.item),
    completed: events.find((e) => e.type === 'response.completed')?.response,
    failed: events.find((e) => e.type === 'response.failed')?.response,
  };
}

/** The counters Codex deserialises from `response.completed` (a missing one fails the turn). */
function expectCodexUsage(completed: Json | undefined): void {
  expect(completed?.id).toBeTypeOf('string');
  const usage = completed!.usage;
  for (const value of [
    usage.input_tokens,
    usage.output_tokens,
    usage.total_tokens,
    usage.input_tokens_details.cached_tokens,
    usage.output_tokens_details.reasoning_tokens,
  ]) {
    expect(value).toBeTypeOf('number');
  }
}

function upstreamToolNames(kind: UpstreamKind, body: Json): string[] {
  return (body.tools ?? []).map((tool: Json) => (kind === 'chat' ? tool.function.name : tool.name));
}

function upstreamTool(kind: UpstreamKind, body: Json, name: string): { description?: string; schema: Json } {
  const tool = body.tools.find((t: Json) => (kind === 'chat' ? t.function.name : t.name) === name);
  return kind === 'chat'
    ? { description: tool.function.description, schema: tool.function.parameters }
    : { description: tool.description, schema: tool.input_schema };
}

/** A second turn: the first turn's input, then the model's calls and Codex's outputs. */
function withHistory(base: Json, ...items: Json[]): Json {
  return { ...base, input: [...base.input, ...items] };
}

const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+Hello "world"\n*** End Patch\n';
const CALENDAR = {
  type: 'namespace',
  name: 'mcp__calendar',
  description: 'Calendar tools',
  tools: [
    { type: 'function', name: 'create_event', description: 'Create an event', parameters: { type: 'object', properties: { title: { type: 'string' } } } },
  ],
};

describe.each(['chat', 'anthropic'] as const)('Codex through a %s upstream (translated)', (kind) => {
  const up = () => h.upstreams[kind];

  it('serves the first turn: tools flattened, web_search dropped with a note, options mapped', async () => {
    for (const base of [FALLBACK, GPT_55]) {
      up().fake.reply({ text: ['Hi', ' there'], usage: { input: 900, cachedRead: 600, output: 12, reasoning: 5 } });
      const turn = await codexTurn(base, kind);
      expect(turn.status).toBe(200);
      expect(turn.headers.get('x-infergate-dropped-tools')).toBe('web_search');
      expect(turn.items).toMatchObject([{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hi there' }] }]);
      expectCodexUsage(turn.completed);
      expect(turn.completed!.usage.input_tokens_details.cached_tokens).toBe(600);
      expect(turn.completed!.usage.output_tokens_details.reasoning_tokens).toBe(kind === 'chat' ? 5 : 0);

      const body = up().fake.last().body;
      // Codex's developer messages (no `instructions`) are the system prompt.
      const system = kind === 'chat' ? body.messages[0] : { role: 'system', content: body.system };
      expect(system.role).toBe('system');
      expect(JSON.stringify(system.content)).toContain(base.input[0].content[0].text.slice(0, 40));
      for (const field of ['client_metadata', 'include', 'text', 'reasoning', 'instructions']) expect(body).not.toHaveProperty(field);
      if (kind === 'chat') {
        expect(body.prompt_cache_key).toBe(scopedCacheKey(base.prompt_cache_key));
        expect(body.store).toBe(false);
        expect(body.parallel_tool_calls).toBe(true);
        expect(body.tool_choice).toBe('auto');
      } else {
        expect(body).not.toHaveProperty('prompt_cache_key');
        expect(body).not.toHaveProperty('store');
        expect(body.tool_choice).toEqual({ type: 'auto' });
      }
    }
  });

  it('offers namespaced functions under flat names', async () => {
    up().fake.reply({ text: ['ok'] });
    await codexTurn(FALLBACK, kind);
    const body = up().fake.last().body;
    expect(upstreamToolNames(kind, body)).toEqual([
      'exec_command',
      'view_image',
      'multi_agent_v1__close_agent',
      'multi_agent_v1__resume_agent',
      'multi_agent_v1__send_input',
      'multi_agent_v1__spawn_agent',
      'multi_agent_v1__wait_agent',
    ]);
    const spawn = FALLBACK.tools.find((t: Json) => t.type === 'namespace').tools.find((t: Json) => t.name === 'spawn_agent');
    expect(upstreamTool(kind, body, 'multi_agent_v1__spawn_agent').schema).toEqual(spawn.parameters);
  });

  it('offers apply_patch as a function with one string argument and its grammar, and tool_search as a function', async () => {
    up().fake.reply({ text: ['ok'] });
    await codexTurn(GPT_55, kind);
    const body = up().fake.last().body;
    expect(upstreamToolNames(kind, body)).toEqual(['exec_command', 'apply_patch', 'view_image', 'tool_search']);
    const patch = upstreamTool(kind, body, 'apply_patch');
    expect(patch.schema).toMatchObject({ type: 'object', properties: { input: { type: 'string' } }, required: ['input'] });
    expect(patch.description).toContain('begin_patch hunk+ end_patch');
    const search = GPT_55.tools.find((t: Json) => t.type === 'tool_search');
    expect(upstreamTool(kind, body, 'tool_search').schema).toEqual(search.parameters);
    if (kind === 'chat') {
      expect(body.verbosity).toBe('low');
      // gpt-4.1 refuses reasoning options (test/routing/reasoning-support.test.ts has a model that takes them).
      expect(body).not.toHaveProperty('reasoning_effort');
    } else {
      expect(body).not.toHaveProperty('verbosity');
      expect(body.thinking).toMatchObject({ type: 'enabled' });
    }
  });

  it('returns a namespaced call as the function_call Codex dispatches by namespace', async () => {
    up().fake.reply({ toolCalls: [{ name: 'multi_agent_v1__spawn_agent', args: ['{"task_name":', '"t","message":"m"}'] }] });
    const turn = await codexTurn(FALLBACK, kind);
    expect(turn.items).toHaveLength(1);
    expect(turn.items[0]).toMatchObject({
      type: 'function_call',
      name: 'spawn_agent',
      namespace: 'multi_agent_v1',
      arguments: '{"task_name":"t","message":"m"}',
    });
    expect(turn.items[0]!.call_id).toBeTypeOf('string');
    expectCodexUsage(turn.completed);
  });

  it('returns apply_patch as a custom_tool_call with the raw patch, streamed as input deltas', async () => {
    const args = JSON.stringify({ input: PATCH });
    up().fake.reply({ toolCalls: [{ name: 'apply_patch', args: [args.slice(0, 20), args.slice(20, 45), args.slice(45)] }] });
    const turn = await codexTurn(GPT_55, kind);
    expect(turn.items).toMatchObject([{ type: 'custom_tool_call', name: 'apply_patch', input: PATCH, status: 'completed' }]);
    const deltas = turn.events.filter((e) => e.type === 'response.custom_tool_call_input.delta');
    expect(deltas.map((e) => e.delta).join('')).toBe(PATCH);
    expect(deltas.every((e) => e.item_id === turn.items[0]!.id)).toBe(true);
  });

  it('returns a tool search as tool_search_call, and offers what it loaded on the next turn', async () => {
    up().fake.reply({ toolCalls: [{ name: 'tool_search', args: ['{"query":"calendar","limit":2}'] }] });
    const turn = await codexTurn(GPT_55, kind);
    const call = turn.items[0]!;
    expect(call).toMatchObject({ type: 'tool_search_call', execution: 'client', status: 'completed', arguments: { query: 'calendar', limit: 2 } });

    up().fake.reply({ text: ['found it'] });
    const next = await codexTurn(
      withHistory(
        GPT_55,
        { type: 'tool_search_call', call_id: call.call_id, status: 'completed', execution: 'client', arguments: call.arguments },
        {
          type: 'tool_search_output',
          call_id: call.call_id,
          status: 'completed',
          execution: 'client',
          tools: [CALENDAR],
        },
      ),
      kind,
    );
    expect(next.status).toBe(200);
    const body = up().fake.last().body;
    expect(upstreamToolNames(kind, body)).toContain('mcp__calendar__create_event');
    expect(toolExchange(kind, body)).toEqual({
      calls: [{ id: call.call_id, name: 'tool_search', input: { query: 'calendar', limit: 2 } }],
      results: [{ id: call.call_id, output: 'Tools now available: mcp__calendar__create_event.' }],
    });
  });

  it('replays a namespaced call, a custom call and their outputs under the same flat names', async () => {
    up().fake.reply({ text: ['done'] });
    const [a, b] = kind === 'anthropic' ? ['toolu_A', 'toolu_B'] : ['call_A', 'call_B'];
    const body = withHistory(
      { ...GPT_55, tools: [...GPT_55.tools, FALLBACK.tools.find((t: Json) => t.type === 'namespace')] },
      { type: 'function_call', name: 'wait_agent', namespace: 'multi_agent_v1', arguments: '{"targets":["x"]}', call_id: a },
      { type: 'function_call_output', call_id: a, output: 'agent x: done' },
      { type: 'custom_tool_call', status: 'completed', call_id: b, name: 'apply_patch', input: PATCH },
      { type: 'custom_tool_call_output', call_id: b, output: 'Success. Updated the following files:\nA hello.txt' },
    );
    const turn = await codexTurn(body, kind);
    expect(turn.status).toBe(200);
    expect(toolExchange(kind, up().fake.last().body)).toEqual({
      calls: [
        { id: a, name: 'multi_agent_v1__wait_agent', input: { targets: ['x'] } },
        { id: b, name: 'apply_patch', input: { input: PATCH } },
      ],
      results: [
        { id: a, output: 'agent x: done' },
        { id: b, output: 'Success. Updated the following files:\nA hello.txt' },
      ],
    });
  });

  it('refuses a turn that forces web_search, naming the parameter', async () => {
    const turn = await codexTurn(FALLBACK, kind, { tool_choice: { type: 'web_search' } });
    expect(turn.status).toBe(400);
    expect(turn.events[0]!.error).toMatchObject({ param: 'tool_choice.type', type: 'invalid_request_error' });
    expect(up().fake.accepted()).toHaveLength(0);
  });

  it('ends a stream the upstream breaks with response.failed, which Codex reports', async () => {
    up().fake.reply({
      text: ['par', 'tial', 'answer'],
      streamError: { after: 3, message: 'Overloaded', type: kind === 'anthropic' ? 'overloaded_error' : 'server_error' },
    });
    const turn = await codexTurn(FALLBACK, kind);
    expect(turn.completed).toBeUndefined();
    expect(turn.failed).toMatchObject({ status: 'failed', error: { code: expect.any(String), message: expect.any(String) } });
    expect(turn.events.at(-1)!.type).toBe('response.failed');
  });
});

describe('Codex reasoning across upstreams (store: false, encrypted content)', () => {
  it('gives Claude its signed thinking back, and no other upstream', async () => {
    const claude = h.upstreams.anthropic;
    claude.fake.reply({ reasoning: ['Let me ', 'look.'], toolCalls: [{ id: 'toolu_R', name: 'exec_command', args: ['{"cmd":"cat secret.txt"}'] }] });
    const turn = await codexTurn(GPT_55, 'anthropic');
    const [reasoning, call] = turn.items;
    expect(reasoning).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'Let me look.' }] });
    expect(reasoning!.encrypted_content).toBeTypeOf('string');
    expect(call).toMatchObject({ type: 'function_call', name: 'exec_command', call_id: 'toolu_R' });

    // Codex replays the items verbatim, then the tool's output.
    const history = [
      { type: 'reasoning', id: reasoning!.id, summary: reasoning!.summary, encrypted_content: reasoning!.encrypted_content },
      { type: 'function_call', name: 'exec_command', arguments: call!.arguments, call_id: call!.call_id },
      { type: 'function_call_output', call_id: call!.call_id, output: 'TOKEN-42' },
    ];
    claude.fake.reply({ text: ['The token is TOKEN-42'] });
    await codexTurn(withHistory(GPT_55, ...history), 'anthropic');
    const assistant = claude.fake.last().body.messages.find((m: Json) => m.role === 'assistant');
    expect(assistant.content[0]).toEqual({ type: 'thinking', thinking: 'Let me look.', signature: expect.stringMatching(/sig$/) });

    // The same history on a Chat upstream and on a Responses one: the signature goes nowhere.
    h.upstreams.chat.fake.reply({ text: ['ok'] });
    expect((await codexTurn(withHistory(GPT_55, ...history), 'chat')).status).toBe(200);
    expect(JSON.stringify(h.upstreams.chat.fake.last().body)).not.toContain(reasoning!.encrypted_content.slice(-12));
    h.upstreams.responses.fake.reply({ text: ['ok'] });
    expect((await codexTurn(withHistory(GPT_55, ...history), 'responses')).status).toBe(200);
    const forwarded = h.upstreams.responses.fake.last().body;
    expect(forwarded.input.some((item: Json) => item.type === 'reasoning')).toBe(false);
    expect(forwarded.input.at(-1)).toEqual(history[2]);
  });
});

describe('Codex through a Responses upstream (passthrough)', () => {
  const up = () => h.upstreams.responses;

  it('forwards every field of the turn unchanged but for the model and the scoped prompt cache key', async () => {
    for (const base of [FALLBACK, GPT_55]) {
      up().fake.reply({ reasoning: ['hm'], text: ['Hi'], usage: { input: 900, cachedRead: 600, output: 12, reasoning: 5 } });
      const turn = await codexTurn(base, 'responses');
      expect(turn.status).toBe(200);
      expect(turn.headers.get('x-infergate-dropped-tools')).toBeNull();
      expect(up().fake.last().body).toEqual({ ...base, model: up().upstreamModel, prompt_cache_key: scopedCacheKey(base.prompt_cache_key) });
      expect(turn.items.map((item) => item.type)).toEqual(['reasoning', 'message']);
      expect(turn.items[0]!.encrypted_content).toMatch(/^gAAAAA/);
      expectCodexUsage(turn.completed);
      expect(turn.completed!.usage.output_tokens_details.reasoning_tokens).toBe(5);
    }
  });

  it('forwards Codex history with custom, tool search and namespaced items as sent', async () => {
    up().fake.reply({ text: ['ok'] });
    const body = withHistory(
      GPT_55,
      { type: 'reasoning', summary: [], encrypted_content: 'gAAAAABopaque' },
      { type: 'function_call', name: 'wait_agent', namespace: 'multi_agent_v1', arguments: '{}', call_id: 'call_1' },
      { type: 'function_call_output', call_id: 'call_1', output: 'done' },
      { type: 'custom_tool_call', status: 'completed', call_id: 'call_2', name: 'apply_patch', input: PATCH },
      { type: 'custom_tool_call_output', call_id: 'call_2', output: 'ok' },
      { type: 'tool_search_call', call_id: 'call_3', status: 'completed', execution: 'client', arguments: { query: 'cal' } },
      { type: 'tool_search_output', call_id: 'call_3', status: 'completed', execution: 'client', tools: [CALENDAR] },
    );
    expect((await codexTurn(body, 'responses')).status).toBe(200);
    expect(up().fake.last().body).toEqual({ ...body, model: up().upstreamModel, prompt_cache_key: scopedCacheKey(body.prompt_cache_key) });
  });
});

describe('Codex on the local provider', () => {
  it('answers the turn with reasoning Codex can replay and the usage it reads', async () => {
    for (const base of [FALLBACK, GPT_55]) {
      const turn = await codexTurn(base, 'local');
      expect(turn.status).toBe(200);
      expect(turn.headers.get('x-infergate-dropped-tools')).toBe('web_search');
      expect(turn.items[0]).toMatchObject({ type: 'reasoning' });
      // GPT_55's prompt says "hi"; FALLBACK's asks to read secret.txt, which the local model `cat`s with Codex's shell tool.
      expect(turn.items.at(-1)).toMatchObject(base === FALLBACK ? { type: 'function_call', name: 'exec_command' } : { type: 'message', role: 'assistant' });
      expectCodexUsage(turn.completed);
      expect(turn.completed!.usage.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);

      // The next turn replays everything (reasoning without encrypted content included), with the command's output.
      const replay = turn.items.map((item) => (item.type === 'reasoning' ? { ...item, encrypted_content: null } : item));
      const outputs = turn.items
        .filter((item) => item.type === 'function_call')
        .map((call) => ({ type: 'function_call_output', call_id: call.call_id, output: 'tok_0' }));
      const next = await codexTurn(
        withHistory(base, ...replay, ...outputs, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'thanks' }] }),
        'local',
      );
      expect(next.status).toBe(200);
      expectCodexUsage(next.completed);
    }
  });
});
