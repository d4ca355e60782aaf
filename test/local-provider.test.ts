import { describe, expect, it } from 'vitest';
import type { IRRequest, IRStreamEvent, IRTool } from '../src/protocols/ir.js';
import type { CallContext } from '../src/providers/provider.js';
import { createLocalProvider, localModels } from '../src/providers/local/local-provider.js';
import { valueFromSchema } from '../src/providers/local/tool-arguments.js';

function callContext(signal: AbortSignal = new AbortController().signal): CallContext {
  return {
    signal,
    requestId: 'req_test',
    key: { id: 'key_test', models: '*' },
    model: { id: 'local-chat', provider: 'local' },
    serverContext: undefined,
  };
}

function irRequest(fields: Partial<IRRequest> & { prompt?: string }): IRRequest {
  const { prompt, ...rest } = fields;
  return {
    model: 'local-chat',
    system: [],
    messages: prompt === undefined ? [] : [{ role: 'user', content: [{ type: 'text', text: prompt }] }],
    stream: true,
    passthrough: {},
    ...rest,
  };
}

const provider = createLocalProvider({ chunkDelayMs: 0 });

async function run(request: IRRequest, signal?: AbortSignal): Promise<IRStreamEvent[]> {
  const events: IRStreamEvent[] = [];
  for await (const event of provider.text!.stream!(request, callContext(signal))) events.push(event);
  return events;
}

const ofType = <T extends IRStreamEvent['type']>(events: IRStreamEvent[], type: T) =>
  events.filter((event): event is Extract<IRStreamEvent, { type: T }> => event.type === type);
const textOf = (events: IRStreamEvent[]) =>
  ofType(events, 'text_delta')
    .map((event) => event.text)
    .join('');
const finishOf = (events: IRStreamEvent[]) => ofType(events, 'finish')[0]!;

const weatherTool: IRTool = {
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: {
    type: 'object',
    properties: {
      city: { type: 'string', description: 'City name' },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      days: { type: 'integer' },
      alerts: { type: 'boolean' },
      note: { type: 'string' },
    },
    required: ['city', 'unit', 'days', 'alerts'],
    additionalProperties: false,
  },
};
const searchTool: IRTool = { name: 'search_docs', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } };

describe('local provider: text', () => {
  it('answers about the prompt, the same way every time, in several chunks', async () => {
    const request = irRequest({ prompt: 'Hello there, gateway', system: [{ type: 'text', text: 'Be brief.' }] });
    const first = await run(request);
    const second = await run(request);

    expect(first[0]).toMatchObject({ type: 'start', model: 'local-chat' });
    const start = first[0] as Extract<IRStreamEvent, { type: 'start' }>;
    expect(start.id).toMatch(/^local_[0-9a-f]{24}$/);
    expect(start.created).toBeCloseTo(Date.now() / 1000, -1);
    expect(textOf(first)).toBe('You said: "Hello there, gateway". This is infergate\'s offline local model.');
    expect(textOf(second)).toBe(textOf(first));
    expect(ofType(first, 'text_delta').length).toBeGreaterThanOrEqual(3);
    expect(ofType(first, 'tool_call_start')).toHaveLength(0);

    const finish = finishOf(first);
    expect(finish.reason).toBe('stop');
    // Tokens are ceil(chars / 4) over system + messages, and over the answer.
    const inputChars = 'Be brief.'.length + 'Hello there, gateway'.length;
    expect(finish.usage).toEqual({ input: Math.ceil(inputChars / 4), output: Math.ceil(textOf(first).length / 4) });
    expect(first.at(-1)).toBe(finish);
  });

  it('cuts the answer at maxOutputTokens and finishes with length', async () => {
    const events = await run(irRequest({ prompt: 'Tell me a long story about gateways', maxOutputTokens: 3 }));
    const text = textOf(events);
    expect(text.length).toBeGreaterThan(0);
    expect(text.length).toBeLessThanOrEqual(12);
    expect(finishOf(events).reason).toBe('length');
    expect(finishOf(events).usage?.output).toBeLessThanOrEqual(3);
  });

  it('never splits a character when it cuts or fragments', async () => {
    const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    const cut = await run(irRequest({ prompt: '😀😀😀', maxOutputTokens: 3 }));
    expect(textOf(cut)).toBe('You said: "');
    const call = await run(irRequest({ prompt: 'search docs for 😀😀😀😀😀😀😀', tools: [searchTool] }));
    const fragments = ofType(call, 'tool_call_delta').map((delta) => delta.arguments);
    expect(fragments.length).toBe(3);
    for (const fragment of fragments) expect(fragment).not.toMatch(loneSurrogate);
    expect(JSON.parse(fragments.join(''))).toEqual({ query: 'search docs for 😀😀😀😀😀😀😀' });
  });

  it('stops at a stop sequence', async () => {
    const events = await run(irRequest({ prompt: 'Hi', stop: ['This is'] }));
    expect(textOf(events)).toBe('You said: "Hi". ');
    expect(finishOf(events)).toMatchObject({ reason: 'stop_sequence', stopSequence: 'This is' });
  });

  it('answers JSON built from the schema when a response format asks for it', async () => {
    const events = await run(
      irRequest({
        prompt: 'Weather in Oslo please',
        responseFormat: {
          type: 'json_schema',
          name: 'w',
          schema: { type: 'object', properties: { city: { type: 'string' }, ok: { type: 'boolean' } }, required: ['city', 'ok'] },
        },
      }),
    );
    expect(JSON.parse(textOf(events))).toEqual({ city: 'Oslo', ok: true });
    const plain = await run(irRequest({ prompt: 'Hi', responseFormat: { type: 'json_object' } }));
    expect(JSON.parse(textOf(plain))).toEqual({ answer: expect.stringContaining('You said: "Hi"') });
  });

  it('the reasoner thinks first, then answers, and counts its reasoning tokens', async () => {
    const events = await run(irRequest({ model: 'local-reasoner', prompt: 'Why is the sky blue?' }));
    const types = events.map((event) => event.type);
    expect(types.indexOf('reasoning_delta')).toBeGreaterThan(0);
    expect(types.indexOf('reasoning_end')).toBeGreaterThan(types.lastIndexOf('reasoning_delta'));
    expect(types.indexOf('text_delta')).toBeGreaterThan(types.indexOf('reasoning_end'));
    const reasoning = ofType(events, 'reasoning_delta')
      .map((event) => event.text)
      .join('');
    const usage = finishOf(events).usage!;
    expect(usage.reasoning).toBe(Math.ceil(reasoning.length / 4));
    expect(usage.output).toBe(Math.ceil((reasoning.length + textOf(events).length) / 4));
  });

  it('generateText gives the same answer as one response, without waiting between chunks', async () => {
    const slow = createLocalProvider({ chunkDelayMs: 10_000 });
    const started = Date.now();
    const response = await slow.text!.generate!(irRequest({ prompt: 'Hello' }), callContext());
    expect(Date.now() - started).toBeLessThan(1000);
    expect(response.content).toEqual([{ type: 'text', text: 'You said: "Hello". This is infergate\'s offline local model.' }]);
    expect(response.finishReason).toBe('stop');
  });

  it('lists its models under the given provider name', () => {
    expect(localModels('offline')).toEqual([
      { id: 'local-chat', provider: 'offline' },
      { id: 'local-reasoner', provider: 'offline' },
      { id: 'local-image', provider: 'offline', kind: 'image' },
      { id: 'local-video', provider: 'offline', kind: 'video' },
      { id: 'local-speech', provider: 'offline', kind: 'speech' },
      { id: 'local-embedding', provider: 'offline', kind: 'embedding' },
      { id: 'local-transcription', provider: 'offline', kind: 'transcription' },
    ]);
  });
});

describe('local provider: tools', () => {
  it('calls the tool the prompt names, with arguments from its schema, in fragments', async () => {
    const request = irRequest({ prompt: "What's the weather in Paris today?", tools: [searchTool, weatherTool] });
    const events = await run(request);
    const starts = ofType(events, 'tool_call_start');
    expect(starts).toHaveLength(1);
    expect(starts[0]!.name).toBe('get_weather');
    expect(starts[0]!.id).toMatch(/^call_[0-9a-f]{24}$/);
    const deltas = ofType(events, 'tool_call_delta');
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    expect(deltas.length).toBeLessThanOrEqual(3);
    expect(JSON.parse(deltas.map((delta) => delta.arguments).join(''))).toEqual({ city: 'Paris', unit: 'celsius', days: 1, alerts: true });
    expect(ofType(events, 'text_delta')).toHaveLength(0);
    expect(finishOf(events).reason).toBe('tool_calls');
    // Deterministic: the same prompt gets the same call id.
    expect(ofType(await run(request), 'tool_call_start')[0]!.id).toBe(starts[0]!.id);
  });

  it('uses the first tool when asked to "use a tool", and takes a query from the prompt', async () => {
    const events = await run(irRequest({ prompt: 'Please use a tool to look up infergate', tools: [searchTool, weatherTool] }));
    expect(ofType(events, 'tool_call_start')[0]!.name).toBe('search_docs');
    expect(
      JSON.parse(
        ofType(events, 'tool_call_delta')
          .map((delta) => delta.arguments)
          .join(''),
      ),
    ).toEqual({ query: 'Please use a tool to look up infergate' });
  });

  it('answers in text when the prompt asks for no tool, unless toolChoice forces one', async () => {
    const prompt = 'Good morning';
    const auto = await run(irRequest({ prompt, tools: [weatherTool] }));
    expect(ofType(auto, 'tool_call_start')).toHaveLength(0);
    expect(finishOf(auto).reason).toBe('stop');

    const required = await run(irRequest({ prompt, tools: [weatherTool, searchTool], toolChoice: { type: 'required' } }));
    expect(ofType(required, 'tool_call_start')[0]!.name).toBe('get_weather');

    const named = await run(irRequest({ prompt, tools: [weatherTool, searchTool], toolChoice: { type: 'tool', name: 'search_docs' } }));
    expect(ofType(named, 'tool_call_start')[0]!.name).toBe('search_docs');
    expect(finishOf(named).reason).toBe('tool_calls');
  });

  it('toolChoice none forbids a tool call even when the prompt names one', async () => {
    const events = await run(irRequest({ prompt: 'Call get_weather for Rome', tools: [weatherTool], toolChoice: { type: 'none' } }));
    expect(ofType(events, 'tool_call_start')).toHaveLength(0);
    expect(textOf(events)).toContain('You said: "Call get_weather for Rome"');
    expect(finishOf(events).reason).toBe('stop');
  });

  it('answers with the tool result once the conversation ends with one', async () => {
    const events = await run(
      irRequest({
        tools: [weatherTool],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
          { role: 'assistant', content: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
          { role: 'tool', toolCallId: 'call_1', content: [{ type: 'text', text: '{"temperature":21}' }] },
        ],
      }),
    );
    expect(ofType(events, 'tool_call_start')).toHaveLength(0);
    expect(textOf(events)).toBe('The get_weather tool returned: {"temperature":21}.');
    expect(finishOf(events).reason).toBe('stop');
  });

  // The coding agents' own tools: Claude Code's Read takes a file path, Codex's exec_command a shell command.
  const readTool: IRTool = {
    name: 'Read',
    parameters: { type: 'object', properties: { file_path: { type: 'string' }, limit: { type: 'integer' } }, required: ['file_path'] },
  };
  const execTool: IRTool = {
    name: 'exec_command',
    parameters: { type: 'object', properties: { cmd: { type: 'string' }, workdir: { type: 'string' } }, required: ['cmd'] },
  };
  const agentTool: IRTool = { name: 'Agent', parameters: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] } };
  const callOf = (events: IRStreamEvent[]) => ({
    name: ofType(events, 'tool_call_start')[0]?.name,
    arguments: JSON.parse(
      ofType(events, 'tool_call_delta')
        .map((delta) => delta.arguments)
        .join('') || 'null',
    ),
  });

  it('fills a path argument with the path the prompt names, and a command with its code span', async () => {
    const read = await run(irRequest({ prompt: 'Use the Read tool to read /tmp/work/notes.txt.', tools: [agentTool, readTool] }));
    expect(callOf(read)).toEqual({ name: 'Read', arguments: { file_path: '/tmp/work/notes.txt' } });
    // A word inside a path ("agent") names no tool.
    const exec = await run(irRequest({ prompt: 'Use the exec_command tool to run `cat /tmp/agent-1/notes.txt` please', tools: [agentTool, execTool] }));
    expect(callOf(exec)).toEqual({ name: 'exec_command', arguments: { cmd: 'cat /tmp/agent-1/notes.txt' } });
  });

  it("chooses the tool from the user's words, not from Claude Code's system-reminder notes", async () => {
    const reminder = '<system-reminder>\nAvailable agent types for the Agent tool: general-purpose\n</system-reminder>';
    const events = await run(
      irRequest({
        tools: [agentTool, readTool],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: reminder },
              { type: 'text', text: 'Use the Read tool to read /srv/a.txt' },
            ],
          },
        ],
      }),
    );
    expect(callOf(events)).toEqual({ name: 'Read', arguments: { file_path: '/srv/a.txt' } });
  });

  it('answers the tool results even when the client added its notes after them', async () => {
    const events = await run(
      irRequest({
        tools: [readTool],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Use the Read tool to read /srv/a.txt' }] },
          { role: 'assistant', content: [{ type: 'tool_call', id: 'toolu_1', name: 'Read', arguments: '{"file_path":"/srv/a.txt"}' }] },
          { role: 'tool', toolCallId: 'toolu_1', content: [{ type: 'text', text: '1\ttok_1234' }] },
          { role: 'user', content: [{ type: 'text', text: '<system-reminder>\nToday is Monday.\n</system-reminder>' }] },
        ],
      }),
    );
    expect(ofType(events, 'tool_call_start')).toHaveLength(0);
    expect(textOf(events)).toBe('The Read tool returned: 1\ttok_1234.');
  });

  it('does not emit half a tool call when maxOutputTokens is too small for it', async () => {
    const events = await run(irRequest({ prompt: 'Weather in Paris?', tools: [weatherTool], maxOutputTokens: 2 }));
    expect(ofType(events, 'tool_call_start')).toHaveLength(0);
    expect(finishOf(events).reason).toBe('length');
  });
});

describe('local provider: abort', () => {
  const timers = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;

  it('stops promptly when the signal fires mid-stream and leaves no timer behind', async () => {
    const slow = createLocalProvider({ chunkDelayMs: 10_000 });
    const controller = new AbortController();
    const before = timers();
    const iterator = slow.text!.stream!(irRequest({ prompt: 'Hello there, how are you today?' }), callContext(controller.signal))[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ type: 'start' });
    expect((await iterator.next()).value).toMatchObject({ type: 'text_delta' });

    const pending = iterator.next();
    const started = Date.now();
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(Date.now() - started).toBeLessThan(500);
    expect(timers()).toBe(before);
    expect(await iterator.next()).toEqual({ done: true, value: undefined });
  });

  it('does not start when the signal has already fired', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(run(irRequest({ prompt: 'Hello' }), controller.signal)).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('valueFromSchema', () => {
  it('follows refs, enums, consts, defaults, bounds, arrays and nested objects', () => {
    const schema = {
      type: 'object',
      $defs: { Place: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } },
      properties: {
        where: { $ref: '#/$defs/Place' },
        mode: { const: 'fast' },
        level: { type: 'integer', minimum: 3 },
        ratio: { type: 'number', maximum: 0.5 },
        tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] } },
        label: { type: 'string', default: 'fallback' },
        when: { type: 'string', format: 'date' },
        maybe: { type: ['null', 'boolean'] },
        optional: { type: 'string' },
      },
      required: ['where', 'mode', 'level', 'ratio', 'tags', 'label', 'when', 'maybe'],
    };
    expect(valueFromSchema(schema, 'forecast for New York City tomorrow', 'response_format')).toEqual({
      where: { location: 'New York City' },
      mode: 'fast',
      level: 3,
      ratio: 0.5,
      tags: ['a'],
      label: 'fallback',
      when: '1970-01-01',
      maybe: true,
    });
  });

  it('uses a placeholder naming the property when the prompt has nothing for it', () => {
    expect(valueFromSchema({ type: 'object', properties: { city: { type: 'string' }, id: { type: 'string' } } }, 'no place here', 'response_format')).toEqual({
      city: 'example_city',
      id: 'example_id',
    });
  });
});
